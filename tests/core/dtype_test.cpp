#include <catch2/catch.hpp>

#include "core/dtype.hpp"

using namespace tenact;

TEST_CASE("the fifteen element types have the format's names and sizes", "[dtype]") {
  // Hand-written from docs/program-format.md "Element types".
  struct Row { const char* name; size_t size; };
  const Row rows[] = {{"bool", 1}, {"i8", 1},  {"i16", 2},  {"i32", 4},  {"i64", 8},
                      {"u8", 1},   {"u16", 2}, {"u32", 4},  {"u64", 8},  {"f16", 2},
                      {"bf16", 2}, {"f32", 4}, {"f64", 8},  {"c64", 8},  {"c128", 16}};
  REQUIRE(std::size(rows) == static_cast<size_t>(kDTypeCount));
  for (const auto& r : rows) {
    auto t = parse_dtype(r.name);
    REQUIRE(t.has_value());
    CHECK(to_string(*t) == r.name);
    CHECK(size_of(*t) == r.size);
  }
  CHECK_FALSE(parse_dtype("float32").has_value());
  CHECK_FALSE(parse_dtype("F32").has_value());
  CHECK_FALSE(parse_dtype("").has_value());
}

TEST_CASE("dtype classes partition the element types", "[dtype]") {
  for (DType t : kAllDTypes) {
    int classes = is_bool(t) + is_integer(t) + is_float(t) + is_complex(t);
    CHECK(classes == 1);
  }
  CHECK(is_signed_integer(DType::I8));
  CHECK(is_unsigned_integer(DType::U64));
  CHECK(is_float(DType::BF16));
  CHECK(real_component(DType::C64) == DType::F32);
  CHECK(real_component(DType::C128) == DType::F64);
  CHECK(real_component(DType::I32) == DType::I32);
}
