// Type and shape inference of dot_general. Expected types are derived by
// hand from the StableHLO spec (result = batch + lhs free + rhs free) and
// docs/program-format.md (bool rejected).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/infer/infer.hpp"
#include "infer_test_support.hpp"

namespace {

using namespace tenact;
using namespace tenact::infer;
using namespace tenact::infer::test_support;

const char* const kDotOrigin = "op #0 (dot_general -> 'y')";

/// One dot_general call with its own attributes and deferred-constraint list.
struct Dot {
  std::vector<Constraint> deferred;
  ShapeChecker checker{&deferred, kDotOrigin};
  ExtensionRegistry extensions;
  DotGeneralAttrs attrs;

  InferResult operator()(ValueType lhs, ValueType rhs) {
    std::vector<ValueType> operands{std::move(lhs), std::move(rhs)};
    const OpAttrs op_attrs = attrs;
    InferRequest request{OpKind::DotGeneral, op_attrs, operands, checker, extensions};
    return infer_op(request);
  }
  InferResult with_operands(std::vector<ValueType> operands) {
    const OpAttrs op_attrs = attrs;
    InferRequest request{OpKind::DotGeneral, op_attrs, operands, checker, extensions};
    return infer_dot(request);
  }
  void dims(std::vector<int64_t> lb, std::vector<int64_t> rb, std::vector<int64_t> lc,
            std::vector<int64_t> rc) {
    attrs.lhs_batching_dimensions = std::move(lb);
    attrs.rhs_batching_dimensions = std::move(rb);
    attrs.lhs_contracting_dimensions = std::move(lc);
    attrs.rhs_contracting_dimensions = std::move(rc);
  }
};

/// The constraint states `a == b`, written either way round.
void check_equality(const Constraint& k, const DimExpr& a, const DimExpr& b) {
  INFO("constraint " << k.lhs.to_string() << " " << to_string(k.rel) << " " << k.rhs.to_string()
                     << " (" << k.what << ")");
  CHECK(k.rel == Relation::Eq);
  CHECK(((k.lhs == a && k.rhs == b) || (k.lhs == b && k.rhs == a)));
  CHECK(k.origin == kDotOrigin);
  CHECK_FALSE(k.what.empty());
}

}  // namespace

TEST_CASE("dot_general orders the result: batch, lhs free, rhs free", "[infer_dot]") {
  Dot dot;
  SECTION("the StableHLO example: batched 2x2 matrices") {
    dot.dims({0}, {0}, {2}, {1});
    check_type(dot(t(DType::I32, {2, 2, 2}), t(DType::I32, {2, 2, 2})),
               t(DType::I32, {2, 2, 2}));
  }
  SECTION("distinct sizes show the order: [B, 3, 5, 7] . [B, 7, 11] is [B, 3, 5, 11]") {
    dot.dims({0}, {0}, {3}, {1});
    check_type(dot(t(DType::F32, {sym("B"), c(3), c(5), c(7)}),
                   t(DType::F32, {sym("B"), c(7), c(11)})),
               t(DType::F32, {sym("B"), c(3), c(5), c(11)}));
  }
  SECTION("a batching axis in the middle of lhs moves to the front") {
    // lhs [5, 6, 3] batching axis 1, rhs [6, 3, 7] batching axis 0, contract 3.
    dot.dims({1}, {0}, {2}, {1});
    check_type(dot(t(DType::F64, {5, 6, 3}), t(DType::F64, {6, 3, 7})), t(DType::F64, {6, 5, 7}));
  }
  SECTION("a matrix product with a symbolic batch: [B, 784] . [784, 128] is [B, 128]") {
    dot.dims({}, {}, {1}, {0});
    check_type(dot(t(DType::F32, {sym("B"), c(784)}), t(DType::F32, {784, 128})),
               t(DType::F32, {sym("B"), c(128)}));
  }
  SECTION("two contracting axes paired out of order: [2, 3, 4] . [4, 3, 5] is [2, 5]") {
    dot.dims({}, {}, {1, 2}, {1, 0});
    check_type(dot(t(DType::C64, {2, 3, 4}), t(DType::C64, {4, 3, 5})), t(DType::C64, {2, 5}));
  }
  SECTION("no contraction is an outer product: [3] . [4] is [3, 4]") {
    dot.dims({}, {}, {}, {});
    check_type(dot(t(DType::I8, {3}), t(DType::I8, {4})), t(DType::I8, {3, 4}));
  }
  SECTION("a full contraction of vectors is a scalar") {
    dot.dims({}, {}, {0}, {0});
    check_type(dot(t(DType::U64, {6}), t(DType::U64, {6})), ValueType{DType::U64, {}});
  }
  CHECK(dot.deferred.empty());
}

