// Branch-free f32 sine, cosine, exp-minus-one and log-plus-one that
// GCC auto-vectorizes, computed in f64 and rounded to f32 once. The f32
// argument is exact in f64, so each function is its f64 formula with an
// error below 2^-33 relative before that one rounding: the result is the
// correctly rounded one or its neighbour (distance <= 1 from the correctly
// rounded f32, against the spec's 4 ulps), and the special cases cost no
// extra precision work. The loops convert f32 lanes to f64 and back
// (vcvtps2pd / vcvtpd2ps), so they run at half the f32 lane count; they are
// compute-bound and compiled per vector width like vector_math.hpp's.
//
// Each function comes in two parts:
//   *_core(x)      branch-free, the result for every input in its fast
//                  domain; outside it, some finite or NaN value (never UB:
//                  no float-to-int conversion, only bit casts);
//   *_fallback(x)  true where the input is outside the fast domain;
// and the scalar function is `fallback ? libm : core`. A tile runs the core
// over the tile (vectorized), then calls libm for the inputs the fallback
// test picks (noted in the same vector pass; a second pass only when one
// is outside), so a tile and a
// scalar call give the same bits. The fast domains:
//   sin, cos:  |x| <= 2^19 (a two-part pi/2 reduction is exact below it;
//              beyond, libm's sinf/cosf with their full reduction), NaN;
//   expm1:     every input;
//   log1p:     every input.
// Power stays on glibc's powf: its scalar table-driven code (3.7 ns per
// element here) beat an f64 vector version of b·ln|a| (4.2 ns with
// AVX-512, 6.1 with AVX2: g++ reads the tables with scalar loads, not
// gathers), measured with bench/vmath_bench.
//
// Contract: pure functions; NaN in gives the input NaN out (where the core
// decides), -0 keeps its sign (sin, expm1, log1p), and no FMA contraction
// is assumed (the project compiles with -ffp-contract=off). The
// approximations, each far more precise than the f32 result needs (2^-25
// relative keeps it within 1 ulp): sine and cosine by the minimax kernels
// of FreeBSD's and musl's sinf/cosf on [-pi/4, pi/4] (2^-37 and 2^-33);
// e^r - 1 on |r| <= ln2/2 by its Taylor series to degree 9 (2^-37); ln m
// on [sqrt(1/2), sqrt(2)] by the atanh series to degree 11 (2^-34).
// tests/engines/cpu/vector_math_test.cpp
// asserts the ulp bounds over sweeps of the f32 range; bench/vmath_bench
// --exhaustive over all 2^32 inputs.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>

