#include "engines/cpu/cpu_program_runner.hpp"

#include <optional>

#include "engines/cpu/kernels/fused_elementwise.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "planning/signature.hpp"

namespace tenact::cpu {

namespace {

// Index of the last op reading each value; program outputs live to the end.
std::vector<int64_t> last_uses(const SemanticProgram& p) {
  std::vector<int64_t> last(p.values().size(), -1);
  for (size_t i = 0; i < p.ops().size(); ++i)
    for (ValueId v : p.ops()[i].inputs) last[v] = static_cast<int64_t>(i);
  for (ValueId v : p.outputs()) last[v] = static_cast<int64_t>(p.ops().size());
  return last;
}

// A constant filling its whole shape with one scalar.
const Scalar* splat_of(const Op& op) {
  if (op.kind != OpKind::Constant) return nullptr;
  const auto& attrs = std::get<ConstantAttrs>(op.attrs);
  return attrs.splat ? &*attrs.splat : nullptr;
}

// Whether op `i` may join a fused region over `shape`: elementwise, every
// result of `shape`, every operand of `shape` or rank 0. A splat constant
// of `shape` joins too: inside the region it is a rank-0 input.
bool fusable(const SemanticProgram& p, const Op& op, const Shape& shape) {
  if (splat_of(op)) return p.value(op.outputs[0]).type.shape == shape;
  if (family_of(op.kind) != OpFamily::Elementwise) return false;
  for (ValueId r : op.outputs)
    if (!(p.value(r).type.shape == shape)) return false;
  for (ValueId v : op.inputs) {
    const Shape& s = p.value(v).type.shape;
    if (!s.empty() && !(s == shape)) return false;
  }
  for (const auto& e : shape)
    if (!e.is_exact()) return false;
  return true;
}

class Runner {
 public:
  Runner(const SemanticProgram& p, CpuEngine& engine, const CpuRunOptions& options, CpuRunStats* stats)
      : p_(p), engine_(engine), options_(options), stats_(stats), values_(p.values().size()),
        last_(last_uses(p)) {}

  Result<std::vector<HostTensor>> run(std::span<const HostTensor> inputs) {
    const auto signature = signature_of(inputs);
    TENACT_ASSIGN_OR_RETURN(symbols_, bind_signature(p_, signature));
    for (size_t i = 0; i < inputs.size(); ++i) values_[p_.inputs()[i]] = inputs[i];
    size_t i = 0;
    while (i < p_.ops().size()) {
      size_t end = options_.fuse_elementwise ? chain_end(i) : i + 1;
      if (end - i >= 2) {
        TENACT_TRY(run_region(i, end));
      } else {
        TENACT_TRY(run_single(i));
        end = i + 1;
      }
      release_dead(i, end);
      i = end;
    }
    std::vector<HostTensor> out;
    for (ValueId v : p_.outputs()) out.push_back(*values_[v]);
    return out;
  }

 private:
  // One past the last op of the fusable run starting at `begin`.
  size_t chain_end(size_t begin) const {
    const Op& first = p_.ops()[begin];
    if (first.outputs.size() != 1) return begin + 1;
    const Shape& shape = p_.value(first.outputs[0]).type.shape;
    size_t end = begin;
    while (end < p_.ops().size() && fusable(p_, p_.ops()[end], shape)) ++end;
    return std::max(end, begin + 1);
  }

  Status run_single(size_t i) {
    const Op& op = p_.ops()[i];
    std::vector<HostTensor> inputs;
    std::vector<ValueType> result_types;
    for (ValueId v : op.inputs) inputs.push_back(*values_[v]);
    for (ValueId r : op.outputs) result_types.push_back(p_.value(r).type);
    KernelCall call{op.kind, op.attrs, inputs, result_types, symbols_, &engine_.pool()};
    auto results = run_kernel(call);
    if (!results.ok()) return results.error().with_context(p_.describe_op(i));
    if (results->size() != op.outputs.size())
      return Error{ErrorCode::Internal, p_.describe_op(i) + ": kernel returned " +
                                            std::to_string(results->size()) + " results"};
    for (size_t r = 0; r < op.outputs.size(); ++r) values_[op.outputs[r]] = std::move((*results)[r]);
    if (stats_) ++stats_->kernels_run;
    return ok_status();
  }

