// The semantic fingerprint: equal for equal programs, different for any
// semantic difference, independent of names that are not the interface.
#include <catch2/catch.hpp>

#include <span>

#include "core/program_json.hpp"

using namespace tenact;

namespace {
Fingerprint fp(const std::string& ops, const std::string& outputs = R"("y")",
               const std::string& inputs = R"({"name": "x", "dtype": "f32", "shape": ["N", 4]})") {
  auto p = load_program(R"({"format": "tenact.program/1", "inputs": [)" + inputs + R"(], "ops": [)" +
                        ops + R"(], "outputs": [)" + outputs + "]}");
  REQUIRE(p.ok());
  return p->fingerprint();
}
}  // namespace

TEST_CASE("the fingerprint is deterministic and 128 bits wide", "[fingerprint]") {
  const std::string ops = R"({"op": "negate", "in": ["x"], "out": "y"})";
  auto a = fp(ops);
  CHECK(a == fp(ops));
  CHECK(a.to_hex().size() == 32);
  CHECK((a.hi != 0 || a.lo != 0));
}

TEST_CASE("the fingerprint ignores the program name and intermediate names", "[fingerprint]") {
  auto a = fp(R"({"op": "negate", "in": ["x"], "out": "t"}, {"op": "abs", "in": ["t"], "out": "y"})");
  auto b = fp(R"({"op": "negate", "in": ["x"], "out": "tmp"}, {"op": "abs", "in": ["tmp"], "out": "y"})");
  CHECK(a == b);
  auto p1 = load_program(R"({"format": "tenact.program/1", "name": "one", "inputs": [], "ops": [], "outputs": []})");
  auto p2 = load_program(R"({"format": "tenact.program/1", "name": "two", "inputs": [], "ops": [], "outputs": []})");
  REQUIRE(p1.ok());
  REQUIRE(p2.ok());
  CHECK(*p1 == *p2);
}

TEST_CASE("the fingerprint changes with every semantic difference", "[fingerprint]") {
  const auto base = fp(R"({"op": "reduce_sum", "in": ["x"], "out": "y", "dimensions": [1]})");
  CHECK(base != fp(R"({"op": "reduce_sum", "in": ["x"], "out": "y", "dimensions": [0]})"));
  CHECK(base != fp(R"({"op": "reduce_max", "in": ["x"], "out": "y", "dimensions": [1]})"));
  CHECK(base != fp(R"({"op": "reduce_sum", "in": ["x"], "out": "z", "dimensions": [1]})", R"("z")"));
  CHECK(base != fp(R"({"op": "reduce_sum", "in": ["x"], "out": "y", "dimensions": [1]})", R"("y")",
                   R"({"name": "x", "dtype": "f64", "shape": ["N", 4]})"));
  CHECK(base != fp(R"({"op": "reduce_sum", "in": ["x"], "out": "y", "dimensions": [1]})", R"("y")",
                   R"({"name": "x", "dtype": "f32", "shape": ["M", 4]})"));
  // An input's name is part of the interface.
  CHECK(base != fp(R"({"op": "reduce_sum", "in": ["in"], "out": "y", "dimensions": [1]})", R"("y")",
                   R"({"name": "in", "dtype": "f32", "shape": ["N", 4]})"));
  // Constant payloads count, bit for bit.
  const auto c1 = fp(R"({"op": "constant", "out": "y", "dtype": "f32", "shape": [2], "value": [1, 2]})");
  CHECK(c1 != fp(R"({"op": "constant", "out": "y", "dtype": "f32", "shape": [2], "value": [1, 3]})"));
  CHECK(c1 != fp(R"({"op": "constant", "out": "y", "dtype": "f32", "shape": [2], "value": 1})"));
  // Guards count.
  auto g1 = load_program(R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": ["N"]}],
                             "guards": ["N <= 8"], "ops": [], "outputs": ["x"]})");
  auto g2 = load_program(R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": ["N"]}],
                             "guards": ["N <= 9"], "ops": [], "outputs": ["x"]})");
  REQUIRE(g1.ok());
  REQUIRE(g2.ok());
  CHECK(g1->fingerprint() != g2->fingerprint());
  CHECK_FALSE(*g1 == *g2);
}

TEST_CASE("extension config payloads are part of the identity", "[fingerprint]") {
  ExtensionRegistry reg;
  reg.add("t.id", [](std::span<const ValueType> in, const std::string&) -> Result<std::vector<ValueType>> {
    return std::vector<ValueType>{in[0]};
  });
  auto load = [&](const char* attrs) {
    auto p = load_program(std::string{R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [3]}],
      "ops": [{"op": "extension", "family": "t.id", "in": ["x"], "out": "y", "attributes": )"} + attrs +
      R"(}], "outputs": ["y"]})", reg);
    REQUIRE(p.ok());
    return p->fingerprint();
  };
  CHECK(load(R"({"a": 1, "b": 2})") == load(R"({"b": 2, "a": 1})"));  // key order is not semantic
  CHECK(load(R"({"a": 1})") != load(R"({"a": 2})"));
}
