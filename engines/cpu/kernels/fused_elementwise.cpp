// The fused elementwise executor (see fused_elementwise.hpp).
//
// Compile resolves each op's tile function and assigns its result a place:
// the output tensor when the op is a region output, otherwise a scratch
// slot (a tile buffer), reused once the op's last reader has run. A slot is
// taken before the op's operands release theirs, so no op writes over an
// operand (the tile loops are restrict-qualified).
#include "engines/cpu/kernels/fused_elementwise.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <new>
#include <string>

#include "engines/cpu/kernels/elementwise_strided.hpp"
#include "engines/cpu/kernels/layout_strided_copy.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "util/small_vector.hpp"
#include "util/worker_pool.hpp"

namespace tenact::cpu {

/// What a compiled region keeps: per op a fixed-size step (no allocation
/// per op; the region itself is not kept).
struct FusedKernel::Plan {
  struct Step {
    TileFn fn = nullptr;
    std::array<FusedOperand, kMaxFusedOperands> operands{};
    uint8_t operand_count = 0;
    size_t result_size = 0;  // bytes per element of the result
    int32_t slot = -1;       // scratch slot, or -1 when written to an output
    int32_t output = -1;     // distinct output index, or -1
    std::span<const FusedOperand> reads() const { return {operands.data(), operand_count}; }
  };
  std::vector<DType> input_dtypes;
  std::vector<Step> steps;
  size_t slot_count = 0;
  size_t slot_bytes = 0;  // bytes per slot (a tile of the widest slotted result)
  /// Distinct ops that leave the region; output tensor i holds op
  /// output_ops[i], of dtype output_dtypes[i].
  std::vector<uint32_t> output_ops;
  std::vector<DType> output_dtypes;
  /// Region output r is output tensor result_output[r].
  std::vector<size_t> result_output;
};

namespace {

std::string op_label(size_t i, const FusedOp& op) {
  return "fused op #" + std::to_string(i) + " (" + std::string{to_string(op.kind)} + ")";
}

std::string shape_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

/// How the executor reads one region input.
struct InputView {
  enum class Kind : uint8_t { Contiguous, Broadcast, Strided };
  Kind kind = Kind::Contiguous;
  const HostTensor* tensor = nullptr;
  const std::byte* data = nullptr;
  size_t element_size = 0;
};

bool is_broadcast_scalar(const HostTensor& t) {
  for (size_t ax = 0; ax < t.rank(); ++ax)
    if (t.shape()[ax] > 1 && t.strides()[ax] != 0) return false;
  return true;
}

/// Aligned scratch for one worker thread, grown on demand and kept for the
/// thread's lifetime (no allocation per chunk). Private to run_range, which
/// never nests on one thread.
struct Scratch {
  std::byte* data = nullptr;
  size_t size = 0;
  ~Scratch() { ::operator delete[](data, std::align_val_t{kTensorAlignment}); }
  std::byte* reserve(size_t bytes) {
    if (bytes <= size) return data;
    ::operator delete[](data, std::align_val_t{kTensorAlignment});
    data = static_cast<std::byte*>(
        ::operator new[](bytes, std::align_val_t{kTensorAlignment}, std::nothrow));
    size = data ? bytes : 0;
    return data;
  }
};

size_t round_up(size_t bytes) {
  return (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
}

/// Runs every op of the plan over elements [begin, end). Returns false when
/// scratch could not be allocated.
bool run_range(const FusedKernel::Plan& plan, std::span<const InputView> inputs,
               std::span<std::byte* const> outputs, int64_t begin, int64_t end) {
  constexpr int64_t tile = kFusedTileElements;
  // Layout: slots, then one tile per broadcast or strided input.
  const size_t slot_area = plan.slot_count * plan.slot_bytes;
  size_t total = slot_area;
  // Per-thread bookkeeping, reused: run_range allocates nothing once its
  // thread has seen a region this wide.
  thread_local std::vector<size_t> input_tile;
  thread_local std::vector<StridedCursor> cursors;
  thread_local std::vector<size_t> cursor_of;
  input_tile.assign(inputs.size(), 0);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].kind == InputView::Kind::Contiguous) continue;
    input_tile[i] = total;
    total += round_up(static_cast<size_t>(tile) * inputs[i].element_size);
  }
  thread_local Scratch scratch;
  std::byte* base = scratch.reserve(std::max<size_t>(total, 1));
  if (base == nullptr) return false;

