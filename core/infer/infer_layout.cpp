// Inference of the layout family: transpose, reshape, broadcast_in_dim,
// constant, iota, extract_diag, embed_diag, tril, triu (docs/program-format.md
// "Layout"; StableHLO's constraints where the format is silent).
//
// Contract: attribute shapes (reshape, broadcast_in_dim, constant, iota)
// become exact result extents. Each of their dimensions must be >= 0: a
// constant one is checked now, a symbolic one goes through the checker.
// Layout ops never change the dtype (convert is elementwise).
#include <string>
#include <variant>

#include "core/checked.hpp"
#include "core/infer/infer.hpp"

namespace tenact::infer {

namespace {

InferResult one(ValueType t) { return std::vector<ValueType>{std::move(t)}; }

template <class Attrs>
Result<const Attrs*> attrs_of(const InferRequest& r) {
  if (const auto* a = std::get_if<Attrs>(&r.attrs)) return a;
  return Error{ErrorCode::Internal,
               std::string{to_string(r.kind)} + " called with attributes of another op"};
}

std::string axis_name(size_t operand, size_t axis) {
  return operand_name(operand) + " axis " + std::to_string(axis);
}

/// Every dimension of an attribute shape is >= 0.
Status check_shape_attribute(const std::vector<DimExpr>& dims, std::string_view attribute,
                             ShapeChecker& checker) {
  for (size_t i = 0; i < dims.size(); ++i) {
    const std::string where =
        std::string{attribute} + "[" + std::to_string(i) + "] (" + dims[i].to_string() + ")";
    if (auto value = dims[i].constant_value()) {
      if (*value < 0)
        return attribute_error(std::string{attribute} + " has dimension " + std::to_string(i) +
                               " = " + std::to_string(*value) +
                               ", expected a non-negative extent");
    } else {
      TENACT_TRY(checker.require_non_negative(dims[i], where + " is non-negative"));
    }
  }
  return ok_status();
}

/// Operand `index` has rank at least `min_rank`.
Status require_rank_at_least(const std::span<const ValueType> operands, size_t index,
                             size_t min_rank) {
  const size_t rank = operands[index].rank();
  if (rank >= min_rank) return ok_status();
  return shape_error(operand_name(index) + " has rank " + std::to_string(rank) +
                     ", expected rank >= " + std::to_string(min_rank) + " (type " +
                     operands[index].to_string() + ")");
}

/// The element count of `dims` as one expression. When every dimension is a
/// constant the product is computed with overflow checks (an error names
/// `whose`); otherwise it is the symbolic product.
Result<DimExpr> element_count(const std::vector<DimExpr>& dims, const std::string& whose) {
  int64_t constant_product = 1;
  bool all_constant = true;
  for (const auto& d : dims) {
    auto value = d.constant_value();
    if (!value) {
      all_constant = false;
      break;
    }
    auto product = checked_mul(constant_product, *value);
    if (!product)
      return Error{ErrorCode::Overflow,
                   "the element count of " + whose + " " + to_string(dims) + " overflows int64"};
    constant_product = *product;
  }
  if (all_constant) return DimExpr::constant(constant_product);
  DimExpr product = DimExpr::constant(1);
  for (const auto& d : dims) product = product * d;
  return product;
}

InferResult infer_transpose(const InferRequest& r) {
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<TransposeAttrs>(r));
  TENACT_TRY(expect_arity(r.operands, 1));
  const ValueType& operand = r.operands[0];
  TENACT_TRY(check_permutation(attrs->permutation, operand.rank(), "permutation"));
  Shape shape;
  shape.reserve(operand.rank());
  for (int64_t axis : attrs->permutation) shape.push_back(operand.shape[static_cast<size_t>(axis)]);
  return one(ValueType{operand.dtype, std::move(shape)});
}

// reshape: the element counts agree (decided now or deferred). The operand's
// extents must be exact: the count of an upper-bound axis is not known
// before running, and a reshape cannot follow it.
InferResult infer_reshape(const InferRequest& r) {
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<ReshapeAttrs>(r));
  TENACT_TRY(expect_arity(r.operands, 1));
  const ValueType& operand = r.operands[0];
  std::vector<DimExpr> operand_dims;
  operand_dims.reserve(operand.rank());
  for (size_t axis = 0; axis < operand.rank(); ++axis) {
    const ShapeExtent& extent = operand.shape[axis];
    if (!extent.is_exact())
      return shape_error(axis_name(0, axis) + " has extent " + extent.to_string() +
                         " (not exact; type " + operand.to_string() +
                         "), but reshape needs exact extents");
    operand_dims.push_back(extent.expr);
  }
  TENACT_TRY(check_shape_attribute(attrs->shape, "shape", r.checker));
  TENACT_ASSIGN_OR_RETURN(DimExpr operand_count, element_count(operand_dims, operand_name(0)));
  TENACT_ASSIGN_OR_RETURN(DimExpr result_count, element_count(attrs->shape, "shape"));
  TENACT_TRY(r.checker.require(result_count, Relation::Eq, operand_count,
                               "the element count of shape " + to_string(attrs->shape) + " (" +
                                   result_count.to_string() + ") equals that of " +
                                   operand_name(0) + " " + operand.to_string() + " (" +
                                   operand_count.to_string() + ")"));
  return one(ValueType{operand.dtype, exact_shape(attrs->shape)});
}

