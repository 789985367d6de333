#include "engines/cpu/cpu_batch_runner.hpp"

#include <map>
#include <optional>

#include "engines/cpu/cpu_providers.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "engines/cpu/kernels/layout_kernel_support.hpp"
#include "util/small_vector.hpp"

namespace tenact::cpu {

namespace {

/// An absorbed broadcast_in_dim: the region reads its operand as a view
/// of the broadcast's result shape (stride 0 along the broadcast axes).
struct BroadcastView {
  /// The result shape when every extent is a constant; else evaluated
  /// from `exprs` with the batch's symbols on each run.
  std::optional<std::vector<int64_t>> shape;
  std::vector<DimExpr> exprs;
  std::vector<int64_t> dims;  // broadcast_dimensions
};

/// A planned region as the CPU kernels run it: its fused kernel, and where
/// each region input comes from in a batch (a splat constant's scalar, the
/// operand of a member op that reads it first, or an absorbed broadcast's
/// operand seen through a view).
struct CompiledRegion {
  struct Input {
    std::optional<HostTensor> scalar;
    uint32_t op = 0;  // relative to the region's first op
    uint32_t operand = 0;
    std::optional<BroadcastView> broadcast;  // read operand `operand` of member `op` through it
  };
  std::optional<FusedKernel> kernel;
  std::vector<Input> inputs;
};

/// Names CompiledRegion objects in a RegionMemo.
constexpr char kCompiledRegionOwner = 0;

std::string describe(const BatchWork& work, size_t i) {
  if (!work.op_names.empty()) return work.op_names[i];
  return "batch op " + std::to_string(i) + " (" + std::string{to_string(work.ops[i].op->kind)} + ")";
}

class BatchRunner {
 public:
  BatchRunner(const BatchWork& work, const BatchPlan& plan, std::span<KernelKeep> keeps, WorkerPool& pool,
              FusedCounters* counters, const KernelObserver* observer, std::optional<Endpoint> destination_memory)
      : work_(work), plan_(plan), keeps_(keeps), pool_(pool), counters_(counters), observer_(observer),
        destination_memory_(std::move(destination_memory)) {
    // Every op result's slot, made here (on the stack up to kInlineResults).
    for (uint32_t k = 0; k < plan.result_begin.back(); ++k) results_.push_back(HostTensor{});
  }

  Result<std::vector<HostTensor>> run() {
    size_t i = 0;
    while (i < work_.ops.size()) {
      const BatchRegion* region =
          plan_.region_at.empty() || plan_.region_at[i] < 0 ? nullptr : &work_.regions[plan_.region_at[i]];
      const uint64_t begin = work_.timings ? steady_now_ns() : 0;
      const size_t first = i;
      if (region != nullptr) {
        TENACT_TRY(run_region(*region));
        i += region->count;
      } else {
        TENACT_TRY(run_single(i));
        ++i;
      }
      if (work_.timings)
        work_.timings->ops.push_back(OpTiming{static_cast<uint32_t>(i - 1), static_cast<uint32_t>(first), begin,
                                              steady_now_ns(), trace_thread_index(), false});
      release_through(i);
    }
    std::vector<HostTensor> out;
    out.reserve(work_.outputs.size());
    for (const BatchRef& ref : work_.outputs) out.push_back(value(ref));
    return out;
  }

 private:
  const HostTensor& value(const BatchRef& ref) const {
    return ref.from == BatchRef::From::Input ? work_.inputs[ref.index]
                                             : results_[plan_.result_begin[ref.index] + ref.result];
  }

  /// Op i's result slots.
  std::span<HostTensor> results_of(size_t i) {
    return results_.span().subspan(plan_.result_begin[i], plan_.result_begin[i + 1] - plan_.result_begin[i]);
  }

  Status run_single(size_t i) {
    const BatchOp& op = work_.ops[i];
    SmallVector<HostTensor, 8> inputs;
    for (const BatchRef& ref : op.operands) inputs.push_back(value(ref));
    SmallVector<HostTensor, 2> destinations;
    for (uint32_t k = 0; k < op.destinations.size(); ++k) destinations.push_back(destination(BatchRef::op(i, k)));
    KernelCall call = kernel_call_for(*op.op, inputs.span(), work_.symbols, &pool_, destinations.span());
    if (i < keeps_.size()) call.keep = &keeps_[i];
    auto r = run_kernel(call);
    if (!r.ok()) return r.error().with_context(describe(work_, i));
    const std::span<HostTensor> slots = results_of(i);
    if (r->size() != slots.size())
      return Error{ErrorCode::Internal, describe(work_, i) + ": its kernel gave " + std::to_string(r->size()) +
                                            " results, the op declares " + std::to_string(slots.size())};
    std::move(r->begin(), r->end(), slots.begin());
    if (i < keeps_.size()) {  // the list itself serves the op's next run (single_result)
      r->clear();
      keeps_[i].results = std::move(*r);
    }
    if (observer_ != nullptr)
      (*observer_)(KernelRun{static_cast<uint32_t>(i), static_cast<uint32_t>(i), inputs.span(), slots});
    return ok_status();
  }

