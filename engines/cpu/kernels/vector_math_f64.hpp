// Branch-free f64 exp, expm1, log, log1p, tanh and logistic that GCC
// auto-vectorizes (SSE2 baseline; AVX2 and AVX-512F copies of their tile
// loops are picked at run time, elementwise_tiles_vmath.hpp): every special
// case is a select, integer work is 64-bit lanes, no libm call in the loop.
// g++ 12 keeps std::exp and friends scalar; these are what the elementwise
// ops call on f64, in every path (tile loops, fused regions, scalars).
//
// Contract: pure functions; NaN in gives NaN out (the input NaN itself);
// only IEEE-rounded add, sub, mul, div, 64-bit integer ops and bitwise
// selects, no FMA (ISO mode, -ffp-contract=off), so that a vectorized body,
// a scalar tail and every vector width give the same bits.
//
// Method: Cody–Waite reduction x = n·ln2 + r, |r| <= ln2/2 (ln2 split so
// that n·ln2_hi is exact for |n| < 2^21), e^r - 1 = r + r²·q(r) with q the
// Taylor series of (e^r - 1 - r)/r² to degree 14 (truncation below 2^-70
// relative); log(1 + f) = f - s·(f - R(s²)), s = f/(2 + f), R the series of
// 2·atanh(s)/s - 2 to s^22 (truncation below 2^-59), f = m - 1 exact for
// the mantissa m in [sqrt(1/2), sqrt(2)]. The coefficients are 1/k! and
// 2/(2k+1) rounded to double: no fitted constants.
//
// Accuracy: the largest distance from the exact value (a long double
// reference) found over 2 million points per function (random bit patterns
// and uniform draws over each function's range, and near 0 and 1):
//   exp 0.93 ulp, expm1 1.93, log 1.22, log1p 1.47, tanh 2.51, logistic 2.36;
// tests/engines/cpu/vector_math_f64_test.cpp asserts 1.5, 2.5, 1.5, 2.0,
// 3.0 and 3.0 over its own dense samples: all within the 4 ulps
// docs/program-format.md allows for transcendental ops.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

#include "engines/cpu/kernels/vector_math_via_f64.hpp"

