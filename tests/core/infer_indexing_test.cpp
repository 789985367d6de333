// Type and shape inference of the indexing ops other than gather and scatter
// (those are in infer_gather_scatter_test.cpp). Expected types are derived
// by hand from the StableHLO spec (its examples where it has them) and
// docs/program-format.md; deferred constraints are inspected after each call.
#include <catch2/catch.hpp>

#include <vector>

#include "core/infer/infer.hpp"
#include "infer_test_support.hpp"

namespace {

using namespace tenact;
using namespace tenact::infer;
using namespace tenact::infer::test_support;

ValueType scalar(DType dtype) { return {dtype, {}}; }

SliceAttrs slice_attrs(std::vector<DimExpr> start, std::vector<DimExpr> limit,
                       std::vector<int64_t> strides) {
  SliceAttrs a;
  a.start_indices = std::move(start);
  a.limit_indices = std::move(limit);
  a.strides = std::move(strides);
  return a;
}

PadAttrs pad_attrs(std::vector<DimExpr> low, std::vector<DimExpr> high,
                   std::vector<DimExpr> interior) {
  PadAttrs a;
  a.edge_padding_low = std::move(low);
  a.edge_padding_high = std::move(high);
  a.interior_padding = std::move(interior);
  return a;
}

}  // namespace

// -- slice ------------------------------------------------------------------------

TEST_CASE("slice result extents are (limit - start) / stride rounded up", "[infer_indexing]") {
  Infer infer;
  SECTION("the StableHLO example: [3, 4] sliced [1:3, 2:4] is [2, 2]") {
    check_type(infer(OpKind::Slice, slice_attrs(dims({1, 2}), dims({3, 4}), {1, 1}),
                     {t(DType::I64, {3, 4})}),
               t(DType::I64, {2, 2}));
  }
  SECTION("strides: 0:6 by 2 keeps 3, 1:8 by 3 keeps 1, 4, 7") {
    check_type(infer(OpKind::Slice, slice_attrs(dims({0, 1}), dims({6, 8}), {2, 3}),
                     {t(DType::F32, {6, 10})}),
               t(DType::F32, {3, 3}));
  }
  SECTION("empty strides mean all 1") {
    check_type(infer(OpKind::Slice, slice_attrs(dims({1, 0}), dims({3, 5}), {}),
                     {t(DType::U8, {4, 5})}),
               t(DType::U8, {2, 5}));
  }
  SECTION("an empty slice (start == limit) is allowed") {
    check_type(infer(OpKind::Slice, slice_attrs(dims({2}), dims({2}), {1}),
                     {t(DType::Bool, {4})}),
               t(DType::Bool, {0}));
  }
  CHECK(infer.deferred.empty());
}

TEST_CASE("slice on a symbolic axis defers what depends on the symbol", "[infer_indexing]") {
  Infer infer;
  SECTION("a limit of 3 on a B axis defers 3 <= B") {
    check_type(infer(OpKind::Slice, slice_attrs(dims({0}), dims({3}), {1}),
                     {t(DType::F32, {sym("B")})}),
               t(DType::F32, {c(3)}));
    REQUIRE(infer.deferred.size() == 1);
    check_constraint(infer.deferred[0], c(3), Relation::Le, sym("B"));
  }
  SECTION("start 1, limit B on a B axis gives B - 1 and defers 1 <= B") {
    check_type(infer(OpKind::Slice, slice_attrs({c(1), c(0)}, {sym("B"), c(4)}, {1, 1}),
                     {t(DType::F32, {sym("B"), c(4)})}),
               t(DType::F32, {expr("B - 1"), c(4)}));
    REQUIRE(infer.deferred.size() == 1);
    check_constraint(infer.deferred[0], c(1), Relation::Le, sym("B"));
  }
  SECTION("a stride of 2 over B elements keeps (B + 1) // 2") {
    check_type(infer(OpKind::Slice, slice_attrs({c(0)}, {sym("B")}, {2}),
                     {t(DType::F32, {sym("B")})}),
               t(DType::F32, {expr("(B + 1) // 2")}));
    CHECK(infer.deferred.empty());
  }
  SECTION("a limit on an upper-bound axis is left to run time") {
    ValueType x{DType::F32, {ShapeExtent::upper_bound(sym("N"))}};
    check_type(infer(OpKind::Slice, slice_attrs(dims({0}), dims({5}), {1}), {x}),
               t(DType::F32, {5}));
    CHECK(infer.deferred.empty());
  }
}

