// Value names (docs/program-format.md, "Names"): any non-empty text without
// control characters — '/', "..", spaces and any Unicode are fine — through
// both doors (JSON and the C++ builder); a control character is an error
// at load that names the value and where it is defined.
#include <catch2/catch.hpp>

#include <string>

#include "core/builder.hpp"
#include "core/program_json.hpp"

using namespace tenact;

namespace {

std::string program_named(const std::string& input_name, const std::string& output_name) {
  return R"({"format": "tenact.program/1", "inputs": [{"name": ")" + input_name +
         R"(", "dtype": "f32", "shape": [2]}], "ops": [{"op": "negate", "in": [")" + input_name +
         R"("], "out": ")" + output_name + R"("}], "outputs": [")" + output_name + R"("]})";
}

}  // namespace

TEST_CASE("names may hold slashes, dots, spaces and any Unicode", "[value_names]") {
  for (const std::string name : {"layer1/w", "../../x", "/abs", ".", "..", "a b", "gr\xC3\xB6\xC3\x9F" "e",
                                 "\xE6\x9D\x83\xE9\x87\x8D", "a=b", "%2F"}) {
    INFO(name);
    auto p = load_program(program_named("in", name));
    REQUIRE(p.ok());
    CHECK(p->value(p->outputs()[0]).name == name);
  }
}

TEST_CASE("a control character in a name is an error naming the value", "[value_names]") {
  struct Case {
    std::string json_name;  // as written in JSON
    std::string shown;      // as the message prints it
    size_t byte;
  };
  for (const Case& c : {Case{"a\\u0001b", "a\\u0001b", 1}, Case{"\\u001bx", "\\u001bx", 0},
                        Case{"x\\ny", "x\\u000ay", 1}, Case{"del\\u007f", "del\\u007f", 3},
                        Case{"c1\\u0085", "c1\\u0085", 2}}) {
    INFO(c.json_name);
    auto as_output = load_program(program_named("in", c.json_name));
    REQUIRE_FALSE(as_output.ok());
    CHECK(as_output.error().code() == ErrorCode::Schema);
    CHECK(as_output.error().message() ==
          "op #0 (negate -> '" + c.shown + "'): the value name '" + c.shown + "' holds a control character at byte " +
              std::to_string(c.byte) + "; names are any non-empty text without control characters");
    auto as_input = load_program(program_named(c.json_name, "y"));
    REQUIRE_FALSE(as_input.ok());
    CHECK_THAT(as_input.error().message(),
               Catch::StartsWith("input #0 '" + c.shown + "': the value name '" + c.shown + "' holds a control"));
  }
}

TEST_CASE("the builder refuses control characters in names as the loader does", "[value_names]") {
  ProgramBuilder b{"p"};
  auto x = b.input("x\x07", DType::F32, {2});
  b.output(b.unary(OpKind::Negate, x, "ok/name"));
  auto p = b.build();
  REQUIRE_FALSE(p.ok());
  CHECK(p.error().code() == ErrorCode::Schema);
  CHECK_THAT(p.error().message(), Catch::Contains("the value name 'x\\u0007' holds a control character at byte 1"));
}