namespace tenact::cpu::vmath {

namespace via_f64 {

/// mask ? a : b for a mask of all ones or all zeros. Built from integer bit
/// arithmetic where it can be (SSE2 has no 64-bit integer compare, and one
/// keeps the baseline loop scalar).
inline double select_mask(uint64_t mask, double a, double b) {
  return std::bit_cast<double>((std::bit_cast<uint64_t>(a) & mask) |
                               (std::bit_cast<uint64_t>(b) & ~mask));
}
/// c ? a : b through a 64-bit mask (if-converts, see vector_math.hpp's select).
inline double select(bool c, double a, double b) {
  return select_mask(0ull - static_cast<uint64_t>(c), a, b);
}
/// The polynomial with `coefficients` (highest degree first) at z, by
/// Horner's rule, written out step by step at compile time (a loop of more
/// than 16 steps is not unrolled by g++, and then keeps the loop that
/// calls it from vectorizing).
template <size_t N, size_t... I>
inline double horner_steps(double z, const double (&coefficients)[N], std::index_sequence<I...>) {
  double p = coefficients[0];
  ((p = p * z + coefficients[I + 1]), ...);
  return p;
}
template <size_t N>
inline double horner(double z, const double (&coefficients)[N]) {
  return horner_steps(z, coefficients, std::make_index_sequence<N - 1>{});
}
inline double abs_bits(double x) {
  return std::bit_cast<double>(std::bit_cast<uint64_t>(x) & 0x7fffffffffffffffull);
}

/// 1.5 · 2^52: adding it rounds a double of magnitude < 2^51 to an integer,
/// which then sits in the low mantissa bits (two's complement modulo 2^51).
inline constexpr double kShift = 6755399441055744.0;
inline constexpr int64_t kShiftBits = 0x4338000000000000ll;

/// e^y = scale · (1 + p) for |y| < 2^40: y = n·ln2 + r, |r| <= ln2/2 (+
/// slop), scale = 2^n for |n| <= 1022, p = e^r - 1 by its Taylor series
/// to degree 9 (relative error 2^-37). n·kLn2Hi is exact for |n| < 2^21
/// (kLn2Hi has 32 significant bits).
struct ExpParts {
  double scale;
  double p;
};
inline constexpr double kLn2Hi = 6.93147180369123816490e-01;
inline constexpr double kLn2Lo = 1.90821492927058770002e-10;
inline ExpParts exp_parts(double y) {
  const double shifted = y * 1.44269504088896338700e+00 + kShift;
  const double n = shifted - kShift;
  const uint64_t ni = std::bit_cast<uint64_t>(shifted) - static_cast<uint64_t>(kShiftBits);
  const double r = (y - n * kLn2Hi) - n * kLn2Lo;
  double q = 1.0 / 362880.0;  // 1/9!
  q = q * r + 1.0 / 40320.0;
  q = q * r + 1.0 / 5040.0;
  q = q * r + 1.0 / 720.0;
  q = q * r + 1.0 / 120.0;
  q = q * r + 1.0 / 24.0;
  q = q * r + 1.0 / 6.0;
  q = q * r + 0.5;
  return {std::bit_cast<double>((ni + 1023u) << 52), r + r * r * q};
}

/// The exponent field of a positive double as a double (exact), without an
/// int64 -> double conversion (AVX2 has none, and one keeps a loop scalar):
/// the field in the low mantissa bits of 2^52, minus 2^52.
inline double exponent_field(uint64_t bits) {
  return std::bit_cast<double>((bits >> 52) | 0x4330000000000000ull) - 4503599627370496.0;
}

/// ln(u) for a positive normal double u: u = m·2^e, m in [sqrt(1/2),
/// sqrt(2)) (bits(u) - bits(sqrt(1/2)) has e in its top bits: no compare),
/// ln(m) = 2·atanh((m-1)/(m+1)) by its series to degree 11 (relative
/// error 2^-34). (A table-driven form with no division measured slower:
/// g++ reads tables with scalar loads, not gathers.)
inline double ln_positive(double u) {
  const uint64_t bits = std::bit_cast<uint64_t>(u);
  const uint64_t e_bits = (bits - 0x3fe6a09e667f3bcdull) & 0xfff0000000000000ull;
  const uint64_t m_bits = bits - e_bits;
  const double m = std::bit_cast<double>(m_bits);
  const double e = exponent_field(bits) - exponent_field(m_bits);
  const double f = m - 1.0;  // exact
  const double s = f / (2.0 + f);
  const double z = s * s;
  double q = 1.0 / 11.0;
  q = q * z + 1.0 / 9.0;
  q = q * z + 1.0 / 7.0;
  q = q * z + 1.0 / 5.0;
  q = q * z + 1.0 / 3.0;
  const double ln_m = 2.0 * s + 2.0 * s * (z * q);
  return (e * kLn2Hi + ln_m) + e * kLn2Lo;
}

/// sin(r) and cos(r) for |r| <= pi/4 (+ slop): minimax polynomials for
/// results rounded to f32 (the coefficients of FreeBSD's and musl's
/// __kernel_sindf / __kernel_cosdf; relative error 2^-37.3 and 2^-33.5).
inline double sin_reduced(double r) {
  const double z = r * r;
  const double w = z * z;
  const double s = z * r;
  const double tail = -0x1a00f9e2cae774.0p-65 + z * 0x16cd878c3b46a7.0p-71;
  return (r + s * (-0x15555554cbac77.0p-55 + z * 0x111110896efbb2.0p-59)) + s * w * tail;
}
inline double cos_reduced(double r) {
  const double z = r * r;
  const double w = z * z;
  const double tail = -0x16c087e80f1e27.0p-62 + z * 0x199342e0ee5069.0p-68;
  return ((1.0 + z * -0x1ffffffd0c5e81.0p-54) + w * 0x155553e1053a42.0p-57) + (w * z) * tail;
}

/// 2/pi, and pi/2's leading 33 significant bits (n·kPio2Hi is exact for
/// |n| < 2^20); the f64 sine and cosine use them too.
inline constexpr double kTwoOverPi = 6.36619772367581382433e-01;
inline constexpr double kPio2Hi = 1.57079632673412561417e+00;

/// x = n·pi/2 + r for |x| <= 2^19: n·kPio2Hi is exact (n < 2^19) and so
/// is x - n·kPio2Hi (Sterbenz); the quadrant is n mod 4.
struct Pio2Reduced {
  double r;
  uint64_t quadrant;
};
inline Pio2Reduced pio2_reduce(double x) {
  const double shifted = x * kTwoOverPi + kShift;
  const double n = shifted - kShift;
  const double r = (x - n * kPio2Hi) - n * 6.07710050650619224932e-11;
  return {r, std::bit_cast<uint64_t>(shifted) & 3u};
}

/// sin(x) or cos(x) from the sine and cosine of x's reduced argument and
/// q, x's quadrant (plus 1 for the cosine): bit 0 of q picks the cosine,
/// bit 1 flips the sign (masks and an xor, no compare).
inline double by_quadrant(uint64_t q, double sin_reduced_value, double cos_reduced_value) {
  const double v = select_mask(0ull - (q & 1u), cos_reduced_value, sin_reduced_value);
  return std::bit_cast<double>(std::bit_cast<uint64_t>(v) ^ ((q & 2u) << 62));
}

/// sin(x) (shift_quadrant = 0) or cos(x) (1).
inline double sin_cos_quadrant(double x, uint64_t shift_quadrant) {
  const Pio2Reduced red = pio2_reduce(x);
  return by_quadrant(red.quadrant + shift_quadrant, sin_reduced(red.r), cos_reduced(red.r));
}

inline constexpr float kTrigFastLimit = 524288.0f;  // 2^19

}  // namespace via_f64

// -- sine and cosine -----------------------------------------------------------

inline bool trig_f32_fallback(float x) { return std::fabs(x) > via_f64::kTrigFastLimit; }

inline float sin_f32_core(float x) {
  const double xd = x;
  const double v = via_f64::sin_cos_quadrant(xd, 0);
  // sin(±0) = ±0 (the kernel's sum gives +0 for -0), NaN as is.
  return static_cast<float>(via_f64::select((xd == 0.0) | (xd != xd), xd, v));
}
inline float cos_f32_core(float x) {
  const double xd = x;
  const double v = via_f64::sin_cos_quadrant(xd, 1);
  return static_cast<float>(via_f64::select(xd != xd, xd, v));
}
inline float sin_f32_libm(float x) { return std::sin(x); }
inline float cos_f32_libm(float x) { return std::cos(x); }

inline float sin_f32(float x) { return trig_f32_fallback(x) ? sin_f32_libm(x) : sin_f32_core(x); }
inline float cos_f32(float x) { return trig_f32_fallback(x) ? cos_f32_libm(x) : cos_f32_core(x); }

// -- exp minus one and log plus one --------------------------------------------

/// e^x - 1 = (scale - 1) + scale·p (exp_parts; 2^n - 1 is exact for |n| <= 52,
/// and n = 0 gives p itself: no digits cancel for small x): -1 below -40 (e^-40 is far below half
/// an ulp of 1), +inf above 88.73 (the conversion to f32 overflows), ±0
/// and NaN as they are.
inline float expm1_f32(float x) {
  double xd = x;
  xd = via_f64::select(xd < 89.0, xd, 89.0);  // NaN -> 89, fixed below
  xd = via_f64::select(xd > -40.0, xd, -40.0);
  const via_f64::ExpParts e = via_f64::exp_parts(xd);
  const double v = (e.scale - 1.0) + e.scale * e.p;
  const double x_in = x;
  return static_cast<float>(via_f64::select((x_in != x_in) | (x_in == 0.0), x_in, v));
}

/// log(1 + x): -inf at -1, NaN below, +inf at +inf, ±0 and NaN as they
/// are. 1 + x is exact in f64 for |x| >= 2^-29 (the lowest bit of such an
/// f32 is >= 2^-52) below 2^53, and its logarithm is taken; below 2^-29
/// the result rounds to x itself (x - x^2/2 is within x·2^-30 of x).
inline float log1p_f32(float x) {
  const double xd = x;
  const double u = 1.0 + xd;
  // `&` rather than `&&` here and below: a short circuit is a branch, and a
  // branch keeps the loop scalar. u <= 0 and u = inf give garbage in
  // ln_positive; selected away below.
  const double u_ok = via_f64::select((u > 0.0) & (u < 1.0e300), u, 1.0);
  double v = via_f64::select(via_f64::abs_bits(xd) < 0x1p-29, xd, via_f64::ln_positive(u_ok));
  v = via_f64::select(u == 0.0, -std::numeric_limits<double>::infinity(), v);
  v = via_f64::select(u < 0.0, std::numeric_limits<double>::quiet_NaN(), v);
  v = via_f64::select(u > 1.0e300, u, v);  // +inf
  return static_cast<float>(via_f64::select(x != x, xd, v));
}

}  // namespace tenact::cpu::vmath
