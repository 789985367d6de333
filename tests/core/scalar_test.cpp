// Scalar literals: range checks, conversion into every dtype, loading back,
// text form and structural equality. Expected bit patterns are derived by
// hand (IEEE layouts) and noted beside each.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/scalar.hpp"

using namespace tenact;

namespace {

template <class T>
T stored(const Scalar& s, DType t) {
  REQUIRE(size_of(t) == sizeof(T));
  T v{};
  s.store(t, &v);
  return v;
}

template <class T>
uint64_t bits_of(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof v);
  return b;
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("check_fits accepts integers within each integer type's range", "[scalar]") {
  struct Case { DType t; int64_t lo; int64_t hi; };
  const Case cases[] = {{DType::I8, -128, 127},
                        {DType::I16, -32768, 32767},
                        {DType::I32, -2147483648LL, 2147483647LL},
                        {DType::U8, 0, 255},
                        {DType::U16, 0, 65535},
                        {DType::U32, 0, 4294967295LL}};
  for (const auto& c : cases) {
    INFO(to_string(c.t));
    CHECK(Scalar::of_int(c.lo).check_fits(c.t).ok());
    CHECK(Scalar::of_int(c.hi).check_fits(c.t).ok());
    auto below = Scalar::of_int(c.lo - 1).check_fits(c.t);
    auto above = Scalar::of_int(c.hi + 1).check_fits(c.t);
    REQUIRE_FALSE(below.ok());
    REQUIRE_FALSE(above.ok());
    CHECK(above.error().code() == ErrorCode::InvalidAttribute);
  }
  CHECK(Scalar::of_int(INT64_MIN).check_fits(DType::I64).ok());
  CHECK(Scalar::of_int(INT64_MAX).check_fits(DType::I64).ok());
  CHECK_FALSE(Scalar::of_uint(uint64_t{1} << 63).check_fits(DType::I64).ok());
  CHECK(Scalar::of_uint(UINT64_MAX).check_fits(DType::U64).ok());
  CHECK(Scalar::of_uint(200).check_fits(DType::U8).ok());
  CHECK_FALSE(Scalar::of_int(-1).check_fits(DType::U64).ok());
}

TEST_CASE("check_fits rejects 300 for u8 naming the value and the dtype", "[scalar]") {
  auto st = Scalar::of_int(300).check_fits(DType::U8);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.error().message(), Catch::Contains("300") && Catch::Contains("u8"));
}

TEST_CASE("check_fits takes float literals for integers only when integral and in range",
          "[scalar]") {
  auto frac = Scalar::of_float(2.5).check_fits(DType::I32);
  REQUIRE_FALSE(frac.ok());
  CHECK_THAT(frac.error().message(), Catch::Contains("2.5") && Catch::Contains("i32"));
  CHECK(Scalar::of_float(3.0).check_fits(DType::I32).ok());
  CHECK(Scalar::of_float(-0.0).check_fits(DType::U8).ok());
  CHECK(Scalar::of_float(255.0).check_fits(DType::U8).ok());
  CHECK_FALSE(Scalar::of_float(256.0).check_fits(DType::U8).ok());
  CHECK_FALSE(Scalar::of_float(-1.0).check_fits(DType::U8).ok());
  CHECK_FALSE(Scalar::of_float(kNaN).check_fits(DType::I32).ok());
  CHECK_FALSE(Scalar::of_float(kInf).check_fits(DType::I64).ok());
  CHECK_FALSE(Scalar::of_float(-kInf).check_fits(DType::I8).ok());
  // i64 takes [-2^63, 2^63); u64 takes [0, 2^64)
  CHECK(Scalar::of_float(-9223372036854775808.0).check_fits(DType::I64).ok());
  CHECK_FALSE(Scalar::of_float(9223372036854775808.0).check_fits(DType::I64).ok());
  CHECK(Scalar::of_float(18446744073709549568.0).check_fits(DType::U64).ok());  // 2^64 - 2048
  CHECK_FALSE(Scalar::of_float(18446744073709551616.0).check_fits(DType::U64).ok());
  CHECK_FALSE(Scalar::of_float(1e-300).check_fits(DType::I64).ok());
}

