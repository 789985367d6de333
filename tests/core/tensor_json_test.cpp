// The JSON tensor form and the JSON glue under it (json_internal.hpp).
// Expected values are the literals in each document; expected texts are
// written by hand.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/json_internal.hpp"
#include "core/tensor_io.hpp"

using namespace tenact;
using json_io::Json;

namespace {

HostTensor parsed(const std::string& text) {
  auto t = parse_tensor_json(text);
  INFO(text);
  if (!t.ok()) INFO(t.error().to_string());
  REQUIRE(t.ok());
  return *t;
}

Error parse_error(const std::string& text) {
  auto t = parse_tensor_json(text);
  INFO(text);
  REQUIRE_FALSE(t.ok());
  return t.error();
}

// The dense bytes of `t` read as T (complex types as pairs of components).
template <class T>
std::vector<T> values(const HostTensor& t) {
  REQUIRE(size_of(t.dtype()) % sizeof(T) == 0);
  std::vector<T> out(static_cast<size_t>(t.element_count()) * (size_of(t.dtype()) / sizeof(T)));
  if (!out.empty()) std::memcpy(out.data(), t.data(), out.size() * sizeof(T));
  return out;
}

uint32_t f32_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

}  // namespace

TEST_CASE("parse_tensor_json reads dtype, shape and flat row-major data", "[tensor_json]") {
  HostTensor t = parsed(R"({"dtype": "f32", "shape": [2, 2], "data": [1, 2.5, -3, 4e2]})");
  CHECK(t.dtype() == DType::F32);
  CHECK(t.shape() == std::vector<int64_t>{2, 2});
  CHECK(t.is_contiguous());
  CHECK(values<float>(t) == std::vector<float>{1, 2.5f, -3, 400});

  // key order is free
  HostTensor u = parsed(R"({"data": [7], "shape": [], "dtype": "i64"})");
  CHECK(u.rank() == 0);
  CHECK(values<int64_t>(u) == std::vector<int64_t>{7});

  HostTensor e = parsed(R"({"dtype": "u8", "shape": [2, 0], "data": []})");
  CHECK(e.element_count() == 0);
}

TEST_CASE("parse_tensor_json reads every dtype's literal forms", "[tensor_json]") {
  CHECK(values<uint8_t>(parsed(R"({"dtype":"bool","shape":[3],"data":[true,false,true]})")) ==
        std::vector<uint8_t>{1, 0, 1});
  CHECK(values<int8_t>(parsed(R"({"dtype":"i8","shape":[2],"data":[-128,127]})")) ==
        std::vector<int8_t>{-128, 127});
  CHECK(values<int16_t>(parsed(R"({"dtype":"i16","shape":[1],"data":[-32768]})")) ==
        std::vector<int16_t>{-32768});
  CHECK(values<int32_t>(parsed(R"({"dtype":"i32","shape":[2],"data":[3.0,-7]})")) ==
        std::vector<int32_t>{3, -7});
  CHECK(values<int64_t>(parsed(
            R"({"dtype":"i64","shape":[2],"data":[-9223372036854775808,9223372036854775807]})")) ==
        std::vector<int64_t>{INT64_MIN, INT64_MAX});
  CHECK(values<uint16_t>(parsed(R"({"dtype":"u16","shape":[1],"data":[65535]})")) ==
        std::vector<uint16_t>{65535});
  CHECK(values<uint32_t>(parsed(R"({"dtype":"u32","shape":[1],"data":[4294967295]})")) ==
        std::vector<uint32_t>{4294967295u});
  CHECK(values<uint64_t>(parsed(R"({"dtype":"u64","shape":[1],"data":[18446744073709551615]})")) ==
        std::vector<uint64_t>{UINT64_MAX});
  // f16 1.5 = 0x3e00, bf16 1.5 = 0x3fc0, bf16 -inf = 0xff80
  CHECK(values<uint16_t>(parsed(R"({"dtype":"f16","shape":[2],"data":[1.5,65520]})")) ==
        std::vector<uint16_t>{0x3e00, 0x7c00});
  CHECK(values<uint16_t>(parsed(R"({"dtype":"bf16","shape":[2],"data":[1.5,"-inf"]})")) ==
        std::vector<uint16_t>{0x3fc0, 0xff80});
  auto f = values<float>(parsed(R"({"dtype":"f32","shape":[3],"data":["nan","inf",0.1]})"));
  CHECK(std::isnan(f[0]));
  CHECK(f[1] == std::numeric_limits<float>::infinity());
  CHECK(f32_bits(f[2]) == 0x3dcccccd);
  CHECK(values<double>(parsed(R"({"dtype":"f64","shape":[1],"data":[-0.0]})"))[0] == 0.0);
  CHECK(std::signbit(values<double>(parsed(R"({"dtype":"f64","shape":[1],"data":[-0.0]})"))[0]));
  CHECK(values<float>(parsed(R"({"dtype":"c64","shape":[2],"data":[[1,2],3]})")) ==
        std::vector<float>{1, 2, 3, 0});
  auto c = values<double>(parsed(R"({"dtype":"c128","shape":[1],"data":[["-inf",0.5]]})"));
  CHECK(c[0] == -std::numeric_limits<double>::infinity());
  CHECK(c[1] == 0.5);
}

