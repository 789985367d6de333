// Type and shape inference of every op (internal to core/).
//
// Contract: one function per family; each checks arity, dtypes and
// attributes of one op against its operand types and returns the result
// types. Symbolic dimension checks go through ShapeChecker, which decides
// them now (Holds: nothing to do; Fails: an error) or records them as
// constraints for signature time (Depends). Errors carry no op prefix: the
// validator adds "op #i (kind -> 'name')".
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/op_attrs.hpp"
#include "core/program.hpp"
#include "core/shape.hpp"

namespace tenact::infer {

class ShapeChecker {
 public:
  explicit ShapeChecker(std::vector<Constraint>* deferred, std::string origin)
      : deferred_(deferred), origin_(std::move(origin)) {}

  /// Requires `lhs rel rhs` for every signature. `what` describes the
  /// requirement for a person ("operand 1 axis 0 equals operand 0 axis 0").
  /// Errors: ShapeMismatch when it fails for every value of the symbols.
  Status require(const DimExpr& lhs, Relation rel, const DimExpr& rhs, const std::string& what);

  /// Requires two extents to be equal. Non-exact extents (upper bounds,
  /// unknown) are checked against their actual values at run time: only
  /// two exact extents are checked here.
  Status require_equal(const ShapeExtent& a, const ShapeExtent& b, const std::string& what);

  /// Requires a dimension expression to be >= 0 (e.g. a computed size).
  Status require_non_negative(const DimExpr& e, const std::string& what);

 private:
  std::vector<Constraint>* deferred_;
  std::string origin_;
};

struct InferRequest {
  OpKind kind;
  const OpAttrs& attrs;
  std::span<const ValueType> operands;
  ShapeChecker& checker;
  const ExtensionRegistry& extensions;
};

using InferResult = Result<std::vector<ValueType>>;

/// Dispatches on the op's family.
InferResult infer_op(const InferRequest& request);

InferResult infer_elementwise(const InferRequest& request);  // unary, binary, compare, select, clamp, convert
InferResult infer_layout(const InferRequest& request);       // transpose ... triu
InferResult infer_reduction(const InferRequest& request);
InferResult infer_indexing(const InferRequest& request);
InferResult infer_dot(const InferRequest& request);
InferResult infer_extension(const InferRequest& request);

// -- helpers shared by the family files ----------------------------------------

/// InvalidAttribute/ShapeMismatch/TypeMismatch error constructors.
Error attribute_error(std::string message);
Error shape_error(std::string message);
Error type_error(std::string message);

/// Errors unless operands.size() == n (Schema: "expects 2 operands, got 3").
Status expect_arity(std::span<const ValueType> operands, size_t n);
Status expect_arity_at_least(std::span<const ValueType> operands, size_t n);

/// Errors unless 0 <= axis < rank ("dimension 3 is out of range for rank 2").
Status check_axis(int64_t axis, size_t rank, std::string_view attribute);
/// Errors on any axis out of range or repeated.
Status check_unique_axes(std::span<const int64_t> axes, size_t rank, std::string_view attribute);
/// Errors unless `perm` is a permutation of 0..rank-1.
Status check_permutation(std::span<const int64_t> perm, size_t rank, std::string_view attribute);

/// Shape of an elementwise result from two operand shapes that must agree
/// axis by axis (rank mismatch is an error). A non-exact extent wins.
Result<Shape> unify_shapes(const Shape& a, const Shape& b, ShapeChecker& checker,
                           std::string_view a_name, std::string_view b_name);

/// True for a rank-0 shape.
inline bool is_scalar(const ValueType& t) { return t.shape.empty(); }

/// "operand 1" (0-based, as the "in" list of the document counts).
std::string operand_name(size_t index);

}  // namespace tenact::infer