// broadcast_in_dim (StableHLO C2..C5): one broadcast dimension per operand
// axis, unique, in range of the result rank, in any order; each operand axis
// is 1 or equals the result axis it maps to. An operand axis that is not the
// constant 1 must equal its result axis (a symbol that is 1 only in some
// signatures does not broadcast).
InferResult infer_broadcast_in_dim(const InferRequest& r) {
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<BroadcastInDimAttrs>(r));
  TENACT_TRY(expect_arity(r.operands, 1));
  const ValueType& operand = r.operands[0];
  const auto& dims = attrs->broadcast_dimensions;
  TENACT_TRY(check_shape_attribute(attrs->shape, "shape", r.checker));
  if (dims.size() != operand.rank())
    return attribute_error("broadcast_dimensions " + to_string(dims) + " has " +
                           std::to_string(dims.size()) + " entries, expected " +
                           std::to_string(operand.rank()) + " (the rank of " + operand_name(0) +
                           " " + operand.to_string() + ")");
  TENACT_TRY(check_unique_axes(dims, attrs->shape.size(), "broadcast_dimensions"));
  for (size_t axis = 0; axis < operand.rank(); ++axis) {
    const ShapeExtent& extent = operand.shape[axis];
    const size_t result_axis = static_cast<size_t>(dims[axis]);
    const DimExpr& target = attrs->shape[result_axis];
    // Plain values with a flag (not std::optional): GCC 12 at -O1 under the
    // sanitizers reports a false -Wmaybe-uninitialized on the optional form.
    int64_t extent_value = 0, target_value = 0;
    const bool extent_known = extent.is_exact() && extent.expr.constant_value().has_value();
    if (extent_known) extent_value = *extent.expr.constant_value();
    if (extent_known && extent_value == 1) continue;
    const bool target_known = target.constant_value().has_value();
    if (target_known) target_value = *target.constant_value();
    if (extent_known && target_known && extent_value != target_value)
      return shape_error(axis_name(0, axis) + " has extent " + std::to_string(extent_value) +
                         ", expected 1 or " + std::to_string(target_value) +
                         " (the extent of result axis " + std::to_string(result_axis) + ")");
    // The spec's rule, said where it bites: a symbol that is 1 in some
    // signature still does not broadcast.
    const std::string never_one =
        extent_known ? std::string{}
                     : "; a symbolic operand axis is never taken to be 1: it must equal the result "
                       "axis it maps to (write a static 1 to broadcast)";
    TENACT_TRY(r.checker.require_equal(
        extent, ShapeExtent::exact(target),
        axis_name(0, axis) + " (" + extent.to_string() + ") equals result axis " +
            std::to_string(result_axis) + " (" + target.to_string() + ")" + never_one));
  }
  return one(ValueType{operand.dtype, exact_shape(attrs->shape)});
}

