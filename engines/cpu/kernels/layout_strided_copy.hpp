// The byte mover under every layout and indexing kernel: copies a strided
// view into another strided view (usually a dense output), element by
// element size (1, 2, 4, 8 or 16 bytes), never by dtype.
//
// Contract:
// - Strides are in elements and may be negative or zero on the source (views:
//   reverse, broadcast); destination strides must map distinct indices to
//   distinct elements (no overlap), and source and destination must not
//   overlap. `dst`/`src` point at the element of index (0, ..., 0).
// - Cost: one read and one write per element. Shapes are normalized first
//   (extent-1 axes dropped, axes contiguous in both views merged), then one of
//   four loops runs: whole-row memcpy, row fill (source stride 0), a
//   cache-blocked 2-D transpose when the destination's unit-stride axis is
//   not the source's (blocks of 1 KiB rows, walked in 32 x 32 tiles, with
//   SSE2 4 x 4 / 2 x 2 register transposes for 4- and 8-byte elements), or
//   a plain strided loop.
// - Parallel: `pool` (may be null) splits the work into items (whole rows,
//   row segments, or transpose blocks); every element is written once by
//   exactly one item, so results never depend on the thread count.
// - Thread-safe: no shared state; a CopyPlan is immutable once made.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/tensor.hpp"

namespace tenact {
class WorkerPool;  // util/worker_pool.hpp
}  // namespace tenact

namespace tenact::cpu {


/// A normalized copy, reusable for many (dst, src) base pairs of one shape
/// and one pair of stride sets (gather copies one window per index).
struct CopyPlan {
  struct Axis {
    int64_t extent;
    int64_t dst;  // element strides
    int64_t src;
  };
  enum class Kind : uint8_t { Empty, Rows, Fill, Strided, Transpose };

  Kind kind = Kind::Empty;
  size_t elem = 1;           // bytes per element: 1, 2, 4, 8 or 16
  std::vector<Axis> outer;   // iterated axes, outermost first
  Axis inner{1, 1, 1};       // the destination's innermost axis
  Axis tile{1, 0, 1};        // Transpose: the axis whose source stride is 1
  int64_t block = 1;         // item edge: along `inner`, or both axes of a transpose
  int64_t blocks = 1;        // items per outer index
  int64_t outer_count = 1;   // product of outer extents

  int64_t items() const { return kind == Kind::Empty ? 0 : outer_count * blocks; }
  int64_t elements_per_item() const;
};

/// Builds the plan. `split_rows` lets long rows be cut into several items
/// (for parallel runs); a plan run serially per window passes false.
/// Precondition: the three spans have one length; elem is 1, 2, 4, 8 or 16.
CopyPlan make_copy_plan(std::span<const int64_t> shape, std::span<const int64_t> dst_strides,
                        std::span<const int64_t> src_strides, size_t elem, bool split_rows);

/// Runs items [begin, end) of the plan on the calling thread.
void run_copy_items(const CopyPlan& plan, std::byte* dst, const std::byte* src, int64_t begin,
                    int64_t end);

/// Runs the whole plan, split over `pool` when it is large enough.
void run_copy_plan(const CopyPlan& plan, std::byte* dst, const std::byte* src, WorkerPool* pool);

/// make_copy_plan + run_copy_plan.
void strided_copy(std::span<const int64_t> shape, std::byte* dst,
                  std::span<const int64_t> dst_strides, const std::byte* src,
                  std::span<const int64_t> src_strides, size_t elem, WorkerPool* pool);

/// Copies every element of `src` (any strides) into the dense row-major
/// array at `dst` (same element size as src's dtype).
void copy_to_dense(const HostTensor& src, std::byte* dst, WorkerPool* pool);

/// Writes the element at `value` (elem bytes) into `count` consecutive
/// elements at `dst`.
void fill_elements(std::byte* dst, int64_t count, const std::byte* value, size_t elem,
                   WorkerPool* pool);

}  // namespace tenact::cpu
