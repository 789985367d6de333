// Type rules of the elementwise ops and the lookup of their tile functions
// (see elementwise_kernels.hpp).
#include "engines/cpu/kernels/elementwise_kernels.hpp"

#include <string>
#include <variant>

namespace tenact::cpu {

namespace {

enum class Shape { Unary, Binary, Compare, Select, Clamp, Convert, None };

Shape shape_of(OpKind kind) {
  switch (kind) {
    case OpKind::Negate: case OpKind::Abs: case OpKind::Sign: case OpKind::Exponential:
    case OpKind::Log: case OpKind::Sine: case OpKind::Cosine: case OpKind::Tanh:
    case OpKind::Sqrt: case OpKind::Rsqrt: case OpKind::ExponentialMinusOne:
    case OpKind::LogPlusOne: case OpKind::Conj: case OpKind::Floor: case OpKind::Ceil:
    case OpKind::RoundNearestEven: case OpKind::RoundNearestAfz: case OpKind::Logistic:
    case OpKind::Not:
      return Shape::Unary;
    case OpKind::Add: case OpKind::Subtract: case OpKind::Multiply: case OpKind::Divide:
    case OpKind::Remainder: case OpKind::Maximum: case OpKind::Minimum: case OpKind::Power:
    case OpKind::And: case OpKind::Or: case OpKind::Xor:
      return Shape::Binary;
    case OpKind::Compare: return Shape::Compare;
    case OpKind::Select: return Shape::Select;
    case OpKind::Clamp: return Shape::Clamp;
    case OpKind::Convert: return Shape::Convert;
    default: return Shape::None;
  }
}

/// What an op admits, for error messages (docs/program-format.md "Type sets").
const char* admitted_types(OpKind kind) {
  switch (kind) {
    case OpKind::Negate: return "integer, floating or complex";
    case OpKind::Abs: case OpKind::Sign: return "signed integer, floating or complex";
    case OpKind::Floor: case OpKind::Ceil: case OpKind::RoundNearestEven:
    case OpKind::RoundNearestAfz: return "floating";
    case OpKind::Not: case OpKind::And: case OpKind::Or: case OpKind::Xor:
      return "bool or integer";
    case OpKind::Subtract: case OpKind::Divide: case OpKind::Power:
      return "integer, floating or complex";
    case OpKind::Remainder: return "integer or floating";
    case OpKind::Add: case OpKind::Multiply: case OpKind::Maximum: case OpKind::Minimum:
      return "any";
    default: return "floating or complex";
  }
}

std::string op_name(OpKind kind) { return std::string{to_string(kind)}; }
std::string dtype_name(DType t) { return std::string{to_string(t)}; }

Status expect_arity(OpKind kind, std::span<const DType> operands, size_t arity) {
  if (operands.size() == arity) return ok_status();
  return Error{ErrorCode::InputMismatch, op_name(kind) + " takes " + std::to_string(arity) +
                                             " operands, got " + std::to_string(operands.size())};
}

Status expect_same(OpKind kind, std::span<const DType> operands, size_t index, size_t reference) {
  if (operands[index] == operands[reference]) return ok_status();
  return Error{ErrorCode::InputMismatch,
               op_name(kind) + " operand " + std::to_string(index) + " has dtype " +
                   dtype_name(operands[index]) + ", expected " + dtype_name(operands[reference]) +
                   " (the dtype of operand " + std::to_string(reference) + ")"};
}

Result<ElementwiseKernel> found(OpKind kind, DType operand, TileFn fn, DType result, size_t arity) {
  if (fn == nullptr)
    return Error{ErrorCode::TypeMismatch, op_name(kind) + " takes " + admitted_types(kind) +
                                              " types, not " + dtype_name(operand)};
  return ElementwiseKernel{fn, result, arity};
}

}  // namespace

bool is_elementwise_op(OpKind kind) { return shape_of(kind) != Shape::None; }

Result<ElementwiseKernel> find_elementwise_kernel(OpKind kind, const OpAttrs& attrs,
                                                  std::span<const DType> operands) {
  switch (shape_of(kind)) {
    case Shape::Unary: {
      TENACT_TRY(expect_arity(kind, operands, 1));
      return found(kind, operands[0], ew::unary_tile_for(kind, operands[0]),
                   ew::unary_result_dtype(kind, operands[0]), 1);
    }
    case Shape::Binary: {
      TENACT_TRY(expect_arity(kind, operands, 2));
      TENACT_TRY(expect_same(kind, operands, 1, 0));
      return found(kind, operands[0], ew::binary_tile_for(kind, operands[0]), operands[0], 2);
    }
    case Shape::Compare: {
      const auto* compare = std::get_if<CompareAttrs>(&attrs);
      if (compare == nullptr)
        return Error{ErrorCode::InvalidAttribute, "compare needs a comparison direction"};
      TENACT_TRY(expect_arity(kind, operands, 2));
      TENACT_TRY(expect_same(kind, operands, 1, 0));
      return found(kind, operands[0], ew::compare_tile_for(compare->direction, operands[0]),
                   DType::Bool, 2);
    }
    case Shape::Select: {
      TENACT_TRY(expect_arity(kind, operands, 3));
      if (operands[0] != DType::Bool)
        return Error{ErrorCode::TypeMismatch,
                     "select's predicate has dtype " + dtype_name(operands[0]) + ", expected bool"};
      TENACT_TRY(expect_same(kind, operands, 2, 1));
      return found(kind, operands[1], ew::select_tile_for(operands[1]), operands[1], 3);
    }
    case Shape::Clamp: {
      TENACT_TRY(expect_arity(kind, operands, 3));
      TENACT_TRY(expect_same(kind, operands, 0, 1));
      TENACT_TRY(expect_same(kind, operands, 2, 1));
      return found(kind, operands[1], ew::clamp_tile_for(operands[1]), operands[1], 3);
    }
    case Shape::Convert: {
      const auto* convert = std::get_if<ConvertAttrs>(&attrs);
      if (convert == nullptr)
        return Error{ErrorCode::InvalidAttribute, "convert needs a target dtype"};
      TENACT_TRY(expect_arity(kind, operands, 1));
      return found(kind, operands[0], ew::convert_tile_for(operands[0], convert->dtype),
                   convert->dtype, 1);
    }
    case Shape::None: break;
  }
  return Error{ErrorCode::Unsupported, op_name(kind) + " is not an elementwise op"};
}

}  // namespace tenact::cpu