TEST_CASE("slice rejects bad indices, strides and arity", "[infer_indexing]") {
  Infer infer;
  const ValueType x = t(DType::F32, {4, 6});
  SECTION("start after limit") {
    check_error(infer(OpKind::Slice, slice_attrs(dims({3, 0}), dims({2, 6}), {1, 1}), {x}),
                ErrorCode::InvalidAttribute, "start_indices[0]");
  }
  SECTION("negative start") {
    check_error(infer(OpKind::Slice, slice_attrs({c(-1), c(0)}, dims({2, 6}), {1, 1}), {x}),
                ErrorCode::InvalidAttribute, "start_indices[0] is non-negative");
  }
  SECTION("limit past the axis") {
    check_error(infer(OpKind::Slice, slice_attrs(dims({0, 0}), dims({4, 7}), {1, 1}), {x}),
                ErrorCode::ShapeMismatch, "limit_indices[1]");
  }
  SECTION("limit past a symbolic axis for every B (B + 1 > B)") {
    check_error(infer(OpKind::Slice, slice_attrs({c(0)}, {expr("B + 1")}, {1}),
                      {t(DType::F32, {sym("B")})}),
                ErrorCode::ShapeMismatch, "limit_indices[0]");
  }
  SECTION("zero stride") {
    check_error(infer(OpKind::Slice, slice_attrs(dims({0, 0}), dims({4, 6}), {1, 0}), {x}),
                ErrorCode::InvalidAttribute, "strides[1] is 0");
  }
  SECTION("wrong number of start indices") {
    check_error(infer(OpKind::Slice, slice_attrs(dims({0}), dims({4, 6}), {1, 1}), {x}),
                ErrorCode::InvalidAttribute, "start_indices has 1 entries, expected 2");
  }
  SECTION("wrong number of strides") {
    check_error(infer(OpKind::Slice, slice_attrs(dims({0, 0}), dims({4, 6}), {1}), {x}),
                ErrorCode::InvalidAttribute, "strides has 1 entries, expected 2");
  }
  SECTION("two operands") {
    check_error(infer(OpKind::Slice, slice_attrs(dims({0, 0}), dims({4, 6}), {1, 1}), {x, x}),
                ErrorCode::Schema, "expects 1 operand, got 2");
  }
  CHECK(infer.deferred.empty());
}

// -- dynamic_slice ------------------------------------------------------------------

TEST_CASE("dynamic_slice result is slice_sizes with the operand dtype", "[infer_indexing]") {
  Infer infer;
  DynamicSliceAttrs a;
  SECTION("the StableHLO example: i32[4, 4], two i64 indices, sizes [2, 2]") {
    a.slice_sizes = dims({2, 2});
    check_type(infer(OpKind::DynamicSlice, a,
                     {t(DType::I32, {4, 4}), scalar(DType::I64), scalar(DType::I64)}),
               t(DType::I32, {2, 2}));
    CHECK(infer.deferred.empty());
  }
  SECTION("unsigned start indices are accepted; sizes of 0 and of the whole axis too") {
    a.slice_sizes = dims({0, 4});
    check_type(infer(OpKind::DynamicSlice, a,
                     {t(DType::C64, {3, 4}), scalar(DType::U32), scalar(DType::U32)}),
               t(DType::C64, {0, 4}));
    CHECK(infer.deferred.empty());
  }
  SECTION("a size of 1 on a B axis defers 1 <= B") {
    a.slice_sizes = dims({1, 8});
    check_type(infer(OpKind::DynamicSlice, a,
                     {t(DType::F32, {sym("B"), c(8)}), scalar(DType::I32), scalar(DType::I32)}),
               t(DType::F32, {1, 8}));
    REQUIRE(infer.deferred.size() == 1);
    check_constraint(infer.deferred[0], c(1), Relation::Le, sym("B"));
  }
}