TEST_CASE("check_fits keeps bools for bool and pairs for complex", "[scalar]") {
  CHECK(Scalar::of_bool(true).check_fits(DType::Bool).ok());
  for (DType t : kAllDTypes) {
    if (t == DType::Bool) continue;
    INFO(to_string(t));
    auto st = Scalar::of_bool(true).check_fits(t);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().code() == ErrorCode::TypeMismatch);
  }
  CHECK_FALSE(Scalar::of_int(1).check_fits(DType::Bool).ok());
  CHECK_FALSE(Scalar::of_float(0.0).check_fits(DType::Bool).ok());
  CHECK_FALSE(Scalar::of_complex(1, 0).check_fits(DType::Bool).ok());

  CHECK(Scalar::of_complex(1, 2).check_fits(DType::C64).ok());
  CHECK(Scalar::of_complex(1, 2).check_fits(DType::C128).ok());
  auto pair_for_real = Scalar::of_complex(1, 2).check_fits(DType::F32);
  REQUIRE_FALSE(pair_for_real.ok());
  CHECK(pair_for_real.error().code() == ErrorCode::TypeMismatch);
  CHECK_FALSE(Scalar::of_complex(1, 0).check_fits(DType::I32).ok());
  CHECK(Scalar::of_float(2.5).check_fits(DType::C64).ok());
  CHECK(Scalar::of_int(-7).check_fits(DType::C128).ok());
}

TEST_CASE("check_fits takes any real for float types, rounding and overflowing later",
          "[scalar]") {
  for (DType t : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    INFO(to_string(t));
    CHECK(Scalar::of_float(1e300).check_fits(t).ok());
    CHECK(Scalar::of_float(kNaN).check_fits(t).ok());
    CHECK(Scalar::of_float(-kInf).check_fits(t).ok());
    CHECK(Scalar::of_int(INT64_MIN).check_fits(t).ok());
    CHECK(Scalar::of_uint(UINT64_MAX).check_fits(t).ok());
  }
}

TEST_CASE("store converts integers into every integer type", "[scalar]") {
  CHECK(stored<int8_t>(Scalar::of_int(-128), DType::I8) == -128);
  CHECK(stored<int16_t>(Scalar::of_int(-2), DType::I16) == -2);
  CHECK(stored<int32_t>(Scalar::of_int(123456789), DType::I32) == 123456789);
  CHECK(stored<int64_t>(Scalar::of_int(INT64_MIN), DType::I64) == INT64_MIN);
  CHECK(stored<uint8_t>(Scalar::of_int(255), DType::U8) == 255);
  CHECK(stored<uint16_t>(Scalar::of_int(65535), DType::U16) == 65535);
  CHECK(stored<uint32_t>(Scalar::of_int(4294967295LL), DType::U32) == 4294967295u);
  CHECK(stored<uint64_t>(Scalar::of_uint(UINT64_MAX), DType::U64) == UINT64_MAX);
  CHECK(stored<int32_t>(Scalar::of_float(3.0), DType::I32) == 3);
  CHECK(stored<int64_t>(Scalar::of_float(-9223372036854775808.0), DType::I64) == INT64_MIN);
  CHECK(stored<uint64_t>(Scalar::of_float(18446744073709549568.0), DType::U64) ==
        18446744073709549568ull);
  CHECK(stored<uint8_t>(Scalar::of_float(-0.0), DType::U8) == 0);
  CHECK(stored<uint8_t>(Scalar::of_bool(true), DType::Bool) == 1);
  CHECK(stored<uint8_t>(Scalar::of_bool(false), DType::Bool) == 0);
}

TEST_CASE("store rounds once into f32 and f64", "[scalar]") {
  CHECK(bits_of(stored<float>(Scalar::of_float(0.1), DType::F32)) == 0x3dcccccd);
  // 2^24 + 1 ties to even (2^24); 2^24 + 3 ties up to 2^24 + 4
  CHECK(stored<float>(Scalar::of_int(16777217), DType::F32) == 16777216.0f);
  CHECK(stored<float>(Scalar::of_int(16777219), DType::F32) == 16777220.0f);
  CHECK(bits_of(stored<float>(Scalar::of_uint(UINT64_MAX), DType::F32)) == 0x5f800000);  // 2^64
  // 1 + 2^-24 is the f32 midpoint above 1: ties to even (down); 1 + 2^-24 + 2^-50
  // is just above it: rounds up
  CHECK(bits_of(stored<float>(Scalar::of_float(1.0 + 0x1p-24), DType::F32)) == 0x3f800000);
  CHECK(bits_of(stored<float>(Scalar::of_float(1.0 + 0x1p-24 + 0x1p-50), DType::F32)) ==
        0x3f800001);
  CHECK(stored<double>(Scalar::of_int((int64_t{1} << 53) + 1), DType::F64) == 0x1p53);
  CHECK(std::isnan(stored<float>(Scalar::of_float(kNaN), DType::F32)));
  CHECK(bits_of(stored<float>(Scalar::of_float(-0.0), DType::F32)) == 0x80000000);
  CHECK(stored<float>(Scalar::of_float(1e300), DType::F32) == std::numeric_limits<float>::infinity());
}

