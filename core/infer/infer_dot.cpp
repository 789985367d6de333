// Type and shape inference of dot_general.
//
// Contract: StableHLO dot_general C1-C13 (precision_config aside): lhs and
// rhs share one numeric dtype (bool is rejected, docs/program-format.md), which
// is the result's; conj_lhs/conj_rhs are allowed on every numeric dtype
// (identity on reals). The result's axes are the batching axes, then the
// free axes of lhs, then those of rhs, each group in axis order.
#include <string>
#include <vector>

#include "core/infer/infer.hpp"

namespace tenact::infer {

namespace {

std::string axes_text(std::span<const int64_t> axes) {
  return to_string(std::vector<int64_t>(axes.begin(), axes.end()));
}

/// The axes of one side named by neither of its dimension lists (range and
/// uniqueness of both lists already checked).
std::vector<size_t> free_axes(size_t rank, std::span<const int64_t> batching,
                              std::span<const int64_t> contracting) {
  std::vector<bool> used(rank, false);
  for (int64_t a : batching) used[static_cast<size_t>(a)] = true;
  for (int64_t a : contracting) used[static_cast<size_t>(a)] = true;
  std::vector<size_t> out;
  for (size_t i = 0; i < rank; ++i)
    if (!used[i]) out.push_back(i);
  return out;
}

/// C4-C9 for one side: each list in range and unique, and no axis in both.
Status check_side(std::span<const int64_t> batching, std::span<const int64_t> contracting,
                  size_t rank, std::string_view side) {
  const std::string batching_name = std::string{side} + "_batching_dimensions";
  const std::string contracting_name = std::string{side} + "_contracting_dimensions";
  TENACT_TRY(check_unique_axes(batching, rank, batching_name));
  TENACT_TRY(check_unique_axes(contracting, rank, contracting_name));
  for (int64_t axis : batching)
    for (int64_t other : contracting)
      if (axis == other)
        return attribute_error("dimension " + std::to_string(axis) + " appears in both " +
                               batching_name + " " + axes_text(batching) + " and " +
                               contracting_name + " " + axes_text(contracting));
  return ok_status();
}

/// C10/C11: the paired axes have equal sizes (decided now or deferred).
Status check_pairs(ShapeChecker& checker, const ValueType& lhs, std::span<const int64_t> lhs_axes,
                   const ValueType& rhs, std::span<const int64_t> rhs_axes,
                   std::string_view kind) {
  for (size_t i = 0; i < lhs_axes.size(); ++i) {
    const size_t la = static_cast<size_t>(lhs_axes[i]);
    const size_t ra = static_cast<size_t>(rhs_axes[i]);
    const std::string index = "[" + std::to_string(i) + "]";
    TENACT_TRY(checker.require_equal(
        lhs.shape[la], rhs.shape[ra],
        "lhs axis " + std::to_string(la) + " (lhs_" + std::string{kind} + "_dimensions" + index +
            ", size " + lhs.shape[la].to_string() + ") and rhs axis " + std::to_string(ra) +
            " (rhs_" + std::string{kind} + "_dimensions" + index + ", size " +
            rhs.shape[ra].to_string() + ") have equal sizes"));
  }
  return ok_status();
}

}  // namespace

InferResult infer_dot(const InferRequest& request) {
  if (request.kind != OpKind::DotGeneral)
    return Error{ErrorCode::Internal, std::string{to_string(request.kind)} + " is not dot_general"};
  const auto* a = std::get_if<DotGeneralAttrs>(&request.attrs);
  if (!a) return Error{ErrorCode::Internal, "dot_general reached inference without its attributes"};
  TENACT_TRY(expect_arity(request.operands, 2));
  const ValueType& lhs = request.operands[0];
  const ValueType& rhs = request.operands[1];
  // C1
  if (rhs.dtype != lhs.dtype)
    return type_error("rhs (operand 1) has dtype " + std::string{to_string(rhs.dtype)} +
                      ", expected " + std::string{to_string(lhs.dtype)} + " (the dtype of lhs)");
  if (!is_numeric(lhs.dtype))
    return type_error("dot_general takes numeric operands, got " +
                      std::string{to_string(lhs.dtype)});
  // C2, C3
  if (a->lhs_batching_dimensions.size() != a->rhs_batching_dimensions.size())
    return attribute_error("lhs_batching_dimensions " + axes_text(a->lhs_batching_dimensions) +
                           " and rhs_batching_dimensions " +
                           axes_text(a->rhs_batching_dimensions) + " have different sizes");
  if (a->lhs_contracting_dimensions.size() != a->rhs_contracting_dimensions.size())
    return attribute_error("lhs_contracting_dimensions " +
                           axes_text(a->lhs_contracting_dimensions) +
                           " and rhs_contracting_dimensions " +
                           axes_text(a->rhs_contracting_dimensions) + " have different sizes");
  // C4-C9
  TENACT_TRY(check_side(a->lhs_batching_dimensions, a->lhs_contracting_dimensions, lhs.rank(),
                        "lhs"));
  TENACT_TRY(check_side(a->rhs_batching_dimensions, a->rhs_contracting_dimensions, rhs.rank(),
                        "rhs"));
  // C10, C11
  TENACT_TRY(check_pairs(request.checker, lhs, a->lhs_batching_dimensions, rhs,
                         a->rhs_batching_dimensions, "batching"));
  TENACT_TRY(check_pairs(request.checker, lhs, a->lhs_contracting_dimensions, rhs,
                         a->rhs_contracting_dimensions, "contracting"));
  // C13
  Shape result;
  for (size_t i = 0; i < a->lhs_batching_dimensions.size(); ++i) {
    const ShapeExtent& l = lhs.shape[static_cast<size_t>(a->lhs_batching_dimensions[i])];
    const ShapeExtent& r = rhs.shape[static_cast<size_t>(a->rhs_batching_dimensions[i])];
    // A run-time-only extent is the less known one: it wins (as unify_shapes).
    result.push_back(!l.is_exact() ? l : (r.is_exact() ? l : r));
  }
  for (size_t axis :
       free_axes(lhs.rank(), a->lhs_batching_dimensions, a->lhs_contracting_dimensions))
    result.push_back(lhs.shape[axis]);
  for (size_t axis :
       free_axes(rhs.rank(), a->rhs_batching_dimensions, a->rhs_contracting_dimensions))
    result.push_back(rhs.shape[axis]);
  return std::vector<ValueType>{{lhs.dtype, std::move(result)}};
}

}  // namespace tenact::infer