TEST_CASE("dynamic_slice rejects bad start indices and sizes", "[infer_indexing]") {
  Infer infer;
  DynamicSliceAttrs a;
  a.slice_sizes = dims({2, 2});
  const ValueType x = t(DType::F32, {4, 4});
  SECTION("one start index missing") {
    check_error(infer(OpKind::DynamicSlice, a, {x, scalar(DType::I64)}), ErrorCode::Schema,
                "expects 3 operands, got 2");
  }
  SECTION("a floating start index") {
    check_error(infer(OpKind::DynamicSlice, a, {x, scalar(DType::F32), scalar(DType::F32)}),
                ErrorCode::TypeMismatch, "integer dtype");
  }
  SECTION("a bool start index") {
    check_error(infer(OpKind::DynamicSlice, a, {x, scalar(DType::Bool), scalar(DType::Bool)}),
                ErrorCode::TypeMismatch, "operand 1");
  }
  SECTION("start indices of two dtypes") {
    check_error(infer(OpKind::DynamicSlice, a, {x, scalar(DType::I32), scalar(DType::I64)}),
                ErrorCode::TypeMismatch, "operand 2 (start index for axis 1) has dtype i64");
  }
  SECTION("a start index that is not a scalar") {
    check_error(infer(OpKind::DynamicSlice, a, {x, t(DType::I32, {1}), scalar(DType::I32)}),
                ErrorCode::ShapeMismatch, "must be a scalar");
  }
  SECTION("a size larger than the axis") {
    a.slice_sizes = dims({2, 5});
    check_error(infer(OpKind::DynamicSlice, a, {x, scalar(DType::I32), scalar(DType::I32)}),
                ErrorCode::ShapeMismatch, "slice_sizes[1]");
  }
  SECTION("a negative size") {
    a.slice_sizes = {c(-1), c(2)};
    check_error(infer(OpKind::DynamicSlice, a, {x, scalar(DType::I32), scalar(DType::I32)}),
                ErrorCode::InvalidAttribute, "slice_sizes[0] is non-negative");
  }
  SECTION("slice_sizes of the wrong length") {
    a.slice_sizes = dims({2});
    check_error(infer(OpKind::DynamicSlice, a, {x, scalar(DType::I32), scalar(DType::I32)}),
                ErrorCode::InvalidAttribute, "slice_sizes has 1 entries, expected 2");
  }
}

// -- dynamic_update_slice ---------------------------------------------------------------

TEST_CASE("dynamic_update_slice keeps the operand type", "[infer_indexing]") {
  Infer infer;
  SECTION("the StableHLO example: i32[4, 4] updated by i32[2, 2]") {
    check_type(infer(OpKind::DynamicUpdateSlice, NoAttrs{},
                     {t(DType::I32, {4, 4}), t(DType::I32, {2, 2}), scalar(DType::I64),
                      scalar(DType::I64)}),
               t(DType::I32, {4, 4}));
    CHECK(infer.deferred.empty());
  }
  SECTION("an update of K rows into B rows defers K <= B") {
    check_type(infer(OpKind::DynamicUpdateSlice, NoAttrs{},
                     {t(DType::F16, {sym("B"), c(3)}), t(DType::F16, {sym("K"), c(3)}),
                      scalar(DType::U8), scalar(DType::U8)}),
               t(DType::F16, {sym("B"), c(3)}));
    REQUIRE(infer.deferred.size() == 1);
    check_constraint(infer.deferred[0], sym("K"), Relation::Le, sym("B"));
  }
  SECTION("a rank-0 operand takes no start index") {
    check_type(infer(OpKind::DynamicUpdateSlice, NoAttrs{},
                     {scalar(DType::F64), scalar(DType::F64)}),
               scalar(DType::F64));
  }
}

