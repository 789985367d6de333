// Fused elementwise regions: a DAG of elementwise ops over one shape, run
// as one pass over cache-sized tiles instead of one full pass per op.
//
// A region names its inputs by position (region inputs) and each op's
// operands as region inputs or results of earlier ops; `outputs` lists the
// op results that leave the region. Execution walks the shape in tiles of
// kFusedTileElements: per tile, every op runs in order on small per-op tile
// buffers (reused once their last reader has run) and only the outputs are
// written to full-size tensors. Each op runs through the same tile
// functions as the single-op kernels (elementwise_kernels.hpp), each result
// rounded to its own dtype, so a region gives bit for bit what its ops give
// one by one (docs/program-format.md, "Rounding").
//
// Inputs: every input has the region's shape (any strides: contiguous ones
// are read in place, broadcast ones — all strides 0 — are read once,
// others are gathered per tile), or is rank 0 and then stands for its
// broadcast to the region's shape. The region's shape is the common shape
// of its inputs of rank > 0 ([] when all are rank 0).
//
// Thread-safety: a FusedKernel is immutable after compile; any number of
// threads may run it at once. Results never depend on the pool or its size.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/op_attrs.hpp"
#include "core/op_kind.hpp"
#include "core/tensor.hpp"
#include "engines/cpu/kernels/elementwise_kernels.hpp"

namespace tenact {
class WorkerPool;  // util/worker_pool.hpp
}  // namespace tenact

namespace tenact::cpu {


/// Elements per tile. Small enough that the input tiles, the live tile
/// buffers and the output tile of a region stay in L1 together: on the
/// issue's chain (16M f32, y = tanh(a*b + c) * 0.5 + a) 512 ran ~10%
/// faster than 1024 and ~15% faster than 2048 or 8192.
inline constexpr int64_t kFusedTileElements = 512;
/// Elements per unit of parallel work (the pool's grain).
inline constexpr int64_t kElementwiseGrain = 64 * 1024;
/// Operands a fused op reads at most (select and clamp read three).
inline constexpr size_t kMaxFusedOperands = 3;

/// An operand of a fused op: region input `index` or the result of op
/// `index` (which must come earlier in the region).
struct FusedOperand {
  enum class Source : uint8_t { Input, Op };
  Source source = Source::Input;
  uint32_t index = 0;

  static FusedOperand input(uint32_t i) { return {Source::Input, i}; }
  static FusedOperand op(uint32_t i) { return {Source::Op, i}; }
  friend bool operator==(const FusedOperand&, const FusedOperand&) = default;
};

struct FusedOp {
  OpKind kind = OpKind::Add;
  OpAttrs attrs;
  std::vector<FusedOperand> operands;
  /// The dtype the op yields (checked against the op's type rules).
  DType result_dtype = DType::F32;
};

struct FusedRegion {
  std::vector<DType> input_dtypes;
  /// In dependency order: an op's operands name inputs or earlier ops.
  std::vector<FusedOp> ops;
  /// Op indices whose results leave the region, in result order (an op may
  /// be listed twice; both results then share one tensor).
  std::vector<uint32_t> outputs;
};

/// What the executor did, for tests and statistics. Owned by the caller;
/// updated with relaxed atomics, so one object may be shared by threads.
struct FusedCounters {
  std::atomic<uint64_t> regions_run{0};
  /// Ops run inside regions (each run adds the region's op count).
  std::atomic<uint64_t> ops_fused{0};
  /// Tiles processed (a tile runs every op of the region once).
  std::atomic<uint64_t> tiles{0};
  /// Planned regions a batch runner compiled (once per region memo, see
  /// BatchRegion::memo; once per run without one).
  std::atomic<uint64_t> regions_compiled{0};
};

/// A validated region with its tile functions resolved and its tile
/// buffers assigned. Cheap to copy (shared, immutable state). Keeps a
/// fixed-size step per op, not the region (about 64 bytes per op).
class FusedKernel {
 public:
  /// Errors: InvalidAttribute for a region without ops or outputs, an op
  /// with more than kMaxFusedOperands operands, or an operand, output or op
  /// reference out of range (naming the op index); the op's own errors
  /// from find_elementwise_kernel, and TypeMismatch when an op's declared
  /// result dtype is not what it yields.
  static Result<FusedKernel> compile(const FusedRegion& region);