TEST_CASE("dot_general takes every numeric dtype and rejects bool", "[infer_dot]") {
  Dot dot;
  dot.dims({}, {}, {1}, {0});
  for (DType d : kAllDTypes) {
    INFO(to_string(d));
    const auto r = dot(t(d, {2, 3}), t(d, {3, 4}));
    if (d == DType::Bool) {
      check_error(r, ErrorCode::TypeMismatch, "numeric operands, got bool");
    } else {
      check_type(r, t(d, {2, 4}));
    }
  }
  SECTION("conjugation flags on reals and complex alike") {
    dot.attrs.conj_lhs = true;
    dot.attrs.conj_rhs = true;
    check_type(dot(t(DType::F32, {2, 3}), t(DType::F32, {3, 4})), t(DType::F32, {2, 4}));
    check_type(dot(t(DType::C128, {2, 3}), t(DType::C128, {3, 4})), t(DType::C128, {2, 4}));
    check_type(dot(t(DType::I16, {2, 3}), t(DType::I16, {3, 4})), t(DType::I16, {2, 4}));
  }
  SECTION("operands of two dtypes") {
    check_error(dot(t(DType::F32, {2, 3}), t(DType::F64, {3, 4})), ErrorCode::TypeMismatch,
                "rhs (operand 1) has dtype f64, expected f32");
  }
  CHECK(dot.deferred.empty());
}

TEST_CASE("dot_general defers size equalities that depend on symbols", "[infer_dot]") {
  Dot dot;
  SECTION("contracting K against N") {
    dot.dims({}, {}, {1}, {0});
    check_type(dot(t(DType::F32, {sym("B"), sym("K")}), t(DType::F32, {sym("N"), c(4)})),
               t(DType::F32, {sym("B"), c(4)}));
    REQUIRE(dot.deferred.size() == 1);
    check_equality(dot.deferred[0], sym("K"), sym("N"));
  }
  SECTION("batching B against 8") {
    dot.dims({0}, {0}, {2}, {1});
    check_type(dot(t(DType::F32, {sym("B"), c(2), c(3)}), t(DType::F32, {c(8), c(3), c(5)})),
               t(DType::F32, {sym("B"), c(2), c(5)}));
    REQUIRE(dot.deferred.size() == 1);
    check_equality(dot.deferred[0], sym("B"), c(8));
  }
}

TEST_CASE("dot_general leaves non-exact extents to run time", "[infer_dot]") {
  Dot dot;
  SECTION("an upper-bound free axis carries over") {
    dot.dims({}, {}, {1}, {0});
    ValueType lhs{DType::F32, {ShapeExtent::upper_bound(sym("N")), ShapeExtent::exact(c(4))}};
    const ValueType r = only_result(dot(lhs, t(DType::F32, {4, 2})));
    REQUIRE(r.shape.size() == 2);
    CHECK(r.shape[0] == ShapeExtent::upper_bound(sym("N")));
    CHECK(r.shape[1] == ShapeExtent::exact(c(2)));
  }
  SECTION("an upper-bound contracting axis is not compared") {
    dot.dims({}, {}, {1}, {0});
    ValueType lhs{DType::F32, {ShapeExtent::exact(c(3)), ShapeExtent::upper_bound(c(9))}};
    check_type(dot(lhs, t(DType::F32, {4, 2})), t(DType::F32, {3, 2}));
  }
  SECTION("an unknown batching axis wins over an exact one") {
    dot.dims({0}, {0}, {}, {});
    ValueType rhs{DType::F32, {ShapeExtent::unknown()}};
    const ValueType r = only_result(dot(t(DType::F32, {3}), rhs));
    REQUIRE(r.shape.size() == 1);
    CHECK(r.shape[0].kind == ExtentKind::Unknown);
  }
  CHECK(dot.deferred.empty());
}