TEST_CASE("dynamic_update_slice rejects mismatched updates", "[infer_indexing]") {
  Infer infer;
  const ValueType x = t(DType::I32, {4, 4});
  const ValueType i = scalar(DType::I64);
  SECTION("update dtype") {
    check_error(infer(OpKind::DynamicUpdateSlice, NoAttrs{}, {x, t(DType::I64, {2, 2}), i, i}),
                ErrorCode::TypeMismatch, "update (operand 1) has dtype i64, expected i32");
  }
  SECTION("update rank") {
    check_error(infer(OpKind::DynamicUpdateSlice, NoAttrs{}, {x, t(DType::I32, {2}), i, i}),
                ErrorCode::ShapeMismatch, "expected rank 2");
  }
  SECTION("update larger than the operand") {
    check_error(infer(OpKind::DynamicUpdateSlice, NoAttrs{}, {x, t(DType::I32, {2, 5}), i, i}),
                ErrorCode::ShapeMismatch, "update axis 1");
  }
  SECTION("start index count") {
    check_error(infer(OpKind::DynamicUpdateSlice, NoAttrs{}, {x, t(DType::I32, {2, 2}), i}),
                ErrorCode::Schema, "expects 4 operands, got 3");
  }
  SECTION("start indices of two dtypes") {
    check_error(infer(OpKind::DynamicUpdateSlice, NoAttrs{},
                      {x, t(DType::I32, {2, 2}), i, scalar(DType::U64)}),
                ErrorCode::TypeMismatch, "share one dtype");
  }
  SECTION("only the operand") {
    check_error(infer(OpKind::DynamicUpdateSlice, NoAttrs{}, {x}), ErrorCode::Schema,
                "expects at least 2 operands, got 1");
  }
}

// -- pad ------------------------------------------------------------------------------

TEST_CASE("pad result is low + dim + max(dim - 1, 0) * interior + high", "[infer_indexing]") {
  Infer infer;
  SECTION("the StableHLO example: i32[2, 3], low [0, 1], high [2, 1], interior [1, 2] is [5, 9]") {
    // axis 0: 0 + 2 + 1*1 + 2 = 5; axis 1: 1 + 3 + 2*2 + 1 = 9.
    check_type(infer(OpKind::Pad, pad_attrs(dims({0, 1}), dims({2, 1}), dims({1, 2})),
                     {t(DType::I32, {2, 3}), scalar(DType::I32)}),
               t(DType::I32, {5, 9}));
  }
  SECTION("negative edge padding removes: [5] with low -2, high -1 is [2]") {
    check_type(infer(OpKind::Pad, pad_attrs({c(-2)}, {c(-1)}, {c(0)}),
                     {t(DType::F32, {5}), scalar(DType::F32)}),
               t(DType::F32, {2}));
  }
  SECTION("interior padding of an empty axis adds nothing: [0] with interior 3 is [1 + 0 + 1]") {
    check_type(infer(OpKind::Pad, pad_attrs({c(1)}, {c(1)}, {c(3)}),
                     {t(DType::F32, {0}), scalar(DType::F32)}),
               t(DType::F32, {2}));
  }
  SECTION("empty interior_padding means zeros") {
    check_type(infer(OpKind::Pad, pad_attrs(dims({1, 0}), dims({0, 2}), {}),
                     {t(DType::Bool, {2, 2}), scalar(DType::Bool)}),
               t(DType::Bool, {3, 4}));
  }
  CHECK(infer.deferred.empty());
}

