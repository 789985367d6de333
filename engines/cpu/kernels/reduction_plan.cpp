#include "engines/cpu/kernels/reduction_plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>

#include "core/tensor.hpp"

namespace tenact::cpu {

namespace {

struct Axis {
  int64_t size;
  int64_t in_stride;
  int64_t out_stride;  // 0 for reduced axes
  bool reduced;
};

// Memory order key: larger |stride| is outer; a broadcast axis (stride 0)
// counts as outermost, since it repeats the data below it.
int64_t memory_key(int64_t stride) {
  if (stride == 0) return std::numeric_limits<int64_t>::max();
  return stride < 0 ? -stride : stride;
}

// Appends `axes` (outermost first) to `list`, merging an axis into the one
// inside it where both strides allow iterating them as one axis.
void merge_into(const std::vector<Axis>& axes, AxisList& list) {
  std::vector<Axis> merged;  // innermost first
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
    if (!merged.empty()) {
      Axis& inner = merged.back();
      if (it->in_stride == inner.in_stride * inner.size &&
          it->out_stride == inner.out_stride * inner.size) {
        inner.size *= it->size;
        continue;
      }
    }
    merged.push_back(*it);
  }
  for (auto it = merged.rbegin(); it != merged.rend(); ++it) {
    list.sizes.push_back(it->size);
    list.in_strides.push_back(it->in_stride);
    list.out_strides.push_back(it->out_stride);
  }
}

void pop_back(AxisList& list) {
  list.sizes.pop_back();
  list.in_strides.pop_back();
  list.out_strides.pop_back();
}

}  // namespace

Result<ReductionPlan> plan_reduction(std::span<const int64_t> shape,
                                     std::span<const int64_t> strides,
                                     std::span<const int64_t> dimensions) {
  const size_t rank = shape.size();
  std::vector<bool> is_reduced(rank, false);
  for (int64_t d : dimensions) {
    if (d < 0 || static_cast<size_t>(d) >= rank)
      return Error{ErrorCode::InvalidAttribute,
                   "reduction axis " + std::to_string(d) + " is out of range for rank " +
                       std::to_string(rank)};
    if (is_reduced[static_cast<size_t>(d)])
      return Error{ErrorCode::InvalidAttribute,
                   "reduction axis " + std::to_string(d) + " is listed twice"};
    is_reduced[static_cast<size_t>(d)] = true;
  }

  ReductionPlan plan;
  std::vector<int64_t> reduced_sizes;
  for (size_t a = 0; a < rank; ++a)
    (is_reduced[a] ? reduced_sizes : plan.out_shape).push_back(shape[a]);
  TENACT_ASSIGN_OR_RETURN(plan.out_count, checked_element_count(plan.out_shape));
  TENACT_ASSIGN_OR_RETURN(plan.reduce_count, checked_element_count(reduced_sizes));
  if (plan.out_count == 0 || plan.reduce_count == 0) {
    plan.shape = ReductionShape::Trivial;
    return plan;
  }

  const std::vector<int64_t> out_strides = row_major_strides(plan.out_shape);
  std::vector<Axis> axes;
  size_t out_axis = 0;
  for (size_t a = 0; a < rank; ++a) {
    const bool red = is_reduced[a];
    const int64_t out_stride = red ? 0 : out_strides[out_axis++];
    if (shape[a] == 1) continue;
    axes.push_back(Axis{shape[a], strides[a], out_stride, red});
  }
  if (axes.empty()) {  // a single element
    plan.shape = ReductionShape::InnerRuns;
    plan.inner_length = 1;
    return plan;
  }
  std::stable_sort(axes.begin(), axes.end(), [](const Axis& x, const Axis& y) {
    return memory_key(x.in_stride) > memory_key(y.in_stride);
  });
  if (axes.back().in_stride != 1) {
    plan.layout_supported = false;
    return plan;
  }

  std::vector<Axis> kept_axes, reduced_axes;
  for (const Axis& ax : axes) (ax.reduced ? reduced_axes : kept_axes).push_back(ax);
  merge_into(kept_axes, plan.kept);
  merge_into(reduced_axes, plan.reduced);

  if (axes.back().reduced) {
    plan.shape = ReductionShape::InnerRuns;
    plan.inner_length = plan.reduced.sizes.back();
    pop_back(plan.reduced);
  } else {
    plan.shape = ReductionShape::Rows;
    plan.inner_length = plan.kept.sizes.back();
    plan.inner_out_stride = plan.kept.out_strides.back();
    pop_back(plan.kept);
  }
  return plan;
}

}  // namespace tenact::cpu