  // Value ids for the chain: batch input k is k, op j's result is
  // inputs + j (region members are single-result elementwise ops).
  uint32_t id_of(const BatchRef& ref) const {
    return ref.from == BatchRef::From::Input ? ref.index
                                             : static_cast<uint32_t>(work_.inputs.size() + ref.index);
  }

  std::string region_name(const BatchRegion& region) const {
    return "region of " + describe(work_, region.first) + " .. " + describe(work_, region.first + region.count - 1);
  }

  /// The region compiled: from its memo when an earlier run kept it there,
  /// else compiled now (and kept).
  Result<std::shared_ptr<const CompiledRegion>> compiled(const BatchRegion& region) const {
    if (region.memo)
      if (auto kept = region.memo->find(&kCompiledRegionOwner))
        return std::static_pointer_cast<const CompiledRegion>(kept);
    TENACT_ASSIGN_OR_RETURN(auto made, compile_region(region));
    if (!region.memo) return made;
    return std::static_pointer_cast<const CompiledRegion>(region.memo->keep(&kCompiledRegionOwner, std::move(made)));
  }

  Result<std::shared_ptr<const CompiledRegion>> compile_region(const BatchRegion& region) const {
    auto made = std::make_shared<CompiledRegion>();
    ChainBuilder builder{region.count};
    std::map<uint32_t, HostTensor> scalars;  // splat constants as rank-0 inputs
    std::map<uint32_t, uint32_t> broadcasts;  // absorbed broadcast's value -> its member op
    std::vector<ChainValue> operands;
    // The memo outlives this run: its splat scalars are process-heap memory,
    // not the engine's (whose statistics count what runs hold).
    const HostBufferScope heap{nullptr};
    for (uint32_t j = region.first; j < region.first + region.count; ++j) {
      const PreparedOp& op = *work_.ops[j].op;
      if (auto scalar = splat_as_scalar(op.kind, op.attrs, op.results[0].dtype)) {
        if (!scalar->ok()) return scalar->error().with_context(region_name(region));
        scalars.emplace(id_of(BatchRef::op(j)), std::move(**scalar));
        continue;
      }
      if (op.kind == OpKind::BroadcastInDim) {
        broadcasts.emplace(id_of(BatchRef::op(j)), j - region.first);
        continue;
      }
      operands.clear();
      for (const BatchRef& ref : work_.ops[j].operands) {
        const DType dt = ref.from == BatchRef::From::Input ? work_.inputs[ref.index].dtype()
                                                          : work_.ops[ref.index].op->results[ref.result].dtype;
        operands.push_back(ChainValue{id_of(ref), dt});
      }
      if (Status added = builder.add(op.kind, op.attrs, operands, {id_of(BatchRef::op(j)), op.results[0].dtype});
          !added.ok())
        return added.error().with_context(region_name(region));
    }
    std::vector<uint32_t> live_out;
    for (const BatchRef& ref : region.outputs) live_out.push_back(id_of(ref));
    auto chained = std::move(builder).finish(live_out);
    if (!chained.ok()) return chained.error().with_context(region_name(region));
    // Where each region input is read first, so that later batches (whose
    // operand positions differ) find it without the chain's ids.
    for (uint32_t id : chained->input_values) {
      if (auto scalar = scalars.find(id); scalar != scalars.end()) {
        made->inputs.push_back(CompiledRegion::Input{scalar->second, 0, 0, std::nullopt});
        continue;
      }
      if (auto b = broadcasts.find(id); b != broadcasts.end()) {
        TENACT_ASSIGN_OR_RETURN(BroadcastView view, broadcast_view_of(region, b->second));
        made->inputs.push_back(CompiledRegion::Input{std::nullopt, b->second, 0, std::move(view)});
        continue;
      }
      TENACT_ASSIGN_OR_RETURN(CompiledRegion::Input at, first_read(region, id));
      made->inputs.push_back(std::move(at));
    }
    auto kernel = FusedKernel::compile(chained->region);
    if (!kernel.ok()) return kernel.error().with_context(region_name(region));
    made->kernel = std::move(*kernel);
    if (counters_ != nullptr) counters_->regions_compiled.fetch_add(1, std::memory_order_relaxed);
    return std::shared_ptr<const CompiledRegion>(std::move(made));
  }

