#include "engines/cpu/cpu_program_runner.hpp"

#include <optional>

#include "engines/cpu/kernels/fused_elementwise.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "planning/signature.hpp"

namespace tenact::cpu {

namespace {

constexpr size_t kNever = static_cast<size_t>(-1);

class Runner {
 public:
  Runner(const SemanticProgram& p, const ExecProgram& e, std::span<const ElementwiseRegion> regions,
         CpuEngine& engine, CpuRunStats* stats)
      : p_(p), e_(e), regions_(regions), engine_(engine), stats_(stats), values_(e.slots.size()) {}

  Result<std::vector<HostTensor>> run(std::span<const HostTensor> inputs) {
    const auto signature = signature_of(inputs);
    TENACT_ASSIGN_OR_RETURN(symbols_, bind_signature(p_, signature));
    if (e_.input_slots.size() != inputs.size() || e_.instructions.size() != p_.ops().size())
      return Error{ErrorCode::Internal, "the staged program does not match program '" + p_.name() + "'"};
    for (size_t i = 0; i < inputs.size(); ++i) values_[e_.input_slots[i]] = inputs[i];
    const std::vector<ExecStep> steps = sequential_steps(e_, regions_);
    size_t in_regions = 0;
    for (const ElementwiseRegion& r : regions_) in_regions += r.instructions.size();
    if (steps.size() + in_regions != e_.instructions.size() + regions_.size())
      return Error{ErrorCode::Internal, "the elementwise regions of program '" + p_.name() +
                                            "' overlap or depend on each other in a cycle"};
    const std::vector<std::vector<SlotId>> releases = releases_per_step(steps);
    for (size_t k = 0; k < steps.size(); ++k) {
      if (steps[k].kind == ExecStep::Kind::Region)
        TENACT_TRY(run_region(steps[k].index));
      else
        TENACT_TRY(run_single(steps[k].index));
      for (SlotId s : releases[k]) values_[s].reset();
    }
    std::vector<HostTensor> out;
    for (SlotId s : e_.output_slots) {
      if (!values_[s])
        return Error{ErrorCode::Internal, "output " + e_.describe_slot(s) + " was never computed"};
      out.push_back(*values_[s]);
    }
    return out;
  }

 private:
  // Per step, the slots to drop after it: those whose last reader (in step
  // order) it is, and results nobody reads. Program outputs stay. Steps may
  // reorder program order, so program-order last-use flags do not apply.
  std::vector<std::vector<SlotId>> releases_per_step(const std::vector<ExecStep>& steps) const {
    const std::vector<int32_t> region_of = region_of_instructions(e_.instructions.size(), regions_);
    std::vector<size_t> step_of_instruction(e_.instructions.size(), kNever);
    std::vector<size_t> step_of_region(regions_.size(), kNever);
    for (size_t k = 0; k < steps.size(); ++k)
      (steps[k].kind == ExecStep::Kind::Region ? step_of_region : step_of_instruction)[steps[k].index] = k;
    std::vector<size_t> last_read(e_.slots.size(), kNever);
    for (size_t i = 0; i < e_.instructions.size(); ++i) {
      const size_t step = region_of[i] >= 0 ? step_of_region[static_cast<size_t>(region_of[i])]
                                            : step_of_instruction[i];
      for (SlotId s : e_.instructions[i].inputs)
        if (last_read[s] == kNever || last_read[s] < step) last_read[s] = step;
      for (SlotId s : e_.instructions[i].outputs)
        if (last_read[s] == kNever) last_read[s] = step;  // unread results go right away
    }
    std::vector<std::vector<SlotId>> out(steps.size());
    for (SlotId s = 0; s < e_.slots.size(); ++s)
      if (last_read[s] != kNever && last_read[s] < steps.size() && !e_.is_output(s))
        out[last_read[s]].push_back(s);
    return out;
  }

  Status run_single(size_t i) {
    const ExecInstruction& ins = e_.instructions[i];
    const std::string where = p_.describe_op(ins.semantic_op);
    std::vector<HostTensor> inputs;
    std::vector<ValueType> result_types;
    for (SlotId s : ins.inputs) {
      if (!values_[s])
        return Error{ErrorCode::Internal, where + ": " + e_.describe_slot(s) + " is not available"};
      inputs.push_back(*values_[s]);
    }
    for (SlotId r : ins.outputs) result_types.push_back(e_.slot_type(r));
    KernelCall call{ins.kind, ins.attrs, inputs, result_types, symbols_, &engine_.pool()};
    auto results = run_kernel(call);
    if (!results.ok()) return results.error().with_context(where);
    if (results->size() != ins.outputs.size())
      return Error{ErrorCode::Internal, where + ": kernel returned " + std::to_string(results->size()) +
                                            " results"};
    for (size_t r = 0; r < ins.outputs.size(); ++r) values_[ins.outputs[r]] = std::move((*results)[r]);
    if (stats_) ++stats_->kernels_run;
    return ok_status();
  }

