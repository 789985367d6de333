// The reduction loops, generic over a policy of reduction_ops.hpp and
// driven by a ReductionPlan.
//
// Summation tree (fixed by the shapes alone, never by the thread count):
// - a *leaf* is a block of at most kBlock contiguous elements reduced into
//   kLanes independent accumulators (kPerLane elements each, in order),
//   the lanes then combined pairwise (InnerRuns); or a group of kRowGroup
//   consecutive rows accumulated in order, element by element (Rows); a
//   result that reduces one short run (reduce_short_run) is a single leaf
//   computed with the same operations as reduce_block;
// - the leaves of one result combine by a binary counter (PairwiseStack):
//   a balanced pairwise tree over the leaves in order.
// Splitting the leaves of one result into chunks of a power-of-two count
// and combining the chunk results by the same binary counter builds the
// very same tree, which is why the parallel split gives the serial bits.
// Error of a float sum of n terms: an element passes through at most
// (kPerLane - 1) + log2(kLanes) + ceil(log2(leaves)) roundings (InnerRuns)
// or (kRowGroup - 1) + ceil(log2(leaves)) (Rows); both stay within
// 2*ceil(log2 n) for every n >= 2, the bound docs/program-format.md sets.
//
// Thread-safety: every function writes only to the output elements it is
// given; the pool runs disjoint output ranges or disjoint chunk slots.
// Allocation failure (std::bad_alloc) inside a pool task is caught there
// and reported by run_plan's return value; outside tasks it propagates.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <new>
#include <vector>

#include "engines/cpu/kernels/reduction_plan.hpp"
#include "util/worker_pool.hpp"

namespace tenact::cpu::reduction {

template <class Acc> inline constexpr int kLanes =
    sizeof(Acc) >= 16 ? 8 : static_cast<int>(128 / sizeof(Acc));
inline constexpr int kPerLane = 8;
template <class Acc> inline constexpr int64_t kBlock = int64_t{kLanes<Acc>} * kPerLane;
inline constexpr int64_t kRowGroup = 4;
/// Leaves per parallel chunk of one result's reduction (a power of two).
inline constexpr int64_t kChunkLeaves = 64;
/// Below this many input elements a reduction runs serially.
inline constexpr int64_t kParallelMinWork = int64_t{1} << 16;
/// Input elements a parallel task should at least cover.
inline constexpr int64_t kTaskWork = int64_t{1} << 14;
/// Bytes of one row tile's pairwise stack (Rows): the tile is as wide as
/// this allows, so that rows stream in long contiguous pieces while the
/// stack stays in L2.
inline constexpr int64_t kStackBytes = int64_t{256} << 10;

/// Walks the positions of an AxisList in row-major order, tracking the
/// input and output element offsets (relative to a base).
class Odometer {
 public:
  explicit Odometer(const AxisList& axes) : axes_(axes), index_(axes.size(), 0) {}

  void seek(int64_t linear) {
    in_ = 0;
    out_ = 0;
    for (size_t a = axes_.size(); a-- > 0;) {
      const int64_t n = axes_.sizes[a];
      index_[a] = linear % n;
      linear /= n;
      in_ += index_[a] * axes_.in_strides[a];
      out_ += index_[a] * axes_.out_strides[a];
    }
  }
  void next() {
    for (size_t a = axes_.size(); a-- > 0;) {
      in_ += axes_.in_strides[a];
      out_ += axes_.out_strides[a];
      if (++index_[a] < axes_.sizes[a]) return;
      in_ -= axes_.in_strides[a] * axes_.sizes[a];
      out_ -= axes_.out_strides[a] * axes_.sizes[a];
      index_[a] = 0;
    }
  }
  int64_t in_offset() const { return in_; }
  int64_t out_offset() const { return out_; }

