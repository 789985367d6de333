// The C++ builder is a second door to the same program as a JSON document.
#include <catch2/catch.hpp>

#include "core/builder.hpp"
#include "core/program_json.hpp"

using namespace tenact;

namespace {
const char* kMlpJson = R"({
  "format": "tenact.program/1",
  "name": "mlp",
  "inputs": [
    {"name": "x",  "dtype": "f32", "shape": ["B", 784]},
    {"name": "w1", "dtype": "f32", "shape": [784, 128]},
    {"name": "b1", "dtype": "f32", "shape": [128]}
  ],
  "guards": ["B <= 65536"],
  "ops": [
    {"op": "dot_general", "in": ["x", "w1"], "out": "h",
     "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
    {"op": "broadcast_in_dim", "in": ["b1"], "out": "bb",
     "shape": ["B", 128], "broadcast_dimensions": [1]},
    {"op": "add", "in": ["h", "bb"], "out": "z"},
    {"op": "constant", "out": "zero", "dtype": "f32", "shape": ["B", 128], "value": 0},
    {"op": "maximum", "in": ["z", "zero"], "out": "y"}
  ],
  "outputs": ["y"]
})";

ProgramBuilder mlp_builder(bool named_intermediates) {
  ProgramBuilder b{"mlp"};
  auto x = b.input("x", DType::F32, {"B", 784});
  auto w1 = b.input("w1", DType::F32, {784, 128});
  auto b1 = b.input("b1", DType::F32, {128});
  b.guard("B <= 65536");
  DotGeneralAttrs dims;
  dims.lhs_contracting_dimensions = {1};
  dims.rhs_contracting_dimensions = {0};
  auto n = [&](const char* s) { return named_intermediates ? std::string{s} : std::string{}; };
  auto h = b.dot_general(x, w1, dims, n("h"));
  auto bb = b.broadcast_in_dim(b1, {"B", 128}, {1}, n("bb"));
  auto z = b.binary(OpKind::Add, h, bb, n("z"));
  auto zero = b.constant(DType::F32, {"B", 128}, Scalar::of_int(0), n("zero"));
  auto y = b.binary(OpKind::Maximum, z, zero, "y");
  b.output(y);
  return b;
}
}  // namespace

TEST_CASE("the builder and the JSON loader produce equal programs", "[builder]") {
  auto from_json = load_program(kMlpJson);
  auto built = mlp_builder(true).build();
  REQUIRE(from_json.ok());
  REQUIRE(built.ok());
  CHECK(*from_json == *built);
  CHECK(from_json->fingerprint() == built->fingerprint());
  CHECK(save_program_json(*from_json) == save_program_json(*built));
}

TEST_CASE("intermediate names do not change the program's identity", "[builder]") {
  auto named = mlp_builder(true).build();
  auto unnamed = mlp_builder(false).build();
  REQUIRE(named.ok());
  REQUIRE(unnamed.ok());
  CHECK(*named == *unnamed);
  CHECK(named->fingerprint() == unnamed->fingerprint());
}

TEST_CASE("builder mistakes surface from build() as the loader reports them", "[builder]") {
  SECTION("a malformed dimension expression") {
    ProgramBuilder b;
    b.input("x", DType::F32, {"B +", 3});
    auto r = b.build();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code() == ErrorCode::Parse);
    CHECK_THAT(r.error().message(), Catch::StartsWith("input #0 'x' shape element 0: "));
  }
  SECTION("a dtype mismatch names the op") {
    ProgramBuilder b;
    auto x = b.input("x", DType::F32, {4});
    auto k = b.input("k", DType::I32, {4});
    b.output(b.binary(OpKind::Add, x, k, "s"));
    auto r = b.build();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code() == ErrorCode::TypeMismatch);
    CHECK_THAT(r.error().message(), Catch::StartsWith("op #0 (add -> 's')"));
  }
  SECTION("an undefined value") {
    ProgramBuilder b;
    b.output(b.unary(OpKind::Negate, ValueRef{"ghost"}));
    auto r = b.build();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code() == ErrorCode::UndefinedName);
  }
  SECTION("a constant that does not fit its dtype") {
    ProgramBuilder b;
    b.output(b.constant(DType::U8, {}, Scalar::of_int(-1)));
    CHECK_FALSE(b.build().ok());
  }
}