namespace tenact::cpu::vmath {

inline constexpr double kInf64 = std::numeric_limits<double>::infinity();

// The bit-level helpers and constants the f32-via-f64 functions use:
// select (c ? a : b through masks), abs_bits, the ln2 split, the rounding
// shift and exponent_field.
using via_f64::abs_bits;
using via_f64::exponent_field;
using via_f64::kLn2Hi;
using via_f64::kLn2Lo;
using via_f64::kShift;
using via_f64::select;

inline int64_t select64(bool c, int64_t a, int64_t b) {
  const uint64_t m = uint64_t{0} - static_cast<uint64_t>(c);
  return static_cast<int64_t>((static_cast<uint64_t>(a) & m) | (static_cast<uint64_t>(b) & ~m));
}
inline double copy_sign64(double magnitude, double sign) {
  return std::bit_cast<double>((std::bit_cast<uint64_t>(magnitude) & 0x7fffffffffffffffull) |
                               (std::bit_cast<uint64_t>(sign) & 0x8000000000000000ull));
}

inline constexpr double kLog2e = 1.44269504088896338700e+00;

/// (e^r - 1 - r)/r² for |r| <= 0.35: Taylor to r^14 (Horner in r; the
/// first term left out, r^15/17!, is below 2^-70 of the result).
inline double expm1_tail(double r) {
  double q = 1.0 / 20922789888000.0;  // 1/16!
  q = q * r + 1.0 / 1307674368000.0;
  q = q * r + 1.0 / 87178291200.0;
  q = q * r + 1.0 / 6227020800.0;
  q = q * r + 1.0 / 479001600.0;
  q = q * r + 1.0 / 39916800.0;
  q = q * r + 1.0 / 3628800.0;
  q = q * r + 1.0 / 362880.0;
  q = q * r + 1.0 / 40320.0;
  q = q * r + 1.0 / 5040.0;
  q = q * r + 1.0 / 720.0;
  q = q * r + 1.0 / 120.0;
  q = q * r + 1.0 / 24.0;
  q = q * r + 1.0 / 6.0;
  q = q * r + 0.5;
  return q;
}

/// x = n·ln2 + r, |r| <= ln2/2 + tiny, for |x| <= 746: n exact as a double
/// and as an integer (the same rounding gives both).
struct ExpReduced64 {
  double r;
  double n;
  int64_t ni;
};
inline ExpReduced64 exp_reduce64(double x) {
  const double shifted = x * kLog2e + kShift;
  const double n = shifted - kShift;
  const int64_t ni = std::bit_cast<int64_t>(shifted) - std::bit_cast<int64_t>(kShift);
  // x - n·ln2_hi is exact (|n| <= 1076 fits ln2_hi's trailing zeros, and
  // x and n·ln2_hi are within a factor 2 of each other when n != 0).
  double r = x - n * kLn2Hi;
  r = r - n * kLn2Lo;
  return {r, n, ni};
}

/// 2^n as a double, for n in [-1022, 1023].
inline double pow2_normal(int64_t n) { return std::bit_cast<double>(static_cast<uint64_t>(n + 1023) << 52); }

/// floor(n / 2) for n in [-2048, 2047], by a logical shift (AVX2 has no
/// 64-bit arithmetic shift, and an `>>` on int64 would keep its loop scalar).
inline int64_t half_floor(int64_t n) {
  return static_cast<int64_t>(static_cast<uint64_t>(n + 2048) >> 1) - 1024;
}

/// e^x for x clamped to [-745.2, 709.8] (never NaN): 2^n applied as two
/// normal factors, so a subnormal result is rounded once, by the last
/// multiplication, and e^x above DBL_MAX becomes +inf there.
inline double exp_clamped64(double x) {
  const ExpReduced64 e = exp_reduce64(x);
  const double m = 1.0 + (e.r + (e.r * e.r) * expm1_tail(e.r));
  const int64_t n1 = half_floor(e.ni);
  const int64_t n2 = e.ni - n1;
  return (m * pow2_normal(n1)) * pow2_normal(n2);
}

/// e^x: +inf above ln(DBL_MAX), +0 below ln(2^-1075), NaN stays NaN.
inline double exp_f64(double x) {
  double c = select(x < 709.8, x, 709.8);  // NaN -> 709.8, fixed below
  c = select(c > -745.2, c, -745.2);
  return select(x != x, x, exp_clamped64(c));
}

/// e^x - 1: x itself for |x| < ln2/2 scaled as r + r²·q; above, (2^n - 1) +
/// 2^n·(e^r - 1) (both terms exact or rounded once) while 2^n is far from
/// overflow, else e^x; -1 below -40 (e^-40 < 2^-57); ±0 and NaN kept.
inline double expm1_f64(double x) {
  double c = select(x < 709.8, x, 709.8);  // NaN -> 709.8, fixed below
  c = select(c > -40.0, c, -40.0);
  const bool near_zero = abs_bits(c) < 0.34657359027997264;  // ln2/2
  const ExpReduced64 e = exp_reduce64(c);
  const double r = select(near_zero, c, e.r);
  const int64_t n = select64(near_zero, int64_t{0}, e.ni);
  const double y = r + (r * r) * expm1_tail(r);
  // n in [-58, 1024]; below 60 2^n is normal and 2^n - 1 needs no care.
  const int64_t n_small = select64(n < 60, n, int64_t{0});
  const double scale = pow2_normal(n_small);
  const double small = (scale - 1.0) + scale * y;
  const int64_t n1 = half_floor(n);
  const double large = ((1.0 + y) * pow2_normal(n1)) * pow2_normal(n - n1);
  const double res = select(n < 60, small, large);
  return select((x != x) | (x == 0.0), x, res);
}

/// log(1 + f) for f = m - 1, m in [sqrt(1/2), sqrt(2)] (|f| <= 0.415).
inline double log1p_reduced(double f) {
  const double s = f / (2.0 + f);
  const double z = s * s;
  double p = 2.0 / 23.0;
  p = p * z + 2.0 / 21.0;
  p = p * z + 2.0 / 19.0;
  p = p * z + 2.0 / 17.0;
  p = p * z + 2.0 / 15.0;
  p = p * z + 2.0 / 13.0;
  p = p * z + 2.0 / 11.0;
  p = p * z + 2.0 / 9.0;
  p = p * z + 2.0 / 7.0;
  p = p * z + 2.0 / 5.0;
  p = p * z + 2.0 / 3.0;
  const double big_r = z * p;  // 2·atanh(s)/s - 2
  return f - s * (f - big_r);
}

/// The exponent e and mantissa m in [sqrt(1/2), sqrt(2)] of a positive
/// finite x (subnormals normalized first): x = m·2^e.
struct LogReduced64 {
  double m;
  double e;
};
inline LogReduced64 log_reduce64(double x) {
  const bool subnormal = x < 2.2250738585072014e-308;
  const double xs = select(subnormal, x * 4503599627370496.0, x);  // 2^52
  const uint64_t bits = std::bit_cast<uint64_t>(xs);
  const double biased = exponent_field(bits);  // xs > 0 here, or fixed below
  double m = std::bit_cast<double>((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull);  // [1, 2)
  const bool high = m > 1.4142135623730951;
  m = select(high, m * 0.5, m);
  // Exact: small integers in double arithmetic.
  const double e = biased - select(subnormal, 1075.0, 1023.0) + select(high, 1.0, 0.0);
  return {m, e};
}

/// Natural logarithm: -inf at ±0, NaN below 0, +inf at +inf.
inline double log_f64(double x) {
  const LogReduced64 red = log_reduce64(x);
  const double f = red.m - 1.0;  // exact
  // e·ln2_hi is exact (|e| <= 1075); the small parts are added first.
  double r = red.e * kLn2Hi + (log1p_reduced(f) + red.e * kLn2Lo);
  r = select(x == kInf64, kInf64, r);
  r = select(x == 0.0, -kInf64, r);
  r = select(x < 0.0, std::numeric_limits<double>::quiet_NaN(), r);
  return select(x != x, x, r);
}

/// log(1 + x): the series directly for x in [sqrt(1/2) - 1, sqrt(2) - 1];
/// elsewhere log(u) + (x - (u - 1))/u with u = 1 + x rounded (the
/// correction restores what the rounding of u lost). -inf at -1, NaN
/// below, +inf at +inf, ±0 and NaN kept.
inline double log1p_f64(double x) {
  const bool direct = (x > -0.29289321881345243) & (x < 0.41421356237309503);  // & keeps it branch-free
  const double u = 1.0 + x;
  const double us = select((u > 0.0) & (u < kInf64), u, 2.0);  // keeps the far branch finite
  const double correction = (x - (us - 1.0)) / us;
  const double far = log_f64(us) + select(direct, 0.0, correction);
  double r = select(direct, log1p_reduced(x), far);
  r = select(x == kInf64, kInf64, r);
  r = select(x == -1.0, -kInf64, r);
  r = select(x < -1.0, std::numeric_limits<double>::quiet_NaN(), r);
  return select((x != x) | (x == 0.0), x, r);
}

/// Hyperbolic tangent: -t/(2 + t) with t = e^{-2|x|} - 1, the sign of x
/// copied on; 1 from |x| >= 22 on (tanh(22) rounds to 1); ±0, NaN kept.
inline double tanh_f64(double x) {
  const double a = abs_bits(x);
  const double ac = select(a < 22.0, a, 22.0);  // NaN -> 22, fixed below
  const double t = expm1_f64(-(ac + ac));
  const double r = copy_sign64(-t / (2.0 + t), x);
  return select(x != x, x, r);
}

/// 1 / (1 + e^-x), as 1/(1+e^-|x|) for x >= 0 and e^-|x|/(1+e^-|x|) below,
/// so subnormal results keep their digits.
inline double logistic_f64(double x) {
  const double a = abs_bits(x);
  const double ac = select(a < 745.2, a, 745.2);  // NaN -> 745.2, fixed below
  const double e = exp_clamped64(-ac);
  const double d = 1.0 + e;
  const double r = select(x >= 0.0, 1.0 / d, e / d);
  return select(x != x, x, r);
}

}  // namespace tenact::cpu::vmath
