// Type and shape inference of the layout family: transpose, reshape,
// broadcast_in_dim, constant, iota, extract_diag, embed_diag, tril, triu.
// Expected shapes are derived by hand from docs/program-format.md and the
// StableHLO constraints it defers to.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/infer/infer.hpp"
#include "infer_test_support.hpp"

namespace tenact::infer {
namespace {

using namespace test_support;

/// `e >= 0`, in either orientation a checker may record it.
bool is_non_negative_constraint(const Constraint& k, const DimExpr& e) {
  return (k.rel == Relation::Ge && k.lhs == e && k.rhs == c(0)) ||
         (k.rel == Relation::Le && k.lhs == c(0) && k.rhs == e);
}

HostTensor dense(DType t, std::vector<int64_t> dims) {
  auto r = HostTensor::zeros(t, std::move(dims));
  REQUIRE(r.ok());
  return *r;
}

// -- transpose ---------------------------------------------------------------

TEST_CASE("transpose permutes the operand's extents", "[infer_layout]") {
  Harness h;
  Shape in{ex(c(2)), ex(c(3)), ShapeExtent::upper_bound(sym("N"))};
  Shape out{ShapeExtent::upper_bound(sym("N")), ex(c(2)), ex(c(3))};
  CHECK(only_result(h.run(OpKind::Transpose, {vt(DType::C64, in)}, TransposeAttrs{{2, 0, 1}})) ==
        vt(DType::C64, out));
  CHECK(only_result(h.run(OpKind::Transpose, {vt(DType::Bool, shape({sym("B"), c(7)}))}, TransposeAttrs{{1, 0}})) ==
        vt(DType::Bool, shape({c(7), sym("B")})));
  CHECK(only_result(h.run(OpKind::Transpose, {vt(DType::I8, shape({}))}, TransposeAttrs{{}})) ==
        vt(DType::I8, shape({})));
  CHECK(h.deferred.empty());
}

TEST_CASE("transpose keeps every dtype", "[infer_layout]") {
  for (DType t : kAllDTypes) {
    Harness h;
    CHECK(only_result(h.run(OpKind::Transpose, {vt(t, shape({c(1), c(2)}))}, TransposeAttrs{{1, 0}})) ==
          vt(t, shape({c(2), c(1)})));
  }
}

TEST_CASE("transpose rejects a permutation that is not one", "[infer_layout]") {
  Harness h;
  auto x = vt(DType::F32, shape({c(2), c(3)}));
  check_error(h.run(OpKind::Transpose, {x}, TransposeAttrs{{0, 0}}), ErrorCode::InvalidAttribute,
              "permutation [0, 0] is not a permutation of 0..1");
  check_error(h.run(OpKind::Transpose, {x}, TransposeAttrs{{0, 2}}), ErrorCode::InvalidAttribute,
              "permutation [0, 2] is not a permutation of 0..1");
  check_error(h.run(OpKind::Transpose, {x}, TransposeAttrs{{-1, 0}}), ErrorCode::InvalidAttribute,
              "permutation [-1, 0]");
  check_error(h.run(OpKind::Transpose, {x}, TransposeAttrs{{0}}), ErrorCode::InvalidAttribute,
              "permutation [0] has 1 entries, expected 2");
  check_error(h.run(OpKind::Transpose, {x}, TransposeAttrs{{0, 1, 2}}), ErrorCode::InvalidAttribute,
              "permutation [0, 1, 2] has 3 entries, expected 2");
  check_error(h.run(OpKind::Transpose, {}, TransposeAttrs{{}}), ErrorCode::Schema,
              "expects 1 operand, got 0");
  check_error(h.run(OpKind::Transpose, {x, x}, TransposeAttrs{{1, 0}}), ErrorCode::Schema,
              "expects 1 operand, got 2");
}

// -- reshape -----------------------------------------------------------------

TEST_CASE("reshape with constant extents checks the element count now", "[infer_layout]") {
  Harness h;
  auto x = vt(DType::F32, shape({c(2), c(3)}));
  CHECK(only_result(h.run(OpKind::Reshape, {x}, ReshapeAttrs{{c(6)}})) == vt(DType::F32, shape({c(6)})));
  CHECK(only_result(h.run(OpKind::Reshape, {x}, ReshapeAttrs{{c(3), c(1), c(2)}})) ==
        vt(DType::F32, shape({c(3), c(1), c(2)})));
  CHECK(only_result(h.run(OpKind::Reshape, {vt(DType::U16, shape({}))}, ReshapeAttrs{{c(1), c(1)}})) ==
        vt(DType::U16, shape({c(1), c(1)})));
  CHECK(only_result(h.run(OpKind::Reshape, {vt(DType::U16, shape({c(1)}))}, ReshapeAttrs{{}})) ==
        vt(DType::U16, shape({})));
  CHECK(h.deferred.empty());
  check_error(h.run(OpKind::Reshape, {x}, ReshapeAttrs{{c(7)}}), ErrorCode::ShapeMismatch,
              "element count");
  check_error(h.run(OpKind::Reshape, {x}, ReshapeAttrs{{c(2), c(2)}}), ErrorCode::ShapeMismatch,
              "element count");
  check_error(h.run(OpKind::Reshape, {vt(DType::F32, shape({}))}, ReshapeAttrs{{c(2)}}),
              ErrorCode::ShapeMismatch, "element count");
}

TEST_CASE("reshape with symbolic extents decides what it can and defers the rest",
          "[infer_layout]") {
  SECTION("B x 4 as 2B x 2 holds for every B") {
    Harness h;
    CHECK(only_result(h.run(OpKind::Reshape, {vt(DType::F32, shape({sym("B"), c(4)}))},
                            ReshapeAttrs{{expr("B*2"), c(2)}})) == vt(DType::F32, shape({expr("2*B"), c(2)})));
    CHECK(h.deferred.empty());
  }
  SECTION("B x C as C x B holds") {
    Harness h;
    CHECK(only_result(h.run(OpKind::Reshape, {vt(DType::I64, shape({sym("B"), sym("C")}))},
                            ReshapeAttrs{{sym("C"), sym("B")}})) == vt(DType::I64, shape({sym("C"), sym("B")})));
    CHECK(h.deferred.empty());
  }
  SECTION("an axis of extent 0 makes both counts 0") {
    Harness h;
    CHECK(only_result(h.run(OpKind::Reshape, {vt(DType::F32, shape({c(0), sym("B")}))}, ReshapeAttrs{{c(0)}})) ==
          vt(DType::F32, shape({c(0)})));
    CHECK(h.deferred.empty());
  }
  SECTION("B x 4 as 8 depends on B: recorded") {
    Harness h;
    CHECK(only_result(h.run(OpKind::Reshape, {vt(DType::F32, shape({sym("B"), c(4)}))}, ReshapeAttrs{{c(8)}})) ==
          vt(DType::F32, shape({c(8)})));
    REQUIRE(h.deferred.size() == 1);
    CHECK(is_constraint(h.deferred[0], expr("4*B"), Relation::Eq, c(8)));
    CHECK_THAT(h.deferred[0].what, Catch::Contains("element count"));
  }
  SECTION("B as B + 1 never holds") {
    Harness h;
    check_error(h.run(OpKind::Reshape, {vt(DType::F32, shape({sym("B")}))}, ReshapeAttrs{{expr("B + 1")}}),
                ErrorCode::ShapeMismatch, "element count");
  }
}

TEST_CASE("reshape needs exact operand extents and non-negative result extents", "[infer_layout]") {
  Harness h;
  check_error(h.run(OpKind::Reshape, {vt(DType::F32, Shape{ex(c(2)), ShapeExtent::upper_bound(sym("N"))})},
                    ReshapeAttrs{{expr("2*N")}}),
              ErrorCode::ShapeMismatch, "operand 0 axis 1 has extent <=N");
  check_error(h.run(OpKind::Reshape, {vt(DType::F32, Shape{ShapeExtent::unknown()})}, ReshapeAttrs{{c(1)}}),
              ErrorCode::ShapeMismatch, "operand 0 axis 0 has extent ?");
  check_error(h.run(OpKind::Reshape, {vt(DType::F32, shape({c(6)}))}, ReshapeAttrs{{c(-2), c(-3)}}),
              ErrorCode::InvalidAttribute, "shape has dimension 0 = -2, expected a non-negative extent");
  check_error(h.run(OpKind::Reshape, {}, ReshapeAttrs{{c(1)}}), ErrorCode::Schema,
              "expects 1 operand, got 0");
}

TEST_CASE("reshape reports an element count that overflows int64", "[infer_layout]") {
  Harness h;
  const int64_t big = int64_t{1} << 62;
  check_error(h.run(OpKind::Reshape, {vt(DType::I8, shape({c(big), c(4)}))}, ReshapeAttrs{{c(1)}}),
              ErrorCode::Overflow, "overflows");
}

// -- broadcast_in_dim --------------------------------------------------------

TEST_CASE("broadcast_in_dim maps operand axes onto the result shape", "[infer_layout]") {
  Harness h;
  CHECK(only_result(h.run(OpKind::BroadcastInDim, {vt(DType::F32, shape({c(3)}))},
                          BroadcastInDimAttrs{{c(2), c(3)}, {1}})) == vt(DType::F32, shape({c(2), c(3)})));
  // An axis of extent 1 stretches.
  CHECK(only_result(h.run(OpKind::BroadcastInDim, {vt(DType::I32, shape({c(1), c(5)}))},
                          BroadcastInDimAttrs{{c(4), c(5)}, {0, 1}})) == vt(DType::I32, shape({c(4), c(5)})));
  // Dimensions in any order: a transpose.
  CHECK(only_result(h.run(OpKind::BroadcastInDim, {vt(DType::F32, shape({c(2), c(3)}))},
                          BroadcastInDimAttrs{{c(3), c(7), c(2)}, {2, 0}})) ==
        vt(DType::F32, shape({c(3), c(7), c(2)})));
  // A scalar broadcast to a symbolic shape.
  CHECK(only_result(h.run(OpKind::BroadcastInDim, {vt(DType::Bool, shape({}))},
                          BroadcastInDimAttrs{{sym("B"), c(128)}, {}})) ==
        vt(DType::Bool, shape({sym("B"), c(128)})));
  // Symbolic extent onto the same symbol.
  CHECK(only_result(h.run(OpKind::BroadcastInDim, {vt(DType::C128, shape({sym("B")}))},
                          BroadcastInDimAttrs{{c(2), sym("B")}, {1}})) == vt(DType::C128, shape({c(2), sym("B")})));
  CHECK(h.deferred.empty());
}

TEST_CASE("broadcast_in_dim keeps every dtype", "[infer_layout]") {
  for (DType t : kAllDTypes) {
    Harness h;
    CHECK(only_result(h.run(OpKind::BroadcastInDim, {vt(t, shape({c(1)}))}, BroadcastInDimAttrs{{c(3), c(2)}, {0}})) ==
          vt(t, shape({c(3), c(2)})));
  }
}

TEST_CASE("broadcast_in_dim defers extents that depend on symbols", "[infer_layout]") {
  SECTION("B onto 4 requires B == 4") {
    Harness h;
    CHECK(only_result(h.run(OpKind::BroadcastInDim, {vt(DType::F32, shape({sym("B")}))},
                            BroadcastInDimAttrs{{c(2), c(4)}, {1}})) == vt(DType::F32, shape({c(2), c(4)})));
    REQUIRE(h.deferred.size() == 1);
    CHECK(is_constraint(h.deferred[0], sym("B"), Relation::Eq, c(4)));
  }
  SECTION("3 onto B requires B == 3") {
    Harness h;
    CHECK(only_result(h.run(OpKind::BroadcastInDim, {vt(DType::F32, shape({c(3)}))},
                            BroadcastInDimAttrs{{sym("B")}, {0}})) == vt(DType::F32, shape({sym("B")})));
    REQUIRE(h.deferred.size() == 1);
    CHECK(is_constraint(h.deferred[0], c(3), Relation::Eq, sym("B")));
  }
  SECTION("a symbolic result extent is required non-negative") {
    Harness h;
    CHECK(only_result(h.run(OpKind::BroadcastInDim, {vt(DType::F32, shape({}))},
                            BroadcastInDimAttrs{{expr("B - 2")}, {}})) == vt(DType::F32, shape({expr("B - 2")})));
    REQUIRE(h.deferred.size() == 1);
    CHECK(is_non_negative_constraint(h.deferred[0], expr("B - 2")));
  }
  SECTION("an upper-bound operand extent is left to run time") {
    Harness h;
    CHECK(only_result(h.run(OpKind::BroadcastInDim, {vt(DType::F32, Shape{ShapeExtent::upper_bound(sym("N"))})},
                            BroadcastInDimAttrs{{sym("N")}, {0}})) == vt(DType::F32, shape({sym("N")})));
    CHECK(h.deferred.empty());
  }
}

TEST_CASE("broadcast_in_dim rejects invalid dimensions and extents", "[infer_layout]") {
  Harness h;
  check_error(h.run(OpKind::BroadcastInDim, {vt(DType::F32, shape({c(3)}))},
                    BroadcastInDimAttrs{{c(2), c(4)}, {1}}),
              ErrorCode::ShapeMismatch, "operand 0 axis 0 has extent 3, expected 1 or 4");
  check_error(h.run(OpKind::BroadcastInDim, {vt(DType::F32, shape({c(3)}))},
                    BroadcastInDimAttrs{{c(2), c(3)}, {0, 1}}),
              ErrorCode::InvalidAttribute, "broadcast_dimensions [0, 1] has 2 entries, expected 1");
  check_error(h.run(OpKind::BroadcastInDim, {vt(DType::F32, shape({c(3), c(2)}))},
                    BroadcastInDimAttrs{{c(3)}, {0}}),
              ErrorCode::InvalidAttribute, "has 1 entries, expected 2");
  check_error(h.run(OpKind::BroadcastInDim, {vt(DType::F32, shape({c(3)}))},
                    BroadcastInDimAttrs{{c(2), c(3)}, {2}}),
              ErrorCode::InvalidAttribute, "dimension 2 is out of range for rank 2");
  check_error(h.run(OpKind::BroadcastInDim, {vt(DType::F32, shape({c(3)}))},
                    BroadcastInDimAttrs{{c(2), c(3)}, {-1}}),
              ErrorCode::InvalidAttribute, "dimension -1 is out of range");
  check_error(h.run(OpKind::BroadcastInDim, {vt(DType::F32, shape({c(3), c(3)}))},
                    BroadcastInDimAttrs{{c(3), c(3)}, {1, 1}}),
              ErrorCode::InvalidAttribute, "dimension 1 appears more than once");
  check_error(h.run(OpKind::BroadcastInDim, {vt(DType::F32, shape({}))},
                    BroadcastInDimAttrs{{c(2), c(-1)}, {}}),
              ErrorCode::InvalidAttribute, "has dimension 1 = -1, expected a non-negative extent");
  check_error(h.run(OpKind::BroadcastInDim, {}, BroadcastInDimAttrs{{c(2)}, {}}), ErrorCode::Schema,
              "expects 1 operand, got 0");
}

// -- constant ----------------------------------------------------------------

TEST_CASE("a splat constant takes its dtype and shape from the attributes", "[infer_layout]") {
  Harness h;
  CHECK(only_result(h.run(OpKind::Constant, {},
                          ConstantAttrs{DType::F32, {sym("B"), c(128)}, Scalar::of_float(0.5), {}})) ==
        vt(DType::F32, shape({sym("B"), c(128)})));
  CHECK(only_result(h.run(OpKind::Constant, {}, ConstantAttrs{DType::Bool, {}, Scalar::of_bool(true), {}})) ==
        vt(DType::Bool, shape({})));
  CHECK(only_result(h.run(OpKind::Constant, {}, ConstantAttrs{DType::C64, {c(2)}, Scalar::of_complex(1, 2), {}})) ==
        vt(DType::C64, shape({c(2)})));
  CHECK(only_result(h.run(OpKind::Constant, {}, ConstantAttrs{DType::U8, {c(0)}, Scalar::of_int(255), {}})) ==
        vt(DType::U8, shape({c(0)})));
  CHECK(h.deferred.empty());
}

TEST_CASE("a splat constant must fit its dtype", "[infer_layout]") {
  Harness h;
  check_error(h.run(OpKind::Constant, {}, ConstantAttrs{DType::I8, {c(2)}, Scalar::of_int(300), {}}),
              ErrorCode::InvalidAttribute, "value 300 does not fit dtype i8");
  check_error(h.run(OpKind::Constant, {}, ConstantAttrs{DType::U32, {}, Scalar::of_int(-1), {}}),
              ErrorCode::InvalidAttribute, "does not fit dtype u32");
  check_error(h.run(OpKind::Constant, {}, ConstantAttrs{DType::F32, {}, Scalar::of_bool(true), {}}),
              ErrorCode::InvalidAttribute, "does not fit dtype f32");
  check_error(h.run(OpKind::Constant, {}, ConstantAttrs{DType::I32, {}, Scalar::of_float(1.5), {}}),
              ErrorCode::InvalidAttribute, "does not fit dtype i32");
}

TEST_CASE("a dense constant has the dtype and the concrete shape of its attributes",
          "[infer_layout]") {
  Harness h;
  CHECK(only_result(h.run(OpKind::Constant, {},
                          ConstantAttrs{DType::F32, {c(2), c(3)}, {}, dense(DType::F32, {2, 3})})) ==
        vt(DType::F32, shape({c(2), c(3)})));
  CHECK(only_result(h.run(OpKind::Constant, {}, ConstantAttrs{DType::I64, {}, {}, dense(DType::I64, {})})) ==
        vt(DType::I64, shape({})));
  check_error(h.run(OpKind::Constant, {}, ConstantAttrs{DType::F32, {c(2), c(3)}, {}, dense(DType::F32, {6})}),
              ErrorCode::InvalidAttribute, "the value has shape [6], expected [2, 3]");
  check_error(h.run(OpKind::Constant, {}, ConstantAttrs{DType::F32, {c(2), c(3)}, {}, dense(DType::F32, {3, 2})}),
              ErrorCode::InvalidAttribute, "the value has shape [3, 2], expected [2, 3]");
  check_error(h.run(OpKind::Constant, {}, ConstantAttrs{DType::F32, {sym("B")}, {}, dense(DType::F32, {4})}),
              ErrorCode::InvalidAttribute, "must be concrete");
  check_error(h.run(OpKind::Constant, {}, ConstantAttrs{DType::F32, {c(4)}, {}, dense(DType::F64, {4})}),
              ErrorCode::TypeMismatch, "the value has dtype f64, expected f32");
}

TEST_CASE("a constant needs exactly one value, no operands, non-negative extents",
          "[infer_layout]") {
  Harness h;
  check_error(h.run(OpKind::Constant, {}, ConstantAttrs{DType::F32, {c(2)}, {}, {}}),
              ErrorCode::InvalidAttribute, "value is missing");
  check_error(h.run(OpKind::Constant, {}, ConstantAttrs{DType::F32, {c(2)}, Scalar::of_int(1), dense(DType::F32, {2})}),
              ErrorCode::InvalidAttribute, "both");
  check_error(h.run(OpKind::Constant, {}, ConstantAttrs{DType::F32, {c(-3)}, Scalar::of_int(1), {}}),
              ErrorCode::InvalidAttribute, "has dimension 0 = -3, expected a non-negative extent");
  check_error(h.run(OpKind::Constant, {vt(DType::F32, shape({}))}, ConstantAttrs{DType::F32, {}, Scalar::of_int(1), {}}),
              ErrorCode::Schema, "expects 0 operands, got 1");
  Harness deferred;
  CHECK(only_result(deferred.run(OpKind::Constant, {},
                                 ConstantAttrs{DType::F32, {expr("T - 1")}, Scalar::of_int(1), {}})) ==
        vt(DType::F32, shape({expr("T - 1")})));
  REQUIRE(deferred.deferred.size() == 1);
  CHECK(is_non_negative_constraint(deferred.deferred[0], expr("T - 1")));
}

// -- iota --------------------------------------------------------------------

TEST_CASE("iota admits integer, floating and complex dtypes, not bool", "[infer_layout]") {
  // bool | i8 i16 i32 i64 | u8 u16 u32 u64 | f16 bf16 f32 f64 | c64 c128
  const bool admits[kDTypeCount] = {false, true, true, true, true, true, true, true,
                                    true,  true, true, true, true, true, true};
  for (DType t : kAllDTypes) {
    Harness h;
    INFO(to_string(t));
    auto r = h.run(OpKind::Iota, {}, IotaAttrs{t, {sym("T"), c(64)}, 0});
    if (admits[static_cast<size_t>(t)])
      CHECK(only_result(r) == vt(t, shape({sym("T"), c(64)})));
    else
      check_error(r, ErrorCode::TypeMismatch, "dtype bool");
  }
}

TEST_CASE("iota checks iota_dimension and its shape", "[infer_layout]") {
  Harness h;
  CHECK(only_result(h.run(OpKind::Iota, {}, IotaAttrs{DType::I32, {c(2), c(3)}, 1})) ==
        vt(DType::I32, shape({c(2), c(3)})));
  check_error(h.run(OpKind::Iota, {}, IotaAttrs{DType::I32, {c(2), c(3)}, 2}),
              ErrorCode::InvalidAttribute, "iota_dimension: dimension 2 is out of range for rank 2");
  check_error(h.run(OpKind::Iota, {}, IotaAttrs{DType::I32, {c(2)}, -1}), ErrorCode::InvalidAttribute,
              "iota_dimension");
  check_error(h.run(OpKind::Iota, {}, IotaAttrs{DType::I32, {}, 0}), ErrorCode::InvalidAttribute,
              "out of range for rank 0");
  check_error(h.run(OpKind::Iota, {}, IotaAttrs{DType::I32, {c(4), c(-1)}, 0}),
              ErrorCode::InvalidAttribute, "has dimension 1 = -1, expected a non-negative extent");
  check_error(h.run(OpKind::Iota, {vt(DType::I32, shape({}))}, IotaAttrs{DType::I32, {c(4)}, 0}),
              ErrorCode::Schema, "expects 0 operands, got 1");
  CHECK(h.deferred.empty());
  Harness deferred;
  CHECK(only_result(deferred.run(OpKind::Iota, {}, IotaAttrs{DType::F32, {expr("B - 2")}, 0})) ==
        vt(DType::F32, shape({expr("B - 2")})));
  REQUIRE(deferred.deferred.size() == 1);
  CHECK(is_non_negative_constraint(deferred.deferred[0], expr("B - 2")));
}

// -- extract_diag / embed_diag ------------------------------------------------

TEST_CASE("extract_diag takes the diagonal of the last two, equal axes", "[infer_layout]") {
  Harness h;
  CHECK(only_result(h.run(OpKind::ExtractDiag, {vt(DType::F32, shape({c(2), c(3), c(3)}))})) ==
        vt(DType::F32, shape({c(2), c(3)})));
  CHECK(only_result(h.run(OpKind::ExtractDiag, {vt(DType::Bool, shape({sym("N"), sym("N")}))})) ==
        vt(DType::Bool, shape({sym("N")})));
  CHECK(h.deferred.empty());
  // A non-exact extent is the one kept.
  CHECK(only_result(h.run(OpKind::ExtractDiag,
                          {vt(DType::F32, Shape{ex(sym("N")), ShapeExtent::upper_bound(sym("N"))})})) ==
        vt(DType::F32, Shape{ShapeExtent::upper_bound(sym("N"))}));
  CHECK(h.deferred.empty());
  check_error(h.run(OpKind::ExtractDiag, {vt(DType::F32, shape({c(3), c(4)}))}), ErrorCode::ShapeMismatch,
              "operand 0 axis 0 (3) equals operand 0 axis 1 (4)");
  check_error(h.run(OpKind::ExtractDiag, {vt(DType::F32, shape({c(3)}))}), ErrorCode::ShapeMismatch,
              "operand 0 has rank 1, expected rank >= 2");
  check_error(h.run(OpKind::ExtractDiag, {}), ErrorCode::Schema, "expects 1 operand, got 0");
}

TEST_CASE("extract_diag of B x 4 requires B == 4", "[infer_layout]") {
  Harness h;
  auto r = only_result(h.run(OpKind::ExtractDiag, {vt(DType::F64, shape({sym("B"), c(4)}))}));
  CHECK(r.dtype == DType::F64);
  CHECK((r.shape == shape({sym("B")}) || r.shape == shape({c(4)})));
  REQUIRE(h.deferred.size() == 1);
  CHECK(is_constraint(h.deferred[0], sym("B"), Relation::Eq, c(4)));
}

TEST_CASE("embed_diag appends a copy of the last axis", "[infer_layout]") {
  Harness h;
  CHECK(only_result(h.run(OpKind::EmbedDiag, {vt(DType::I16, shape({c(2), sym("N")}))})) ==
        vt(DType::I16, shape({c(2), sym("N"), sym("N")})));
  CHECK(only_result(h.run(OpKind::EmbedDiag, {vt(DType::C64, shape({c(0)}))})) ==
        vt(DType::C64, shape({c(0), c(0)})));
  check_error(h.run(OpKind::EmbedDiag, {vt(DType::F32, shape({}))}), ErrorCode::ShapeMismatch,
              "operand 0 has rank 0, expected rank >= 1");
  check_error(h.run(OpKind::EmbedDiag, {vt(DType::F32, shape({c(1)})), vt(DType::F32, shape({c(1)}))}),
              ErrorCode::Schema, "expects 1 operand, got 2");
  CHECK(h.deferred.empty());
}

TEST_CASE("diagonal and triangle ops keep every dtype", "[infer_layout]") {
  for (DType t : kAllDTypes) {
    Harness h;
    INFO(to_string(t));
    CHECK(only_result(h.run(OpKind::ExtractDiag, {vt(t, shape({c(3), c(3)}))})) == vt(t, shape({c(3)})));
    CHECK(only_result(h.run(OpKind::EmbedDiag, {vt(t, shape({c(3)}))})) == vt(t, shape({c(3), c(3)})));
    CHECK(only_result(h.run(OpKind::Tril, {vt(t, shape({c(3), c(4)}))}, TriangleAttrs{0})) ==
          vt(t, shape({c(3), c(4)})));
    CHECK(only_result(h.run(OpKind::Triu, {vt(t, shape({c(3), c(4)}))}, TriangleAttrs{0})) ==
          vt(t, shape({c(3), c(4)})));
  }
}

// -- tril / triu ---------------------------------------------------------------

TEST_CASE("tril and triu take any k on matrices of rank >= 2, square or not", "[infer_layout]") {
  for (OpKind kind : {OpKind::Tril, OpKind::Triu}) {
    Harness h;
    INFO(to_string(kind));
    Shape sh{ex(sym("B")), ex(c(3)), ShapeExtent::upper_bound(c(5))};
    for (int64_t k : {int64_t{-100}, int64_t{-1}, int64_t{0}, int64_t{2}, int64_t{100}})
      CHECK(only_result(h.run(kind, {vt(DType::F32, sh)}, TriangleAttrs{k})) == vt(DType::F32, sh));
    check_error(h.run(kind, {vt(DType::F32, shape({c(3)}))}, TriangleAttrs{0}), ErrorCode::ShapeMismatch,
                "operand 0 has rank 1, expected rank >= 2");
    check_error(h.run(kind, {}, TriangleAttrs{0}), ErrorCode::Schema, "expects 1 operand, got 0");
    CHECK(h.deferred.empty());
  }
}

TEST_CASE("layout inference refuses ops of other families", "[infer_layout]") {
  Harness h;
  std::vector<ValueType> operands{vt(DType::F32, shape({c(2)}))};
  OpAttrs attrs = ConvertAttrs{DType::I32};
  InferRequest request{OpKind::Convert, attrs, std::span<const ValueType>(operands), h.checker,
                       h.extensions};
  auto r = infer_layout(request);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::Internal);
}

}  // namespace
}  // namespace tenact::infer