TEST_CASE("pad of a symbolic axis", "[infer_indexing]") {
  Infer infer;
  SECTION("low 1, high 2, interior 1 on B gives B + max(B - 1, 0) + 3") {
    check_type(infer(OpKind::Pad, pad_attrs({c(1)}, {c(2)}, {c(1)}),
                     {t(DType::F32, {sym("B")}), scalar(DType::F32)}),
               t(DType::F32, {expr("B + max(B - 1, 0) + 3")}));
    CHECK(infer.deferred.empty());
  }
  SECTION("low -1 on B gives B - 1 and defers B - 1 >= 0") {
    check_type(infer(OpKind::Pad, pad_attrs({c(-1)}, {c(0)}, {c(0)}),
                     {t(DType::F32, {sym("B")}), scalar(DType::F32)}),
               t(DType::F32, {expr("B - 1")}));
    REQUIRE(infer.deferred.size() == 1);
    check_constraint(infer.deferred[0], expr("B - 1"), Relation::Ge, c(0));
  }
  SECTION("symbolic padding amounts") {
    check_type(infer(OpKind::Pad, pad_attrs({sym("P")}, {sym("P")}, {c(0)}),
                     {t(DType::F32, {c(4)}), scalar(DType::F32)}),
               t(DType::F32, {expr("2 * P + 4")}));
    CHECK(infer.deferred.empty());
  }
  SECTION("an upper-bound axis gives an upper bound") {
    ValueType x{DType::F32, {ShapeExtent::upper_bound(sym("N"))}};
    const ValueType r = only_result(
        infer(OpKind::Pad, pad_attrs({c(1)}, {c(1)}, {c(0)}), {x, scalar(DType::F32)}));
    REQUIRE(r.shape.size() == 1);
    CHECK(r.shape[0] == ShapeExtent::upper_bound(expr("N + 2")));
  }
}

TEST_CASE("pad rejects bad padding", "[infer_indexing]") {
  Infer infer;
  const ValueType x = t(DType::F32, {3});
  SECTION("more removed than there is") {
    check_error(infer(OpKind::Pad, pad_attrs({c(-2)}, {c(-2)}, {c(0)}), {x, scalar(DType::F32)}),
                ErrorCode::ShapeMismatch, "padded axis 0");
  }
  SECTION("negative interior padding") {
    check_error(infer(OpKind::Pad, pad_attrs({c(0)}, {c(0)}, {c(-1)}), {x, scalar(DType::F32)}),
                ErrorCode::InvalidAttribute, "interior_padding[0] is non-negative");
  }
  SECTION("padding value of another dtype") {
    check_error(infer(OpKind::Pad, pad_attrs({c(0)}, {c(0)}, {c(0)}), {x, scalar(DType::F64)}),
                ErrorCode::TypeMismatch, "padding_value (operand 1) has dtype f64, expected f32");
  }
  SECTION("padding value that is not a scalar") {
    check_error(infer(OpKind::Pad, pad_attrs({c(0)}, {c(0)}, {c(0)}), {x, t(DType::F32, {1})}),
                ErrorCode::ShapeMismatch, "padding_value (operand 1) must be a scalar");
  }
  SECTION("edge_padding_high of the wrong length") {
    check_error(infer(OpKind::Pad, pad_attrs({c(0)}, dims({0, 0}), {c(0)}),
                      {x, scalar(DType::F32)}),
                ErrorCode::InvalidAttribute, "edge_padding_high has 2 entries, expected 1");
  }
  SECTION("no padding value") {
    check_error(infer(OpKind::Pad, pad_attrs({c(0)}, {c(0)}, {c(0)}), {x}), ErrorCode::Schema,
                "expects 2 operands, got 1");
  }
}

// -- concatenate / reverse -------------------------------------------------------------

