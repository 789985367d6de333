// Shapes of dimension expressions with their extent kind: exact, an upper
// bound known before running, or unknown.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/dim_expr.hpp"
#include "core/dtype.hpp"

namespace tenact {

enum class ExtentKind : uint8_t {
  /// The dimension is exactly `expr`.
  Exact,
  /// The dimension is at most `expr`; the actual value is known at run time
  /// (dynamic_truncate).
  UpperBound,
  /// Nothing is known before running.
  Unknown,
};

struct ShapeExtent {
  ExtentKind kind = ExtentKind::Exact;
  DimExpr expr;  // meaningful unless kind == Unknown

  static ShapeExtent exact(DimExpr e) { return {ExtentKind::Exact, std::move(e)}; }
  static ShapeExtent upper_bound(DimExpr e) { return {ExtentKind::UpperBound, std::move(e)}; }
  static ShapeExtent unknown() { return {ExtentKind::Unknown, DimExpr{}}; }
  bool is_exact() const { return kind == ExtentKind::Exact; }

  /// "B", "<=N", "?".
  std::string to_string() const;
  friend bool operator==(const ShapeExtent& a, const ShapeExtent& b) {
    return a.kind == b.kind && (a.kind == ExtentKind::Unknown || a.expr == b.expr);
  }
};

using Shape = std::vector<ShapeExtent>;

/// Builds an all-exact shape.
Shape exact_shape(const std::vector<DimExpr>& dims);
Shape exact_shape(std::initializer_list<int64_t> dims);
/// "[B, 784]", "[<=N, 4]", "[]".
std::string to_string(const Shape& shape);
std::string to_string(const std::vector<DimExpr>& dims);
std::string to_string(const std::vector<int64_t>& dims);
/// "f32[B, 784]".
std::string type_string(DType dtype, const Shape& shape);

/// The element type and shape of one value of a program.
struct ValueType {
  DType dtype = DType::F32;
  Shape shape;
  size_t rank() const { return shape.size(); }
  friend bool operator==(const ValueType& a, const ValueType& b) {
    return a.dtype == b.dtype && a.shape == b.shape;
  }
  std::string to_string() const { return type_string(dtype, shape); }
};

/// The concrete extents of one operand or result (non-negative; the dtype
/// for its element size): what cost estimates are computed from.
struct ValueExtent {
  DType dtype = DType::F32;
  std::span<const int64_t> shape;
};

}  // namespace tenact
