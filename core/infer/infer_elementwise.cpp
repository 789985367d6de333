// Inference of the elementwise family: unary and binary ops, compare,
// select, clamp and convert (docs/program-format.md, "Elementwise" and the
// "Type sets" decisions).
//
// Contract: no implicit broadcasting. Operands that must agree have the same
// dtype and the same rank, and each axis is unified through
// unify_shapes (decided now or deferred to signature time by the checker).
// The result keeps the operand's extents (a non-exact extent stays
// non-exact). Errors name the operand, its dtype and what was expected.
#include <string>
#include <variant>

#include "core/infer/infer.hpp"

namespace tenact::infer {

namespace {

/// The element types an op admits, by category. Every op below admits a
/// union of whole categories, so a set is five flags plus its description.
struct DTypeSet {
  bool boolean = false;
  bool signed_integer = false;
  bool unsigned_integer = false;
  bool floating = false;
  bool complex = false;
  /// "signed integer, floating or complex": what an error says is expected.
  const char* description = "";

  bool admits(DType t) const {
    return (is_bool(t) && boolean) || (is_signed_integer(t) && signed_integer) ||
           (is_unsigned_integer(t) && unsigned_integer) || (is_float(t) && floating) ||
           (is_complex(t) && complex);
  }
};

constexpr DTypeSet kAnyType{true, true, true, true, true, "any"};
constexpr DTypeSet kIntegerFloatComplex{false, true, true, true, true,
                                        "integer, floating or complex"};
constexpr DTypeSet kIntegerFloat{false, true, true, true, false, "integer or floating"};
constexpr DTypeSet kSignedFloatComplex{false, true, false, true, true,
                                       "signed integer, floating or complex"};
constexpr DTypeSet kFloatComplex{false, false, false, true, true, "floating or complex"};
constexpr DTypeSet kFloat{false, false, false, true, false, "floating"};
constexpr DTypeSet kBoolInteger{true, true, true, false, false, "bool or integer"};

/// The dtype set of each unary op (docs/program-format.md "Type sets").
const DTypeSet* unary_type_set(OpKind kind) {
  switch (kind) {
    case OpKind::Negate: return &kIntegerFloatComplex;
    case OpKind::Abs:
    case OpKind::Sign: return &kSignedFloatComplex;
    case OpKind::Exponential:
    case OpKind::Log:
    case OpKind::Sine:
    case OpKind::Cosine:
    case OpKind::Tanh:
    case OpKind::Sqrt:
    case OpKind::Rsqrt:
    case OpKind::ExponentialMinusOne:
    case OpKind::LogPlusOne:
    case OpKind::Logistic:
    case OpKind::Conj: return &kFloatComplex;
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::RoundNearestEven:
    case OpKind::RoundNearestAfz: return &kFloat;
    case OpKind::Not: return &kBoolInteger;
    default: return nullptr;
  }
}

/// The dtype set of each binary op; `bool` on add/maximum is logical or,
/// on multiply/minimum logical and.
const DTypeSet* binary_type_set(OpKind kind) {
  switch (kind) {
    case OpKind::Add:
    case OpKind::Multiply:
    case OpKind::Maximum:
    case OpKind::Minimum: return &kAnyType;
    case OpKind::Subtract:
    case OpKind::Divide:
    case OpKind::Power: return &kIntegerFloatComplex;
    case OpKind::Remainder: return &kIntegerFloat;
    case OpKind::And:
    case OpKind::Or:
    case OpKind::Xor: return &kBoolInteger;
    default: return nullptr;
  }
}

Status require_type_in(const std::span<const ValueType> operands, size_t index,
                       const DTypeSet& set, OpKind kind) {
  const DType t = operands[index].dtype;
  if (set.admits(t)) return ok_status();
  return type_error(operand_name(index) + " has dtype " + std::string{to_string(t)} + ", but " +
                    std::string{to_string(kind)} + " takes " + set.description + " types");
}

/// Requires operands[index] to have the dtype of operands[reference].
Status require_same_dtype(const std::span<const ValueType> operands, size_t index,
                          size_t reference) {
  const DType got = operands[index].dtype;
  const DType want = operands[reference].dtype;
  if (got == want) return ok_status();
  return type_error(operand_name(index) + " has dtype " + std::string{to_string(got)} +
                    ", expected " + std::string{to_string(want)} + " (the dtype of " +
                    operand_name(reference) + ")");
}

/// Requires a bound operand (select's pred, clamp's min/max) to be a scalar
/// or of `shape`; returns the unified shape.
Result<Shape> unify_scalar_or_same(const std::span<const ValueType> operands, size_t index,
                                   const Shape& shape, size_t shape_owner,
                                   ShapeChecker& checker) {
  if (is_scalar(operands[index])) return shape;
  return unify_shapes(shape, operands[index].shape, checker, operand_name(shape_owner),
                      operand_name(index));
}

InferResult one(ValueType t) { return std::vector<ValueType>{std::move(t)}; }

InferResult infer_unary(const InferRequest& r, const DTypeSet& set) {
  TENACT_TRY(expect_arity(r.operands, 1));
  TENACT_TRY(require_type_in(r.operands, 0, set, r.kind));
  ValueType result = r.operands[0];
  if (r.kind == OpKind::Abs) result.dtype = real_component(result.dtype);
  return one(std::move(result));
}

/// Two operands of one dtype (within `set`) and one shape.
Result<ValueType> unify_binary(const InferRequest& r, const DTypeSet& set) {
  TENACT_TRY(expect_arity(r.operands, 2));
  TENACT_TRY(require_same_dtype(r.operands, 1, 0));
  TENACT_TRY(require_type_in(r.operands, 0, set, r.kind));
  TENACT_ASSIGN_OR_RETURN(Shape shape, unify_shapes(r.operands[0].shape, r.operands[1].shape,
                                                     r.checker, operand_name(0),
                                                     operand_name(1)));
  return ValueType{r.operands[0].dtype, std::move(shape)};
}

InferResult infer_compare(const InferRequest& r) {
  if (!std::holds_alternative<CompareAttrs>(r.attrs))
    return Error{ErrorCode::Internal, "compare without CompareAttrs"};
  TENACT_ASSIGN_OR_RETURN(ValueType unified, unify_binary(r, kAnyType));
  return one(ValueType{DType::Bool, std::move(unified.shape)});
}

// select(pred, on_true, on_false): pred is bool, a scalar or of the
// operands' shape.
InferResult infer_select(const InferRequest& r) {
  TENACT_TRY(expect_arity(r.operands, 3));
  if (r.operands[0].dtype != DType::Bool)
    return type_error(operand_name(0) + " (pred) has dtype " +
                      std::string{to_string(r.operands[0].dtype)} + ", expected bool");
  TENACT_TRY(require_same_dtype(r.operands, 2, 1));
  TENACT_ASSIGN_OR_RETURN(Shape shape, unify_shapes(r.operands[1].shape, r.operands[2].shape,
                                                     r.checker, operand_name(1),
                                                     operand_name(2)));
  TENACT_ASSIGN_OR_RETURN(shape, unify_scalar_or_same(r.operands, 0, shape, 1, r.checker));
  return one(ValueType{r.operands[1].dtype, std::move(shape)});
}

// clamp(min, operand, max): min and max share the operand's dtype and are
// scalars or of its shape.
InferResult infer_clamp(const InferRequest& r) {
  TENACT_TRY(expect_arity(r.operands, 3));
  TENACT_TRY(require_same_dtype(r.operands, 0, 1));
  TENACT_TRY(require_same_dtype(r.operands, 2, 1));
  Shape shape = r.operands[1].shape;
  TENACT_ASSIGN_OR_RETURN(shape, unify_scalar_or_same(r.operands, 0, shape, 1, r.checker));
  TENACT_ASSIGN_OR_RETURN(shape, unify_scalar_or_same(r.operands, 2, shape, 1, r.checker));
  return one(ValueType{r.operands[1].dtype, std::move(shape)});
}

InferResult infer_convert(const InferRequest& r) {
  const auto* attrs = std::get_if<ConvertAttrs>(&r.attrs);
  if (attrs == nullptr) return Error{ErrorCode::Internal, "convert without ConvertAttrs"};
  TENACT_TRY(expect_arity(r.operands, 1));
  return one(ValueType{attrs->dtype, r.operands[0].shape});
}

}  // namespace

InferResult infer_elementwise(const InferRequest& request) {
  if (const DTypeSet* set = unary_type_set(request.kind)) return infer_unary(request, *set);
  if (const DTypeSet* set = binary_type_set(request.kind)) {
    TENACT_ASSIGN_OR_RETURN(ValueType result, unify_binary(request, *set));
    return one(std::move(result));
  }
  switch (request.kind) {
    case OpKind::Compare: return infer_compare(request);
    case OpKind::Select: return infer_select(request);
    case OpKind::Clamp: return infer_clamp(request);
    case OpKind::Convert: return infer_convert(request);
    default:
      return Error{ErrorCode::Internal, "infer_elementwise called for " +
                                            std::string{to_string(request.kind)} +
                                            ", which is not an elementwise op"};
  }
}

}  // namespace tenact::infer
