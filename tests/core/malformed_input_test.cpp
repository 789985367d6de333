// Hostile and broken program documents: each gives a named error, never a
// crash, a hang or an unbounded allocation.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "core/program_json.hpp"

using namespace tenact;

namespace {
const std::string kValid = R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [2, 3]}],
  "ops": [{"op": "negate", "in": ["x"], "out": "y"}], "outputs": ["y"]})";

Error error_of(const std::string& text) {
  auto r = load_program(text);
  REQUIRE_FALSE(r.ok());
  INFO(r.error().to_string());
  CHECK_FALSE(r.error().message().empty());
  return r.error();
}
}  // namespace

TEST_CASE("every truncation of a valid document is a parse error", "[malformed]") {
  REQUIRE(load_program(kValid).ok());
  for (size_t n = 0; n < kValid.size() - 1; ++n) {
    auto e = error_of(kValid.substr(0, n));
    CHECK(e.code() == ErrorCode::Parse);
  }
}

TEST_CASE("syntax errors give the byte position", "[malformed]") {
  auto e = error_of(R"({"format": "tenact.program/1",, "inputs": []})");
  CHECK(e.code() == ErrorCode::Parse);
  CHECK_THAT(e.message(), Catch::Contains("byte"));
  CHECK(error_of("{\"format\": \"tenact.program/1\"} trailing").code() == ErrorCode::Parse);
  CHECK(error_of(std::string("{\"a\": \"\xff\xfe\"}")).code() == ErrorCode::Parse);  // invalid UTF-8
}

TEST_CASE("wrong JSON types anywhere are schema errors", "[malformed]") {
  const char* docs[] = {
      R"({"format": 1, "inputs": [], "ops": [], "outputs": []})",
      R"({"format": "tenact.program/1", "name": 3, "inputs": [], "ops": [], "outputs": []})",
      R"({"format": "tenact.program/1", "inputs": [3], "ops": [], "outputs": []})",
      R"({"format": "tenact.program/1", "inputs": [{"name": 1, "dtype": "f32", "shape": []}], "ops": [], "outputs": []})",
      R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": {}}], "ops": [], "outputs": []})",
      R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [null]}], "ops": [], "outputs": []})",
      R"({"format": "tenact.program/1", "inputs": [], "ops": ["negate"], "outputs": []})",
      R"({"format": "tenact.program/1", "inputs": [], "ops": [{"op": 5, "out": "y"}], "outputs": []})",
      R"({"format": "tenact.program/1", "inputs": [], "ops": [], "outputs": [1]})",
      R"({"format": "tenact.program/1", "inputs": [], "ops": [], "outputs": [], "guards": "N > 1"})",
      R"({"format": "tenact.program/1", "inputs": [], "ops": [{"op": "iota", "out": "y", "dtype": "i32", "shape": [3], "iota_dimension": "0"}], "outputs": []})",
      R"({"format": "tenact.program/1", "inputs": [], "ops": [{"op": "tril", "in": [], "out": "y", "k": 1.5}], "outputs": []})",
  };
  for (const char* d : docs) {
    INFO(d);
    auto e = error_of(d);
    CHECK(e.code() == ErrorCode::Schema);
  }
}

TEST_CASE("unknown keys are errors, never ignored", "[malformed]") {
  CHECK(error_of(R"({"format": "tenact.program/1", "inputs": [], "ops": [], "outputs": [], "opts": []})").code() ==
        ErrorCode::Schema);
  auto e = error_of(R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [2]}],
    "ops": [{"op": "reduce_sum", "in": ["x"], "out": "y", "dimensions": [0], "keepdims": true}], "outputs": ["y"]})");
  CHECK(e.code() == ErrorCode::Schema);
  CHECK_THAT(e.message(), Catch::Contains("'keepdims'"));
}

TEST_CASE("huge declared shapes are errors, not allocations", "[malformed]") {
  auto e = error_of(R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [1000000, 1000000]}],
    "ops": [], "outputs": ["x"]})");
  CHECK(e.code() == ErrorCode::LimitExceeded);
  CHECK_THAT(e.message(), Catch::Contains("input #0 'x'"));
  e = error_of(R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [4294967296, 4294967296, 4294967296]}],
    "ops": [], "outputs": ["x"]})");
  CHECK((e.code() == ErrorCode::Overflow || e.code() == ErrorCode::LimitExceeded));
  e = error_of(R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [99999999999999999999]}],
    "ops": [], "outputs": ["x"]})");
  CHECK_FALSE(e.message().empty());
  // An op whose result would be huge.
  e = error_of(R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [1000000]}],
    "ops": [{"op": "broadcast_in_dim", "in": ["x"], "out": "y", "shape": [1000000, 1000000], "broadcast_dimensions": [1]}],
    "outputs": ["y"]})");
  CHECK(e.code() == ErrorCode::LimitExceeded);
  CHECK_THAT(e.message(), Catch::Contains("op #0 (broadcast_in_dim -> 'y')"));
}

TEST_CASE("deep nesting is refused before parsing", "[malformed]") {
  const auto start = std::chrono::steady_clock::now();
  std::string deep(100000, '[');
  auto e = error_of(deep);
  CHECK(e.code() == ErrorCode::LimitExceeded);
  std::string deep_in_value = R"({"format": "tenact.program/1", "inputs": [], "ops": [], "outputs": [], "x": )" +
                              std::string(5000, '[') + std::string(5000, ']') + "}";
  CHECK(error_of(deep_in_value).code() == ErrorCode::LimitExceeded);
  // Brackets inside strings do not count.
  std::string in_string = R"({"format": "tenact.program/1", "name": ")" + std::string(1000, '[') +
                          R"(", "inputs": [], "ops": [], "outputs": []})";
  CHECK(load_program(in_string).ok());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("malformed dimension expressions and guards are named", "[malformed]") {
  auto e = error_of(R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": ["B +"]}],
    "ops": [], "outputs": ["x"]})");
  CHECK(e.code() == ErrorCode::Parse);
  CHECK_THAT(e.message(), Catch::Contains("input #0 'x' shape element 0"));
  e = error_of(R"J({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": ["B"]}],
    "ops": [{"op": "reshape", "in": ["x"], "out": "y", "shape": ["B // (1 - 1)"]}], "outputs": ["y"]})J");
  CHECK_FALSE(e.message().empty());
}

TEST_CASE("duplicate keys are errors, never last-one-wins", "[malformed]") {
  auto e = error_of(R"({"format": "tenact.program/1", "inputs": [], "ops": [], "outputs": [], "ops": []})");
  CHECK(e.code() == ErrorCode::Parse);
  CHECK_THAT(e.message(), Catch::Contains("duplicate key 'ops'"));
  e = error_of(R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "dtype": "f64", "shape": []}],
    "ops": [], "outputs": ["x"]})");
  CHECK_THAT(e.message(), Catch::Contains("duplicate key 'dtype'"));
  // The same key in sibling objects is fine.
  CHECK(load_program(R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": []},
    {"name": "y", "dtype": "f32", "shape": []}], "ops": [], "outputs": ["x"]})").ok());
}
