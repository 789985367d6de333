// Type and shape inference of gather and scatter. Expected types are derived
// by hand from the StableHLO spec (its examples where it has them) and
// docs/program-format.md; deferred constraints are inspected after each call.
#include <catch2/catch.hpp>

#include "core/infer/infer.hpp"
#include "infer_test_support.hpp"

using namespace tenact;
using namespace tenact::infer;
using namespace tenact::infer::test_support;

// -- gather -------------------------------------------------------------------------------

namespace {

/// The StableHLO spec's gather example with batching dimensions:
/// i32[2, 3, 4, 2] gathered with i64[2, 2, 3, 2] is i32[2, 2, 3, 2, 2].
GatherAttrs spec_gather() {
  GatherAttrs a;
  a.offset_dims = {3, 4};
  a.collapsed_slice_dims = {1};
  a.operand_batching_dims = {0};
  a.start_indices_batching_dims = {1};
  a.start_index_map = {2, 1};
  a.index_vector_dim = 3;
  a.slice_sizes = dims({1, 1, 2, 2});
  return a;
}

}  // namespace

TEST_CASE("gather result combines index batch axes and offset axes", "[infer_indexing]") {
  Infer infer;
  SECTION("the StableHLO example with batching dimensions") {
    // batch sizes: start_indices [2, 2, 3, 2] without axis 3 = [2, 2, 3];
    // offset sizes: slice_sizes without axes 1 (collapsed) and 0 (batching) =
    // [2, 2], at result axes 3 and 4.
    check_type(infer(OpKind::Gather, spec_gather(),
                     {t(DType::I32, {2, 3, 4, 2}), t(DType::I64, {2, 2, 3, 2})}),
               t(DType::I32, {2, 2, 3, 2, 2}));
    CHECK(infer.deferred.empty());
  }
  SECTION("the StableHLO example without batching dimensions") {
    GatherAttrs a;
    a.offset_dims = {2, 3};
    a.collapsed_slice_dims = {0};
    a.start_index_map = {1, 0};
    a.index_vector_dim = 2;
    a.slice_sizes = dims({1, 2, 2});
    check_type(infer(OpKind::Gather, a, {t(DType::I32, {3, 4, 2}), t(DType::I64, {2, 3, 2})}),
               t(DType::I32, {2, 3, 2, 2}));
    CHECK(infer.deferred.empty());
  }
  SECTION("offset axes first, then the batch axes") {
    GatherAttrs a;
    a.offset_dims = {0};
    a.collapsed_slice_dims = {0};
    a.start_index_map = {0};
    a.index_vector_dim = 2;
    a.slice_sizes = dims({1, 3});
    check_type(infer(OpKind::Gather, a, {t(DType::F32, {10, 3}), t(DType::U16, {4, 5, 1})}),
               t(DType::F32, {3, 4, 5}));
  }
  SECTION("an embedding lookup with index_vector_dim == rank(start_indices)") {
    // f32[V, D] rows picked by i32[B]: [B, D]; slice size 1 on V defers 1 <= V.
    GatherAttrs a;
    a.offset_dims = {1};
    a.collapsed_slice_dims = {0};
    a.start_index_map = {0};
    a.index_vector_dim = 1;
    a.slice_sizes = {c(1), sym("D")};
    check_type(infer(OpKind::Gather, a,
                     {t(DType::F32, {sym("V"), sym("D")}), t(DType::I32, {sym("B")})}),
               t(DType::F32, {sym("B"), sym("D")}));
    REQUIRE(infer.deferred.size() == 1);
    check_constraint(infer.deferred[0], c(1), Relation::Le, sym("V"));
  }
  SECTION("an upper-bound index axis carries over to the result") {
    GatherAttrs a;
    a.offset_dims = {1};
    a.collapsed_slice_dims = {0};
    a.start_index_map = {0};
    a.index_vector_dim = 1;
    a.slice_sizes = dims({1, 8});
    ValueType idx{DType::I64, {ShapeExtent::upper_bound(sym("N"))}};
    const ValueType r = only_result(infer(OpKind::Gather, a, {t(DType::F32, {16, 8}), idx}));
    REQUIRE(r.shape.size() == 2);
    CHECK(r.shape[0] == ShapeExtent::upper_bound(sym("N")));
    CHECK(r.shape[1] == ShapeExtent::exact(c(8)));
  }
  SECTION("symbolic batching axes that must agree are deferred") {
    GatherAttrs a = spec_gather();
    check_type(infer(OpKind::Gather, a,
                     {t(DType::I32, {sym("P"), c(3), c(4), c(2)}),
                      t(DType::I64, {c(2), sym("Q"), c(3), c(2)})}),
               t(DType::I32, {c(2), sym("Q"), c(3), c(2), c(2)}));
    // slice size 1 on the P axis defers 1 <= P; the batching pair defers P == Q.
    REQUIRE(infer.deferred.size() == 2);
    const bool first_is_pair = infer.deferred[0].rel == Relation::Eq;
    check_constraint(infer.deferred[first_is_pair ? 0 : 1], sym("P"), Relation::Eq, sym("Q"));
    check_constraint(infer.deferred[first_is_pair ? 1 : 0], c(1), Relation::Le, sym("P"));
  }
}