 private:
  const AxisList& axes_;
  std::vector<int64_t> index_;
  int64_t in_ = 0;
  int64_t out_ = 0;
};

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline size_t thread_count(WorkerPool* pool) { return pool ? pool->thread_count() : 1; }

/// parallel_for whose tasks catch allocation failure (parallel_for's tasks
/// must not throw). Returns false when a task ran out of memory.
template <class F>
bool guarded_parallel_for(WorkerPool* pool, int64_t n, int64_t grain, F&& fn) {
  std::atomic<bool> failed{false};
  parallel_for(pool, n, grain, [&](int64_t b, int64_t e) {
    try {
      fn(b, e);
    } catch (const std::bad_alloc&) {
      failed.store(true);
    }
  });
  return !failed.load();
}

/// Binary counter over scalar partial results: push() leaves in order,
/// result() combines what is left from the top down.
template <class Op>
class PairwiseStack {
  using Acc = typename Op::Acc;

 public:
  void push(Acc v) {
    int level = 0;
    while (top_ > 0 && level_[top_ - 1] == level) {
      v = Op::combine(node_[top_ - 1], v);
      --top_;
      ++level;
    }
    node_[top_] = v;
    level_[top_] = static_cast<uint8_t>(level);
    ++top_;
  }
  Acc result() const {
    if (top_ == 0) return Op::identity();
    Acc s = node_[top_ - 1];
    for (int i = top_ - 2; i >= 0; --i) s = Op::combine(node_[i], s);
    return s;
  }