TEST_CASE("concatenate sums the extents along dimension", "[infer_indexing]") {
  Infer infer;
  ConcatenateAttrs a;
  SECTION("the StableHLO example: i64[3, 2] and i64[1, 2] along 0 is [4, 2]") {
    a.dimension = 0;
    check_type(infer(OpKind::Concatenate, a, {t(DType::I64, {3, 2}), t(DType::I64, {1, 2})}),
               t(DType::I64, {4, 2}));
    CHECK(infer.deferred.empty());
  }
  SECTION("three operands along axis 1") {
    a.dimension = 1;
    check_type(infer(OpKind::Concatenate, a,
                     {t(DType::F32, {2, 1}), t(DType::F32, {2, 0}), t(DType::F32, {2, 5})}),
               t(DType::F32, {2, 6}));
  }
  SECTION("one operand") {
    a.dimension = 0;
    check_type(infer(OpKind::Concatenate, a, {t(DType::F32, {3})}), t(DType::F32, {3}));
  }
  SECTION("symbolic extents add up: [B, 4] and [T, 4] is [B + T, 4]") {
    a.dimension = 0;
    check_type(infer(OpKind::Concatenate, a,
                     {t(DType::F32, {sym("B"), c(4)}), t(DType::F32, {sym("T"), c(4)})}),
               t(DType::F32, {expr("B + T"), c(4)}));
    CHECK(infer.deferred.empty());
  }
  SECTION("symbolic extents off the axis defer their equality") {
    a.dimension = 0;
    check_type(infer(OpKind::Concatenate, a,
                     {t(DType::F32, {c(4), sym("B")}), t(DType::F32, {c(2), sym("T")})}),
               t(DType::F32, {c(6), sym("B")}));
    REQUIRE(infer.deferred.size() == 1);
    check_constraint(infer.deferred[0], sym("T"), Relation::Eq, sym("B"));
  }
  SECTION("an upper bound along the axis gives an upper bound of the sum") {
    a.dimension = 0;
    ValueType bounded{DType::F32, {ShapeExtent::upper_bound(sym("N")), ShapeExtent::exact(c(4))}};
    const ValueType r = only_result(infer(OpKind::Concatenate, a, {bounded, t(DType::F32, {3, 4})}));
    REQUIRE(r.shape.size() == 2);
    CHECK(r.shape[0] == ShapeExtent::upper_bound(expr("N + 3")));
    CHECK(r.shape[1] == ShapeExtent::exact(c(4)));
  }
  SECTION("an unknown extent along the axis makes the sum unknown") {
    a.dimension = 0;
    ValueType unknown{DType::F32, {ShapeExtent::unknown()}};
    const ValueType r = only_result(infer(OpKind::Concatenate, a, {t(DType::F32, {3}), unknown}));
    REQUIRE(r.shape.size() == 1);
    CHECK(r.shape[0].kind == ExtentKind::Unknown);
  }
}

TEST_CASE("concatenate rejects mismatched operands", "[infer_indexing]") {
  Infer infer;
  ConcatenateAttrs a;
  a.dimension = 0;
  SECTION("dtypes differ") {
    check_error(infer(OpKind::Concatenate, a, {t(DType::F32, {3}), t(DType::F64, {3})}),
                ErrorCode::TypeMismatch, "operand 1 has dtype f64, expected f32");
  }
  SECTION("ranks differ") {
    check_error(infer(OpKind::Concatenate, a, {t(DType::F32, {3, 2}), t(DType::F32, {3})}),
                ErrorCode::ShapeMismatch, "expected rank 2");
  }
  SECTION("another axis differs") {
    check_error(infer(OpKind::Concatenate, a, {t(DType::F32, {3, 2}), t(DType::F32, {3, 5})}),
                ErrorCode::ShapeMismatch, "operand 1 axis 1");
  }
  SECTION("dimension out of range") {
    a.dimension = 2;
    check_error(infer(OpKind::Concatenate, a, {t(DType::F32, {3, 2}), t(DType::F32, {3, 2})}),
                ErrorCode::InvalidAttribute, "dimension 2 is out of range for rank 2");
  }
  SECTION("rank-0 operands have no axis to join") {
    check_error(infer(OpKind::Concatenate, a, {scalar(DType::F32), scalar(DType::F32)}),
                ErrorCode::InvalidAttribute, "out of range");
  }
  SECTION("no operands") {
    check_error(infer(OpKind::Concatenate, a, {}), ErrorCode::Schema,
                "expects at least 1 operand, got 0");
  }
}

