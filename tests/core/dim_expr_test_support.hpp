// Helpers shared by the dimension-expression tests: parse-or-fail, the
// canonical text of a parse, and Catch2 checks for parse and evaluation
// errors. Test-only; every definition is inline so several test files can
// include it.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "core/dim_expr.hpp"

namespace tenact::dim_expr_test_support {

inline constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

/// The expression `text` parses to (the test fails when it does not parse).
inline DimExpr P(std::string_view text) {
  auto r = DimExpr::parse(text);
  INFO("parsing '" << text << "': " << (r.ok() ? std::string("ok") : r.error().to_string()));
  REQUIRE(r.ok());
  return *r;
}

/// The canonical text of P(text).
inline std::string S(std::string_view text) { return P(text).to_string(); }

inline void require_parse_error(std::string_view text, ErrorCode code,
                                const std::string& substring) {
  auto r = DimExpr::parse(text);
  INFO("parsing '" << text.substr(0, 100) << "'");
  REQUIRE_FALSE(r.ok());
  INFO("error: " << r.error().to_string());
  CHECK(r.error().code() == code);
  CHECK_THAT(r.error().message(), Catch::Matchers::Contains(substring));
}

inline int64_t eval_ok(const DimExpr& e, const SymbolBindings& b) {
  auto r = e.evaluate(b);
  INFO("evaluating '" << e.to_string() << "': "
                      << (r.ok() ? std::string("ok") : r.error().to_string()));
  REQUIRE(r.ok());
  return *r;
}

inline void require_eval_error(const DimExpr& e, const SymbolBindings& b, ErrorCode code,
                               const std::string& substring) {
  auto r = e.evaluate(b);
  INFO("evaluating '" << e.to_string() << "'");
  REQUIRE_FALSE(r.ok());
  INFO("error: " << r.error().to_string());
  CHECK(r.error().code() == code);
  CHECK_THAT(r.error().message(), Catch::Matchers::Contains(substring));
}

}  // namespace tenact::dim_expr_test_support
