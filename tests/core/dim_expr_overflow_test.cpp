// Tests of core/dim_expr's constant arithmetic: what overflows int64 while an
// expression is built is a parse error naming the operation, and a mark that
// the operators keep; what overflows only for some values of the symbols is
// left to evaluation.
//
// Oracles: hand-derived values, positions and texts.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "core/dim_expr.hpp"
#include "dim_expr_test_support.hpp"

namespace {

using namespace tenact::dim_expr_test_support;
using tenact::DimExpr;
using tenact::ErrorCode;

}  // namespace

TEST_CASE("constant arithmetic that overflows int64 is an error when parsed", "[dim_expr]") {
  struct Case {
    const char* text;
    const char* message;  // a part of the error message
  };
  const Case cases[] = {
      {"9223372036854775807+1",
       "dimension expression '9223372036854775807+1': constant arithmetic overflows int64 at "
       "position 19 ('9223372036854775807' + '1')"},
      {"4611686018427387904*2", "at position 19 ('4611686018427387904' * '2')"},
      {"0 - 9223372036854775807 - 2", "at position 24 ('0 - 9223372036854775807' - '2')"},
      {"(0 - 9223372036854775807 - 1) // (0 - 1)",
       "at position 30 ('0 - 9223372036854775807 - 1' // '0 - 1')"},
      // Combined with further constants, the overflow is not undone.
      {"(9223372036854775807+1)-1", "at position 20"},
      {"min(9223372036854775807+1, 3)", "at position 23"},
      {"(9223372036854775807 + 1)*0", "at position 21"},
      {"B - B + (9223372036854775807 + 1)", "at position 29"},
      // A coefficient or constant term computed from constants alone.
      {"B*9223372036854775807*2", "at position 21 ('9223372036854775807*B' * '2')"},
      {"9223372036854775807*B + B", "at position 22 ('9223372036854775807*B' + 'B')"},
      {"(B + 4611686018427387904)*2", "('B + 4611686018427387904' * '2')"},
      {"2*(B*C + 4611686018427387904)", "at position 1"},
      {"(9223372036854775807*B)*(2*C)", "at position 23 ('9223372036854775807*B' * '2*C')"},
      {"(3*B)*(4611686018427387904*B)", "at position 5"},
  };
  for (const Case& c : cases) require_parse_error(c.text, ErrorCode::Overflow, c.message);
  // Constants that fit stay folded, down to the lowest one.
  CHECK(P("9223372036854775806 + 1").constant_value() == kMax);
  CHECK(P("0 - 9223372036854775807 - 1").constant_value() == kMin);
  CHECK(P("4611686018427387903*2").constant_value() == kMax - 1);
}

TEST_CASE("what overflows only for some values of the symbols is left to evaluation",
          "[dim_expr]") {
  const DimExpr sum = P("9223372036854775807 + B");
  CHECK(sum.check_constants().ok());
  CHECK(eval_ok(sum, {{"B", 0}}) == kMax);
  require_eval_error(sum, {{"B", 1}}, ErrorCode::Overflow, "with B=1");
  const DimExpr scaled = P("B*4611686018427387904");
  CHECK(eval_ok(scaled, {{"B", 1}}) == int64_t{1} << 62);
  require_eval_error(scaled, {{"B", 2}}, ErrorCode::Overflow, "with B=2");
  // Two non-constant factors whose expansion would overflow stay unfolded:
  // their product fits int64 for some values.
  const DimExpr wide = P("(B - 2)*(9223372036854775807*B)");
  CHECK(wide.check_constants().ok());
  CHECK(P(wide.to_string()) == wide);
  CHECK(eval_ok(wide, {{"B", 0}}) == 0);
  CHECK(eval_ok(wide, {{"B", 1}}) == -kMax);
  require_eval_error(wide, {{"B", 3}}, ErrorCode::Overflow, "with B=3");
  const DimExpr square = P("(B + 4611686018427387904)*(B + 2)");
  CHECK(P(square.to_string()) == square);
  require_eval_error(square, {{"B", 0}}, ErrorCode::Overflow, "with B=0");
}

TEST_CASE("the operators mark overflowing constant arithmetic and no operation removes the mark",
          "[dim_expr]") {
  const DimExpr max = DimExpr::constant(kMax);
  const DimExpr one = DimExpr::constant(1);
  const DimExpr sum = max + one;
  CHECK_FALSE(sum.is_constant());
  auto status = sum.check_constants();
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().code() == ErrorCode::Overflow);
  CHECK(status.error().message() ==
        "dimension expression '1 + 9223372036854775807': constant arithmetic overflows int64");
  require_eval_error(sum, {}, ErrorCode::Overflow, "overflows int64");
  // Printed, it is text that parse() rejects.
  auto reparsed = DimExpr::parse(sum.to_string());
  REQUIRE_FALSE(reparsed.ok());
  CHECK(reparsed.error().code() == ErrorCode::Overflow);

  const DimExpr b = DimExpr::symbol("B");
  const DimExpr zero = DimExpr::constant(0);
  for (const DimExpr& e :
       {sum * zero, sum - sum, sum - one, (b + sum) - sum, DimExpr::min(sum, DimExpr::constant(3)),
        DimExpr::max(sum, b), DimExpr::floor_div(sum, DimExpr::constant(2)),
        DimExpr::floor_div(b, sum), b * sum, sum.substitute({{"B", 1}}),
        DimExpr::constant(4611686018427387904) * DimExpr::constant(2),
        (max - DimExpr::constant(2) * max) - DimExpr::constant(2),
        DimExpr::floor_div(P("0 - 9223372036854775807 - 1"), P("0 - 1")),
        P("9223372036854775807*B") * DimExpr::constant(2), P("9223372036854775807*B") + b,
        P("4*B").substitute({{"B", int64_t{1} << 62}})}) {
    INFO(e.to_string());
    auto s = e.check_constants();
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code() == ErrorCode::Overflow);
    CHECK_THAT(s.error().message(), Catch::Contains("constant arithmetic overflows int64"));
  }
  // The message names the part that overflowed.
  CHECK_THAT((b * sum).check_constants().error().message(),
             Catch::EndsWith("overflows int64 in '1 + 9223372036854775807'"));
  // A marked coefficient evaluates as written.
  const DimExpr coefficient = P("9223372036854775807*B") * DimExpr::constant(2);
  CHECK(eval_ok(coefficient, {{"B", 0}}) == 0);
  require_eval_error(coefficient, {{"B", 1}}, ErrorCode::Overflow, "with B=1");
  // Lowest constant and coefficient print in a form that parses back.
  DimExpr lowest = P("0 - 9223372036854775807 - 1");
  CHECK(lowest.constant_value() == kMin);
  CHECK(lowest.to_string() == "0 - 9223372036854775807 - 1");
  DimExpr lowest_coef = P("0 - 9223372036854775807*B - B");
  CHECK(lowest_coef.to_string() == "0 - 9223372036854775807*B - B");
  CHECK(eval_ok(lowest_coef, {{"B", 1}}) == kMin);
}