TEST_CASE("parse_tensor_json reports missing, unknown and mistyped keys", "[tensor_json]") {
  auto missing = parse_error(R"({"dtype": "f32", "shape": [1]})");
  CHECK(missing.code() == ErrorCode::Schema);
  CHECK_THAT(missing.message(), Catch::Contains("\"data\""));
  CHECK_THAT(parse_error(R"({"shape": [1], "data": [1]})").message(),
             Catch::Contains("\"dtype\""));
  CHECK_THAT(parse_error(R"({"dtype": "f32", "data": [1]})").message(),
             Catch::Contains("\"shape\""));

  auto unknown = parse_error(R"({"dtype": "f32", "shape": [1], "data": [1], "order": "C"})");
  CHECK(unknown.code() == ErrorCode::Schema);
  CHECK_THAT(unknown.message(), Catch::Contains("\"order\""));

  CHECK(parse_error("[1, 2]").code() == ErrorCode::Schema);
  CHECK(parse_error("3").code() == ErrorCode::Schema);
  auto bad_dtype = parse_error(R"({"dtype": "f128", "shape": [1], "data": [1]})");
  CHECK(bad_dtype.code() == ErrorCode::Schema);
  CHECK_THAT(bad_dtype.message(), Catch::Contains("f128"));
  CHECK_THAT(parse_error(R"({"dtype": 32, "shape": [1], "data": [1]})").message(),
             Catch::Contains("an integer"));
  CHECK(parse_error(R"({"dtype": "f32", "shape": 2, "data": [1, 2]})").code() ==
        ErrorCode::Schema);
  CHECK(parse_error(R"({"dtype": "f32", "shape": [2.0], "data": [1, 2]})").code() ==
        ErrorCode::Schema);
  CHECK(parse_error(R"({"dtype": "f32", "shape": ["2"], "data": [1, 2]})").code() ==
        ErrorCode::Schema);
  auto neg = parse_error(R"({"dtype": "f32", "shape": [2, -1], "data": []})");
  CHECK(neg.code() == ErrorCode::ShapeMismatch);
  CHECK_THAT(neg.message(), Catch::Contains("-1"));
  CHECK(parse_error(R"({"dtype": "f32", "shape": [9223372036854775808], "data": []})").code() ==
        ErrorCode::Overflow);
}