 private:
  Acc node_[64];
  uint8_t level_[64];
  int top_ = 0;
};

/// Combines lanes [0, 2W) pairwise into [0, W), then recurses (constant
/// trip counts: vectorizable).
template <class Op, int W>
void combine_lane_tree(typename Op::Acc* acc) {
  if constexpr (W >= 1) {
    for (int j = 0; j < W; ++j) acc[j] = Op::combine(acc[j], acc[j + W]);
    combine_lane_tree<Op, W / 2>(acc);
  }
}

/// A run of 1 <= n <= N contiguous elements (N a power of two): pairwise,
/// element j with element j + w for w = bit_ceil(n) / 2, ..., 1 where
/// both exist. The tree depends on n only, never on N. No identity is
/// combined in (so a lone -0.0 or complex infinity comes back unchanged).
template <class Op, int N>
typename Op::Acc reduce_short_run(const typename Op::In* p, int64_t n) {
  typename Op::Acc a[N]{};
  for (int j = 0; j < n; ++j) a[j] = Op::load(p[j]);
  int live = static_cast<int>(n);
  for (int w = static_cast<int>(std::bit_ceil(static_cast<uint64_t>(n))) / 2; w >= 1; w /= 2) {
    for (int j = 0; j + w < live; ++j) a[j] = Op::combine(a[j], a[j + w]);
    live = w;
  }
  return a[0];
}

/// One leaf of InnerRuns: 1 <= n <= kBlock contiguous elements. Below
/// kLanes elements it is reduce_short_run; from kLanes on, lane j takes
/// elements j, j + kLanes, ... in order, and the lanes combine pairwise.
template <class Op>
typename Op::Acc reduce_block(const typename Op::In* __restrict p, int64_t n) {
  using Acc = typename Op::Acc;
  constexpr int L = kLanes<Acc>;
  if (n < L) return reduce_short_run<Op, L>(p, n);
  Acc acc[L];
  for (int j = 0; j < L; ++j) acc[j] = Op::load(p[j]);
  int64_t i = L;
  if constexpr (Op::kSelectCombine) {
    // Loop-vectorized with if-conversion of the selects (an unrolled body
    // would be compiled to branches instead).
    for (; i + L <= n; i += L)
      for (int j = 0; j < L; ++j) acc[j] = Op::combine(acc[j], Op::load(p[i + j]));
  } else {
    // Unrolled so that the lanes live in registers (SLP-vectorized).
    for (; i + L <= n; i += L) {
#pragma GCC unroll 128
      for (int j = 0; j < L; ++j) acc[j] = Op::combine(acc[j], Op::load(p[i + j]));
    }
  }
  for (int j = 0; i + j < n; ++j) acc[j] = Op::combine(acc[j], Op::load(p[i + j]));
  combine_lane_tree<Op, L / 2>(acc);
  return acc[0];
}

/// Longest run handled by reduce_short_run.
inline constexpr int64_t kShortRun = 16;

/// InnerRuns with one short run (< kLanes) per result and no outer reduced
/// axes: the results [b, e) in the kept axes' row-major order. The same
/// operations as the general path (reduce_block calls reduce_short_run for
/// such runs), without its per-result overhead.
template <class Op, int N>
void reduce_short_runs(const typename Op::In* in, typename Op::Out* out,
                       const ReductionPlan& plan, int64_t b, int64_t e) {
  Odometer o(plan.kept);
  o.seek(b);
  for (int64_t i = b; i < e; ++i, o.next())
    out[o.out_offset()] =
        Op::finish(reduce_short_run<Op, N>(in + o.in_offset(), plan.inner_length));
}

/// InnerRuns: the leaves [l0, l1) of the result whose input starts at
/// `base`; a leaf is block j of run (segment) s, leaf = s * blocks + j.
/// `seg` walks plan.reduced (reused across calls to avoid allocation).
template <class Op>
typename Op::Acc reduce_inner_leaves(const typename Op::In* base, const ReductionPlan& plan,
                                     Odometer& seg, int64_t l0, int64_t l1) {
  constexpr int64_t kB = kBlock<typename Op::Acc>;
  const int64_t run = plan.inner_length;
  PairwiseStack<Op> stack;
  if (plan.reduced.size() == 0 && run <= kB) {  // one leaf: the whole run
    stack.push(reduce_block<Op>(base, run));
    return stack.result();
  }
  const int64_t blocks = ceil_div(run, kB);
  seg.seek(l0 / blocks);
  int64_t j = l0 % blocks;
  for (int64_t l = l0; l < l1; ++l) {
    const int64_t start = j * kB;
    stack.push(reduce_block<Op>(base + seg.in_offset() + start, std::min(kB, run - start)));
    if (++j == blocks) {
      j = 0;
      seg.next();
    }
  }
  return stack.result();
}

template <class Op>
bool run_inner_runs(const typename Op::In* in, typename Op::Out* out, const ReductionPlan& plan,
                    WorkerPool* pool) {
  const int64_t runs = plan.reduce_count / plan.inner_length;
  const int64_t leaves = runs * ceil_div(plan.inner_length, kBlock<typename Op::Acc>);
  const int64_t outputs = plan.out_count;
  if (plan.reduced.size() == 0 && plan.inner_length <= kShortRun &&
      plan.inner_length < kLanes<typename Op::Acc>) {
    auto short_range = [&](int64_t b, int64_t e) {
      switch (std::bit_ceil(static_cast<uint64_t>(plan.inner_length))) {
        case 1: reduce_short_runs<Op, 1>(in, out, plan, b, e); break;
        case 2: reduce_short_runs<Op, 2>(in, out, plan, b, e); break;
        case 4: reduce_short_runs<Op, 4>(in, out, plan, b, e); break;
        case 8: reduce_short_runs<Op, 8>(in, out, plan, b, e); break;
        default: reduce_short_runs<Op, 16>(in, out, plan, b, e); break;
      }
    };
    if (pool == nullptr || outputs * plan.inner_length < kParallelMinWork) {
      short_range(0, outputs);
      return true;
    }
    return guarded_parallel_for(pool, outputs,
                                std::max<int64_t>(1, kTaskWork / plan.inner_length), short_range);
  }
  auto outputs_range = [&](int64_t b, int64_t e) {
    Odometer o(plan.kept);
    Odometer seg(plan.reduced);
    o.seek(b);
    for (int64_t i = b; i < e; ++i, o.next())
      out[o.out_offset()] =
          Op::finish(reduce_inner_leaves<Op>(in + o.in_offset(), plan, seg, 0, leaves));
  };
  const int64_t work = outputs * plan.reduce_count;
  const int64_t threads = static_cast<int64_t>(thread_count(pool));
  if (pool == nullptr || work < kParallelMinWork) {
    outputs_range(0, outputs);
    return true;
  }
  if (outputs >= 4 * threads || leaves < 2 * kChunkLeaves)
    return guarded_parallel_for(pool, outputs,
                                std::max<int64_t>(1, kTaskWork / plan.reduce_count), outputs_range);
  // Few results, long reductions: split each result's leaves in chunks.
  using Acc = typename Op::Acc;
  const int64_t chunks = ceil_div(leaves, kChunkLeaves);
  std::vector<Acc> partial(static_cast<size_t>(chunks));
  Odometer o(plan.kept);
  o.seek(0);
  for (int64_t i = 0; i < outputs; ++i, o.next()) {
    const typename Op::In* base = in + o.in_offset();
    const bool ok = guarded_parallel_for(pool, chunks, 1, [&](int64_t b, int64_t e) {
      Odometer seg(plan.reduced);
      for (int64_t c = b; c < e; ++c)
        partial[static_cast<size_t>(c)] = reduce_inner_leaves<Op>(
            base, plan, seg, c * kChunkLeaves, std::min(leaves, (c + 1) * kChunkLeaves));
    });
    if (!ok) return false;
    PairwiseStack<Op> stack;
    for (const Acc& p : partial) stack.push(p);
    out[o.out_offset()] = Op::finish(stack.result());
  }
  return true;
}

// -- Rows ----------------------------------------------------------------------

template <class Op>
void load_row(typename Op::Acc* __restrict dst, const typename Op::In* __restrict src, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) dst[i + j] = Op::load(src[i + j]);
  for (; i < n; ++i) dst[i] = Op::load(src[i]);
}