  cursors.clear();
  cursor_of.assign(inputs.size(), 0);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputView& in = inputs[i];
    if (in.kind == InputView::Kind::Broadcast) {
      fill_elements(base + input_tile[i], std::min(tile, end - begin), in.data, in.element_size, nullptr);
    } else if (in.kind == InputView::Kind::Strided) {
      cursor_of[i] = cursors.size();
      cursors.emplace_back(*in.tensor, begin);
    }
  }

  const std::byte* operand_ptrs[3] = {nullptr, nullptr, nullptr};
  for (int64_t t = begin; t < end; t += tile) {
    const int64_t len = std::min(tile, end - t);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].kind == InputView::Kind::Strided)
        cursors[cursor_of[i]].gather(base + input_tile[i], len);
    for (const auto& step : plan.steps) {
      for (size_t k = 0; k < step.operand_count; ++k) {
        const FusedOperand& operand = step.operands[k];
        if (operand.source == FusedOperand::Source::Input) {
          const InputView& in = inputs[operand.index];
          operand_ptrs[k] = in.kind == InputView::Kind::Contiguous
                                ? in.data + static_cast<size_t>(t) * in.element_size
                                : base + input_tile[operand.index];
        } else {
          const auto& producer = plan.steps[operand.index];
          operand_ptrs[k] =
              producer.output >= 0
                  ? outputs[static_cast<size_t>(producer.output)] +
                        static_cast<size_t>(t) * producer.result_size
                  : base + static_cast<size_t>(producer.slot) * plan.slot_bytes;
        }
      }
      std::byte* out = step.output >= 0 ? outputs[static_cast<size_t>(step.output)] +
                                              static_cast<size_t>(t) * step.result_size
                                        : base + static_cast<size_t>(step.slot) * plan.slot_bytes;
      step.fn(operand_ptrs, out, len);
    }
  }
  return true;
}

}  // namespace

