// ShapeChecker, the family dispatch and the helpers shared by the family
// files; infer_extension (the registry decides).
#include <algorithm>
#include <string>

#include "core/infer/infer.hpp"

namespace tenact::infer {

namespace {
std::string relation_text(const DimExpr& lhs, Relation rel, const DimExpr& rhs) {
  return lhs.to_string() + " " + std::string{to_string(rel)} + " " + rhs.to_string();
}
}  // namespace

Status ShapeChecker::require(const DimExpr& lhs, Relation rel, const DimExpr& rhs,
                             const std::string& what) {
  switch (decide(lhs, rel, rhs)) {
    case Decision::Holds: return ok_status();
    case Decision::Fails:
      return shape_error(what + " (" + relation_text(lhs, rel, rhs) + " never holds)");
    case Decision::Depends:
      deferred_->push_back(Constraint{lhs, rel, rhs, origin_, what});
      return ok_status();
  }
  return ok_status();
}

Status ShapeChecker::require_equal(const ShapeExtent& a, const ShapeExtent& b,
                                   const std::string& what) {
  if (!a.is_exact() || !b.is_exact()) return ok_status();  // checked at run time
  return require(a.expr, Relation::Eq, b.expr, what);
}

Status ShapeChecker::require_non_negative(const DimExpr& e, const std::string& what) {
  return require(e, Relation::Ge, DimExpr::constant(0), what);
}

InferResult infer_op(const InferRequest& request) {
  switch (family_of(request.kind)) {
    case OpFamily::Elementwise: return infer_elementwise(request);
    case OpFamily::Layout: return infer_layout(request);
    case OpFamily::Reduction: return infer_reduction(request);
    case OpFamily::Indexing: return infer_indexing(request);
    case OpFamily::Dot: return infer_dot(request);
    case OpFamily::Extension: return infer_extension(request);
  }
  return Error{ErrorCode::Internal, "op kind without a family"};
}

InferResult infer_extension(const InferRequest& request) {
  const auto* attrs = std::get_if<ExtensionAttrs>(&request.attrs);
  if (!attrs) return Error{ErrorCode::Internal, "extension op without extension attributes"};
  const ExtensionInferFn* infer = request.extensions.find(attrs->family);
  if (!infer)
    return Error{ErrorCode::MissingExtension,
                 "extension family '" + attrs->family + "' is not registered"};
  auto results = (*infer)(request.operands, attrs->attributes_json);
  if (!results.ok())
    return results.error().with_context("extension family '" + attrs->family + "'");
  if (results->empty())
    return Error{ErrorCode::ProviderContract,
                 "extension family '" + attrs->family + "' inferred no results"};
  return results;
}

Error attribute_error(std::string message) {
  return Error{ErrorCode::InvalidAttribute, std::move(message)};
}
Error shape_error(std::string message) { return Error{ErrorCode::ShapeMismatch, std::move(message)}; }
Error type_error(std::string message) { return Error{ErrorCode::TypeMismatch, std::move(message)}; }

Status expect_arity(std::span<const ValueType> operands, size_t n) {
  if (operands.size() == n) return ok_status();
  return Error{ErrorCode::Schema, "expects " + std::to_string(n) + " operand" +
                                      (n == 1 ? "" : "s") + ", got " +
                                      std::to_string(operands.size())};
}

Status expect_arity_at_least(std::span<const ValueType> operands, size_t n) {
  if (operands.size() >= n) return ok_status();
  return Error{ErrorCode::Schema, "expects at least " + std::to_string(n) + " operand" +
                                      (n == 1 ? "" : "s") + ", got " +
                                      std::to_string(operands.size())};
}

Status check_axis(int64_t axis, size_t rank, std::string_view attribute) {
  if (axis >= 0 && static_cast<uint64_t>(axis) < rank) return ok_status();
  return attribute_error(std::string{attribute} + ": dimension " + std::to_string(axis) +
                         " is out of range for rank " + std::to_string(rank));
}

Status check_unique_axes(std::span<const int64_t> axes, size_t rank, std::string_view attribute) {
  std::vector<bool> seen(rank, false);
  for (int64_t axis : axes) {
    TENACT_TRY(check_axis(axis, rank, attribute));
    if (seen[static_cast<size_t>(axis)])
      return attribute_error(std::string{attribute} + ": dimension " + std::to_string(axis) +
                             " appears more than once");
    seen[static_cast<size_t>(axis)] = true;
  }
  return ok_status();
}

Status check_permutation(std::span<const int64_t> perm, size_t rank, std::string_view attribute) {
  std::vector<int64_t> values(perm.begin(), perm.end());
  if (perm.size() != rank)
    return attribute_error(std::string{attribute} + " " + to_string(values) +
                           " has " + std::to_string(perm.size()) + " entries, expected " +
                           std::to_string(rank) + " (the operand's rank)");
  std::vector<int64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i))
      return attribute_error(std::string{attribute} + " " + to_string(values) +
                             " is not a permutation of 0.." + std::to_string(rank - 1));
  return ok_status();
}

Result<Shape> unify_shapes(const Shape& a, const Shape& b, ShapeChecker& checker,
                           std::string_view a_name, std::string_view b_name) {
  if (a.size() != b.size())
    return shape_error(std::string{b_name} + " has shape " + to_string(b) + " of rank " +
                       std::to_string(b.size()) + ", expected rank " + std::to_string(a.size()) +
                       " (the shape of " + std::string{a_name} + " is " + to_string(a) + ")");
  Shape out;
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string what = std::string{b_name} + " axis " + std::to_string(i) + " (" +
                             b[i].to_string() + ") equals " + std::string{a_name} + " axis " +
                             std::to_string(i) + " (" + a[i].to_string() + ")";
    TENACT_TRY(checker.require_equal(a[i], b[i], what));
    // A run-time-only extent is the less known one: it wins.
    if (!a[i].is_exact()) out.push_back(a[i]);
    else out.push_back(b[i].is_exact() ? a[i] : b[i]);
  }
  return out;
}

std::string operand_name(size_t index) { return "operand " + std::to_string(index); }

}  // namespace tenact::infer
