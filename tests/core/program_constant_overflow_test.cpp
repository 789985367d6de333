// Constant arithmetic is decided at load: a dimension expression whose
// constants overflow int64 is an error of the JSON loader and of the C++
// builder alike, naming the op (by index and first output), the input or the
// guard, and the expression. What overflows only for some values of the
// symbols stays a signature-time check.
//
// Oracles: hand-written messages (the op names and positions of the texts).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/builder.hpp"
#include "core/program_json.hpp"
#include "program_test_support.hpp"

using namespace tenact;

namespace {

using tenact::testing::load_error;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// Each overflows by constant arithmetic alone; `at` is where.
struct Overflowing {
  const char* text;
  const char* at;
};
const Overflowing kForms[] = {
    {"9223372036854775807+1", "position 19"},
    {"4611686018427387904*2", "position 19"},
    {"(9223372036854775807+1)-1", "position 20"},
    {"min(9223372036854775807+1, 3)", "position 23"},
    {"B*9223372036854775807*2", "position 21"},
};

// x: f32[B], then op #0 negate -> 'n', then `op` as op #1.
std::string program_with(const std::string& op, const std::string& extra_input = "",
                         const std::string& guards = "") {
  return R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": ["B"]})" +
         extra_input + "]," + guards + R"( "ops": [{"op": "negate", "in": ["x"], "out": "n"}, )" +
         op + R"(], "outputs": ["n"]})";
}

Error build_error(const ProgramBuilder& b) {
  auto r = b.build();
  REQUIRE_FALSE(r.ok());
  INFO(r.error().to_string());
  return r.error();
}

// "dimension expression 'TEXT': constant arithmetic overflows int64 at AT".
std::string named(const Overflowing& f) {
  return std::string{"dimension expression '"} + f.text +
         "': constant arithmetic overflows int64 at " + f.at;
}

// A builder with x: f32[B] and op #0 negate -> 'n', as program_with().
ProgramBuilder builder_with_x(ValueRef& x) {
  ProgramBuilder b;
  x = b.input("x", DType::F32, {"B"});
  b.output(b.unary(OpKind::Negate, x, "n"));
  return b;
}

}  // namespace