  // Splat constants of a region are not materialized: the region reads
  // them as rank-0 inputs. A constant read after the region, or one that
  // would leave the region without any full-shape input, is materialized.
  Status place_region_constants(size_t begin, size_t end) {
    bool has_full_input = false;
    for (size_t i = begin; i < end && !has_full_input; ++i)
      for (ValueId v : p_.ops()[i].inputs) {
        const int64_t producer = p_.value(v).producer;
        const bool inside = producer >= static_cast<int64_t>(begin) && producer < static_cast<int64_t>(end);
        if (!inside && !p_.value(v).type.shape.empty()) has_full_input = true;
      }
    for (size_t i = begin; i < end; ++i) {
      const Op& op = p_.ops()[i];
      const Scalar* splat = splat_of(op);
      if (!splat) continue;
      const ValueId out = op.outputs[0];
      if (last_[out] >= static_cast<int64_t>(end) || !has_full_input) {
        TENACT_TRY(run_single(i));
        has_full_input = has_full_input || !p_.value(out).type.shape.empty();
        continue;
      }
      auto scalar = HostTensor::zeros(p_.value(out).type.dtype, {});
      if (!scalar.ok()) return scalar.error().with_context(p_.describe_op(i));
      splat->store(scalar->dtype(), scalar->data());
      values_[out] = std::move(*scalar);
    }
    return ok_status();
  }

  Status run_region(size_t begin, size_t end) {
    TENACT_TRY(place_region_constants(begin, end));
    std::vector<ChainOp> chain;
    for (size_t i = begin; i < end; ++i) {
      const Op& op = p_.ops()[i];
      if (splat_of(op)) continue;
      ChainOp c{op.kind, op.attrs, {}, {op.outputs[0], p_.value(op.outputs[0]).type.dtype}};
      for (ValueId v : op.inputs) c.operands.push_back(ChainValue{v, p_.value(v).type.dtype});
      chain.push_back(std::move(c));
    }
    if (chain.empty()) return ok_status();  // only constants: materialized above
    std::vector<uint32_t> live_out;
    for (size_t i = begin; i < end; ++i) {
      if (splat_of(p_.ops()[i])) continue;
      ValueId r = p_.ops()[i].outputs[0];
      if (last_[r] >= static_cast<int64_t>(end)) live_out.push_back(r);
    }
    const std::string where = p_.describe_op(begin) + " .. " + p_.describe_op(end - 1) + " (fused)";
    auto region = region_from_chain(chain, live_out);
    if (!region.ok()) return region.error().with_context(where);
    std::vector<HostTensor> inputs;
    for (uint32_t v : region->input_values) inputs.push_back(*values_[v]);
    auto results = run_fused_region(region->region, inputs, &engine_.pool(), &engine_.fused_counters());
    if (!results.ok()) return results.error().with_context(where);
    for (size_t k = 0; k < region->output_values.size(); ++k)
      values_[region->output_values[k]] = std::move((*results)[k]);
    if (stats_) {
      ++stats_->regions_run;
      stats_->ops_fused += chain.size();
    }
    return ok_status();
  }

  // Drops every value whose last reader ran in [begin, end).
  void release_dead(size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      for (ValueId v : p_.ops()[i].inputs)
        if (last_[v] < static_cast<int64_t>(end)) values_[v].reset();
      for (ValueId r : p_.ops()[i].outputs)
        if (last_[r] < static_cast<int64_t>(end)) values_[r].reset();
    }
  }

  const SemanticProgram& p_;
  CpuEngine& engine_;
  const CpuRunOptions& options_;
  CpuRunStats* stats_;
  SymbolBindings symbols_;
  std::vector<std::optional<HostTensor>> values_;
  std::vector<int64_t> last_;
};

}  // namespace

Result<std::vector<HostTensor>> run_program_on_cpu(const SemanticProgram& program,
                                                   std::span<const HostTensor> inputs,
                                                   CpuEngine& engine, const CpuRunOptions& options,
                                                   CpuRunStats* stats) {
  return Runner{program, engine, options, stats}.run(inputs);
}

}  // namespace tenact::cpu
