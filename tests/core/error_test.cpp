#include <catch2/catch.hpp>

#include <set>

#include "core/error.hpp"

using namespace tenact;

namespace {
Result<int> half_of(int x) {
  if (x % 2) return Error{ErrorCode::InvalidAttribute, "odd value " + std::to_string(x)};
  return x / 2;
}
Result<int> quarter_of(int x) {
  TENACT_ASSIGN_OR_RETURN(int h, half_of(x));
  TENACT_ASSIGN_OR_RETURN(int q, half_of(h));
  return q;
}
Status check_even(int x) {
  TENACT_TRY(half_of(x));
  return ok_status();
}
}  // namespace

TEST_CASE("a result holds either a value or an error", "[error]") {
  auto ok = half_of(8);
  REQUIRE(ok.ok());
  CHECK(*ok == 4);
  auto bad = half_of(3);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code() == ErrorCode::InvalidAttribute);
  CHECK(bad.error().message() == "odd value 3");
}

TEST_CASE("errors propagate through TENACT_TRY and TENACT_ASSIGN_OR_RETURN", "[error]") {
  CHECK(*quarter_of(12) == 3);
  auto bad = quarter_of(6);  // 6 -> 3 -> odd
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message() == "odd value 3");
  CHECK(check_even(2).ok());
  CHECK(check_even(5).error().code() == ErrorCode::InvalidAttribute);
}

TEST_CASE("error text is code then message, context prefixes the message", "[error]") {
  Error e{ErrorCode::ShapeMismatch, "axis 0 differs"};
  CHECK(e.to_string() == "shape_mismatch: axis 0 differs");
  Error c = e.with_context("op #2 (add -> 'z')");
  CHECK(c.code() == ErrorCode::ShapeMismatch);
  CHECK(c.message() == "op #2 (add -> 'z'): axis 0 differs");
}

TEST_CASE("every error code has a distinct name", "[error]") {
  std::set<std::string_view> names;
  for (int c = static_cast<int>(ErrorCode::Parse); c <= static_cast<int>(ErrorCode::Internal); ++c) {
    auto name = to_string(static_cast<ErrorCode>(c));
    CHECK(name != "unknown_error");
    names.insert(name);
  }
  CHECK(names.size() == static_cast<size_t>(ErrorCode::Internal) - static_cast<size_t>(ErrorCode::Parse) + 1);
}