TEST_CASE("a JSON attribute whose constants overflow is an error at load naming the op and the "
          "expression",
          "[constant_overflow][program_json]") {
  for (const Overflowing& f : kForms) {
    const std::string t = std::string{"\""} + f.text + "\"";
    struct Case {
      std::string op;
      std::string prefix;
    };
    const Case cases[] = {
        {R"({"op": "constant", "out": "r", "dtype": "f32", "shape": [)" + t + R"(], "value": 0})",
         "op #1 (constant -> 'r'): attribute 'shape' element 0: "},
        {R"({"op": "iota", "out": "r", "dtype": "i32", "shape": [2, )" + t + R"(], "iota_dimension": 0})",
         "op #1 (iota -> 'r'): attribute 'shape' element 1: "},
        {R"({"op": "reshape", "in": ["x"], "out": "r", "shape": [)" + t + "]}",
         "op #1 (reshape -> 'r'): attribute 'shape' element 0: "},
        {R"({"op": "broadcast_in_dim", "in": ["x"], "out": "r", "shape": ["B", )" + t +
             R"(], "broadcast_dimensions": [0]})",
         "op #1 (broadcast_in_dim -> 'r'): attribute 'shape' element 1: "},
        {R"({"op": "slice", "in": ["x"], "out": "r", "start_indices": [0], "limit_indices": [)" + t + "]}",
         "op #1 (slice -> 'r'): attribute 'limit_indices' element 0: "},
        {R"({"op": "dynamic_slice", "in": ["x", "i"], "out": "r", "slice_sizes": [)" + t + "]}",
         "op #1 (dynamic_slice -> 'r'): attribute 'slice_sizes' element 0: "},
    };
    for (const Case& c : cases) {
      const Error e = load_error(program_with(c.op));
      CHECK(e.code() == ErrorCode::Overflow);
      CHECK_THAT(e.message(), Catch::StartsWith(c.prefix + named(f)));
    }
    // pad amounts, with a padding value defined above.
    const std::string pad = R"({"op": "constant", "out": "pv", "dtype": "f32", "shape": [], "value": 0},
        {"op": "pad", "in": ["x", "pv"], "out": "r", "edge_padding_low": [0], "edge_padding_high": [)" +
                            t + "]}";
    const Error e = load_error(program_with(pad));
    CHECK(e.code() == ErrorCode::Overflow);
    CHECK_THAT(e.message(),
               Catch::StartsWith("op #2 (pad -> 'r'): attribute 'edge_padding_high' element 0: " +
                                 named(f)));
  }
}

TEST_CASE("an input shape or a guard whose constants overflow is an error at load naming it",
          "[constant_overflow][program_json]") {
  for (const Overflowing& f : kForms) {
    const std::string t = std::string{"\""} + f.text + "\"";
    Error e = load_error(
        program_with("{\"op\": \"abs\", \"in\": [\"x\"], \"out\": \"r\"}",
                     R"(, {"name": "y", "dtype": "u8", "shape": ["B", )" + t + "]}"));
    CHECK(e.code() == ErrorCode::Overflow);
    CHECK_THAT(e.message(), Catch::StartsWith("input #1 'y' shape element 1: " + named(f)));
    e = load_error(program_with("{\"op\": \"abs\", \"in\": [\"x\"], \"out\": \"r\"}", "",
                                " \"guards\": [\"B <= " + std::string{f.text} + "\"],"));
    CHECK(e.code() == ErrorCode::Overflow);
    CHECK_THAT(e.message(), Catch::StartsWith("guard 'B <= " + std::string{f.text} + "'"));
    CHECK_THAT(e.message(), Catch::Contains("constant arithmetic overflows int64"));
  }
}

TEST_CASE("the builder reports an overflowing expression text as the loader does",
          "[constant_overflow][builder]") {
  for (const Overflowing& f : kForms) {
    INFO(f.text);
    ValueRef x;
    {
      ProgramBuilder b = builder_with_x(x);
      b.constant(DType::F32, {f.text}, Scalar::of_int(0), "r");
      const Error built = build_error(b);
      const Error loaded = load_error(program_with(
          R"({"op": "constant", "out": "r", "dtype": "f32", "shape": [")" + std::string{f.text} +
          R"("], "value": 0})"));
      CHECK(built.code() == ErrorCode::Overflow);
      CHECK(built.message() == loaded.message());
      CHECK_THAT(built.message(),
                 Catch::StartsWith("op #1 (constant -> 'r'): attribute 'shape' element 0: " + named(f)));
    }
    {
      ProgramBuilder b = builder_with_x(x);
      b.reshape(x, {2, f.text}, "r");
      CHECK_THAT(build_error(b).message(),
                 Catch::StartsWith("op #1 (reshape -> 'r'): attribute 'shape' element 1: " + named(f)));
    }
    {
      ProgramBuilder b = builder_with_x(x);
      b.iota(DType::I64, {f.text}, 0, "r");
      CHECK_THAT(build_error(b).message(),
                 Catch::StartsWith("op #1 (iota -> 'r'): attribute 'shape' element 0: " + named(f)));
    }
    {
      ProgramBuilder b = builder_with_x(x);
      b.broadcast_in_dim(x, {"B", f.text}, {0}, "r");
      CHECK_THAT(build_error(b).message(),
                 Catch::StartsWith("op #1 (broadcast_in_dim -> 'r'): attribute 'shape' element 1: " +
                                   named(f)));
    }
    {
      ProgramBuilder b = builder_with_x(x);
      b.slice(x, {f.text}, {"B"}, {}, "r");
      CHECK_THAT(build_error(b).message(),
                 Catch::StartsWith("op #1 (slice -> 'r'): attribute 'start_indices' element 0: " +
                                   named(f)));
    }
    {
      ProgramBuilder b = builder_with_x(x);
      b.input("y", DType::U8, {"B", f.text});
      const Error built = build_error(b);
      const Error loaded = load_error(
          program_with("{\"op\": \"abs\", \"in\": [\"x\"], \"out\": \"r\"}",
                       R"(, {"name": "y", "dtype": "u8", "shape": ["B", ")" + std::string{f.text} +
                           "\"]}"));
      CHECK(built.message() == loaded.message());
    }
    {
      ProgramBuilder b = builder_with_x(x);
      b.guard("B <= " + std::string{f.text});
      const Error e = build_error(b);
      CHECK(e.code() == ErrorCode::Overflow);
      CHECK_THAT(e.message(), Catch::StartsWith("guard 'B <= " + std::string{f.text} + "'"));
      CHECK_THAT(e.message(), Catch::Contains("constant arithmetic overflows int64"));
    }
  }
}

