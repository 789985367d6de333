// Helpers shared by the inference tests: short constructors for dims, shapes
// and value types, two one-call inference harnesses with their own
// deferred-constraint lists (Infer takes the attributes first, Harness the
// operands first with the attributes defaulted), and Catch2 checks for
// results, errors and deferred constraints. Test-only; every definition is
// inline so several test files can include it (and, in a unity build, share
// one translation unit).
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/infer/infer.hpp"

// Nested in tenact::infer so the helpers see tenact and tenact::infer names
// without using-directives leaking into includers.
namespace tenact::infer::test_support {

/// The origin both harnesses stamp on their deferred constraints.
inline constexpr const char* kOrigin = "op #0 (test)";

inline DimExpr c(int64_t v) { return DimExpr::constant(v); }
inline DimExpr sym(const char* name) { return DimExpr::symbol(name); }
/// The expression `text` parses to (the test fails when it does not parse).
inline DimExpr expr(const char* text) {
  auto parsed = DimExpr::parse(text);
  REQUIRE(parsed.ok());
  return *parsed;
}
inline std::vector<DimExpr> dims(std::initializer_list<int64_t> values) {
  std::vector<DimExpr> out;
  for (int64_t v : values) out.push_back(c(v));
  return out;
}
inline ValueType t(DType dtype, std::vector<DimExpr> shape) { return {dtype, exact_shape(shape)}; }
inline ValueType t(DType dtype, std::initializer_list<int64_t> shape) {
  return {dtype, exact_shape(shape)};
}
inline ShapeExtent ex(DimExpr e) { return ShapeExtent::exact(std::move(e)); }
inline Shape shape(std::initializer_list<DimExpr> dims) {
  return exact_shape(std::vector<DimExpr>(dims));
}
inline ValueType vt(DType dtype, Shape sh) { return ValueType{dtype, std::move(sh)}; }

/// One inference call with its own deferred-constraint list.
struct Infer {
  std::vector<Constraint> deferred;
  ShapeChecker checker{&deferred, kOrigin};
  ExtensionRegistry extensions;

  InferResult operator()(OpKind kind, const OpAttrs& attrs, std::vector<ValueType> operands) {
    InferRequest request{kind, attrs, operands, checker, extensions};
    return infer_op(request);
  }
};

/// The same call with the operands first and the attributes defaulted.
struct Harness {
  std::vector<Constraint> deferred;
  ShapeChecker checker{&deferred, kOrigin};
  ExtensionRegistry extensions;

  InferResult run(OpKind kind, std::vector<ValueType> operands, OpAttrs attrs = NoAttrs{}) {
    InferRequest request{kind, attrs, std::span<const ValueType>(operands), checker, extensions};
    return infer_op(request);
  }
};

inline ValueType only_result(const InferResult& r) {
  if (!r.ok()) FAIL("unexpected error: " << r.error().to_string());
  REQUIRE(r->size() == 1);
  return r->front();
}

inline void check_type(const InferResult& r, const ValueType& expected) {
  const ValueType actual = only_result(r);
  INFO("actual " << actual.to_string() << ", expected " << expected.to_string());
  CHECK(actual == expected);
}

inline void check_error(const InferResult& r, ErrorCode code, const std::string& needle) {
  REQUIRE_FALSE(r.ok());
  INFO(r.error().to_string());
  CHECK(r.error().code() == code);
  CHECK_THAT(r.error().message(), Catch::Matchers::Contains(needle));
}

inline Relation mirror(Relation rel) {
  return rel == Relation::Le ? Relation::Ge : rel == Relation::Ge ? Relation::Le : rel;
}

/// Whether the constraint states `a rel b` (an equality either way round).
inline bool is_constraint(const Constraint& k, const DimExpr& a, Relation rel, const DimExpr& b) {
  if (k.rel != rel) return false;
  if (k.lhs == a && k.rhs == b) return true;
  return rel == Relation::Eq && k.lhs == b && k.rhs == a;
}

/// The constraint states `lhs rel rhs`, written either way round.
inline void check_constraint(const Constraint& k, const DimExpr& lhs, Relation rel,
                             const DimExpr& rhs) {
  INFO("constraint " << k.lhs.to_string() << " " << to_string(k.rel) << " " << k.rhs.to_string()
                     << " (" << k.what << ")");
  const bool direct = k.lhs == lhs && k.rel == rel && k.rhs == rhs;
  const bool mirrored = k.lhs == rhs && k.rel == mirror(rel) && k.rhs == lhs;
  CHECK((direct || mirrored));
  CHECK(k.origin == kOrigin);
  CHECK_FALSE(k.what.empty());
}

}  // namespace tenact::infer::test_support