  /// How the region reads absorbed broadcast member `j` (relative).
  Result<BroadcastView> broadcast_view_of(const BatchRegion& region, uint32_t j) const {
    const BatchOp& op = work_.ops[region.first + j];
    const auto* attrs = std::get_if<BroadcastInDimAttrs>(&op.op->attrs);
    if (attrs == nullptr || op.operands.size() != 1)
      return Error{ErrorCode::Internal, region_name(region) + ": its broadcast member " +
                                            describe(work_, region.first + j) + " is malformed"};
    BroadcastView view;
    view.exprs = attrs->shape;
    view.dims = attrs->broadcast_dimensions;
    std::vector<int64_t> constant;
    for (const DimExpr& e : attrs->shape)
      if (auto v = e.constant_value()) constant.push_back(*v);
    if (constant.size() == attrs->shape.size()) view.shape = std::move(constant);
    return view;
  }

  /// The operand of an absorbed broadcast as a view of its result shape.
  /// Errors (naming the broadcast): check_broadcast_operand's when the
  /// operand does not broadcast to it; those of evaluating a symbolic shape.
  Result<HostTensor> broadcast_input(const BatchRegion& region, const CompiledRegion::Input& in) const {
    const BroadcastView& view = *in.broadcast;
    const HostTensor& x = value(work_.ops[region.first + in.op].operands[0]);
    SmallVector<int64_t, 8> evaluated;  // a symbolic shape's extents this run (no allocation up to rank 8)
    if (!view.shape) {
      for (const DimExpr& e : view.exprs) {
        auto v = e.evaluate(work_.symbols);
        if (!v.ok()) return std::move(v).error().with_context(describe(work_, region.first + in.op));
        evaluated.push_back(*v);
      }
    }
    const std::span<const int64_t> shape = view.shape ? std::span<const int64_t>(*view.shape) : evaluated.span();
    if (Status fits = support::check_broadcast_operand(x.shape(), shape, view.dims); !fits.ok())
      return fits.error().with_context(describe(work_, region.first + in.op));
    return x.broadcast_view(shape, view.dims);
  }

  /// The first (member op, operand) of `region` that reads value `id`.
  Result<CompiledRegion::Input> first_read(const BatchRegion& region, uint32_t id) const {
    for (uint32_t j = 0; j < region.count; ++j) {
      const std::vector<BatchRef>& refs = work_.ops[region.first + j].operands;
      for (uint32_t p = 0; p < refs.size(); ++p)
        if (id_of(refs[p]) == id) return CompiledRegion::Input{std::nullopt, j, p, std::nullopt};
    }
    return Error{ErrorCode::Internal, region_name(region) + ": no member reads its input " + std::to_string(id)};
  }

  Status run_region(const BatchRegion& region) {
    TENACT_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledRegion> region_kernel, compiled(region));
    SmallVector<HostTensor, 8> inputs;
    for (const CompiledRegion::Input& in : region_kernel->inputs) {
      if (in.broadcast) {
        TENACT_ASSIGN_OR_RETURN(HostTensor viewed, broadcast_input(region, in));
        inputs.push_back(std::move(viewed));
        continue;
      }
      inputs.push_back(in.scalar ? *in.scalar : value(work_.ops[region.first + in.op].operands[in.operand]));
    }
    SmallVector<HostTensor, 4> destinations;
    for (const BatchRef& ref : region.outputs) destinations.push_back(destination(ref));
    SmallVector<HostTensor, 4> results;
    for (size_t k = 0; k < region.outputs.size(); ++k) results.push_back(HostTensor{});
    if (Status ran = region_kernel->kernel->run_into(inputs.span(), &pool_, counters_, destinations.span(),
                                                     results.span());
        !ran.ok())
      return ran.error().with_context(region_name(region));
    if (observer_ != nullptr)
      (*observer_)(KernelRun{region.first, region.first + region.count - 1, inputs.span(), results.span()});
    // Region output k is region.outputs[k] (the live-out order compiled).
    for (size_t k = 0; k < region.outputs.size(); ++k)
      results_[plan_.result_begin[region.outputs[k].index] + region.outputs[k].result] = std::move(results[k]);
    return ok_status();
  }