TEST_CASE("parse_tensor_json requires exactly as many elements as the shape holds",
          "[tensor_json]") {
  auto few = parse_error(R"({"dtype": "f32", "shape": [2, 2], "data": [1, 2, 3]})");
  CHECK(few.code() == ErrorCode::ShapeMismatch);
  CHECK_THAT(few.message(), Catch::Contains("4 elements") && Catch::Contains("has 3"));
  CHECK(parse_error(R"({"dtype": "f32", "shape": [2], "data": [1, 2, 3]})").code() ==
        ErrorCode::ShapeMismatch);
  // the tensor form has no fill shorthand: a lone scalar is not a list
  CHECK(parse_error(R"({"dtype": "f32", "shape": [], "data": 1})").code() == ErrorCode::Schema);
  CHECK(parse_error(R"({"dtype": "f32", "shape": [1], "data": 1})").code() == ErrorCode::Schema);
  // nested lists are not the flat row-major form
  auto nested = parse_error(R"({"dtype": "f32", "shape": [2, 2], "data": [[1, 2], [3, 4]]})");
  CHECK(nested.code() == ErrorCode::ShapeMismatch);
  auto nested_flat = parse_error(R"({"dtype": "f32", "shape": [2], "data": [[1, 2], [3, 4]]})");
  CHECK(nested_flat.code() == ErrorCode::Schema);
  CHECK_THAT(nested_flat.message(), Catch::Contains("element 0"));
}

TEST_CASE("parse_tensor_json rejects a huge declared shape before allocating",
          "[tensor_json]") {
  const auto start = std::chrono::steady_clock::now();
  auto big = parse_error(R"({"dtype": "f32", "shape": [1000000, 1000000], "data": [1]})");
  CHECK(big.code() == ErrorCode::ShapeMismatch);
  auto over = parse_error(R"({"dtype": "f32", "shape": [4294967296, 4294967296], "data": []})");
  CHECK(over.code() == ErrorCode::Overflow);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
}

TEST_CASE("parse_tensor_json checks every element against the dtype", "[tensor_json]") {
  auto u8 = parse_error(R"({"dtype": "u8", "shape": [3], "data": [1, 2, 300]})");
  CHECK(u8.code() == ErrorCode::InvalidAttribute);
  CHECK_THAT(u8.message(), Catch::Contains("element 2") && Catch::Contains("300"));
  auto frac = parse_error(R"({"dtype": "i32", "shape": [1], "data": [2.5]})");
  CHECK_THAT(frac.message(), Catch::Contains("2.5"));
  CHECK_FALSE(parse_tensor_json(R"({"dtype": "i32", "shape": [1], "data": ["nan"]})").ok());
  CHECK_FALSE(parse_tensor_json(R"({"dtype": "i8", "shape": [1], "data": [-129]})").ok());
  CHECK_FALSE(parse_tensor_json(R"({"dtype": "u64", "shape": [1], "data": [-1]})").ok());
  CHECK_FALSE(
      parse_tensor_json(R"({"dtype": "u64", "shape": [1], "data": [18446744073709551616]})").ok());
  CHECK_FALSE(parse_tensor_json(R"({"dtype": "bool", "shape": [1], "data": [1]})").ok());
  CHECK_FALSE(parse_tensor_json(R"({"dtype": "f32", "shape": [1], "data": [true]})").ok());
  CHECK_FALSE(parse_tensor_json(R"({"dtype": "f32", "shape": [1], "data": [null]})").ok());
  CHECK_FALSE(parse_tensor_json(R"({"dtype": "f32", "shape": [1], "data": ["NaN"]})").ok());
  CHECK_FALSE(parse_tensor_json(R"({"dtype": "f32", "shape": [1], "data": [{}]})").ok());
  CHECK_FALSE(parse_tensor_json(R"({"dtype": "c64", "shape": [1], "data": [[1, 2, 3]]})").ok());
  CHECK_FALSE(parse_tensor_json(R"({"dtype": "c64", "shape": [1], "data": [[1, true]]})").ok());
}

TEST_CASE("parse_json reports syntax errors with their byte position", "[tensor_json]") {
  auto e = parse_error(R"({"dtype": "f32", "shape": [1], "data": [1,]})");
  CHECK(e.code() == ErrorCode::Parse);
  CHECK_THAT(e.message(), Catch::StartsWith("tensor: JSON syntax error at byte "));
  CHECK(parse_error("").code() == ErrorCode::Parse);
  CHECK(parse_error("{\"dtype\": \"f3").code() == ErrorCode::Parse);
  CHECK(parse_error("{} trailing").code() == ErrorCode::Parse);
  CHECK(parse_error("{\"dtype\": \"\xff\"}").code() == ErrorCode::Parse);  // invalid UTF-8
}

