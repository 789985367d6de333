// Branch-free f32 exp, log, tanh and logistic that GCC auto-vectorizes
// (SSE2 baseline, no -ffast-math): every special case is a select, integer
// work is 32-bit lanes, and no libm call is left in the loop body. g++ 12
// keeps std::exp/std::tanh scalar without -ffast-math; these are what the
// elementwise tile loops call on f32 (and, through f32, on f16/bf16). The
// f32 loops are also compiled for AVX2 and AVX-512F and picked at run time
// (elementwise_tiles_vmath.hpp); a change here must keep to operations that
// round the same at every vector width (no libm call, no FMA).
//
// Contract: pure functions, NaN in gives NaN out (the input NaN itself),
// no FMA contraction is assumed (ISO mode, -ffp-contract=off): the same
// input gives the same bits in a vectorized body and in a scalar tail.
// Accuracy, as the largest error against a float64 reference over every
// 97th f32 bit pattern (44M points), and as the ulp distance from the
// correctly rounded result that tests/engines/cpu/elementwise_test.cpp
// "[vector_math]" asserts (every 251st pattern plus a dense sweep):
//   exp_f32        0.96 ulp   -> distance <= 1
//   log_f32        0.78 ulp   -> distance <= 1
//   tanh_f32       1.31 ulps  -> distance <= 2
//   logistic_f32   2.28 ulps  -> distance <= 3
//   erf_f32        1.44 ulps  -> distance <= 1   (every f32 of |x| <= 4.5,
//                  exhaustively; beyond, ±1 exactly; tests/extensions/
//                  erf_test.cpp asserts it over every 97th pattern plus a
//                  dense sweep of [-6, 6])
// all within the 4 ulps docs/program-format.md allows for transcendental ops.
// Ranges: Cody–Waite reduction x = n·ln2 + r, |r| <= ln2/2 (+ slop), and
// the Cephes single-precision polynomials (Moshier), whose coefficients are
// minimax fits on exactly these reduced ranges.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace tenact::cpu::vmath {

inline constexpr float kInf = std::numeric_limits<float>::infinity();

/// c ? a : b through integer masks. g++ keeps a float `?:` as control flow
/// under the default -ftrapping-math and then refuses to vectorize the
/// loop; the mask form if-converts to and/andnot/or on SSE2.
inline float select(bool c, float a, float b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return std::bit_cast<float>((std::bit_cast<uint32_t>(a) & m) |
                              (std::bit_cast<uint32_t>(b) & ~m));
}
inline int32_t select(bool c, int32_t a, int32_t b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return static_cast<int32_t>((static_cast<uint32_t>(a) & m) | (static_cast<uint32_t>(b) & ~m));
}

inline float abs_bits(float x) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(x) & 0x7fffffffu);
}
/// |magnitude| with the sign of `sign`.
inline float copy_sign_bits(float magnitude, float sign) {
  return std::bit_cast<float>((std::bit_cast<uint32_t>(magnitude) & 0x7fffffffu) |
                              (std::bit_cast<uint32_t>(sign) & 0x80000000u));
}

/// e^x = e^r · 2^n for x in [-104, 88.8]: the polynomial value e^r in
/// [0.7, 1.42] and n in [-151, 128]. Shared by the two scalings below.
struct ExpReduced {
  float mantissa;
  int32_t n;
};
inline ExpReduced exp_reduce(float x) {
  // n = round(x / ln2) by the 1.5·2^23 trick (exact for |n| < 2^22); the
  // integer n comes from the same bits, so n and ni always agree.
  const float shifted = x * 1.44269504088896341f + 12582912.0f;
  const float n = shifted - 12582912.0f;
  const int32_t ni = std::bit_cast<int32_t>(shifted) - 0x4B400000;
  // r = x - n·ln2 with ln2 split so that n·kLn2Hi is exact (|n| <= 151).
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  const float r2 = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = p * r2 + r;
  y = y + 1.0f;
  return {y, ni};
}

/// e^x for x already clamped to [-104, 88.8] (never NaN). Results below
/// 2^-126 are rounded once into the subnormal range (two-step scaling).
inline float exp_clamped(float x) {
  const ExpReduced e = exp_reduce(x);
  // 2^n as two normal factors (n in [-151, 128]), so a subnormal result is
  // rounded once, by the last multiplication.
  const int32_t n1 = e.n >> 1;
  const int32_t n2 = e.n - n1;
  const float s1 = std::bit_cast<float>(static_cast<uint32_t>(n1 + 127) << 23);
  const float s2 = std::bit_cast<float>(static_cast<uint32_t>(n2 + 127) << 23);
  return (e.mantissa * s1) * s2;
}

/// e^x for x in [0, 20] (tanh's range): n is in [0, 29] and the result a
/// normal number, so scaling by 2^n is exact in one multiplication and gives
/// exp_clamped's bits (checked over all 2^32 tanh inputs) with 5 fewer
/// operations.
inline float exp_tanh_range(float x) {
  const ExpReduced e = exp_reduce(x);
  return e.mantissa * std::bit_cast<float>(static_cast<uint32_t>(e.n + 127) << 23);
}

