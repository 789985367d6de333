// Inference of the reduction family: reduce_sum, reduce_sum_squares,
// reduce_prod, reduce_max, reduce_min (docs/program-format.md "Reductions").
//
// Contract: `dimensions` are unique axes of the operand (an empty list is
// allowed: the result is the operand's type); they disappear from the
// result shape, the other axes keep their extents in order. Every reduction
// takes every dtype (on bool, sum is or and prod is and) except
// reduce_sum_squares, which rejects bool and yields the real component type
// of a complex operand (sum of |x|^2).
#include <string>
#include <variant>
#include <vector>

#include "core/infer/infer.hpp"

namespace tenact::infer {

InferResult infer_reduction(const InferRequest& request) {
  switch (request.kind) {
    case OpKind::ReduceSum:
    case OpKind::ReduceSumSquares:
    case OpKind::ReduceProd:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin: break;
    default:
      return Error{ErrorCode::Internal, "infer_reduction called for " +
                                            std::string{to_string(request.kind)} +
                                            ", which is not a reduction"};
  }
  const auto* attrs = std::get_if<ReduceAttrs>(&request.attrs);
  if (attrs == nullptr)
    return Error{ErrorCode::Internal,
                 std::string{to_string(request.kind)} + " called with attributes of another op"};
  TENACT_TRY(expect_arity(request.operands, 1));
  const ValueType& operand = request.operands[0];
  TENACT_TRY(check_unique_axes(attrs->dimensions, operand.rank(), "dimensions"));

  DType dtype = operand.dtype;
  if (request.kind == OpKind::ReduceSumSquares) {
    if (is_bool(dtype))
      return type_error(operand_name(0) +
                        " has dtype bool, but reduce_sum_squares takes integer, floating or "
                        "complex types");
    dtype = real_component(dtype);
  }

  std::vector<bool> reduced(operand.rank(), false);
  for (int64_t axis : attrs->dimensions) reduced[static_cast<size_t>(axis)] = true;
  Shape shape;
  for (size_t axis = 0; axis < operand.rank(); ++axis)
    if (!reduced[axis]) shape.push_back(operand.shape[axis]);
  return std::vector<ValueType>{ValueType{dtype, std::move(shape)}};
}

}  // namespace tenact::infer