TEST_CASE("gather enforces every StableHLO constraint", "[infer_indexing]") {
  Infer infer;
  GatherAttrs a = spec_gather();
  ValueType operand = t(DType::I32, {2, 3, 4, 2});
  ValueType indices = t(DType::I64, {2, 2, 3, 2});
  auto run = [&] { return infer(OpKind::Gather, a, {operand, indices}); };

  SECTION("arity") {
    check_error(infer(OpKind::Gather, a, {operand}), ErrorCode::Schema, "expects 2 operands");
  }
  SECTION("start_indices of a floating dtype") {
    indices.dtype = DType::F32;
    check_error(run(), ErrorCode::TypeMismatch, "start_indices (operand 1) must have an integer");
  }
  SECTION("C1: window axes do not add up to the operand's rank") {
    a.offset_dims = {3};
    check_error(run(), ErrorCode::InvalidAttribute, "expected 4 (the operand's rank)");
  }
  SECTION("C2: index_vector_dim past rank(start_indices)") {
    a.index_vector_dim = 5;
    check_error(run(), ErrorCode::InvalidAttribute, "index_vector_dim 5 is out of range [0, 4]");
  }
  SECTION("C3: start_index_map shorter than the index vector") {
    a.start_index_map = {2};
    check_error(run(), ErrorCode::InvalidAttribute, "start_index_map has 1 entries");
  }
  SECTION("C3: an implicit index vector has length 1") {
    a.index_vector_dim = 4;
    check_error(run(), ErrorCode::InvalidAttribute, "start_index_map has 2 entries, expected 1");
  }
  SECTION("C4: offset_dims unsorted") {
    a.offset_dims = {4, 3};
    check_error(run(), ErrorCode::InvalidAttribute, "offset_dims [4, 3] is not sorted");
  }
  SECTION("C4: offset_dims repeated") {
    a.offset_dims = {3, 3};
    check_error(run(), ErrorCode::InvalidAttribute, "offset_dims: dimension 3 appears more than once");
  }
  SECTION("C5: offset_dims past the result's rank") {
    a.offset_dims = {3, 5};
    check_error(run(), ErrorCode::InvalidAttribute, "offset_dims: dimension 5 is out of range for rank 5");
  }
  SECTION("C6: an axis both collapsed and batching") {
    a.collapsed_slice_dims = {0};
    check_error(run(), ErrorCode::InvalidAttribute,
                "dimension 0 appears in both collapsed_slice_dims [0] and operand_batching_dims [0]");
  }
  SECTION("C7: collapsed_slice_dims unsorted") {
    a.offset_dims = {3};
    a.collapsed_slice_dims = {2, 1};
    check_error(run(), ErrorCode::InvalidAttribute, "collapsed_slice_dims [2, 1] is not sorted");
  }
  SECTION("C8: collapsed_slice_dims out of range") {
    a.collapsed_slice_dims = {4};
    check_error(run(), ErrorCode::InvalidAttribute, "collapsed_slice_dims: dimension 4 is out of range");
  }
  SECTION("C9: a collapsed axis with slice size 2") {
    a.slice_sizes = dims({1, 2, 2, 2});
    check_error(run(), ErrorCode::InvalidAttribute, "slice_sizes[1] is 1");
  }
  SECTION("C9 (docs/program-format.md): a collapsed axis with slice size 0") {
    a.slice_sizes = dims({1, 0, 2, 2});
    check_error(run(), ErrorCode::InvalidAttribute, "collapsed_slice_dims");
  }
  SECTION("C10: operand_batching_dims unsorted") {
    a.offset_dims = {3};
    a.operand_batching_dims = {3, 0};
    check_error(run(), ErrorCode::InvalidAttribute, "operand_batching_dims [3, 0] is not sorted");
  }
  SECTION("C11: operand_batching_dims out of range") {
    a.operand_batching_dims = {4};
    check_error(run(), ErrorCode::InvalidAttribute, "operand_batching_dims: dimension 4 is out of range");
  }
  SECTION("C12: a batching axis with slice size 2") {
    a.slice_sizes = dims({2, 1, 2, 2});
    check_error(run(), ErrorCode::InvalidAttribute, "slice_sizes[0] is 1 (axis 0 is in operand_batching_dims)");
  }
  SECTION("C13: start_indices_batching_dims repeated") {
    a.start_indices_batching_dims = {1, 1};
    check_error(run(), ErrorCode::InvalidAttribute,
                "start_indices_batching_dims: dimension 1 appears more than once");
  }
  SECTION("C14: start_indices_batching_dims out of range") {
    a.start_indices_batching_dims = {4};
    check_error(run(), ErrorCode::InvalidAttribute,
                "start_indices_batching_dims: dimension 4 is out of range for rank 4");
  }
  SECTION("C15: start_indices_batching_dims holds index_vector_dim") {
    a.start_indices_batching_dims = {3};
    check_error(run(), ErrorCode::InvalidAttribute, "contains index_vector_dim 3");
  }
  SECTION("C16: batching lists of different sizes") {
    a.start_indices_batching_dims = {1, 2};
    check_error(run(), ErrorCode::InvalidAttribute, "have different sizes");
  }
  SECTION("C17: batching axes of different sizes") {
    operand = t(DType::I32, {3, 3, 4, 2});
    check_error(run(), ErrorCode::ShapeMismatch, "operand axis 0 (operand_batching_dims[0])");
  }
  SECTION("C18: start_index_map names a batching axis") {
    a.start_index_map = {2, 0};
    check_error(run(), ErrorCode::InvalidAttribute, "dimension 0 appears in both start_index_map");
  }
  SECTION("C19: start_index_map out of range") {
    a.start_index_map = {2, 4};
    check_error(run(), ErrorCode::InvalidAttribute, "start_index_map: dimension 4 is out of range");
  }
  SECTION("C20: slice_sizes of the wrong length") {
    a.slice_sizes = dims({1, 1, 2});
    check_error(run(), ErrorCode::InvalidAttribute, "slice_sizes has 3 entries, expected 4");
  }
  SECTION("C21: a slice size past the operand's axis") {
    a.slice_sizes = dims({1, 1, 5, 2});
    check_error(run(), ErrorCode::ShapeMismatch, "slice_sizes[2] is at most operand axis 2");
  }
  SECTION("C21: a negative slice size") {
    a.slice_sizes = {c(1), c(1), c(-1), c(2)};
    check_error(run(), ErrorCode::InvalidAttribute, "slice_sizes[2] is non-negative");
  }
  CHECK(infer.deferred.empty());
}