template <class Op>
void combine_row(typename Op::Acc* __restrict dst, const typename Op::In* __restrict src,
                 int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) dst[i + j] = Op::combine(dst[i + j], Op::load(src[i + j]));
  for (; i < n; ++i) dst[i] = Op::combine(dst[i], Op::load(src[i]));
}

/// dst = combine(dst, src) elementwise, both partial results.
template <class Op>
void combine_partials(typename Op::Acc* __restrict dst, const typename Op::Acc* __restrict src,
                      int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) dst[i + j] = Op::combine(dst[i + j], src[i + j]);
  for (; i < n; ++i) dst[i] = Op::combine(dst[i], src[i]);
}

/// Binary counter over vectors of `width` partial results (one row tile).
/// Owns its storage: levels * width accumulators.
template <class Op>
class RowStack {
  using Acc = typename Op::Acc;

 public:
  RowStack(int64_t width, int64_t leaves)
      : width_(width),
        slots_(std::bit_width(static_cast<uint64_t>(std::max<int64_t>(leaves, 1))) + 1),
        node_(static_cast<size_t>(slots_ * width)),
        level_(static_cast<size_t>(slots_), 0) {}

  /// The slot the next leaf is written into before push().
  Acc* next_slot() { return node_.data() + static_cast<size_t>(top_) * width_; }

  void push() {
    int level = 0;
    while (top_ > 0 && level_[static_cast<size_t>(top_ - 1)] == level) {
      combine_partials<Op>(slot(top_ - 1), slot(top_), width_);
      --top_;
      ++level;
    }
    level_[static_cast<size_t>(top_)] = static_cast<uint8_t>(level);
    ++top_;
  }

  /// Collapses the stack; returns the result vector (valid until the next push).
  const Acc* result() {
    for (int i = top_ - 2; i >= 0; --i) combine_partials<Op>(slot(i), slot(i + 1), width_);
    top_ = top_ > 0 ? 1 : 0;
    return slot(0);
  }

 private:
  Acc* slot(int i) { return node_.data() + static_cast<size_t>(i) * width_; }
  int64_t width_;
  int64_t slots_;
  std::vector<Acc> node_;
  std::vector<uint8_t> level_;
  int top_ = 0;
};

/// Rows: accumulates the row groups [g0, g1) of columns [c0, c0 + width)
/// of the outer position whose input starts at `base` into `stack`.
template <class Op>
void push_row_groups(RowStack<Op>& stack, const typename Op::In* base, const ReductionPlan& plan,
                     int64_t c0, int64_t width, int64_t g0, int64_t g1) {
  const int64_t rows = plan.reduce_count;
  Odometer r(plan.reduced);
  r.seek(g0 * kRowGroup);
  for (int64_t g = g0; g < g1; ++g) {
    typename Op::Acc* dst = stack.next_slot();
    const int64_t end = std::min(rows, (g + 1) * kRowGroup);
    load_row<Op>(dst, base + r.in_offset() + c0, width);
    r.next();
    for (int64_t row = g * kRowGroup + 1; row < end; ++row, r.next())
      combine_row<Op>(dst, base + r.in_offset() + c0, width);
    stack.push();
  }
}

