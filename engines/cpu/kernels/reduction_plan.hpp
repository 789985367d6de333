// Layout analysis of one reduction: which axes are kept and reduced, in
// memory order, merged where their strides allow, and which of the two
// loop shapes runs it.
//
// Contract: a pure function of (shape, strides, dimensions); no allocation
// beyond the plan's vectors. The plan's iteration covers every element of
// the input exactly once; axes of size 1 are dropped (they change neither
// offsets nor the result).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/error.hpp"

namespace tenact::cpu {

/// Axes of one category (kept or reduced), outermost first in memory order.
struct AxisList {
  std::vector<int64_t> sizes;
  std::vector<int64_t> in_strides;   // element strides in the input
  std::vector<int64_t> out_strides;  // element strides in the output (kept axes only)
  size_t size() const { return sizes.size(); }
};

enum class ReductionShape : uint8_t {
  /// The input's unit-stride axis is reduced: every output reduces runs of
  /// `inner_length` contiguous elements (one run per position of the outer
  /// reduced axes).
  InnerRuns,
  /// The input's unit-stride axis is kept: every outer output position
  /// accumulates whole rows of `inner_length` contiguous elements, one row
  /// per position of the reduced axes.
  Rows,
  /// There is nothing to reduce or write: the output is empty, or the
  /// reduction is empty (the output holds the identity).
  Trivial,
};

struct ReductionPlan {
  std::vector<int64_t> out_shape;  // dense row-major result shape
  int64_t out_count = 0;           // elements of the result
  int64_t reduce_count = 0;        // elements reduced into each result element
  ReductionShape shape = ReductionShape::Trivial;
  /// False when no axis has unit stride (broadcast, reversed or gapped
  /// innermost axis): the caller reduces a contiguous copy instead.
  bool layout_supported = true;
  /// InnerRuns: the reduced axes except the innermost (the run axis);
  /// Rows: all reduced axes.
  AxisList reduced;
  /// InnerRuns: all kept axes; Rows: the kept axes except the innermost
  /// (the row axis).
  AxisList kept;
  /// Length of a run (InnerRuns) or of a row (Rows); input stride 1.
  int64_t inner_length = 1;
  /// Rows: output stride of the row axis (1 unless the input is a permuted view).
  int64_t inner_out_stride = 1;
};

/// Plans a reduction of a tensor of `shape` with element `strides` over
/// `dimensions`. Errors: InvalidAttribute for an axis out of range or
/// repeated.
Result<ReductionPlan> plan_reduction(std::span<const int64_t> shape,
                                     std::span<const int64_t> strides,
                                     std::span<const int64_t> dimensions);

}  // namespace tenact::cpu
