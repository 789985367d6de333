#include "engines/cpu/kernels/dot_plan.hpp"

#include <algorithm>
#include <string>

#include "core/tensor.hpp"

namespace tenact::cpu {

int64_t AxisGroup::count() const {
  int64_t c = 1;
  for (int64_t s : sizes) c *= s;
  return c;
}

bool AxisGroup::single_stride(int64_t& stride) const {
  int64_t inner_size = 0;  // 0: no axis of size > 1 seen yet
  int64_t inner_stride = 0;
  for (size_t a = sizes.size(); a-- > 0;) {
    if (sizes[a] == 1) continue;
    if (inner_size == 0) {
      inner_stride = strides[a];
      stride = strides[a];
    } else if (strides[a] != inner_stride * inner_size) {
      return false;
    } else {
      inner_stride = strides[a];
    }
    inner_size = sizes[a];
  }
  if (inner_size == 0) stride = 0;
  return true;
}

namespace {

std::string axis_list(const std::vector<int64_t>& axes) {
  std::string s = "[";
  for (size_t i = 0; i < axes.size(); ++i) s += (i ? ", " : "") + std::to_string(axes[i]);
  return s + "]";
}

// Marks `axes` as used in `used`; errors name the operand and the list.
Status claim_axes(const std::vector<int64_t>& axes, std::vector<bool>& used, const char* operand,
                  const char* list) {
  for (int64_t a : axes) {
    if (a < 0 || static_cast<size_t>(a) >= used.size())
      return Error{ErrorCode::InvalidAttribute,
                   std::string{operand} + " " + list + " " + axis_list(axes) + ": axis " +
                       std::to_string(a) + " is out of range for rank " +
                       std::to_string(used.size())};
    if (used[static_cast<size_t>(a)])
      return Error{ErrorCode::InvalidAttribute, std::string{operand} + " axis " +
                                                    std::to_string(a) +
                                                    " appears twice in the batching and "
                                                    "contracting dimensions"};
    used[static_cast<size_t>(a)] = true;
  }
  return ok_status();
}

AxisGroup group_of(const std::vector<int64_t>& axes, std::span<const int64_t> shape,
                   std::span<const int64_t> strides) {
  AxisGroup g;
  for (int64_t a : axes) {
    g.sizes.push_back(shape[static_cast<size_t>(a)]);
    g.strides.push_back(strides[static_cast<size_t>(a)]);
  }
  return g;
}

std::vector<int64_t> free_axes(const std::vector<bool>& used) {
  std::vector<int64_t> axes;
  for (size_t a = 0; a < used.size(); ++a)
    if (!used[a]) axes.push_back(static_cast<int64_t>(a));
  return axes;
}

}  // namespace

Result<DotPlan> plan_dot(std::span<const int64_t> lhs_shape, std::span<const int64_t> lhs_strides,
                         std::span<const int64_t> rhs_shape, std::span<const int64_t> rhs_strides,
                         const DotGeneralAttrs& attrs) {
  if (attrs.lhs_batching_dimensions.size() != attrs.rhs_batching_dimensions.size())
    return Error{ErrorCode::InvalidAttribute,
                 "lhs_batching_dimensions " + axis_list(attrs.lhs_batching_dimensions) +
                     " and rhs_batching_dimensions " + axis_list(attrs.rhs_batching_dimensions) +
                     " differ in length"};
  if (attrs.lhs_contracting_dimensions.size() != attrs.rhs_contracting_dimensions.size())
    return Error{ErrorCode::InvalidAttribute,
                 "lhs_contracting_dimensions " + axis_list(attrs.lhs_contracting_dimensions) +
                     " and rhs_contracting_dimensions " +
                     axis_list(attrs.rhs_contracting_dimensions) + " differ in length"};
  std::vector<bool> lhs_used(lhs_shape.size(), false), rhs_used(rhs_shape.size(), false);
  TENACT_TRY(claim_axes(attrs.lhs_batching_dimensions, lhs_used, "lhs", "lhs_batching_dimensions"));
  TENACT_TRY(claim_axes(attrs.lhs_contracting_dimensions, lhs_used, "lhs",
                        "lhs_contracting_dimensions"));
  TENACT_TRY(claim_axes(attrs.rhs_batching_dimensions, rhs_used, "rhs", "rhs_batching_dimensions"));
  TENACT_TRY(claim_axes(attrs.rhs_contracting_dimensions, rhs_used, "rhs",
                        "rhs_contracting_dimensions"));

  auto check_pairs = [&](const std::vector<int64_t>& l, const std::vector<int64_t>& r,
                         const char* what) -> Status {
    for (size_t i = 0; i < l.size(); ++i) {
      const int64_t ls = lhs_shape[static_cast<size_t>(l[i])];
      const int64_t rs = rhs_shape[static_cast<size_t>(r[i])];
      if (ls != rs)
        return Error{ErrorCode::InputMismatch,
                     std::string{what} + " axis pair " + std::to_string(i) + " (lhs axis " +
                         std::to_string(l[i]) + ", rhs axis " + std::to_string(r[i]) +
                         ") has extents " + std::to_string(ls) + " and " + std::to_string(rs)};
    }
    return ok_status();
  };
  TENACT_TRY(check_pairs(attrs.lhs_batching_dimensions, attrs.rhs_batching_dimensions, "batching"));
  TENACT_TRY(check_pairs(attrs.lhs_contracting_dimensions, attrs.rhs_contracting_dimensions,
                         "contracting"));

  DotPlan plan;
  const std::vector<int64_t> lhs_free = free_axes(lhs_used);
  const std::vector<int64_t> rhs_free = free_axes(rhs_used);
  plan.lhs_batch = group_of(attrs.lhs_batching_dimensions, lhs_shape, lhs_strides);
  plan.lhs_free = group_of(lhs_free, lhs_shape, lhs_strides);
  plan.lhs_contract = group_of(attrs.lhs_contracting_dimensions, lhs_shape, lhs_strides);
  plan.rhs_batch = group_of(attrs.rhs_batching_dimensions, rhs_shape, rhs_strides);
  plan.rhs_contract = group_of(attrs.rhs_contracting_dimensions, rhs_shape, rhs_strides);
  plan.rhs_free = group_of(rhs_free, rhs_shape, rhs_strides);
  for (int64_t s : plan.lhs_batch.sizes) plan.out_shape.push_back(s);
  for (int64_t s : plan.lhs_free.sizes) plan.out_shape.push_back(s);
  for (int64_t s : plan.rhs_free.sizes) plan.out_shape.push_back(s);
  TENACT_ASSIGN_OR_RETURN(plan.batch, checked_element_count(plan.lhs_batch.sizes));
  TENACT_ASSIGN_OR_RETURN(plan.m, checked_element_count(plan.lhs_free.sizes));
  TENACT_ASSIGN_OR_RETURN(plan.n, checked_element_count(plan.rhs_free.sizes));
  TENACT_ASSIGN_OR_RETURN(plan.k, checked_element_count(plan.lhs_contract.sizes));
  TENACT_TRY(checked_element_count(plan.out_shape));
  return plan;
}

BlasOperand blas_operand(const AxisGroup& rows, const AxisGroup& cols) {
  const int64_t r = rows.count();
  const int64_t c = cols.count();
  int64_t rs = 0, cs = 0;
  if (!rows.single_stride(rs) || !cols.single_stride(cs)) return {};
  // As stored: unit column stride, rows at least a row length apart.
  if ((c == 1 || cs == 1) && (r == 1 || rs >= c))
    return BlasOperand{true, false, r == 1 ? std::max<int64_t>(c, 1) : rs};
  // Transposed: unit row stride, columns at least a column length apart.
  if ((r == 1 || rs == 1) && (c == 1 || cs >= r))
    return BlasOperand{true, true, c == 1 ? std::max<int64_t>(r, 1) : cs};
  return {};
}

}  // namespace tenact::cpu