template <class Op>
bool run_rows(const typename Op::In* in, typename Op::Out* out, const ReductionPlan& plan,
              WorkerPool* pool) {
  using Acc = typename Op::Acc;
  const int64_t row_len = plan.inner_length;
  const int64_t outer = plan.out_count / row_len;
  const int64_t groups = ceil_div(plan.reduce_count, kRowGroup);
  const int64_t levels = std::bit_width(static_cast<uint64_t>(groups)) + 1;
  const int64_t tile = std::min(
      row_len, std::max<int64_t>(16, kStackBytes / (levels * static_cast<int64_t>(sizeof(Acc)))));
  const int64_t tiles = ceil_div(row_len, tile);
  const int64_t units = outer * tiles;  // (outer position, tile) pairs

  auto write = [&](const Acc* result, typename Op::Out* dst, int64_t width) {
    for (int64_t i = 0; i < width; ++i) dst[i * plan.inner_out_stride] = Op::finish(result[i]);
  };
  auto units_range = [&](int64_t b, int64_t e) {
    Odometer o(plan.kept);
    o.seek(b / tiles);
    int64_t t = b % tiles;
    for (int64_t u = b; u < e; ++u) {
      const int64_t c0 = t * tile;
      const int64_t width = std::min(tile, row_len - c0);
      RowStack<Op> stack(width, groups);
      push_row_groups<Op>(stack, in + o.in_offset(), plan, c0, width, 0, groups);
      write(stack.result(), out + o.out_offset() + c0 * plan.inner_out_stride, width);
      if (++t == tiles) {
        t = 0;
        o.next();
      }
    }
  };
  const int64_t work = plan.out_count * plan.reduce_count;
  const int64_t threads = static_cast<int64_t>(thread_count(pool));
  if (pool == nullptr || work < kParallelMinWork) {
    units_range(0, units);
    return true;
  }
  if (units >= 4 * threads || groups < 2 * kChunkLeaves) {
    const int64_t unit_work = std::min(tile, row_len) * plan.reduce_count;
    return guarded_parallel_for(pool, units, std::max<int64_t>(1, kTaskWork / unit_work),
                                units_range);
  }
  // Few tiles, many rows: split each tile's row groups in chunks; the
  // chunk results combine by the same binary counter (same tree).
  const int64_t chunks = ceil_div(groups, kChunkLeaves);
  std::vector<Acc> partial(static_cast<size_t>(chunks * tile));
  Odometer o(plan.kept);
  o.seek(0);
  for (int64_t p = 0; p < outer; ++p, o.next()) {
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t c0 = t * tile;
      const int64_t width = std::min(tile, row_len - c0);
      const typename Op::In* base = in + o.in_offset();
      const bool ok = guarded_parallel_for(pool, chunks, 1, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c) {
          RowStack<Op> stack(width, kChunkLeaves);
          push_row_groups<Op>(stack, base, plan, c0, width, c * kChunkLeaves,
                              std::min(groups, (c + 1) * kChunkLeaves));
          const Acc* r = stack.result();
          std::copy(r, r + width, partial.begin() + c * tile);
        }
      });
      if (!ok) return false;
      RowStack<Op> stack(width, chunks);
      for (int64_t c = 0; c < chunks; ++c) {
        std::copy(partial.begin() + c * tile, partial.begin() + c * tile + width,
                  stack.next_slot());
        stack.push();
      }
      write(stack.result(), out + o.out_offset() + c0 * plan.inner_out_stride, width);
    }
  }
  return true;
}

/// Runs the plan's loops (InnerRuns or Rows); the plan must not be Trivial
/// and its layout must be supported. Returns false when a pool task ran out
/// of memory (the output is then incomplete).
template <class Op>
bool run_plan(const typename Op::In* in, typename Op::Out* out, const ReductionPlan& plan,
              WorkerPool* pool) {
  if (plan.shape == ReductionShape::InnerRuns) return run_inner_runs<Op>(in, out, plan, pool);
  return run_rows<Op>(in, out, plan, pool);
}

}  // namespace tenact::cpu::reduction