  // Where result `ref` (an op's) may be written: its destination when the
  // host can address it and it lies in destination_memory_ (if set); an
  // unset tensor otherwise.
  HostTensor destination(const BatchRef& ref) const {
    const std::vector<Tensor>& given = work_.ops[ref.index].destinations;
    if (ref.result >= given.size()) return {};
    const Tensor& d = given[ref.result];
    if (!d.buffer() || !d.buffer()->host_addressable()) return {};
    if (destination_memory_ && d.endpoint() != *destination_memory_) return {};
    return d;
  }

  // Drops the op results whose last reader is among the ops run so far.
  void release_through(size_t end) {
    for (; released_ < end; ++released_)
      for (uint32_t k = plan_.dies_begin[released_]; k < plan_.dies_begin[released_ + 1]; ++k)
        for (HostTensor& result : results_of(plan_.dies_after[k])) result = HostTensor{};
  }

  const BatchWork& work_;
  const BatchPlan& plan_;
  std::span<KernelKeep> keeps_;
  WorkerPool& pool_;
  FusedCounters* counters_;
  const KernelObserver* observer_;
  std::optional<Endpoint> destination_memory_;
  /// Every op's results, flat (BatchPlan::result_begin): on the stack for
  /// a batch of up to kInlineResults results, so a small batch allocates
  /// no bookkeeping per run.
  static constexpr size_t kInlineResults = 16;
  SmallVector<HostTensor, kInlineResults> results_;
  size_t released_ = 0;
};

}  // namespace

BatchPlan plan_batch_on_cpu(const BatchWork& work) {
  BatchPlan plan;
  const size_t n = work.ops.size();
  // The last op reading each op's result (n: an output; -1: none).
  std::vector<int64_t> last_read(n, -1);
  for (size_t i = 0; i < n; ++i)
    for (const BatchRef& ref : work.ops[i].operands)
      if (ref.from == BatchRef::From::Op) last_read[ref.index] = static_cast<int64_t>(i);
  for (const BatchRef& ref : work.outputs)
    if (ref.from == BatchRef::From::Op) last_read[ref.index] = static_cast<int64_t>(n);
  if (!work.regions.empty()) {
    plan.region_at.assign(n, -1);
    for (size_t r = 0; r < work.regions.size(); ++r) plan.region_at[work.regions[r].first] = static_cast<int32_t>(r);
  }
  plan.result_begin.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i)
    plan.result_begin[i + 1] = plan.result_begin[i] + static_cast<uint32_t>(work.ops[i].op->results.size());
  // Counted per bucket, summed to each bucket's end, then filled from the
  // back (which leaves each begin at its bucket's start).
  plan.dies_begin.assign(n + 1, 0);
  auto last_of = [&](size_t j) { return last_read[j] < 0 ? static_cast<int64_t>(j) : last_read[j]; };
  for (size_t j = 0; j < n; ++j)
    if (const int64_t last = last_of(j); last < static_cast<int64_t>(n)) ++plan.dies_begin[static_cast<size_t>(last)];
  for (size_t k = 1; k <= n; ++k) plan.dies_begin[k] += plan.dies_begin[k - 1];
  plan.dies_after.resize(plan.dies_begin[n]);
  for (size_t j = n; j-- > 0;)
    if (const int64_t last = last_of(j); last < static_cast<int64_t>(n))
      plan.dies_after[--plan.dies_begin[static_cast<size_t>(last)]] = static_cast<uint32_t>(j);
  return plan;
}

Result<std::vector<HostTensor>> run_batch_on_cpu(const BatchWork& work, WorkerPool& pool,
                                                 FusedCounters* counters, const KernelObserver* observer,
                                                 std::optional<Endpoint> destination_memory) {
  TENACT_TRY(validate_batch(work));
  return run_validated_batch_on_cpu(work, pool, counters, observer, std::move(destination_memory));
}

Result<std::vector<HostTensor>> run_validated_batch_on_cpu(const BatchWork& work, WorkerPool& pool,
                                                           FusedCounters* counters, const KernelObserver* observer,
                                                           std::optional<Endpoint> destination_memory) {
  const BatchPlan plan = plan_batch_on_cpu(work);
  return BatchRunner{work, plan, {}, pool, counters, observer, std::move(destination_memory)}.run();
}

Result<std::vector<HostTensor>> run_planned_batch_on_cpu(const BatchWork& work, const BatchPlan& plan,
                                                         std::span<KernelKeep> keeps, WorkerPool& pool,
                                                         FusedCounters* counters,
                                                         std::optional<Endpoint> destination_memory) {
  return BatchRunner{work, plan, keeps, pool, counters, nullptr, std::move(destination_memory)}.run();
}

}  // namespace tenact::cpu