TEST_CASE("store rounds once into f16 and bf16", "[scalar]") {
  CHECK(stored<uint16_t>(Scalar::of_float(1.0 / 3.0), DType::F16) == 0x3555);
  CHECK(stored<uint16_t>(Scalar::of_int(2049), DType::F16) == 0x6800);  // tie -> 2048
  CHECK(stored<uint16_t>(Scalar::of_int(2051), DType::F16) == 0x6802);  // tie -> 2052
  CHECK(stored<uint16_t>(Scalar::of_float(65519.0), DType::F16) == 0x7bff);
  CHECK(stored<uint16_t>(Scalar::of_float(65520.0), DType::F16) == 0x7c00);
  CHECK(stored<uint16_t>(Scalar::of_float(-0.0), DType::F16) == 0x8000);
  // 1 + 2^-11 + 2^-40: through f32 it would tie and round to 1.0 (0x3c00)
  CHECK(stored<uint16_t>(Scalar::of_float(1.0 + 0x1p-11 + 0x1p-40), DType::F16) == 0x3c01);
  CHECK(stored<uint16_t>(Scalar::of_float(1.0), DType::BF16) == 0x3f80);
  CHECK(stored<uint16_t>(Scalar::of_float(-2.0), DType::BF16) == 0xc000);
  // 2^60 + 2^52 + 1: above the bf16 midpoint 2^60 + 2^52, so 2^60 + 2^53 (0x5d81);
  // through double it would become the midpoint and round to even (0x5d80)
  CHECK(stored<uint16_t>(Scalar::of_int((int64_t{1} << 60) + (int64_t{1} << 52) + 1),
                         DType::BF16) == 0x5d81);
  CHECK(stored<uint16_t>(Scalar::of_uint((uint64_t{1} << 63) + (uint64_t{1} << 55) + 1),
                         DType::BF16) == 0x5f01);
  CHECK(stored<uint16_t>(Scalar::of_uint(UINT64_MAX), DType::F16) == 0x7c00);
}

TEST_CASE("store writes complex pairs and reals into complex types", "[scalar]") {
  float c64[2];
  Scalar::of_complex(1.5, -2).store(DType::C64, c64);
  CHECK(c64[0] == 1.5f);
  CHECK(c64[1] == -2.0f);
  Scalar::of_int(3).store(DType::C64, c64);
  CHECK(c64[0] == 3.0f);
  CHECK(c64[1] == 0.0f);
  double c128[2];
  Scalar::of_complex(0.1, kInf).store(DType::C128, c128);
  CHECK(c128[0] == 0.1);
  CHECK(c128[1] == kInf);
  Scalar::of_float(-2.5).store(DType::C128, c128);
  CHECK(c128[0] == -2.5);
  CHECK(c128[1] == 0.0);
  Scalar::of_complex(0.1, 0.2).store(DType::C64, c64);
  CHECK(bits_of(c64[0]) == 0x3dcccccd);
  CHECK(bits_of(c64[1]) == 0x3e4ccccd);
}

