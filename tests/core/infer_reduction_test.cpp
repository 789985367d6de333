// Type and shape inference of the reductions. Expected admit tables and
// result dtypes are written by hand from docs/program-format.md ("Reductions",
// "bool", "Complex").
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/infer/infer.hpp"
#include "infer_test_support.hpp"

namespace tenact::infer {
namespace {

using namespace test_support;

/// One reduction over `dimensions` with its own deferred-constraint list.
struct ReduceHarness {
  std::vector<Constraint> deferred;
  ShapeChecker checker{&deferred, kOrigin};
  ExtensionRegistry extensions;

  InferResult run(OpKind kind, std::vector<ValueType> operands, std::vector<int64_t> dimensions) {
    OpAttrs attrs = ReduceAttrs{std::move(dimensions)};
    InferRequest request{kind, attrs, std::span<const ValueType>(operands), checker, extensions};
    return infer_op(request);
  }
};

const OpKind kReductions[] = {OpKind::ReduceSum, OpKind::ReduceSumSquares, OpKind::ReduceProd,
                              OpKind::ReduceMax, OpKind::ReduceMin};

TEST_CASE("reductions drop the reduced axes and keep the others in order", "[infer_reduction]") {
  for (OpKind kind : kReductions) {
    ReduceHarness h;
    INFO(to_string(kind));
    auto x = vt(DType::F32, shape({c(2), sym("B"), c(4)}));
    CHECK(only_result(h.run(kind, {x}, {1})) == vt(DType::F32, shape({c(2), c(4)})));
    CHECK(only_result(h.run(kind, {x}, {0, 2})) == vt(DType::F32, shape({sym("B")})));
    CHECK(only_result(h.run(kind, {x}, {2, 0})) == vt(DType::F32, shape({sym("B")})));
    CHECK(only_result(h.run(kind, {x}, {0, 1, 2})) == vt(DType::F32, shape({})));
    CHECK(only_result(h.run(kind, {x}, {})) == x);
    CHECK(only_result(h.run(kind, {vt(DType::F32, shape({}))}, {})) == vt(DType::F32, shape({})));
    CHECK(h.deferred.empty());
  }
}

TEST_CASE("reductions keep non-exact extents of the kept axes", "[infer_reduction]") {
  ReduceHarness h;
  Shape in{ShapeExtent::upper_bound(sym("N")), ShapeExtent::exact(c(3)), ShapeExtent::unknown()};
  CHECK(only_result(h.run(OpKind::ReduceSum, {vt(DType::I32, in)}, {1})) ==
        vt(DType::I32, Shape{ShapeExtent::upper_bound(sym("N")), ShapeExtent::unknown()}));
  CHECK(only_result(h.run(OpKind::ReduceMax, {vt(DType::I32, in)}, {0, 2})) == vt(DType::I32, shape({c(3)})));
}

TEST_CASE("reductions admit the format's dtypes with its result dtypes", "[infer_reduction]") {
  // sum (or on bool), prod (and on bool), max, min: every dtype, same dtype.
  // sum_squares: not bool; complex yields its real component type.
  for (DType t : kAllDTypes) {
    INFO(to_string(t));
    for (OpKind kind : {OpKind::ReduceSum, OpKind::ReduceProd, OpKind::ReduceMax, OpKind::ReduceMin}) {
      ReduceHarness h;
      CHECK(only_result(h.run(kind, {vt(t, shape({c(3), c(5)}))}, {0})) == vt(t, shape({c(5)})));
    }
  }
  const struct {
    DType operand;
    bool admitted;
    DType result;
  } sum_squares[] = {
      {DType::Bool, false, DType::Bool}, {DType::I8, true, DType::I8},     {DType::I16, true, DType::I16},
      {DType::I32, true, DType::I32},    {DType::I64, true, DType::I64},   {DType::U8, true, DType::U8},
      {DType::U16, true, DType::U16},    {DType::U32, true, DType::U32},   {DType::U64, true, DType::U64},
      {DType::F16, true, DType::F16},    {DType::BF16, true, DType::BF16}, {DType::F32, true, DType::F32},
      {DType::F64, true, DType::F64},    {DType::C64, true, DType::F32},   {DType::C128, true, DType::F64},
  };
  static_assert(sizeof(sum_squares) / sizeof(sum_squares[0]) == kDTypeCount);
  for (const auto& row : sum_squares) {
    ReduceHarness h;
    INFO(to_string(row.operand));
    auto r = h.run(OpKind::ReduceSumSquares, {vt(row.operand, shape({c(3), c(5)}))}, {1});
    if (row.admitted)
      CHECK(only_result(r) == vt(row.result, shape({c(3)})));
    else
      check_error(r, ErrorCode::TypeMismatch, "operand 0 has dtype bool");
  }
}

TEST_CASE("reductions reject dimensions out of range or repeated", "[infer_reduction]") {
  for (OpKind kind : kReductions) {
    ReduceHarness h;
    INFO(to_string(kind));
    auto x = vt(DType::F32, shape({c(2), c(3), c(4)}));
    check_error(h.run(kind, {x}, {3}), ErrorCode::InvalidAttribute,
                "dimensions: dimension 3 is out of range for rank 3");
    check_error(h.run(kind, {x}, {-1}), ErrorCode::InvalidAttribute, "dimension -1 is out of range");
    check_error(h.run(kind, {x}, {1, 0, 1}), ErrorCode::InvalidAttribute,
                "dimension 1 appears more than once");
    check_error(h.run(kind, {vt(DType::F32, shape({}))}, {0}), ErrorCode::InvalidAttribute,
                "out of range for rank 0");
  }
}

TEST_CASE("reductions take exactly one operand", "[infer_reduction]") {
  for (OpKind kind : kReductions) {
    ReduceHarness h;
    auto x = vt(DType::F32, shape({c(2)}));
    check_error(h.run(kind, {}, {}), ErrorCode::Schema, "expects 1 operand, got 0");
    check_error(h.run(kind, {x, x}, {0}), ErrorCode::Schema, "expects 1 operand, got 2");
  }
}

TEST_CASE("reduction inference refuses ops of other families", "[infer_reduction]") {
  ReduceHarness h;
  std::vector<ValueType> operands{vt(DType::F32, shape({c(2)}))};
  OpAttrs attrs = ReduceAttrs{{0}};
  InferRequest request{OpKind::Reverse, attrs, std::span<const ValueType>(operands), h.checker,
                       h.extensions};
  auto r = infer_reduction(request);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::Internal);
}

}  // namespace
}  // namespace tenact::infer