TEST_CASE("parse_json limits nesting on the raw text before parsing", "[tensor_json]") {
  const std::string deep(10000, '[');
  auto e = json_io::parse_json(deep, "tensor");
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().code() == ErrorCode::LimitExceeded);
  CHECK_THAT(e.error().message(), Catch::Contains("byte 64"));
  CHECK(parse_error(std::string(100000, '{')).code() == ErrorCode::LimitExceeded);

  const int limit = json_io::kMaxJsonDepth;
  std::string at_limit = std::string(limit, '[') + std::string(limit, ']');
  CHECK(json_io::parse_json(at_limit, "t").ok());
  std::string over = std::string(limit + 1, '[') + std::string(limit + 1, ']');
  CHECK(json_io::parse_json(over, "t").error().code() == ErrorCode::LimitExceeded);
  // brackets inside strings, escaped quotes included, do not count
  std::string in_string = "[\"\\\"" + std::string(200, '[') + "\"]";
  CHECK(json_io::parse_json(in_string, "t").ok());
}

TEST_CASE("scalar_from_json maps JSON values to scalar kinds", "[tensor_json]") {
  auto s = [](const char* text) {
    auto r = json_io::scalar_from_json(Json::parse(text), "here");
    REQUIRE(r.ok());
    return *r;
  };
  CHECK(s("3") == Scalar::of_int(3));
  CHECK(s("-3") == Scalar::of_int(-3));
  CHECK(s("9223372036854775807") == Scalar::of_int(INT64_MAX));
  CHECK(s("9223372036854775808") == Scalar::of_uint(uint64_t{1} << 63));
  CHECK(s("2.5") == Scalar::of_float(2.5));
  CHECK(s("1e3") == Scalar::of_float(1000.0));
  CHECK(s("true") == Scalar::of_bool(true));
  CHECK(s("\"nan\"") == Scalar::of_float(std::numeric_limits<double>::quiet_NaN()));
  CHECK(s("\"-inf\"") == Scalar::of_float(-std::numeric_limits<double>::infinity()));
  CHECK(s("[1, \"inf\"]") ==
        Scalar::of_complex(1, std::numeric_limits<double>::infinity()));

  auto obj = json_io::scalar_from_json(Json::parse("{}"), "constant value element 3");
  REQUIRE_FALSE(obj.ok());
  CHECK(obj.error().code() == ErrorCode::Schema);
  CHECK_THAT(obj.error().message(),
             Catch::StartsWith("constant value element 3") && Catch::Contains("an object"));
  CHECK_FALSE(json_io::scalar_from_json(Json::parse("\"x\""), "w").ok());
  CHECK_FALSE(json_io::scalar_from_json(Json::parse("null"), "w").ok());
  CHECK_FALSE(json_io::scalar_from_json(Json::parse("[1]"), "w").ok());
  CHECK_FALSE(json_io::scalar_from_json(Json::parse("[[1], 2]"), "w").ok());
}

TEST_CASE("json_type_name names each JSON type", "[tensor_json]") {
  CHECK(json_io::json_type_name(Json::parse("null")) == "null");
  CHECK(json_io::json_type_name(Json::parse("true")) == "a bool");
  CHECK(json_io::json_type_name(Json::parse("-1")) == "an integer");
  CHECK(json_io::json_type_name(Json::parse("1")) == "an integer");
  CHECK(json_io::json_type_name(Json::parse("1.5")) == "a number");
  CHECK(json_io::json_type_name(Json::parse("\"s\"")) == "a string");
  CHECK(json_io::json_type_name(Json::parse("[]")) == "an array");
  CHECK(json_io::json_type_name(Json::parse("{}")) == "an object");
}