Result<FusedKernel> FusedKernel::compile(const FusedRegion& region) {
  if (region.ops.empty())
    return Error{ErrorCode::InvalidAttribute, "a fused region needs at least one op"};
  if (region.outputs.empty())
    return Error{ErrorCode::InvalidAttribute, "a fused region needs at least one output"};
  auto plan = std::make_shared<Plan>();
  const size_t op_count = region.ops.size();
  plan->input_dtypes = region.input_dtypes;
  plan->steps.reserve(op_count);

  // Outputs: distinct ops, in first-listed order.
  std::vector<int32_t> output_of(op_count, -1);
  for (uint32_t op : region.outputs) {
    if (op >= op_count)
      return Error{ErrorCode::InvalidAttribute, "fused region output names op #" +
                                                    std::to_string(op) + ", but the region has " +
                                                    std::to_string(op_count) + " ops"};
    if (output_of[op] < 0) {
      output_of[op] = static_cast<int32_t>(plan->output_ops.size());
      plan->output_ops.push_back(op);
    }
    plan->result_output.push_back(static_cast<size_t>(output_of[op]));
  }

  // Kernels and last uses.
  std::vector<DType> result_dtypes(op_count);
  std::vector<size_t> last_use(op_count, 0);
  for (size_t i = 0; i < op_count; ++i) {
    const FusedOp& op = region.ops[i];
    if (op.operands.size() > kMaxFusedOperands)
      return Error{ErrorCode::InvalidAttribute, op_label(i, op) + " has " + std::to_string(op.operands.size()) +
                                                    " operands; a fused op reads at most " +
                                                    std::to_string(kMaxFusedOperands)};
    std::vector<DType> operand_dtypes;
    for (const FusedOperand& operand : op.operands) {
      if (operand.source == FusedOperand::Source::Input) {
        if (operand.index >= region.input_dtypes.size())
          return Error{ErrorCode::InvalidAttribute,
                       op_label(i, op) + " reads region input #" + std::to_string(operand.index) +
                           ", but the region has " + std::to_string(region.input_dtypes.size()) +
                           " inputs"};
        operand_dtypes.push_back(region.input_dtypes[operand.index]);
      } else {
        if (operand.index >= i)
          return Error{ErrorCode::InvalidAttribute,
                       op_label(i, op) + " reads the result of op #" +
                           std::to_string(operand.index) + ", which does not come before it"};
        operand_dtypes.push_back(result_dtypes[operand.index]);
        last_use[operand.index] = i;
      }
    }
    auto kernel = find_elementwise_kernel(op.kind, op.attrs, operand_dtypes);
    if (!kernel.ok()) return kernel.error().with_context(op_label(i, op));
    if (kernel->result != op.result_dtype)
      return Error{ErrorCode::TypeMismatch,
                   op_label(i, op) + " yields " + std::string{to_string(kernel->result)} +
                       ", but the region declares " + std::string{to_string(op.result_dtype)}};
    result_dtypes[i] = kernel->result;
    Plan::Step step;
    step.fn = kernel->fn;
    std::copy(op.operands.begin(), op.operands.end(), step.operands.begin());
    step.operand_count = static_cast<uint8_t>(op.operands.size());
    step.result_size = size_of(kernel->result);
    step.output = output_of[i];
    plan->steps.push_back(std::move(step));
  }

  // Scratch slots for results that stay inside the region, reused after
  // their last reader (an unread result keeps its slot only for its op).
  std::vector<int32_t> free_slots;
  size_t widest = 1;
  for (size_t i = 0; i < op_count; ++i) {
    Plan::Step& step = plan->steps[i];
    if (step.output < 0) {
      if (free_slots.empty()) {
        step.slot = static_cast<int32_t>(plan->slot_count++);
      } else {
        step.slot = free_slots.back();
        free_slots.pop_back();
      }
      widest = std::max(widest, step.result_size);
      if (last_use[i] == 0) free_slots.push_back(step.slot);  // never read
    }
    for (const FusedOperand& operand : step.reads()) {
      if (operand.source != FusedOperand::Source::Op) continue;
      const Plan::Step& producer = plan->steps[operand.index];
      if (producer.output < 0 && last_use[operand.index] == i &&
          std::find(free_slots.begin(), free_slots.end(), producer.slot) == free_slots.end())
        free_slots.push_back(producer.slot);
    }
  }
  plan->slot_bytes = round_up(static_cast<size_t>(kFusedTileElements) * widest);
  for (uint32_t op : plan->output_ops) plan->output_dtypes.push_back(region.ops[op].result_dtype);
  return FusedKernel{std::move(plan)};
}

size_t FusedKernel::scratch_slots() const { return plan_->slot_count; }

size_t FusedKernel::output_count() const { return plan_->result_output.size(); }

Result<std::vector<HostTensor>> FusedKernel::run(std::span<const HostTensor> inputs,
                                                 WorkerPool* pool, FusedCounters* counters,
                                                 std::span<const HostTensor> destinations) const {
  std::vector<HostTensor> results(output_count());
  TENACT_TRY(run_into(inputs, pool, counters, destinations, results));
  return results;
}