  /// Runs the region. Errors: InputMismatch for a wrong input count, dtype
  /// or shape (naming the input); ExecutionFailed when allocation fails.
  /// `pool` may be null (serial); `counters` may be null. `destinations`:
  /// empty, or one per region output (unset tensors allowed): an output is
  /// written into its destination when it fits (destination_view in
  /// kernel.hpp; the result is then a view of its buffer), else into a new
  /// tensor; an output listed twice uses the first of its destinations
  /// that fits. A destination overlaps no input.
  Result<std::vector<HostTensor>> run(std::span<const HostTensor> inputs, WorkerPool* pool,
                                      FusedCounters* counters = nullptr,
                                      std::span<const HostTensor> destinations = {}) const;
  /// run() writing region output r to results[r] (`results` holds one
  /// tensor per region output: output_count()), with no vector made for
  /// them: what a runner that keeps its own result slots calls. On error
  /// `results` is left unspecified.
  Status run_into(std::span<const HostTensor> inputs, WorkerPool* pool, FusedCounters* counters,
                  std::span<const HostTensor> destinations, std::span<HostTensor> results) const;
  /// The number of region outputs (the region's `outputs`, repeats counted).
  size_t output_count() const;

  /// Tile buffers one worker needs (after reuse), for tests.
  size_t scratch_slots() const;

  struct Plan;

 private:
  explicit FusedKernel(std::shared_ptr<const Plan> plan) : plan_(std::move(plan)) {}
  std::shared_ptr<const Plan> plan_;
};

/// compile + run in one call.
Result<std::vector<HostTensor>> run_fused_region(const FusedRegion& region,
                                                 std::span<const HostTensor> inputs,
                                                 WorkerPool* pool,
                                                 FusedCounters* counters = nullptr,
                                                 std::span<const HostTensor> destinations = {});

// -- regions from straight chains ---------------------------------------------

/// A value of the caller's program (an SSA slot id) with its dtype.
struct ChainValue {
  uint32_t id = 0;
  DType dtype = DType::F32;
};

/// One op of a run of consecutive elementwise ops, in the caller's value ids.
struct ChainOp {
  OpKind kind = OpKind::Add;
  OpAttrs attrs;
  std::vector<ChainValue> operands;
  ChainValue result;
};

struct ChainRegion {
  FusedRegion region;
  /// Region input i is the caller's value input_values[i] (values used by
  /// the chain but not produced in it, in order of first use).
  std::vector<uint32_t> input_values;
  /// Region output i is the caller's value output_values[i] (= live_out).
  std::vector<uint32_t> output_values;
};

/// Builds the region of a chain of consecutive elementwise ops one op at a
/// time, for callers that hold their ops in another form (no ChainOp per
/// op is needed). Not thread-safe; one chain per builder.
class ChainBuilder {
 public:
  /// `ops_hint`: how many ops will be added (reserves the region).
  explicit ChainBuilder(size_t ops_hint);
  /// Appends an op reading `operands` and defining `result`. Errors as
  /// region_from_chain's (naming the op by its position in the chain).
  Status add(OpKind kind, const OpAttrs& attrs, std::span<const ChainValue> operands, ChainValue result);
  /// The region, its outputs the values of `live_out` in that order.
  Result<ChainRegion> finish(std::span<const uint32_t> live_out) &&;

 private:
  struct Place {
    FusedOperand operand;
    DType dtype = DType::F32;
  };
  ChainRegion chain_;
  /// Where each value the chain has seen lives in the region.
  std::unordered_map<uint32_t, Place> places_;
};

/// Builds the region of a chain of consecutive elementwise ops. `live_out`
/// lists the values produced by the chain that are read after it (program
/// outputs or later ops); they become the region's outputs in that order.
/// Errors: InvalidAttribute when an op is not elementwise, a value is
/// produced twice, or a live_out value is not produced by the chain;
/// InputMismatch when a value is used with two different dtypes.
Result<ChainRegion> region_from_chain(std::span<const ChainOp> ops,
                                      std::span<const uint32_t> live_out);

/// The value of a splat constant (a Constant op whose attributes carry
/// `splat`) as the rank-0 tensor a region reads in its place; nullopt when
/// `kind`/`attrs` are not a splat constant. Errors: those of allocating.
std::optional<Result<HostTensor>> splat_as_scalar(OpKind kind, const OpAttrs& attrs, DType dtype);

}  // namespace tenact::cpu