TEST_CASE("tensor_to_json writes the documented form with exact floats", "[tensor_json]") {
  auto t = HostTensor::zeros(DType::F32, {2, 2});
  REQUIRE(t.ok());
  const float vals[4] = {1.5f, -0.0f, 0.1f, std::numeric_limits<float>::quiet_NaN()};
  std::memcpy(t->data(), vals, sizeof vals);
  // 0.1f is exactly 0.100000001490116119384765625; the shortest double text is
  // 0.10000000149011612
  CHECK(tensor_to_json(*t) ==
        R"({"dtype": "f32", "shape": [2, 2], "data": [1.5,-0.0,0.10000000149011612,"nan"]})");

  auto c = HostTensor::zeros(DType::C64, {1});
  const float cv[2] = {2.0f, -std::numeric_limits<float>::infinity()};
  std::memcpy(c->data(), cv, sizeof cv);
  CHECK(tensor_to_json(*c) == R"({"dtype": "c64", "shape": [1], "data": [[2.0,"-inf"]]})");

  auto u = HostTensor::zeros(DType::U64, {});
  const uint64_t big = UINT64_MAX;
  std::memcpy(u->data(), &big, 8);
  CHECK(tensor_to_json(*u) == R"({"dtype": "u64", "shape": [], "data": [18446744073709551615]})");

  auto b = HostTensor::zeros(DType::Bool, {2});
  b->data_as<uint8_t>()[1] = 1;
  CHECK(tensor_to_json(*b) == R"({"dtype": "bool", "shape": [2], "data": [false,true]})");

  auto h = HostTensor::zeros(DType::BF16, {2});
  const uint16_t hb[2] = {0x3fc0, 0x0001};  // 1.5 and the smallest subnormal 2^-133
  std::memcpy(h->data(), hb, sizeof hb);
  CHECK(tensor_to_json(*h) == R"({"dtype": "bf16", "shape": [2], "data": [1.5,9.183549615799121e-41]})");
}

TEST_CASE("tensor_to_json writes views in logical row-major order", "[tensor_json]") {
  auto t = HostTensor::zeros(DType::I32, {2, 3});
  const int32_t vals[6] = {0, 1, 2, 3, 4, 5};
  std::memcpy(t->data(), vals, sizeof vals);
  const std::vector<int64_t> perm{1, 0};
  CHECK(tensor_to_json(t->transposed(perm)) ==
        R"({"dtype": "i32", "shape": [3, 2], "data": [0,3,1,4,2,5]})");
}

TEST_CASE("tensor_to_json output parses back to the same bits for every dtype",
          "[tensor_json]") {
  // bytes chosen so that every type sees negative, fractional, subnormal,
  // extreme and special values (NaN is compared by kind: its payload is not kept)
  const uint8_t pattern[] = {0x00, 0x80, 0x01, 0x7f, 0xff, 0x3c, 0xc0, 0x00, 0x7f, 0x80,
                             0x00, 0x00, 0x01, 0x00, 0x00, 0x80, 0x55, 0x33, 0x10, 0xfe,
                             0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x0f, 0x3f,
                             0x00, 0x00};
  for (DType t : kAllDTypes) {
    INFO(to_string(t));
    const size_t elem = size_of(t);
    const int64_t n = static_cast<int64_t>(sizeof pattern / elem);
    auto src = HostTensor::zeros(t, {n});
    REQUIRE(src.ok());
    std::memcpy(src->data(), pattern, static_cast<size_t>(n) * elem);
    if (t == DType::Bool)
      for (int64_t k = 0; k < n; ++k) src->data_as<uint8_t>()[k] &= 1;
    // replace NaNs by a canonical NaN so the comparison can be bitwise
    for (int64_t k = 0; k < n; ++k) {
      auto* p = src->data() + k * static_cast<int64_t>(elem);
      Scalar s = Scalar::load(t, p);
      if ((s.kind == Scalar::Kind::Float || s.kind == Scalar::Kind::Complex) &&
          (std::isnan(s.re) || std::isnan(s.im)))
        std::memset(p, 0, elem);
    }
    const std::string text = tensor_to_json(*src);
    auto back = parse_tensor_json(text);
    INFO(text);
    REQUIRE(back.ok());
    CHECK(back->bitwise_equal(*src));
  }
}
