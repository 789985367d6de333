// A model (a program with weights or states) never stages: stage() sends
// it to Runtime::load_model, so no prepare/run path runs one by accident.
#include <catch2/catch.hpp>

#include "core/program_json.hpp"
#include "planning/exec_program.hpp"

using namespace tenact;

TEST_CASE("stage refuses a program that declares weights or states", "[staging]") {
  for (const char* section : {R"("weights": [{"name": "w", "dtype": "f32", "shape": [2]}])",
                              R"("states": [{"name": "w", "dtype": "f32", "shape": [2]}])"}) {
    auto p = load_program(std::string{R"({"format": "tenact.program/1", "name": "lm", "inputs": [], )"} + section +
                          R"(, "ops": [{"op": "negate", "in": ["w"], "out": "y"}], "outputs": ["y"]})");
    REQUIRE(p.ok());
    auto staged = stage(*p);
    REQUIRE_FALSE(staged.ok());
    CHECK(staged.error().code() == ErrorCode::Unsupported);
    CHECK(staged.error().message() ==
          "program 'lm' declares weights or states: load it as a model (Runtime::load_model)");
  }
  // Empty sections are no model.
  auto plain = load_program(R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [2]}],
      "weights": [], "states": [], "ops": [{"op": "negate", "in": ["x"], "out": "y"}], "outputs": ["y"]})");
  REQUIRE(plain.ok());
  CHECK(stage(*plain).ok());
}
