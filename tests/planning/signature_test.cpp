// Signatures are checked before any other work: arity, dtype, rank,
// symbol bindings, guards and deferred constraints, each with an error
// naming what is wrong and both evaluated sides.
#include <catch2/catch.hpp>

#include "core/program_json.hpp"
#include "planning/signature.hpp"

using namespace tenact;

namespace {
SemanticProgram load(const std::string& inputs, const std::string& ops, const std::string& outputs,
                     const std::string& guards = "") {
  auto p = load_program(R"({"format": "tenact.program/1", "inputs": [)" + inputs + "], " + guards +
                        R"("ops": [)" + ops + R"(], "outputs": [)" + outputs + "]}");
  REQUIRE(p.ok());
  return std::move(*p);
}

Error bind_error(const SemanticProgram& p, std::vector<InputSignature> sig) {
  auto r = bind_signature(p, sig);
  REQUIRE_FALSE(r.ok());
  return r.error();
}
}  // namespace

TEST_CASE("a matching signature binds every symbol", "[signature]") {
  auto p = load(R"({"name": "x", "dtype": "f32", "shape": ["B", "T"]}, {"name": "y", "dtype": "f32", "shape": ["T"]})",
                "", R"("x")");
  auto r = bind_signature(p, std::vector<InputSignature>{{DType::F32, {4, 7}}, {DType::F32, {7}}});
  REQUIRE(r.ok());
  CHECK(r->at("B") == 4);
  CHECK(r->at("T") == 7);
  CHECK(r->size() == 2);
}

TEST_CASE("arity, dtype and rank mismatches name the input, expected and given", "[signature]") {
  auto p = load(R"({"name": "x", "dtype": "f32", "shape": ["B", 3]})", "", R"("x")");
  auto e = bind_error(p, {});
  CHECK(e.code() == ErrorCode::InputMismatch);
  CHECK(e.message() == "program expects 1 inputs, got 0");
  e = bind_error(p, {{DType::F64, {2, 3}}});
  CHECK(e.message() == "input 'x' expects f32[B, 3], got f64[2, 3]");
  e = bind_error(p, {{DType::F32, {2, 3, 1}}});
  CHECK(e.message() == "input 'x' expects f32[B, 3], got f32[2, 3, 1]");
  e = bind_error(p, {{DType::F32, {2, 4}}});
  CHECK(e.message() == "input 'x' axis 1 is 4, expected 3: the program declares f32[B, 3], got f32[2, 4]");
}

TEST_CASE("a symbol used twice must agree with its binding", "[signature]") {
  auto p = load(R"({"name": "x", "dtype": "f32", "shape": ["N"]}, {"name": "y", "dtype": "f32", "shape": ["N"]},
                   {"name": "z", "dtype": "f32", "shape": ["2*N"]})", "", R"("x")");
  CHECK(bind_signature(p, std::vector<InputSignature>{{DType::F32, {3}}, {DType::F32, {3}}, {DType::F32, {6}}}).ok());
  auto e = bind_error(p, {{DType::F32, {3}}, {DType::F32, {4}}, {DType::F32, {6}}});
  CHECK(e.code() == ErrorCode::InputMismatch);
  CHECK(e.message() ==
        "input 'y' axis 0 is 4, expected N = 3 (N bound by input 'x' axis 0): the program declares f32[N], got f32[4]");
  e = bind_error(p, {{DType::F32, {3}}, {DType::F32, {3}}, {DType::F32, {5}}});
  CHECK(e.message() == "input 'z' axis 0 is 5, expected 2*N = 6: the program declares f32[2*N], got f32[5]");
}

TEST_CASE("guards are checked with both sides evaluated", "[signature]") {
  auto p = load(R"({"name": "x", "dtype": "f32", "shape": ["B", "T"]})", "", R"("x")",
                R"("guards": ["B*T <= 100", "T >= 2"], )");
  CHECK(bind_signature(p, std::vector<InputSignature>{{DType::F32, {10, 10}}}).ok());
  auto e = bind_error(p, {{DType::F32, {11, 10}}});
  CHECK(e.code() == ErrorCode::GuardViolated);
  CHECK(e.message() == "guard 'B*T <= 100' does not hold: B*T <= 100 evaluates to 110 <= 100");
  e = bind_error(p, {{DType::F32, {1, 1}}});
  CHECK(e.message() == "guard 'T >= 2' does not hold: T >= 2 evaluates to 1 >= 2");
}

TEST_CASE("constraints deferred by validation are checked per signature naming the op", "[signature]") {
  auto p = load(R"({"name": "x", "dtype": "f32", "shape": ["B"]}, {"name": "y", "dtype": "f32", "shape": [4]})",
                R"({"op": "add", "in": ["x", "y"], "out": "z"})", R"("z")");
  CHECK(bind_signature(p, std::vector<InputSignature>{{DType::F32, {4}}, {DType::F32, {4}}}).ok());
  auto e = bind_error(p, {{DType::F32, {5}}, {DType::F32, {4}}});
  CHECK(e.code() == ErrorCode::GuardViolated);
  CHECK_THAT(e.message(), Catch::StartsWith("op #0 (add -> 'z') does not hold:"));
  CHECK_THAT(e.message(), Catch::Contains("evaluates to"));
  auto s = load(R"({"name": "x", "dtype": "f32", "shape": ["B"]})",
                R"({"op": "slice", "in": ["x"], "out": "s", "start_indices": [0], "limit_indices": [3]})", R"("s")");
  CHECK(bind_signature(s, std::vector<InputSignature>{{DType::F32, {3}}}).ok());
  e = bind_error(s, {{DType::F32, {2}}});
  CHECK_THAT(e.message(), Catch::StartsWith("op #0 (slice -> 's') does not hold:"));
}

TEST_CASE("concrete shapes evaluate exact extents and refuse run-time ones", "[signature]") {
  SymbolBindings b{{"N", 5}};
  auto s = concrete_shape(Shape{ShapeExtent::exact(DimExpr::symbol("N")),
                                ShapeExtent::exact(*DimExpr::parse("2*N + 1"))}, b);
  REQUIRE(s.ok());
  CHECK(*s == std::vector<int64_t>{5, 11});
  CHECK_FALSE(concrete_shape(Shape{ShapeExtent::upper_bound(DimExpr::symbol("N"))}, b).ok());
  CHECK(concrete_shape(Shape{ShapeExtent::exact(DimExpr::symbol("M"))}, b).error().code() == ErrorCode::UnboundSymbol);
}

TEST_CASE("a symbolic axis broadcast to another extent fails saying a symbol is never taken to be 1",
          "[signature]") {
  auto p = load(R"({"name": "x", "dtype": "f32", "shape": ["B"]})",
                R"({"op": "broadcast_in_dim", "in": ["x"], "out": "y", "shape": [3, 4], "broadcast_dimensions": [1]})",
                R"("y")");
  CHECK(bind_signature(p, std::vector<InputSignature>{{DType::F32, {4}}}).ok());
  auto e = bind_error(p, {{DType::F32, {1}}});  // B = 1 still does not broadcast (spec: broadcast_in_dim)
  CHECK(e.code() == ErrorCode::GuardViolated);
  CHECK(e.message() ==
        "op #0 (broadcast_in_dim -> 'y') does not hold: B == 4 evaluates to 1 == 4 (operand 0 axis 0 (B) equals "
        "result axis 1 (4); a symbolic operand axis is never taken to be 1: it must equal the result axis it maps "
        "to (write a static 1 to broadcast))");
}