  // An absorbed splat constant enters its region as a rank-0 scalar.
  Status place_splat(uint32_t i) {
    const ExecInstruction& ins = e_.instructions[i];
    auto scalar = ins.outputs.size() == 1 ? splat_as_scalar(ins.kind, ins.attrs, e_.slot_type(ins.outputs[0]).dtype)
                                          : std::nullopt;
    if (!scalar) return Error{ErrorCode::Internal, p_.describe_op(ins.semantic_op) + " is no splat constant"};
    if (!scalar->ok()) return scalar->error().with_context(p_.describe_op(ins.semantic_op));
    values_[ins.outputs[0]] = std::move(**scalar);
    return ok_status();
  }

  Status run_region(uint32_t index) {
    const ElementwiseRegion& region = regions_[index];
    const std::string where = describe_region(e_, region, index) + " (fused)";
    // Nothing leaves the region: nothing observable to compute.
    if (region.outputs.empty()) return ok_status();
    for (uint32_t c : region.splat_constants)
      if (auto s = place_splat(c); !s.ok()) return s.error().with_context(where);
    std::vector<ChainOp> ops;
    for (uint32_t i : region.instructions) {
      const ExecInstruction& ins = e_.instructions[i];
      if (ins.is_constant()) continue;
      ChainOp op{ins.kind, ins.attrs, {}, {ins.outputs[0], e_.slot_type(ins.outputs[0]).dtype}};
      for (SlotId s : ins.inputs) op.operands.push_back(ChainValue{s, e_.slot_type(s).dtype});
      ops.push_back(std::move(op));
    }
    auto fused = region_from_chain(ops, region.outputs);
    if (!fused.ok()) return fused.error().with_context(where);
    std::vector<HostTensor> inputs;
    for (uint32_t s : fused->input_values) {
      if (!values_[s])
        return Error{ErrorCode::Internal, where + ": " + e_.describe_slot(s) + " is not available"};
      inputs.push_back(*values_[s]);
    }
    auto results = run_fused_region(fused->region, inputs, &engine_.pool(), &engine_.fused_counters());
    if (!results.ok()) return results.error().with_context(where);
    for (size_t k = 0; k < fused->output_values.size(); ++k)
      values_[fused->output_values[k]] = std::move((*results)[k]);
    if (stats_) {
      ++stats_->regions_run;
      stats_->ops_fused += ops.size();
    }
    return ok_status();
  }

  const SemanticProgram& p_;
  const ExecProgram& e_;
  std::span<const ElementwiseRegion> regions_;
  CpuEngine& engine_;
  CpuRunStats* stats_;
  SymbolBindings symbols_;
  std::vector<std::optional<HostTensor>> values_;
};

}  // namespace

Result<std::vector<HostTensor>> run_exec_program_on_cpu(const SemanticProgram& program,
                                                        const ExecProgram& staged,
                                                        std::span<const ElementwiseRegion> regions,
                                                        std::span<const HostTensor> inputs,
                                                        CpuEngine& engine, CpuRunStats* stats) {
  return Runner{program, staged, regions, engine, stats}.run(inputs);
}

Result<std::vector<HostTensor>> run_program_on_cpu(const SemanticProgram& program,
                                                   std::span<const HostTensor> inputs,
                                                   CpuEngine& engine, const CpuRunOptions& options,
                                                   CpuRunStats* stats) {
  TENACT_ASSIGN_OR_RETURN(const ExecProgram staged, stage(program));
  std::vector<ElementwiseRegion> regions;
  if (options.fuse_elementwise && engine.capabilities().fused_elementwise_regions) {
    const Endpoint here{engine.identity().id, engine.capabilities().default_storage_class};
    const std::vector<Endpoint> endpoints(staged.instructions.size(), here);
    TENACT_ASSIGN_OR_RETURN(regions, plan_elementwise_regions(staged, endpoints,
                                                              [](const Endpoint&) { return true; }));
  }
  return run_exec_program_on_cpu(program, staged, regions, inputs, engine, stats);
}

}  // namespace tenact::cpu
