// Type and shape inference of the elementwise family (unary, binary,
// compare, select, clamp, convert). Expected admit tables are written by
// hand from docs/program-format.md ("Type sets" and the op list), not derived
// from the code.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/infer/infer.hpp"
#include "infer_test_support.hpp"

namespace tenact::infer {
namespace {

using namespace test_support;

/// Admit tables: one character per dtype in kAllDTypes order
/// bool | i8 i16 i32 i64 | u8 u16 u32 u64 | f16 bf16 f32 f64 | c64 c128,
/// spaces ignored.
bool admitted(const char* table, DType t) {
  std::string flags;
  for (const char* p = table; *p; ++p)
    if (*p != ' ') flags += *p;
  REQUIRE(flags.size() == static_cast<size_t>(kDTypeCount));
  return flags[static_cast<size_t>(t)] == '1';
}

struct OpTable {
  OpKind kind;
  const char* admits;
};

// Hand-written from docs/program-format.md.
const std::vector<OpTable> kUnaryTables = {
    {OpKind::Negate, "0 1111 1111 1111 11"},  // every integer, floats, complex
    {OpKind::Abs, "0 1111 0000 1111 11"},     // signed, floats, complex
    {OpKind::Sign, "0 1111 0000 1111 11"},
    {OpKind::Exponential, "0 0000 0000 1111 11"},
    {OpKind::Log, "0 0000 0000 1111 11"},
    {OpKind::Sine, "0 0000 0000 1111 11"},
    {OpKind::Cosine, "0 0000 0000 1111 11"},
    {OpKind::Tanh, "0 0000 0000 1111 11"},
    {OpKind::Sqrt, "0 0000 0000 1111 11"},
    {OpKind::Rsqrt, "0 0000 0000 1111 11"},
    {OpKind::ExponentialMinusOne, "0 0000 0000 1111 11"},
    {OpKind::LogPlusOne, "0 0000 0000 1111 11"},
    {OpKind::Conj, "0 0000 0000 1111 11"},  // floats (identity) and complex
    {OpKind::Floor, "0 0000 0000 1111 00"},
    {OpKind::Ceil, "0 0000 0000 1111 00"},
    {OpKind::RoundNearestEven, "0 0000 0000 1111 00"},
    {OpKind::RoundNearestAfz, "0 0000 0000 1111 00"},
    {OpKind::Logistic, "0 0000 0000 1111 11"},
    {OpKind::Not, "1 1111 1111 0000 00"},
};

const std::vector<OpTable> kBinaryTables = {
    {OpKind::Add, "1 1111 1111 1111 11"},  // bool: or
    {OpKind::Subtract, "0 1111 1111 1111 11"},
    {OpKind::Multiply, "1 1111 1111 1111 11"},  // bool: and
    {OpKind::Divide, "0 1111 1111 1111 11"},
    {OpKind::Remainder, "0 1111 1111 1111 00"},  // rejects complex
    {OpKind::Maximum, "1 1111 1111 1111 11"},
    {OpKind::Minimum, "1 1111 1111 1111 11"},
    {OpKind::Power, "0 1111 1111 1111 11"},
    {OpKind::And, "1 1111 1111 0000 00"},
    {OpKind::Or, "1 1111 1111 0000 00"},
    {OpKind::Xor, "1 1111 1111 0000 00"},
};

/// abs of complex is its real component type; every other unary keeps it.
DType expected_unary_result(OpKind kind, DType t) {
  if (kind == OpKind::Abs && t == DType::C64) return DType::F32;
  if (kind == OpKind::Abs && t == DType::C128) return DType::F64;
  return t;
}

TEST_CASE("unary ops admit exactly the dtypes of the format's type sets", "[infer_elementwise]") {
  for (const auto& row : kUnaryTables) {
    for (DType t : kAllDTypes) {
      Harness h;
      INFO(std::string{to_string(row.kind)} + " on " + std::string{to_string(t)});
      auto r = h.run(row.kind, {vt(t, shape({c(2), sym("B")}))});
      if (admitted(row.admits, t)) {
        CHECK(only_result(r) == vt(expected_unary_result(row.kind, t), shape({c(2), sym("B")})));
      } else {
        check_error(r, ErrorCode::TypeMismatch,
                    "operand 0 has dtype " + std::string{to_string(t)});
      }
      CHECK(h.deferred.empty());
    }
  }
}

TEST_CASE("binary ops admit exactly the dtypes of the format's type sets", "[infer_elementwise]") {
  for (const auto& row : kBinaryTables) {
    for (DType t : kAllDTypes) {
      Harness h;
      INFO(std::string{to_string(row.kind)} + " on " + std::string{to_string(t)});
      auto r = h.run(row.kind, {vt(t, shape({c(3), sym("B")})), vt(t, shape({c(3), sym("B")}))});
      if (admitted(row.admits, t)) {
        CHECK(only_result(r) == vt(t, shape({c(3), sym("B")})));
      } else {
        check_error(r, ErrorCode::TypeMismatch,
                    "operand 0 has dtype " + std::string{to_string(t)});
      }
      CHECK(h.deferred.empty());
    }
  }
}

TEST_CASE("abs of complex yields the real component type", "[infer_elementwise]") {
  Harness h;
  CHECK(only_result(h.run(OpKind::Abs, {vt(DType::C64, shape({c(4)}))})) == vt(DType::F32, shape({c(4)})));
  CHECK(only_result(h.run(OpKind::Abs, {vt(DType::C128, shape({}))})) == vt(DType::F64, shape({})));
  // conj of complex keeps the complex type.
  CHECK(only_result(h.run(OpKind::Conj, {vt(DType::C64, shape({c(4)}))})) == vt(DType::C64, shape({c(4)})));
}

TEST_CASE("unary ops keep non-exact extents", "[infer_elementwise]") {
  Harness h;
  Shape sh{ShapeExtent::upper_bound(sym("N")), ShapeExtent::unknown(), ex(c(5))};
  CHECK(only_result(h.run(OpKind::Negate, {vt(DType::F32, sh)})) == vt(DType::F32, sh));
  CHECK(only_result(h.run(OpKind::Not, {vt(DType::Bool, sh)})) == vt(DType::Bool, sh));
}

TEST_CASE("unary and binary ops check their arity", "[infer_elementwise]") {
  Harness h;
  auto x = vt(DType::F32, shape({c(2)}));
  check_error(h.run(OpKind::Negate, {}), ErrorCode::Schema, "expects 1 operand, got 0");
  check_error(h.run(OpKind::Exponential, {x, x}), ErrorCode::Schema, "expects 1 operand, got 2");
  check_error(h.run(OpKind::Add, {x}), ErrorCode::Schema, "expects 2 operands, got 1");
  check_error(h.run(OpKind::Xor, {x, x, x}), ErrorCode::Schema, "expects 2 operands, got 3");
  check_error(h.run(OpKind::Compare, {x}, CompareAttrs{}), ErrorCode::Schema,
              "expects 2 operands, got 1");
  check_error(h.run(OpKind::Select, {x, x}), ErrorCode::Schema, "expects 3 operands, got 2");
  check_error(h.run(OpKind::Clamp, {x, x, x, x}), ErrorCode::Schema, "expects 3 operands, got 4");
  check_error(h.run(OpKind::Convert, {}, ConvertAttrs{DType::I32}), ErrorCode::Schema,
              "expects 1 operand, got 0");
}

TEST_CASE("binary operands must share one dtype", "[infer_elementwise]") {
  Harness h;
  check_error(h.run(OpKind::Add, {vt(DType::F32, shape({c(2)})), vt(DType::F64, shape({c(2)}))}),
              ErrorCode::TypeMismatch,
              "operand 1 has dtype f64, expected f32 (the dtype of operand 0)");
  // Same width, other signedness: still a mismatch (no implicit promotion).
  check_error(
      h.run(OpKind::Remainder, {vt(DType::I32, shape({c(2)})), vt(DType::U32, shape({c(2)}))}),
      ErrorCode::TypeMismatch, "operand 1 has dtype u32, expected i32");
  check_error(h.run(OpKind::And, {vt(DType::Bool, shape({})), vt(DType::U8, shape({}))}),
              ErrorCode::TypeMismatch, "operand 1 has dtype u8, expected bool");
}

TEST_CASE("binary shapes agree axis by axis without broadcasting", "[infer_elementwise]") {
  SECTION("equal symbolic extents: no constraint") {
    Harness h;
    auto x = vt(DType::F32, shape({sym("B"), c(4)}));
    CHECK(only_result(h.run(OpKind::Add, {x, x})) == x);
    CHECK(h.deferred.empty());
  }
  SECTION("equal expressions in different spellings: no constraint") {
    Harness h;
    auto a = vt(DType::I32, shape({sym("B") * c(2)}));
    auto b = vt(DType::I32, shape({sym("B") + sym("B")}));
    CHECK(only_result(h.run(OpKind::Multiply, {a, b})).shape.size() == 1);
    CHECK(h.deferred.empty());
  }
  SECTION("a symbol against a constant: deferred equality") {
    Harness h;
    auto r = only_result(h.run(OpKind::Add, {vt(DType::F32, shape({sym("B")})), vt(DType::F32, shape({c(4)}))}));
    CHECK(r.dtype == DType::F32);
    // Either extent is right: signature time enforces B == 4.
    CHECK((r.shape == shape({sym("B")}) || r.shape == shape({c(4)})));
    REQUIRE(h.deferred.size() == 1);
    CHECK(is_constraint(h.deferred[0], sym("B"), Relation::Eq, c(4)));
    CHECK(h.deferred[0].origin == kOrigin);
  }
  SECTION("two different constants: error") {
    Harness h;
    check_error(
        h.run(OpKind::Subtract, {vt(DType::F32, shape({c(2), c(3)})), vt(DType::F32, shape({c(2), c(4)}))}),
        ErrorCode::ShapeMismatch, "operand 1 axis 1");
    CHECK(h.deferred.empty());
  }
  SECTION("rank mismatch: error, even against a scalar") {
    Harness h;
    check_error(h.run(OpKind::Add, {vt(DType::F32, shape({c(3)})), vt(DType::F32, shape({c(3), c(1)}))}),
                ErrorCode::ShapeMismatch, "rank");
    check_error(h.run(OpKind::Maximum, {vt(DType::F32, shape({c(3)})), vt(DType::F32, shape({}))}),
                ErrorCode::ShapeMismatch, "rank");
  }
  SECTION("an upper-bound extent is kept and checked at run time") {
    Harness h;
    Shape bounded{ShapeExtent::upper_bound(sym("N"))};
    auto r = only_result(h.run(OpKind::Add, {vt(DType::F32, bounded), vt(DType::F32, shape({sym("N")}))}));
    CHECK(r == vt(DType::F32, bounded));
    auto r2 = only_result(h.run(OpKind::Add, {vt(DType::F32, shape({sym("N")})), vt(DType::F32, bounded)}));
    CHECK(r2 == vt(DType::F32, bounded));
    CHECK(h.deferred.empty());
  }
}

TEST_CASE("compare takes any dtype and yields bool of the operands' shape", "[infer_elementwise]") {
  const CompareDirection directions[] = {CompareDirection::EQ, CompareDirection::NE,
                                         CompareDirection::LT, CompareDirection::LE,
                                         CompareDirection::GT, CompareDirection::GE};
  for (DType t : kAllDTypes) {
    for (auto d : directions) {
      Harness h;
      INFO(to_string(t));
      auto x = vt(t, shape({sym("B"), c(3)}));
      CHECK(only_result(h.run(OpKind::Compare, {x, x}, CompareAttrs{d})) ==
            vt(DType::Bool, shape({sym("B"), c(3)})));
    }
  }
  Harness h;
  check_error(h.run(OpKind::Compare, {vt(DType::I8, shape({c(3)})), vt(DType::I16, shape({c(3)}))},
                    CompareAttrs{CompareDirection::LT}),
              ErrorCode::TypeMismatch, "operand 1 has dtype i16, expected i8 (the dtype of operand 0)");
  check_error(h.run(OpKind::Compare, {vt(DType::I8, shape({c(3)})), vt(DType::I8, shape({c(2)}))},
                    CompareAttrs{}),
              ErrorCode::ShapeMismatch, "operand 1 axis 0");
  auto r = only_result(h.run(OpKind::Compare, {vt(DType::F16, shape({sym("B")})), vt(DType::F16, shape({c(7)}))},
                             CompareAttrs{CompareDirection::NE}));
  CHECK(r.dtype == DType::Bool);
  REQUIRE(h.deferred.size() == 1);
  CHECK(is_constraint(h.deferred[0], sym("B"), Relation::Eq, c(7)));
}

TEST_CASE("select takes a bool pred of the operands' shape or a scalar", "[infer_elementwise]") {
  SECTION("every dtype of on_true/on_false, pred full or scalar") {
    for (DType t : kAllDTypes) {
      Harness h;
      INFO(to_string(t));
      auto x = vt(t, shape({c(2), sym("B")}));
      CHECK(only_result(h.run(OpKind::Select, {vt(DType::Bool, shape({c(2), sym("B")})), x, x})) == x);
      CHECK(only_result(h.run(OpKind::Select, {vt(DType::Bool, shape({})), x, x})) == x);
      CHECK(h.deferred.empty());
    }
  }
  SECTION("pred that is not bool") {
    for (DType t : kAllDTypes) {
      if (t == DType::Bool) continue;
      Harness h;
      auto x = vt(DType::F32, shape({c(2)}));
      check_error(h.run(OpKind::Select, {vt(t, shape({c(2)})), x, x}), ErrorCode::TypeMismatch,
                  "operand 0 (pred) has dtype " + std::string{to_string(t)} + ", expected bool");
    }
  }
  SECTION("on_true and on_false of different dtypes") {
    Harness h;
    check_error(h.run(OpKind::Select, {vt(DType::Bool, shape({})), vt(DType::F32, shape({c(2)})),
                                       vt(DType::F64, shape({c(2)}))}),
                ErrorCode::TypeMismatch, "operand 2 has dtype f64, expected f32 (the dtype of operand 1)");
  }
  SECTION("on_true and on_false of different shapes") {
    Harness h;
    check_error(h.run(OpKind::Select, {vt(DType::Bool, shape({})), vt(DType::F32, shape({c(2)})),
                                       vt(DType::F32, shape({c(3)}))}),
                ErrorCode::ShapeMismatch, "operand 2 axis 0");
    // A scalar on_true is not broadcast.
    check_error(h.run(OpKind::Select, {vt(DType::Bool, shape({})), vt(DType::F32, shape({})),
                                       vt(DType::F32, shape({c(3)}))}),
                ErrorCode::ShapeMismatch, "rank");
  }
  SECTION("pred of another shape") {
    Harness h;
    auto x = vt(DType::I32, shape({c(2), c(3)}));
    check_error(h.run(OpKind::Select, {vt(DType::Bool, shape({c(3), c(2)})), x, x}),
                ErrorCode::ShapeMismatch, "operand 0 axis 0");
    check_error(h.run(OpKind::Select, {vt(DType::Bool, shape({c(2)})), x, x}),
                ErrorCode::ShapeMismatch, "rank");
  }
  SECTION("symbolic pred against constant operands: deferred") {
    Harness h;
    auto x = vt(DType::I32, shape({c(4)}));
    auto r = only_result(h.run(OpKind::Select, {vt(DType::Bool, shape({sym("B")})), x, x}));
    CHECK(r.dtype == DType::I32);
    REQUIRE(h.deferred.size() == 1);
    CHECK(is_constraint(h.deferred[0], sym("B"), Relation::Eq, c(4)));
  }
}

TEST_CASE("clamp takes min and max of the operand's dtype, scalar or same shape",
          "[infer_elementwise]") {
  SECTION("every dtype, bool and complex included") {
    for (DType t : kAllDTypes) {
      Harness h;
      INFO(to_string(t));
      auto x = vt(t, shape({sym("B"), c(3)}));
      auto scalar = vt(t, shape({}));
      CHECK(only_result(h.run(OpKind::Clamp, {scalar, x, scalar})) == x);
      CHECK(only_result(h.run(OpKind::Clamp, {x, x, x})) == x);
      CHECK(only_result(h.run(OpKind::Clamp, {x, x, scalar})) == x);
      CHECK(only_result(h.run(OpKind::Clamp, {scalar, x, x})) == x);
      CHECK(h.deferred.empty());
    }
  }
  SECTION("min or max of another dtype") {
    Harness h;
    auto x = vt(DType::F32, shape({c(3)}));
    check_error(h.run(OpKind::Clamp, {vt(DType::F64, shape({})), x, x}), ErrorCode::TypeMismatch,
                "operand 0 has dtype f64, expected f32 (the dtype of operand 1)");
    check_error(h.run(OpKind::Clamp, {x, x, vt(DType::I32, shape({}))}), ErrorCode::TypeMismatch,
                "operand 2 has dtype i32, expected f32 (the dtype of operand 1)");
  }
  SECTION("min or max of another shape") {
    Harness h;
    auto x = vt(DType::F32, shape({c(3)}));
    check_error(h.run(OpKind::Clamp, {vt(DType::F32, shape({c(2)})), x, x}),
                ErrorCode::ShapeMismatch, "operand 0 axis 0");
    check_error(h.run(OpKind::Clamp, {x, x, vt(DType::F32, shape({c(3), c(1)}))}),
                ErrorCode::ShapeMismatch, "rank");
  }
  SECTION("symbolic min against a constant operand: deferred") {
    Harness h;
    auto x = vt(DType::U8, shape({c(5)}));
    auto r = only_result(h.run(OpKind::Clamp, {vt(DType::U8, shape({sym("M")})), x, vt(DType::U8, shape({}))}));
    CHECK(r.dtype == DType::U8);
    REQUIRE(h.deferred.size() == 1);
    CHECK(is_constraint(h.deferred[0], sym("M"), Relation::Eq, c(5)));
  }
}

TEST_CASE("convert maps any dtype to any dtype and keeps the shape", "[infer_elementwise]") {
  Shape sh{ex(sym("B")), ShapeExtent::upper_bound(c(8)), ex(c(0))};
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      Harness h;
      INFO(std::string{to_string(from)} + " -> " + std::string{to_string(to)});
      CHECK(only_result(h.run(OpKind::Convert, {vt(from, sh)}, ConvertAttrs{to})) == vt(to, sh));
    }
  }
}

TEST_CASE("elementwise inference refuses ops of other families", "[infer_elementwise]") {
  Harness h;
  std::vector<ValueType> operands{vt(DType::F32, shape({c(2)}))};
  OpAttrs attrs = TransposeAttrs{{0}};
  InferRequest request{OpKind::Transpose, attrs, std::span<const ValueType>(operands), h.checker,
                       h.extensions};
  auto r = infer_elementwise(request);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::Internal);
}

}  // namespace
}  // namespace tenact::infer