TEST_CASE("reverse keeps the type and needs unique in-range dimensions", "[infer_indexing]") {
  Infer infer;
  ReverseAttrs a;
  SECTION("the StableHLO example: i32[3, 2] reversed along 1") {
    a.dimensions = {1};
    check_type(infer(OpKind::Reverse, a, {t(DType::I32, {3, 2})}), t(DType::I32, {3, 2}));
  }
  SECTION("no dimensions") {
    check_type(infer(OpKind::Reverse, a, {t(DType::I32, {sym("B")})}),
               t(DType::I32, {sym("B")}));
  }
  SECTION("a repeated dimension") {
    a.dimensions = {0, 0};
    check_error(infer(OpKind::Reverse, a, {t(DType::I32, {3, 2})}), ErrorCode::InvalidAttribute,
                "dimension 0 appears more than once");
  }
  SECTION("a dimension out of range") {
    a.dimensions = {2};
    check_error(infer(OpKind::Reverse, a, {t(DType::I32, {3, 2})}), ErrorCode::InvalidAttribute,
                "dimensions: dimension 2 is out of range for rank 2");
  }
  CHECK(infer.deferred.empty());
}
// -- shape_of / dynamic_truncate / pad_to_match ----------------------------------------

TEST_CASE("shape_of yields i64 of the operand's rank", "[infer_indexing]") {
  Infer infer;
  check_type(infer(OpKind::ShapeOf, NoAttrs{}, {t(DType::Bool, {sym("B"), c(3), c(4)})}),
             t(DType::I64, {3}));
  check_type(infer(OpKind::ShapeOf, NoAttrs{}, {scalar(DType::C128)}), t(DType::I64, {0}));
  check_error(infer(OpKind::ShapeOf, NoAttrs{}, {}), ErrorCode::Schema, "expects 1 operand, got 0");
  CHECK(infer.deferred.empty());
}

TEST_CASE("dynamic_truncate turns its axis into an upper bound", "[infer_indexing]") {
  Infer infer;
  DynamicTruncateAttrs a;
  SECTION("a B axis becomes <= B, the others stay") {
    a.dimension = 0;
    const ValueType r = only_result(infer(OpKind::DynamicTruncate, a,
                                          {t(DType::F32, {sym("B"), c(4)}), scalar(DType::I32)}));
    CHECK(r.dtype == DType::F32);
    REQUIRE(r.shape.size() == 2);
    CHECK(r.shape[0] == ShapeExtent::upper_bound(sym("B")));
    CHECK(r.shape[1] == ShapeExtent::exact(c(4)));
  }
  SECTION("an upper bound stays the same bound; unknown stays unknown") {
    a.dimension = 1;
    ValueType x{DType::I8, {ShapeExtent::unknown(), ShapeExtent::upper_bound(c(9))}};
    const ValueType r = only_result(infer(OpKind::DynamicTruncate, a, {x, scalar(DType::U64)}));
    CHECK(r == x);
    a.dimension = 0;
    const ValueType r0 = only_result(infer(OpKind::DynamicTruncate, a, {x, scalar(DType::U64)}));
    CHECK(r0 == x);
  }
  SECTION("a floating length") {
    check_error(infer(OpKind::DynamicTruncate, a, {t(DType::F32, {4}), scalar(DType::F32)}),
                ErrorCode::TypeMismatch, "length (operand 1) must have an integer dtype");
  }
  SECTION("a length that is not a scalar") {
    check_error(infer(OpKind::DynamicTruncate, a, {t(DType::F32, {4}), t(DType::I32, {1})}),
                ErrorCode::ShapeMismatch, "length (operand 1) must be a scalar");
  }
  SECTION("dimension out of range") {
    a.dimension = 1;
    check_error(infer(OpKind::DynamicTruncate, a, {t(DType::F32, {4}), scalar(DType::I32)}),
                ErrorCode::InvalidAttribute, "dimension: dimension 1 is out of range for rank 1");
  }
  SECTION("no length") {
    check_error(infer(OpKind::DynamicTruncate, a, {t(DType::F32, {4})}), ErrorCode::Schema,
                "expects 2 operands, got 1");
  }
  CHECK(infer.deferred.empty());
}

