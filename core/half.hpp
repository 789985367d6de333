// f16 (IEEE binary16) and bf16 (bfloat16) storage types.
//
// Contract: every conversion into f16/bf16 rounds to nearest, ties to even,
// in one step from the source value (no double rounding through f32): from
// float by bit manipulation, from double and 64-bit integers through an
// exact x87 long double. NaN stays NaN (quiet), overflow gives infinity.
// Arithmetic is done by the caller in f32 and rounded back, which for
// + - * / sqrt is correctly rounded for both types (24 >= 2p + 2).
#pragma once

#include <cstdint>
#include <cstring>

namespace tenact {

namespace half_detail {
inline uint32_t float_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

inline uint16_t float_to_f16_bits(float f) {
  uint32_t x = float_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u)  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  if (abs >= 0x477ff000u)  // >= 65520: rounds to inf
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (abs < 0x38800000u) {  // below 2^-14: f16 subnormal or zero
    // value = abs_float; f16 subnormal quantum is 2^-24.
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);  // < 2^-25 -> 0
    uint32_t exp = abs >> 23;
    uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - exp;  // 14 + (127 - exp) - 1 + ... : mant * 2^(exp-150) / 2^-24
    // result = mant * 2^(exp - 150 + 24) = mant >> (126 - exp)
    uint32_t r = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t r = abs - 0x38000000u;  // rebias exponent 127 -> 15 (in float layout)
  uint32_t rem = r & 0x1fffu;
  r >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return static_cast<uint16_t>(sign | r);
}

inline float f16_bits_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1fu) return bits_float(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return bits_float(sign);
    float v = static_cast<float>(mant) * 5.9604644775390625e-8f;  // 2^-24, exact
    return sign ? -v : v;
  }
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

inline uint16_t float_to_bf16_bits(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;  // ties to even; overflow carries into inf correctly
  return static_cast<uint16_t>(x >> 16);
}

inline float bf16_bits_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

/// Rounds an exactly held value to `mant_bits` significand bits (incl. the
/// implicit one) with minimum normal exponent `emin` (value 2^emin) and
/// returns it as float (exact: both target formats fit in f32).
float round_long_double(long double v, int mant_bits, int emin, float max_finite);
}  // namespace half_detail

struct f16 {
  uint16_t bits = 0;
  f16() = default;
  explicit f16(float v) : bits(half_detail::float_to_f16_bits(v)) {}
  explicit f16(double v);
  explicit f16(int64_t v);
  explicit f16(uint64_t v);
  static f16 from_bits(uint16_t b) { f16 h; h.bits = b; return h; }
  explicit operator float() const { return half_detail::f16_bits_to_float(bits); }
  float to_float() const { return half_detail::f16_bits_to_float(bits); }
};

struct bf16 {
  uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float v) : bits(half_detail::float_to_bf16_bits(v)) {}
  explicit bf16(double v);
  explicit bf16(int64_t v);
  explicit bf16(uint64_t v);
  static bf16 from_bits(uint16_t b) { bf16 h; h.bits = b; return h; }
  explicit operator float() const { return half_detail::bf16_bits_to_float(bits); }
  float to_float() const { return half_detail::bf16_bits_to_float(bits); }
};

static_assert(sizeof(f16) == 2 && sizeof(bf16) == 2);

}  // namespace tenact