/// e^x: +inf above ln(FLT_MAX), +0 below ln(2^-150), NaN stays NaN.
inline float exp_f32(float x) {
  float c = select(x < 88.8f, x, 88.8f);  // NaN -> 88.8, fixed below
  c = select(c > -104.0f, c, -104.0f);
  const float r = exp_clamped(c);
  return select(x != x, x, r);
}

/// Natural logarithm: -inf at ±0, NaN below 0, +inf at +inf; subnormal
/// inputs are normalized first.
inline float log_f32(float x) {
  const bool subnormal = x < 1.17549435e-38f;  // also 0 and negatives: fixed below
  const float xs = select(subnormal, x * 8388608.0f, x);  // 2^23
  const int32_t bits = std::bit_cast<int32_t>(xs);
  int32_t e = ((bits >> 23) & 0xff) - select(subnormal, 150, 127);
  float m = std::bit_cast<float>((bits & 0x007fffff) | 0x3f800000);  // [1, 2)
  const bool high = m > 1.41421356f;
  m = select(high, m * 0.5f, m);  // [sqrt(1/2), sqrt(2)]
  e = e + select(high, 1, 0);
  const float f = m - 1.0f;  // exact (Sterbenz)
  const float ef = static_cast<float>(e);
  const float z = f * f;
  float p = 7.0376836292e-2f;
  p = p * f - 1.1514610310e-1f;
  p = p * f + 1.1676998740e-1f;
  p = p * f - 1.2420140846e-1f;
  p = p * f + 1.4249322787e-1f;
  p = p * f - 1.6668057665e-1f;
  p = p * f + 2.0000714765e-1f;
  p = p * f - 2.4999993993e-1f;
  p = p * f + 3.3333331174e-1f;
  float y = p * f * z;
  y = y + -2.12194440e-4f * ef;
  y = y + -0.5f * z;
  float r = f + y;
  r = r + 0.693359375f * ef;
  r = select(x == kInf, kInf, r);
  r = select(x == 0.0f, -kInf, r);
  r = select(x < 0.0f, std::numeric_limits<float>::quiet_NaN(), r);
  return select(x != x, x, r);
}

/// Hyperbolic tangent: odd polynomial below 0.625, 1 - 2/(e^{2|x|}+1)
/// above; ±1 from |x| >= 10 on (tanh(10) rounds to 1); tanh(-0) = -0.
inline float tanh_f32(float x) {
  const float a = abs_bits(x);
  const float z = a * a;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * a + a;
  const float ac = select(a < 10.0f, a, 10.0f);  // NaN -> 10, fixed below
  const float e = exp_tanh_range(ac + ac);
  const float large = 1.0f - 2.0f / (e + 1.0f);
  const float r = copy_sign_bits(select(a < 0.625f, small, large), x);
  return select(x != x, x, r);
}

/// 1 / (1 + e^-x), evaluated as 1/(1+e^-|x|) for x >= 0 and
/// e^-|x|/(1+e^-|x|) below 0, so subnormal results keep their precision.
inline float logistic_f32(float x) {
  const float a = abs_bits(x);
  const float ac = select(a < 104.0f, a, 104.0f);  // NaN -> 104, fixed below
  const float e = exp_clamped(-ac);
  const float d = 1.0f + e;
  const float r = select(x >= 0.0f, 1.0f / d, e / d);
  return select(x != x, x, r);
}

/// The error function: odd, erf(-0) = -0, ±1 from |x| >= 4 on (erf(x)
/// rounds to 1 from 3.92 on), NaN stays NaN. Two branch-free pieces, both
/// evaluated and selected:
/// - |x| < 0.921875: x + x·Q(x²), Q ≈ erf(x)/x - 1 of degree 5 in x²
///   (|Q| <= 0.13: the exact leading x carries the result, and the last
///   addition rounds it once); a subnormal x gives x + x·0.128;
/// - above: 1 - e^R(t), t = min(|x|, 4), R of degree 6 fitting log(erfc(t)),
///   with the sign of x copied on. e^R <= 0.19 there, so exp_f32's ulp and
///   R's rounding reach the result scaled down by erfc/erf.
/// Coefficients: minimax fits (Lawson's iteration on 6000 points, weighted
/// by the error they cause relative to erf) rounded to float; the pieces'
/// approximation errors are 0.26 and 0.03 ulp, the rest is rounding.
inline float erf_f32(float x) {
  const float a = abs_bits(x);
  const float s = x * x;
  float q = -5.990819191e-04f;
  q = q * s + 4.993173294e-03f;
  q = q * s - 2.676661126e-02f;
  q = q * s + 1.128181592e-01f;
  q = q * s - 3.761249483e-01f;
  q = q * s + 1.283791512e-01f;
  const float small = x * q + x;
  const float t = select(a < 4.0f, a, 4.0f);  // NaN -> 4, fixed below
  float r = 1.957219356e-04f;
  r = r * t - 3.041105345e-03f;
  r = r * t + 2.221850120e-02f;
  r = r * t - 1.039141268e-01f;
  r = r * t - 6.372021437e-01f;
  r = r * t - 1.127663851e+00f;
  r = r * t - 1.985381241e-04f;  // R in [-18, -1.64]: exp_clamped's range
  const float large = copy_sign_bits(1.0f - exp_clamped(r), x);
  const float res = select(a < 0.921875f, small, large);
  return select(x != x, x, res);
}

}  // namespace tenact::cpu::vmath