TEST_CASE("pad_to_match has x's dtype and like's shape", "[infer_indexing]") {
  Infer infer;
  PadToMatchAttrs a;
  SECTION("like may have another dtype") {
    check_type(infer(OpKind::PadToMatch, a,
                     {t(DType::F32, {c(3), sym("B")}), t(DType::I8, {c(4), sym("B")})}),
               t(DType::F32, {c(4), sym("B")}));
    CHECK(infer.deferred.empty());
  }
  SECTION("K rows padded to N rows defers K <= N") {
    check_type(infer(OpKind::PadToMatch, a,
                     {t(DType::F32, {sym("K")}), t(DType::F32, {sym("N")})}),
               t(DType::F32, {sym("N")}));
    REQUIRE(infer.deferred.size() == 1);
    check_constraint(infer.deferred[0], sym("K"), Relation::Le, sym("N"));
  }
  SECTION("an upper-bound x is checked at run time") {
    ValueType x{DType::F32, {ShapeExtent::upper_bound(c(10))}};
    check_type(infer(OpKind::PadToMatch, a, {x, t(DType::F32, {4})}), t(DType::F32, {4}));
    CHECK(infer.deferred.empty());
  }
  SECTION("no value for a bool x pads with false") {
    check_type(infer(OpKind::PadToMatch, a, {t(DType::Bool, {2}), t(DType::F32, {3})}),
               t(DType::Bool, {3}));
  }
  SECTION("an integer value for a bool x") {
    a.value = Scalar::of_int(0);
    check_error(infer(OpKind::PadToMatch, a, {t(DType::Bool, {2}), t(DType::Bool, {3})}),
                ErrorCode::InvalidAttribute, "value 0 does not fit x's dtype bool");
  }
  SECTION("a value of x's kind") {
    a.value = Scalar::of_bool(true);
    check_type(infer(OpKind::PadToMatch, a, {t(DType::Bool, {2}), t(DType::Bool, {3})}),
               t(DType::Bool, {3}));
    a.value = Scalar::of_complex(1, -1);
    check_type(infer(OpKind::PadToMatch, a, {t(DType::C64, {2}), t(DType::F32, {3})}),
               t(DType::C64, {3}));
  }
  SECTION("x larger than like") {
    check_error(infer(OpKind::PadToMatch, a, {t(DType::F32, {5, 4}), t(DType::F32, {4, 4})}),
                ErrorCode::ShapeMismatch, "x axis 0 (5) is at most like axis 0 (4)");
  }
  SECTION("ranks differ") {
    check_error(infer(OpKind::PadToMatch, a, {t(DType::F32, {4}), t(DType::F32, {4, 4})}),
                ErrorCode::ShapeMismatch, "like (operand 1) has shape [4, 4] of rank 2, expected rank 1");
  }
  SECTION("a fractional value for an integer x") {
    a.value = Scalar::of_float(1.5);
    check_error(infer(OpKind::PadToMatch, a, {t(DType::I32, {2}), t(DType::I32, {3})}),
                ErrorCode::InvalidAttribute, "value 1.5 does not fit x's dtype i32");
  }
  SECTION("a bool value for a floating x") {
    a.value = Scalar::of_bool(true);
    check_error(infer(OpKind::PadToMatch, a, {t(DType::F32, {2}), t(DType::F32, {3})}),
                ErrorCode::InvalidAttribute, "does not fit x's dtype f32");
  }
  SECTION("no like") {
    check_error(infer(OpKind::PadToMatch, a, {t(DType::F32, {2})}), ErrorCode::Schema,
                "expects 2 operands, got 1");
  }
}