TEST_CASE("dot_general enforces every StableHLO constraint", "[infer_dot]") {
  Dot dot;
  const ValueType lhs = t(DType::F32, {2, 3, 4});
  const ValueType rhs = t(DType::F32, {2, 4, 5});
  dot.dims({0}, {0}, {2}, {1});
  SECTION("C2: batching lists of different sizes") {
    dot.attrs.rhs_batching_dimensions = {};
    check_error(dot(lhs, rhs), ErrorCode::InvalidAttribute,
                "lhs_batching_dimensions [0] and rhs_batching_dimensions [] have different sizes");
  }
  SECTION("C3: contracting lists of different sizes") {
    dot.attrs.rhs_contracting_dimensions = {1, 2};
    check_error(dot(lhs, rhs), ErrorCode::InvalidAttribute,
                "lhs_contracting_dimensions [2] and rhs_contracting_dimensions [1, 2] have "
                "different sizes");
  }
  SECTION("C4: an lhs axis both batching and contracting") {
    dot.attrs.lhs_contracting_dimensions = {0};
    check_error(dot(lhs, rhs), ErrorCode::InvalidAttribute,
                "dimension 0 appears in both lhs_batching_dimensions [0] and "
                "lhs_contracting_dimensions [0]");
  }
  SECTION("C4: an lhs contracting axis repeated") {
    dot.dims({}, {}, {1, 1}, {0, 1});
    check_error(dot(t(DType::F32, {3, 3}), t(DType::F32, {3, 3})), ErrorCode::InvalidAttribute,
                "lhs_contracting_dimensions: dimension 1 appears more than once");
  }
  SECTION("C5: an rhs axis both batching and contracting") {
    dot.attrs.rhs_contracting_dimensions = {0};
    check_error(dot(lhs, rhs), ErrorCode::InvalidAttribute,
                "dimension 0 appears in both rhs_batching_dimensions [0] and "
                "rhs_contracting_dimensions [0]");
  }
  SECTION("C6: lhs batching axis out of range") {
    dot.attrs.lhs_batching_dimensions = {3};
    check_error(dot(lhs, rhs), ErrorCode::InvalidAttribute,
                "lhs_batching_dimensions: dimension 3 is out of range for rank 3");
  }
  SECTION("C7: lhs contracting axis out of range") {
    dot.attrs.lhs_contracting_dimensions = {-1};
    check_error(dot(lhs, rhs), ErrorCode::InvalidAttribute,
                "lhs_contracting_dimensions: dimension -1 is out of range for rank 3");
  }
  SECTION("C8: rhs batching axis out of range") {
    dot.attrs.rhs_batching_dimensions = {5};
    check_error(dot(lhs, rhs), ErrorCode::InvalidAttribute,
                "rhs_batching_dimensions: dimension 5 is out of range for rank 3");
  }
  SECTION("C9: rhs contracting axis out of range") {
    dot.attrs.rhs_contracting_dimensions = {3};
    check_error(dot(lhs, rhs), ErrorCode::InvalidAttribute,
                "rhs_contracting_dimensions: dimension 3 is out of range for rank 3");
  }
  SECTION("C10: batching axes of different sizes") {
    check_error(dot(lhs, t(DType::F32, {7, 4, 5})), ErrorCode::ShapeMismatch,
                "lhs axis 0 (lhs_batching_dimensions[0], size 2) and rhs axis 0 "
                "(rhs_batching_dimensions[0], size 7) have equal sizes");
  }
  SECTION("C11: contracting axes of different sizes name both sizes") {
    dot.dims({}, {}, {1}, {0});
    const auto r = dot(t(DType::F32, {sym("B"), c(784)}), t(DType::F32, {128, 10}));
    check_error(r, ErrorCode::ShapeMismatch, "lhs_contracting_dimensions[0], size 784");
    check_error(r, ErrorCode::ShapeMismatch, "rhs_contracting_dimensions[0], size 128");
  }
  SECTION("arity") {
    check_error(dot.with_operands({lhs}), ErrorCode::Schema, "expects 2 operands, got 1");
    check_error(dot.with_operands({lhs, rhs, rhs}), ErrorCode::Schema,
                "expects 2 operands, got 3");
  }
  CHECK(dot.deferred.empty());
}