// -- scatter ------------------------------------------------------------------------------

namespace {

/// The StableHLO spec's scatter example with batching dimensions:
/// i64[2, 3, 4, 2] with indices i64[2, 2, 3, 2] and updates i64[2, 2, 3, 2, 2].
ScatterAttrs spec_scatter() {
  ScatterAttrs a;
  a.update_window_dims = {3, 4};
  a.inserted_window_dims = {1};
  a.input_batching_dims = {0};
  a.scatter_indices_batching_dims = {1};
  a.scatter_dims_to_operand_dims = {2, 1};
  a.index_vector_dim = 3;
  return a;
}

}  // namespace

TEST_CASE("scatter result is the operand's type", "[infer_indexing]") {
  Infer infer;
  SECTION("the StableHLO example with batching dimensions") {
    check_type(infer(OpKind::Scatter, spec_scatter(),
                     {t(DType::I64, {2, 3, 4, 2}), t(DType::I64, {2, 2, 3, 2}),
                      t(DType::I64, {2, 2, 3, 2, 2})}),
               t(DType::I64, {2, 3, 4, 2}));
    CHECK(infer.deferred.empty());
  }
  SECTION("the StableHLO example without batching dimensions") {
    ScatterAttrs a;
    a.update_window_dims = {2, 3};
    a.inserted_window_dims = {0};
    a.scatter_dims_to_operand_dims = {1, 0};
    a.index_vector_dim = 2;
    check_type(infer(OpKind::Scatter, a,
                     {t(DType::I64, {3, 4, 2}), t(DType::I64, {2, 3, 2}),
                      t(DType::I64, {2, 3, 2, 2})}),
               t(DType::I64, {3, 4, 2}));
    CHECK(infer.deferred.empty());
  }
  SECTION("every update mode on every dtype") {
    // add/multiply on bool are or/and, max/min on complex are lexicographic.
    const ScatterUpdate modes[] = {ScatterUpdate::Replace, ScatterUpdate::Add,
                                   ScatterUpdate::Multiply, ScatterUpdate::Max,
                                   ScatterUpdate::Min};
    for (ScatterUpdate mode : modes) {
      for (DType d : kAllDTypes) {
        ScatterAttrs a = spec_scatter();
        a.update = mode;
        INFO(to_string(mode) << " on " << to_string(d));
        check_type(infer(OpKind::Scatter, a,
                         {t(d, {2, 3, 4, 2}), t(DType::U8, {2, 2, 3, 2}),
                          t(d, {2, 2, 3, 2, 2})}),
                   t(d, {2, 3, 4, 2}));
      }
    }
  }
  SECTION("rows of D values scattered into N rows: K updates defer only what depends") {
    ScatterAttrs a;
    a.update_window_dims = {1};
    a.inserted_window_dims = {0};
    a.scatter_dims_to_operand_dims = {0};
    a.index_vector_dim = 1;
    check_type(infer(OpKind::Scatter, a,
                     {t(DType::F32, {sym("N"), sym("D")}), t(DType::I32, {sym("K"), c(1)}),
                      t(DType::F32, {sym("M"), sym("D")})}),
               t(DType::F32, {sym("N"), sym("D")}));
    REQUIRE(infer.deferred.size() == 1);
    check_constraint(infer.deferred[0], sym("M"), Relation::Eq, sym("K"));
  }
  SECTION("a window smaller than the operand's is allowed") {
    ScatterAttrs a;
    a.update_window_dims = {1};
    a.inserted_window_dims = {0};
    a.scatter_dims_to_operand_dims = {0};
    a.index_vector_dim = 1;
    check_type(infer(OpKind::Scatter, a,
                     {t(DType::F32, {5, 8}), t(DType::I32, {3}), t(DType::F32, {3, 2})}),
               t(DType::F32, {5, 8}));
  }
}