TEST_CASE("load reads every dtype into the matching kind", "[scalar]") {
  const uint8_t b2 = 2;
  CHECK(Scalar::load(DType::Bool, &b2) == Scalar::of_bool(true));
  const uint8_t b0 = 0;
  CHECK(Scalar::load(DType::Bool, &b0) == Scalar::of_bool(false));
  const uint8_t x80 = 0x80;
  CHECK(Scalar::load(DType::I8, &x80) == Scalar::of_int(-128));
  CHECK(Scalar::load(DType::U8, &x80) == Scalar::of_uint(128));
  const int16_t i16 = -300;
  CHECK(Scalar::load(DType::I16, &i16) == Scalar::of_int(-300));
  const uint16_t u16 = 65535;
  CHECK(Scalar::load(DType::U16, &u16) == Scalar::of_uint(65535));
  const int32_t i32 = INT32_MIN;
  CHECK(Scalar::load(DType::I32, &i32) == Scalar::of_int(INT32_MIN));
  const uint32_t u32 = UINT32_MAX;
  CHECK(Scalar::load(DType::U32, &u32) == Scalar::of_uint(UINT32_MAX));
  const int64_t i64 = INT64_MIN;
  CHECK(Scalar::load(DType::I64, &i64) == Scalar::of_int(INT64_MIN));
  const uint64_t u64 = UINT64_MAX;
  CHECK(Scalar::load(DType::U64, &u64) == Scalar::of_uint(UINT64_MAX));
  const uint16_t f16_one = 0x3c00, bf16_m2 = 0xc000, f16_min_sub = 0x0001;
  CHECK(Scalar::load(DType::F16, &f16_one) == Scalar::of_float(1.0));
  CHECK(Scalar::load(DType::F16, &f16_min_sub) == Scalar::of_float(0x1p-24));
  CHECK(Scalar::load(DType::BF16, &bf16_m2) == Scalar::of_float(-2.0));
  const float f = 0.1f;
  CHECK(Scalar::load(DType::F32, &f) == Scalar::of_float(static_cast<double>(0.1f)));
  const double d = -0.0;
  CHECK(Scalar::load(DType::F64, &d) == Scalar::of_float(-0.0));
  const float c64[2] = {1.5f, -0.25f};
  CHECK(Scalar::load(DType::C64, c64) == Scalar::of_complex(1.5, -0.25));
  const double c128[2] = {0.1, 1e300};
  CHECK(Scalar::load(DType::C128, c128) == Scalar::of_complex(0.1, 1e300));
}

TEST_CASE("to_string prints the JSON-ish text of each kind", "[scalar]") {
  CHECK(Scalar::of_bool(true).to_string() == "true");
  CHECK(Scalar::of_bool(false).to_string() == "false");
  CHECK(Scalar::of_int(-3).to_string() == "-3");
  CHECK(Scalar::of_uint(UINT64_MAX).to_string() == "18446744073709551615");
  CHECK(Scalar::of_float(2.5).to_string() == "2.5");
  CHECK(Scalar::of_float(0.1).to_string() == "0.1");
  CHECK(Scalar::of_float(kNaN).to_string() == "nan");
  CHECK(Scalar::of_float(kInf).to_string() == "inf");
  CHECK(Scalar::of_float(-kInf).to_string() == "-inf");
  CHECK(Scalar::of_complex(1, 2).to_string() == "[1, 2]");
  CHECK(Scalar::of_complex(kNaN, -0.5).to_string() == "[nan, -0.5]");
}

TEST_CASE("operator== is structural: same kind and same bits, NaN equal to itself",
          "[scalar]") {
  CHECK(Scalar::of_float(kNaN) == Scalar::of_float(kNaN));
  CHECK_FALSE(Scalar::of_float(0.0) == Scalar::of_float(-0.0));
  CHECK_FALSE(Scalar::of_int(1) == Scalar::of_uint(1));
  CHECK_FALSE(Scalar::of_int(1) == Scalar::of_float(1.0));
  CHECK(Scalar::of_complex(1, kNaN) == Scalar::of_complex(1, kNaN));
  CHECK_FALSE(Scalar::of_complex(1, 2) == Scalar::of_complex(1, 3));
  CHECK(Scalar::of_bool(true) == Scalar::of_bool(true));
  CHECK_FALSE(Scalar::of_bool(true) == Scalar::of_bool(false));
}

TEST_CASE("store then load gives the literal back for values every type holds", "[scalar]") {
  for (DType t : kAllDTypes) {
    INFO(to_string(t));
    alignas(16) unsigned char buf[16] = {};
    if (t == DType::Bool) {
      Scalar::of_bool(true).store(t, buf);
      CHECK(Scalar::load(t, buf) == Scalar::of_bool(true));
    } else if (is_signed_integer(t)) {
      Scalar::of_int(-5).store(t, buf);
      CHECK(Scalar::load(t, buf) == Scalar::of_int(-5));
    } else if (is_unsigned_integer(t)) {
      Scalar::of_int(100).store(t, buf);
      CHECK(Scalar::load(t, buf) == Scalar::of_uint(100));
    } else if (is_float(t)) {
      Scalar::of_float(-1.75).store(t, buf);
      CHECK(Scalar::load(t, buf) == Scalar::of_float(-1.75));
    } else {
      Scalar::of_complex(0.5, -4).store(t, buf);
      CHECK(Scalar::load(t, buf) == Scalar::of_complex(0.5, -4));
    }
  }
}