Status FusedKernel::run_into(std::span<const HostTensor> inputs, WorkerPool* pool, FusedCounters* counters,
                             std::span<const HostTensor> destinations, std::span<HostTensor> results) const {
  const Plan& plan = *plan_;
  if (results.size() != plan.result_output.size())
    return Error{ErrorCode::Internal, "fused region has " + std::to_string(plan.result_output.size()) +
                                          " outputs, given room for " + std::to_string(results.size())};
  const auto& dtypes = plan.input_dtypes;
  if (inputs.size() != dtypes.size())
    return Error{ErrorCode::InputMismatch, "fused region takes " + std::to_string(dtypes.size()) +
                                               " inputs, got " + std::to_string(inputs.size())};
  // The region's shape: the common shape of the inputs of rank > 0.
  const HostTensor* shaper = nullptr;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype() != dtypes[i])
      return Error{ErrorCode::InputMismatch,
                   "fused region input #" + std::to_string(i) + " has dtype " +
                       std::string{to_string(inputs[i].dtype())} + ", expected " +
                       std::string{to_string(dtypes[i])}};
    if (inputs[i].rank() == 0) continue;
    if (shaper == nullptr) shaper = &inputs[i];
    else if (inputs[i].shape() != shaper->shape())
      return Error{ErrorCode::InputMismatch, "fused region input #" + std::to_string(i) +
                                                 " has shape " + shape_text(inputs[i].shape()) +
                                                 ", expected " + shape_text(shaper->shape())};
  }
  static const std::vector<int64_t> kScalarShape;
  const std::vector<int64_t>& shape = shaper ? shaper->shape() : kScalarShape;
  TENACT_ASSIGN_OR_RETURN(const int64_t n, checked_element_count(shape));

  SmallVector<InputView, 8> views;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const HostTensor& t = inputs[i];
    if (n > 0 && t.buffer() == nullptr)
      return Error{ErrorCode::InputMismatch,
                   "fused region input #" + std::to_string(i) + " has no buffer"};
    views.push_back(InputView{});
    InputView& v = views[i];
    v.tensor = &t;
    v.data = t.data();
    v.element_size = size_of(t.dtype());
    v.kind = t.rank() == 0 || is_broadcast_scalar(t) ? InputView::Kind::Broadcast
             : t.is_contiguous()                     ? InputView::Kind::Contiguous
                                                     : InputView::Kind::Strided;
    if (n == 1 && v.kind == InputView::Kind::Broadcast) v.kind = InputView::Kind::Contiguous;
  }

  SmallVector<HostTensor, 4> tensors;
  SmallVector<std::byte*, 4> bases;
  for (size_t i = 0; i < plan.output_dtypes.size(); ++i) {
    // run_range writes every element of [0, n): no zero fill.
    std::optional<HostTensor> out;
    for (size_t r = 0; r < plan.result_output.size() && r < destinations.size() && !out; ++r)
      if (plan.result_output[r] == i) out = destination_view(destinations[r], plan.output_dtypes[i], shape);
    if (!out) {
      TENACT_ASSIGN_OR_RETURN(HostTensor made, HostTensor::dense(plan.output_dtypes[i], shape, BufferFill::Unspecified));
      out = std::move(made);
    }
    bases.push_back(out->data());
    tensors.push_back(std::move(*out));
  }

  std::atomic<bool> failed{false};
  if (n > 0) {
    parallel_for(pool, n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
      if (!run_range(plan, views.span(), bases.span(), begin, end)) failed.store(true);
    });
  }
  if (failed.load())
    return Error{ErrorCode::ExecutionFailed, "fused region could not allocate its tile buffers"};
  if (counters != nullptr) {
    counters->regions_run.fetch_add(1, std::memory_order_relaxed);
    counters->ops_fused.fetch_add(plan.steps.size(), std::memory_order_relaxed);
    counters->tiles.fetch_add(static_cast<uint64_t>((n + kFusedTileElements - 1) / kFusedTileElements),
                              std::memory_order_relaxed);
  }
  for (size_t r = 0; r < results.size(); ++r) results[r] = tensors[plan.result_output[r]];
  return ok_status();
}