TEST_CASE("scatter enforces every StableHLO constraint", "[infer_indexing]") {
  Infer infer;
  ScatterAttrs a = spec_scatter();
  ValueType operand = t(DType::I64, {2, 3, 4, 2});
  ValueType indices = t(DType::I64, {2, 2, 3, 2});
  ValueType updates = t(DType::I64, {2, 2, 3, 2, 2});
  auto run = [&] { return infer(OpKind::Scatter, a, {operand, indices, updates}); };

  SECTION("arity") {
    check_error(infer(OpKind::Scatter, a, {operand, indices}), ErrorCode::Schema,
                "expects 3 operands, got 2");
  }
  SECTION("scatter_indices of a floating dtype") {
    indices.dtype = DType::F64;
    check_error(run(), ErrorCode::TypeMismatch, "scatter_indices (operand 1) must have an integer");
  }
  SECTION("C6: updates of another dtype") {
    updates.dtype = DType::I32;
    check_error(run(), ErrorCode::TypeMismatch, "updates (operand 2) has dtype i32, expected i64");
  }
  SECTION("C2: window axes do not add up to the operand's rank") {
    a.update_window_dims = {3};
    check_error(run(), ErrorCode::InvalidAttribute, "expected 4 (the operand's rank)");
  }
  SECTION("C22: index_vector_dim past rank(scatter_indices)") {
    a.index_vector_dim = 5;
    check_error(run(), ErrorCode::InvalidAttribute, "index_vector_dim 5 is out of range [0, 4]");
  }
  SECTION("C19: scatter_dims_to_operand_dims shorter than the index vector") {
    a.scatter_dims_to_operand_dims = {2};
    check_error(run(), ErrorCode::InvalidAttribute, "scatter_dims_to_operand_dims has 1 entries");
  }
  SECTION("C7: update_window_dims unsorted") {
    a.update_window_dims = {4, 3};
    check_error(run(), ErrorCode::InvalidAttribute, "update_window_dims [4, 3] is not sorted");
  }
  SECTION("C7: update_window_dims repeated") {
    a.update_window_dims = {3, 3};
    check_error(run(), ErrorCode::InvalidAttribute, "update_window_dims: dimension 3 appears more than once");
  }
  SECTION("C8: update_window_dims past rank(updates)") {
    a.update_window_dims = {3, 5};
    check_error(run(), ErrorCode::InvalidAttribute,
                "update_window_dims: dimension 5 is out of range for rank 5");
  }
  SECTION("C9: an axis both inserted and batching") {
    a.inserted_window_dims = {0};
    check_error(run(), ErrorCode::InvalidAttribute,
                "dimension 0 appears in both inserted_window_dims [0] and input_batching_dims [0]");
  }
  SECTION("C10: inserted_window_dims unsorted") {
    a.update_window_dims = {3};
    a.inserted_window_dims = {2, 1};
    check_error(run(), ErrorCode::InvalidAttribute, "inserted_window_dims [2, 1] is not sorted");
  }
  SECTION("C11: inserted_window_dims out of range") {
    a.inserted_window_dims = {4};
    check_error(run(), ErrorCode::InvalidAttribute, "inserted_window_dims: dimension 4 is out of range");
  }
  SECTION("C12: input_batching_dims unsorted") {
    a.update_window_dims = {3};
    a.input_batching_dims = {3, 0};
    check_error(run(), ErrorCode::InvalidAttribute, "input_batching_dims [3, 0] is not sorted");
  }
  SECTION("C13: input_batching_dims out of range") {
    a.input_batching_dims = {4};
    check_error(run(), ErrorCode::InvalidAttribute, "input_batching_dims: dimension 4 is out of range");
  }
  SECTION("C14: scatter_indices_batching_dims repeated") {
    a.scatter_indices_batching_dims = {1, 1};
    check_error(run(), ErrorCode::InvalidAttribute,
                "scatter_indices_batching_dims: dimension 1 appears more than once");
  }
  SECTION("C15: scatter_indices_batching_dims out of range") {
    a.scatter_indices_batching_dims = {4};
    check_error(run(), ErrorCode::InvalidAttribute,
                "scatter_indices_batching_dims: dimension 4 is out of range for rank 4");
  }
  SECTION("C16: scatter_indices_batching_dims holds index_vector_dim") {
    a.scatter_indices_batching_dims = {3};
    check_error(run(), ErrorCode::InvalidAttribute, "contains index_vector_dim 3");
  }
  SECTION("C17: batching lists of different sizes") {
    a.scatter_indices_batching_dims = {1, 2};
    check_error(run(), ErrorCode::InvalidAttribute, "have different sizes");
  }
  SECTION("C18: batching axes of different sizes") {
    operand = t(DType::I64, {3, 3, 4, 2});
    check_error(run(), ErrorCode::ShapeMismatch, "operand axis 0 (input_batching_dims[0])");
  }
  SECTION("C20: scatter_dims_to_operand_dims names a batching axis") {
    a.scatter_dims_to_operand_dims = {2, 0};
    check_error(run(), ErrorCode::InvalidAttribute,
                "dimension 0 appears in both scatter_dims_to_operand_dims");
  }
  SECTION("C21: scatter_dims_to_operand_dims out of range") {
    a.scatter_dims_to_operand_dims = {2, 4};
    check_error(run(), ErrorCode::InvalidAttribute,
                "scatter_dims_to_operand_dims: dimension 4 is out of range");
  }
  SECTION("C4: updates of the wrong rank") {
    updates = t(DType::I64, {2, 2, 3, 2, 2, 1});
    check_error(run(), ErrorCode::ShapeMismatch, "expected rank 5");
  }
  SECTION("C4: an update scatter axis that differs from the indices") {
    updates = t(DType::I64, {2, 2, 4, 2, 2});
    check_error(run(), ErrorCode::ShapeMismatch, "updates axis 2");
  }
  SECTION("C4: an update window larger than the operand's window") {
    // updates axis 3 maps to operand axis 2 (axes 0 and 1 are batching and inserted).
    updates = t(DType::I64, {2, 2, 3, 5, 2});
    check_error(run(), ErrorCode::ShapeMismatch, "updates axis 3 (5) is at most operand axis 2 (4)");
  }
  CHECK(infer.deferred.empty());
}
