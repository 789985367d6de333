// Branch-free f64 sine and cosine that GCC auto-vectorizes (compiled per
// vector width as vector_math_f64.hpp's functions are), for |x| <= 2^20;
// beyond it, and for inf and NaN, libm's sin/cos with their full argument
// reduction. As in vector_math_via_f64.hpp, each comes as
//   *_core(x)          branch-free; the result for every |x| <= 2^20;
//   trig_f64_fallback  true where the input is outside that domain;
// and the scalar function is `fallback ? libm : core`, which the tile loop
// reproduces (core over the tile, libm only for the inputs outside).
//
// Method: x = n·pi/2 + (hi + lo), with pi/2 split into three 33-bit parts
// and a 53-bit tail (152 bits): for |n| < 2^20 every n·part is exact,
// x - n·part1 is exact (Sterbenz), and the rest is gathered with three
// exact two-sums, so hi + lo carries the reduced argument to far below an
// ulp of hi even where x lies close to a multiple of pi/2 (there the parts
// cancel down to the last bits). Then, on |hi| <= pi/4:
//   sin(hi + lo) = hi + (hi³·P(hi²) + lo·(1 - hi²/2)),
//   cos(hi + lo) = w + (((1 - w) - hi²/2) + (hi⁴·Q(hi²) - hi·lo)),
//   w = 1 - hi²/2 (the parenthesis recovers its rounding error exactly),
// with P and Q the Taylor series of (sin r - r)/r³ and (cos r - 1 + r²/2)/r⁴
// to degree 14 in r (terms to r^17 and r^18; truncation below 2^-62
// relative on |r| <= pi/4): the coefficients are ±1/k!, no fitted
// constants. The quadrant n mod 4 picks the kernel and the sign.
//
// Accuracy: the largest distance from the exact value (long double
// reference) over tests/engines/cpu/vector_math_f64_test.cpp's samples is
// under 1 ulp; the test asserts that bound (docs/program-format.md allows 4).
//
// Contract: pure functions, the same bits in a vectorized body, a scalar
// tail and every vector width (IEEE add, sub, mul, 64-bit integer and
// bitwise ops only; the project compiles with -ffp-contract=off);
// sin(±0) = ±0 and subnormals are kept (sin x rounds to x for |x| < 2^-26);
// NaN in gives that NaN out and ±inf gives NaN (both through libm).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "engines/cpu/kernels/vector_math_via_f64.hpp"

namespace tenact::cpu::vmath {

namespace trig_f64 {

/// pi/2 = via_f64::kPio2Hi + kPio2Part2 + kPio2Part3 + kPio2Tail: three
/// parts of 33 significant bits (each n·part exact for |n| < 2^20) and the
/// rest rounded to double.
inline constexpr double kPio2Part2 = 0x1.0b4611a6p-34;
inline constexpr double kPio2Part3 = 0x1.3198a2ep-69;
inline constexpr double kPio2Tail = 0x1.b839a252049c1p-104;

/// The largest |x| the core reduces: n = round(x·2/pi) stays below 2^20.
inline constexpr double kFastLimit = 1048576.0;  // 2^20

/// a + b = sum + error exactly (Knuth's two-sum: any order of magnitudes).
struct TwoSum {
  double sum;
  double error;
};
inline TwoSum two_sum(double a, double b) {
  const double s = a + b;
  const double bv = s - a;
  return {s, (a - (s - bv)) + (b - bv)};
}

/// x - n·pi/2 as hi + lo (|hi| <= pi/4 plus rounding slop), and n mod 4.
struct Reduced {
  double hi;
  double lo;
  uint64_t quadrant;
};
inline Reduced reduce(double x) {
  const double shifted = x * via_f64::kTwoOverPi + via_f64::kShift;
  const double n = shifted - via_f64::kShift;
  const double a = x - n * via_f64::kPio2Hi;  // exact
  // a - n·part2 - n·part3 = s3.sum + s2.error + s3.error exactly: where x
  // lies close to n·pi/2 the parts cancel, and only exact steps keep the
  // few bits that remain.
  const TwoSum s2 = two_sum(a, -(n * kPio2Part2));
  const TwoSum s3 = two_sum(s2.sum, -(n * kPio2Part3));
  const double rest = (s2.error + s3.error) - n * kPio2Tail;
  const TwoSum r = two_sum(s3.sum, rest);
  return {r.sum, r.error, std::bit_cast<uint64_t>(shifted) & 3u};
}

/// (sin r - r)/r³ and (cos r - 1 + r²/2)/r⁴ as polynomials in z = r²:
/// their Taylor coefficients, highest degree first.
inline constexpr double kSinSeries[] = {
    1.0 / 355687428096000.0, -1.0 / 1307674368000.0, 1.0 / 6227020800.0, -1.0 / 39916800.0,  // 1/17! .. -1/11!
    1.0 / 362880.0,          -1.0 / 5040.0,          1.0 / 120.0,        -1.0 / 6.0};        // 1/9! .. -1/3!
inline constexpr double kCosSeries[] = {
    -1.0 / 6402373705728000.0, 1.0 / 20922789888000.0, -1.0 / 87178291200.0, 1.0 / 479001600.0,  // -1/18! .. 1/12!
    -1.0 / 3628800.0,          1.0 / 40320.0,          -1.0 / 720.0,         1.0 / 24.0};        // -1/10! .. 1/4!

/// sin(hi + lo) for |hi| <= pi/4 (+ slop), |lo| <= ulp(hi).
inline double sin_kernel(double hi, double lo) {
  const double z = hi * hi;
  return hi + ((z * hi) * via_f64::horner(z, kSinSeries) + lo * (1.0 - 0.5 * z));
}

/// cos(hi + lo) for |hi| <= pi/4 (+ slop), |lo| <= ulp(hi).
inline double cos_kernel(double hi, double lo) {
  const double z = hi * hi;
  const double half_z = 0.5 * z;
  const double w = 1.0 - half_z;
  return w + (((1.0 - w) - half_z) + ((z * z) * via_f64::horner(z, kCosSeries) - hi * lo));
}

/// sin(x) (shift = 0) or cos(x) (shift = 1).
inline double quadrant_value(double x, uint64_t shift) {
  const Reduced red = reduce(x);
  return via_f64::by_quadrant(red.quadrant + shift, sin_kernel(red.hi, red.lo), cos_kernel(red.hi, red.lo));
}

}  // namespace trig_f64

inline bool trig_f64_fallback(double x) { return !(via_f64::abs_bits(x) <= trig_f64::kFastLimit); }

inline double sin_f64_core(double x) {
  const double v = trig_f64::quadrant_value(x, 0);
  return via_f64::select(via_f64::abs_bits(x) < 0x1p-26, x, v);
}
inline double cos_f64_core(double x) { return trig_f64::quadrant_value(x, 1); }
inline double sin_f64_libm(double x) { return std::sin(x); }
inline double cos_f64_libm(double x) { return std::cos(x); }

inline double sin_f64(double x) { return trig_f64_fallback(x) ? sin_f64_libm(x) : sin_f64_core(x); }
inline double cos_f64(double x) { return trig_f64_fallback(x) ? cos_f64_libm(x) : cos_f64_core(x); }

}  // namespace tenact::cpu::vmath
