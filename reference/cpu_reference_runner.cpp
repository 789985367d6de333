#include "reference/cpu_reference_runner.hpp"

#include <unordered_map>

#include "engines/cpu/cpu_batch_runner.hpp"
#include "planning/signature.hpp"

namespace tenact::cpu {

namespace {

// The staged program as one BatchWork in planning's sequential step order:
// a region step adds its members (splat constants included) as one
// BatchRegion, any other step its instruction; regions nothing outside
// reads are left out (nothing observable to compute). Ops are named as the
// program names them, so errors do too.
class BatchOfProgram {
 public:
  BatchOfProgram(const SemanticProgram& p, const ExecProgram& e, std::span<const ElementwiseRegion> regions)
      : p_(p), e_(e), regions_(regions) {}

  Result<BatchWork> build(std::span<const HostTensor> inputs, SymbolBindings symbols, CpuRunStats& counts) {
    if (e_.input_slots.size() != inputs.size() ||
        e_.instructions.size() + e_.dropped_ops.size() != p_.ops().size())
      return Error{ErrorCode::Internal, "the staged program does not match program '" + p_.name() + "'"};
    const std::vector<ExecStep> steps = sequential_steps(e_, regions_);
    size_t in_regions = 0;
    for (const ElementwiseRegion& r : regions_) in_regions += r.instructions.size();
    if (steps.size() + in_regions != e_.instructions.size() + regions_.size())
      return Error{ErrorCode::Internal, "the elementwise regions of program '" + p_.name() +
                                            "' overlap or depend on each other in a cycle"};
    work_.inputs.assign(inputs.begin(), inputs.end());
    work_.symbols = std::move(symbols);
    for (size_t i = 0; i < inputs.size(); ++i) refs_.emplace(e_.input_slots[i], BatchRef::input(static_cast<uint32_t>(i)));
    for (const ExecStep& step : steps) {
      if (step.kind == ExecStep::Kind::Instruction) {
        TENACT_TRY(add_op(step.index));
        ++counts.kernels_run;
        continue;
      }
      const ElementwiseRegion& region = regions_[step.index];
      if (region.outputs.empty()) continue;
      BatchRegion batch_region{static_cast<uint32_t>(work_.ops.size()), 0, {}};
      for (uint32_t i : region.instructions) TENACT_TRY(add_op(i));
      batch_region.count = static_cast<uint32_t>(work_.ops.size()) - batch_region.first;
      for (SlotId s : region.outputs) {
        TENACT_ASSIGN_OR_RETURN(const BatchRef ref, ref_of(s));
        batch_region.outputs.push_back(ref);
      }
      work_.regions.push_back(std::move(batch_region));
      ++counts.regions_run;
      counts.ops_fused += region.compute_ops();
    }
    for (SlotId s : e_.output_slots) {
      auto ref = ref_of(s);
      if (!ref.ok()) return Error{ErrorCode::Internal, "output " + e_.describe_slot(s) + " is never computed"};
      work_.outputs.push_back(*ref);
    }
    return std::move(work_);
  }

 private:
  Result<BatchRef> ref_of(SlotId s) const {
    auto it = refs_.find(s);
    if (it == refs_.end()) return Error{ErrorCode::Internal, e_.describe_slot(s) + " is not available"};
    return it->second;
  }

  Status add_op(uint32_t i) {
    const ExecInstruction& ins = e_.instructions[i];
    auto op = std::make_shared<PreparedOp>();
    op->kind = ins.kind;
    op->attrs = ins.attrs;
    for (SlotId r : ins.outputs) op->results.push_back(e_.slot_type(r));
    BatchOp batch_op{std::move(op), {}};
    for (SlotId s : ins.inputs) {
      auto ref = ref_of(s);
      if (!ref.ok()) return ref.error().with_context(p_.describe_op(ins.semantic_op));
      batch_op.operands.push_back(*ref);
    }
    const auto index = static_cast<uint32_t>(work_.ops.size());
    for (size_t r = 0; r < ins.outputs.size(); ++r)
      refs_.insert_or_assign(ins.outputs[r], BatchRef::op(index, static_cast<uint32_t>(r)));
    work_.ops.push_back(std::move(batch_op));
    work_.op_names.push_back(p_.describe_op(ins.semantic_op));
    return ok_status();
  }

  const SemanticProgram& p_;
  const ExecProgram& e_;
  std::span<const ElementwiseRegion> regions_;
  BatchWork work_;
  std::unordered_map<SlotId, BatchRef> refs_;
};

}  // namespace

Result<std::vector<HostTensor>> run_exec_program_on_cpu(const SemanticProgram& program,
                                                        const ExecProgram& staged,
                                                        std::span<const ElementwiseRegion> regions,
                                                        std::span<const HostTensor> inputs,
                                                        CpuEngine& engine, CpuRunStats* stats) {
  TENACT_ASSIGN_OR_RETURN(SymbolBindings symbols, bind_signature(program, signature_of(inputs)));
  CpuRunStats counts;
  TENACT_ASSIGN_OR_RETURN(const BatchWork work, BatchOfProgram(program, staged, regions).build(inputs, std::move(symbols), counts));
  auto out = run_batch_on_cpu(work, engine.pool(), &engine.fused_counters());
  if (out.ok() && stats) {
    stats->kernels_run += counts.kernels_run;
    stats->regions_run += counts.regions_run;
    stats->ops_fused += counts.ops_fused;
  }
  return out;
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