Result<std::vector<HostTensor>> run_fused_region(const FusedRegion& region,
                                                 std::span<const HostTensor> inputs,
                                                 WorkerPool* pool, FusedCounters* counters,
                                                 std::span<const HostTensor> destinations) {
  TENACT_ASSIGN_OR_RETURN(FusedKernel kernel, FusedKernel::compile(region));
  return kernel.run(inputs, pool, counters, destinations);
}

// -- regions from straight chains ---------------------------------------------

ChainBuilder::ChainBuilder(size_t ops_hint) {
  chain_.region.ops.reserve(ops_hint);
  places_.reserve(ops_hint);
}

Status ChainBuilder::add(OpKind kind, const OpAttrs& attrs, std::span<const ChainValue> operands,
                         ChainValue result) {
  const size_t i = chain_.region.ops.size();
  if (!is_elementwise_op(kind))
    return Error{ErrorCode::InvalidAttribute, "chain op #" + std::to_string(i) + " (" +
                                                  std::string{to_string(kind)} + ") is not an elementwise op"};
  FusedOp fused;
  fused.kind = kind;
  fused.attrs = attrs;
  fused.result_dtype = result.dtype;
  fused.operands.reserve(operands.size());
  for (const ChainValue& v : operands) {
    auto it = places_.find(v.id);
    if (it == places_.end()) {
      const auto input = static_cast<uint32_t>(chain_.region.input_dtypes.size());
      chain_.region.input_dtypes.push_back(v.dtype);
      chain_.input_values.push_back(v.id);
      it = places_.emplace(v.id, Place{FusedOperand::input(input), v.dtype}).first;
    }
    if (it->second.dtype != v.dtype)
      return Error{ErrorCode::InputMismatch,
                   "chain op #" + std::to_string(i) + " reads value " + std::to_string(v.id) + " as " +
                       std::string{to_string(v.dtype)} + ", but it is " + std::string{to_string(it->second.dtype)}};
    fused.operands.push_back(it->second.operand);
  }
  if (!places_.emplace(result.id, Place{FusedOperand::op(static_cast<uint32_t>(i)), result.dtype}).second)
    return Error{ErrorCode::InvalidAttribute, "chain op #" + std::to_string(i) + " defines value " +
                                                  std::to_string(result.id) + ", which is already defined"};
  chain_.region.ops.push_back(std::move(fused));
  return ok_status();
}

Result<ChainRegion> ChainBuilder::finish(std::span<const uint32_t> live_out) && {
  for (uint32_t id : live_out) {
    auto it = places_.find(id);
    if (it == places_.end() || it->second.operand.source != FusedOperand::Source::Op)
      return Error{ErrorCode::InvalidAttribute,
                   "live-out value " + std::to_string(id) + " is not produced by the chain"};
    chain_.region.outputs.push_back(it->second.operand.index);
    chain_.output_values.push_back(id);
  }
  std::unordered_map<uint32_t, Place>().swap(places_);  // the builder is done
  return std::move(chain_);
}

Result<ChainRegion> region_from_chain(std::span<const ChainOp> ops,
                                      std::span<const uint32_t> live_out) {
  ChainBuilder builder{ops.size()};
  for (const ChainOp& op : ops) TENACT_TRY(builder.add(op.kind, op.attrs, op.operands, op.result));
  return std::move(builder).finish(live_out);
}

std::optional<Result<HostTensor>> splat_as_scalar(OpKind kind, const OpAttrs& attrs, DType dtype) {
  const auto* constant = kind == OpKind::Constant ? std::get_if<ConstantAttrs>(&attrs) : nullptr;
  if (!constant || !constant->splat) return std::nullopt;
  auto scalar = HostTensor::zeros(dtype, {});
  if (scalar.ok()) constant->splat->store(scalar->dtype(), scalar->data());
  return scalar;
}

}  // namespace tenact::cpu