TEST_CASE("expressions built with the DimExpr operators are checked when the program is built",
          "[constant_overflow][builder]") {
  const DimExpr overflowing = DimExpr::constant(kInt64Max) + DimExpr::constant(1);
  const std::string named =
      "dimension expression '1 + 9223372036854775807': constant arithmetic overflows int64";
  ValueRef x;
  {
    ProgramBuilder b = builder_with_x(x);
    // (max + 1) * 0 folds to nothing in exact arithmetic: the overflow stays.
    b.constant(DType::F32, {overflowing * DimExpr::constant(0)}, Scalar::of_int(0), "r");
    const Error e = build_error(b);
    CHECK(e.code() == ErrorCode::Overflow);
    CHECK(e.message() == "op #1 (constant -> 'r') attribute shape: dimension expression "
                         "'(1 + 9223372036854775807)*0': constant arithmetic overflows int64 in "
                         "'1 + 9223372036854775807'");
  }
  {
    ProgramBuilder b = builder_with_x(x);
    b.input("y", DType::F32, {DimExpr::symbol("B") * DimExpr::constant(kInt64Max) * DimExpr::constant(2)});
    const Error e = build_error(b);
    CHECK(e.code() == ErrorCode::Overflow);
    CHECK_THAT(e.message(), Catch::StartsWith("input #1 'y' axis 0: dimension expression "));
    CHECK_THAT(e.message(), Catch::Contains("constant arithmetic overflows int64"));
  }
  {
    ProgramBuilder b = builder_with_x(x);
    auto pv = b.constant(DType::F32, {}, Scalar::of_int(0), "pv");
    PadAttrs pad;
    pad.edge_padding_low = {DimExpr::constant(0)};
    pad.edge_padding_high = {DimExpr::min(overflowing, DimExpr::constant(3))};
    pad.interior_padding = {DimExpr::constant(0)};
    b.op(OpKind::Pad, {x, pv}, pad, "r");
    const Error e = build_error(b);
    CHECK(e.code() == ErrorCode::Overflow);
    CHECK_THAT(e.message(), Catch::StartsWith("op #2 (pad -> 'r') attribute edge_padding_high: "));
    CHECK_THAT(e.message(), Catch::EndsWith("overflows int64 in '1 + 9223372036854775807'"));
  }
  {
    ProgramBuilder b = builder_with_x(x);
    b.slice(x, {0}, {DimExpr::constant(4611686018427387904) * DimExpr::constant(2)}, {}, "r");
    const Error e = build_error(b);
    CHECK(e.code() == ErrorCode::Overflow);
    CHECK(e.message() == "op #1 (slice -> 'r') attribute limit_indices: dimension expression "
                         "'2*4611686018427387904': constant arithmetic overflows int64");
  }
}

TEST_CASE("a result extent whose inferred constants overflow is an error at load naming the op",
          "[constant_overflow][program_json]") {
  // 0 + 9223372036854775807 + 9223372036854775807: pad's result extent.
  Error e = load_error(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [0]}],
    "ops": [{"op": "constant", "out": "pv", "dtype": "f32", "shape": [], "value": 0},
            {"op": "pad", "in": ["x", "pv"], "out": "y", "edge_padding_low": [9223372036854775807],
             "edge_padding_high": [9223372036854775807]}],
    "outputs": ["y"]})");
  CHECK(e.code() == ErrorCode::Overflow);
  CHECK(e.message() == "op #1 (pad -> 'y') result 'y' axis 0: dimension expression "
                       "'9223372036854775807 + 9223372036854775807': constant arithmetic "
                       "overflows int64");
  // (B + 2^62) + (B + 2^62) = 2*B + 2^63: concatenate's result extent, for every B.
  e = load_error(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "u8", "shape": ["B"]},
               {"name": "y", "dtype": "u8", "shape": ["B + 4611686018427387904"]}],
    "ops": [{"op": "concatenate", "in": ["y", "y"], "out": "z", "dimension": 0}],
    "outputs": ["z"]})");
  CHECK(e.code() == ErrorCode::Overflow);
  CHECK_THAT(e.message(), Catch::StartsWith("op #0 (concatenate -> 'z') result 'z' axis 0: "));
  CHECK_THAT(e.message(), Catch::Contains("constant arithmetic overflows int64"));
}

TEST_CASE("a constant shape whose element count overflows is an error at load naming the op",
          "[constant_overflow][program_json][builder]") {
  const Error loaded = load_error(program_with(
      R"({"op": "constant", "out": "r", "dtype": "u8", "shape": [4294967296, 4294967296, 4294967296], "value": 0})"));
  CHECK((loaded.code() == ErrorCode::Overflow || loaded.code() == ErrorCode::LimitExceeded));
  CHECK_THAT(loaded.message(), Catch::StartsWith("op #1 (constant -> 'r') result 'r'"));
  ValueRef x;
  ProgramBuilder b = builder_with_x(x);
  b.constant(DType::U8, {int64_t{4294967296}, int64_t{4294967296}, int64_t{4294967296}},
             Scalar::of_int(0), "r");
  CHECK(build_error(b).message() == loaded.message());
}

TEST_CASE("an expression that overflows only for some values of its symbols loads",
          "[constant_overflow][program_json]") {
  for (const char* text : {"9223372036854775807 + B", "B*4611686018427387904",
                           "(B - 2)*(9223372036854775807*B)"}) {
    INFO(text);
    const std::string doc = program_with(R"({"op": "constant", "out": "r", "dtype": "u8", "shape": [")" +
                                         std::string{text} + R"("], "value": 0})");
    auto p = load_program(doc);
    INFO((p.ok() ? std::string("ok") : p.error().to_string()));
    CHECK(p.ok());
  }
}