// constant: dtype and shape from the attributes; the splat value fits the
// dtype, a dense value has exactly the dtype and the (concrete) shape.
InferResult infer_constant(const InferRequest& r) {
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<ConstantAttrs>(r));
  TENACT_TRY(expect_arity(r.operands, 0));
  TENACT_TRY(check_shape_attribute(attrs->shape, "shape", r.checker));
  if (attrs->splat.has_value() == attrs->dense.has_value())
    return attribute_error(attrs->splat ? "value is given both as a scalar and as a list"
                                        : "value is missing");
  if (attrs->splat) {
    Status fits = attrs->splat->check_fits(attrs->dtype);
    if (!fits.ok())
      return attribute_error("value " + attrs->splat->to_string() + " does not fit dtype " +
                             std::string{to_string(attrs->dtype)} + ": " +
                             fits.error().message());
  } else {
    const HostTensor& dense = *attrs->dense;
    if (dense.dtype() != attrs->dtype)
      return type_error("the value has dtype " + std::string{to_string(dense.dtype())} +
                        ", expected " + std::string{to_string(attrs->dtype)} +
                        " (the dtype attribute)");
    bool same_shape = dense.shape().size() == attrs->shape.size();
    for (size_t i = 0; same_shape && i < attrs->shape.size(); ++i) {
      auto value = attrs->shape[i].constant_value();
      if (!value)
        return attribute_error("shape " + to_string(attrs->shape) +
                               " must be concrete for a list value (dimension " +
                               std::to_string(i) + " is " + attrs->shape[i].to_string() + ")");
      same_shape = *value == dense.shape()[i];
    }
    if (!same_shape)
      return attribute_error("the value has shape " + to_string(dense.shape()) + ", expected " +
                             to_string(attrs->shape) + " (the shape attribute)");
  }
  return one(ValueType{attrs->dtype, exact_shape(attrs->shape)});
}

// iota: an integer, floating or complex dtype; iota_dimension indexes the
// result shape (so a rank-0 iota is rejected, as in StableHLO).
InferResult infer_iota(const InferRequest& r) {
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<IotaAttrs>(r));
  TENACT_TRY(expect_arity(r.operands, 0));
  if (is_bool(attrs->dtype))
    return type_error("dtype bool is not admitted: iota takes integer, floating or complex types");
  TENACT_TRY(check_shape_attribute(attrs->shape, "shape", r.checker));
  TENACT_TRY(check_axis(attrs->iota_dimension, attrs->shape.size(), "iota_dimension"));
  return one(ValueType{attrs->dtype, exact_shape(attrs->shape)});
}

/// The extent of two axes required equal: the first, unless only the
/// second is non-exact (a non-exact extent wins, as in unify_shapes).
ShapeExtent pick_extent(const ShapeExtent& a, const ShapeExtent& b) {
  return (a.is_exact() && !b.is_exact()) ? b : a;
}

// extract_diag: [..., n, n] -> [..., n].
InferResult infer_extract_diag(const InferRequest& r) {
  TENACT_TRY(expect_arity(r.operands, 1));
  TENACT_TRY(require_rank_at_least(r.operands, 0, 2));
  const ValueType& operand = r.operands[0];
  const size_t rank = operand.rank();
  const ShapeExtent& rows = operand.shape[rank - 2];
  const ShapeExtent& cols = operand.shape[rank - 1];
  TENACT_TRY(r.checker.require_equal(rows, cols,
                                     axis_name(0, rank - 2) + " (" + rows.to_string() +
                                         ") equals " + axis_name(0, rank - 1) + " (" +
                                         cols.to_string() + "): extract_diag needs square "
                                                            "matrices"));
  Shape shape(operand.shape.begin(), operand.shape.end() - 1);
  shape.back() = pick_extent(rows, cols);
  return one(ValueType{operand.dtype, std::move(shape)});
}

// embed_diag: [..., n] -> [..., n, n].
InferResult infer_embed_diag(const InferRequest& r) {
  TENACT_TRY(expect_arity(r.operands, 1));
  TENACT_TRY(require_rank_at_least(r.operands, 0, 1));
  ValueType result = r.operands[0];
  result.shape.push_back(result.shape.back());
  return one(std::move(result));
}

// tril/triu: any k, any dtype, matrices need not be square.
InferResult infer_triangle(const InferRequest& r) {
  TENACT_TRY(attrs_of<TriangleAttrs>(r));
  TENACT_TRY(expect_arity(r.operands, 1));
  TENACT_TRY(require_rank_at_least(r.operands, 0, 2));
  return one(r.operands[0]);
}

}  // namespace

InferResult infer_layout(const InferRequest& request) {
  switch (request.kind) {
    case OpKind::Transpose: return infer_transpose(request);
    case OpKind::Reshape: return infer_reshape(request);
    case OpKind::BroadcastInDim: return infer_broadcast_in_dim(request);
    case OpKind::Constant: return infer_constant(request);
    case OpKind::Iota: return infer_iota(request);
    case OpKind::ExtractDiag: return infer_extract_diag(request);
    case OpKind::EmbedDiag: return infer_embed_diag(request);
    case OpKind::Tril:
    case OpKind::Triu: return infer_triangle(request);
    default:
      return Error{ErrorCode::Internal, "infer_layout called for " +
                                            std::string{to_string(request.kind)} +
                                            ", which is not a layout op"};
  }
}

}  // namespace tenact::infer
