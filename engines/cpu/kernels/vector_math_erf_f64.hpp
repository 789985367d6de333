// Branch-free f64 erf that GCC auto-vectorizes (compiled per vector width
// where it is inlined, as vector_math_f64.hpp's functions are): what the
// built-in extension module's f64 gelu calls.
//
// Method, on a = |x| (erf is odd: the sign of x is kept or copied on):
// - a < 0.75: erf(x) = x + x·Q(x²), Q the Taylor series of erf(x)/x - 1 to
//   degree 15 in x² (truncation below 2e-19 relative);
// - 0.75 <= a < 1.75: erf(a) from one of two polynomial pieces ([0.75,
//   1.25], [1.25, 1.75]) in u = (a - center)·4 (exact);
// - 1.75 <= a < 6: erf(a) = 1 - e^(-a²)·g(a), g(a) = erfc(a)·e^(a²) from one
//   of two polynomial pieces ([1.75, 3.75], [3.75, 6]), and e^(-a²) from
//   a² = hi + lo exactly (Dekker's product) as exp_f64(-hi)·(1 - lo): here
//   erfc(a) <= 0.014·erf(a), so its error reaches the result scaled down;
// - a >= 6 and ±inf: ±1 (erfc(6) is below half an ulp of 1).
// The pieces are Chebyshev fits with relative error below 2e-17; the
// Taylor form is kept below 0.75 because above it its alternating terms
// cancel (2.3 ulps at 1.24 with the series up to 1.25), and the middle is
// two pieces, not one (1.3 ulps near 0.75 with one piece over [0.75, 1.75]).
// scripts/fit-erf-f64.py prints the tables (mpmath). Every piece is
// evaluated and one selected (no branch); NaN in gives the input NaN out.
//
// Accuracy: tests/engines/cpu/vector_math_f64_test.cpp asserts 1 ulp from
// a long double reference over dense samples of every piece and the
// doubles next to their edges (measured: 0.98 ulp), against the 4 ulps
// docs/program-format.md allows for transcendental functions.
#pragma once

#include "engines/cpu/kernels/vector_math_f64.hpp"
#include "engines/cpu/kernels/vector_math_via_f64.hpp"

namespace tenact::cpu::vmath {

namespace erf_f64_tables {

inline constexpr double kErfSmall[] = {
    -0x1.f56f071a885cfp-46, 0x1.f683ae4a97007p-42, -0x1.d8453cb0c46eap-38, 0x1.9e6ad5e55a730p-34,
    -0x1.51d7181c5d36dp-30, 0x1.fcc5720624c1cp-27, -0x1.5f742ec43e71ap-23, 0x1.b9e6c9dc651a3p-20,
    -0x1.f4d25c3e0c2ebp-17, 0x1.f9a326f9b89b7p-14, -0x1.c02db40040b86p-11, 0x1.565bcd0e6a53fp-8,
    -0x1.b82ce31288b51p-6, 0x1.ce2f21a042be2p-4, -0x1.812746b0379e7p-2, 0x1.06eba8214db69p-3};
inline constexpr double kErfMiddle0[] = {
    0x1.265117dc5aca8p-42, -0x1.98cbdfce4a7b9p-37, 0x1.672249751d480p-36, 0x1.4159514ca2925p-30,
    -0x1.ee3122b669cdcp-28, -0x1.3910f69082bedp-24, 0x1.f096fda347eb4p-21, 0x1.2e45a3a530484p-20,
    -0x1.1b614b0f63857p-14, 0x1.1b614b0f9d361p-12, 0x1.1b614b0f528a1p-9, -0x1.a911f096fbd50p-6,
    0x1.a911f096fbc26p-4, 0x1.af767a741088bp-1};
inline constexpr double kErfMiddle1[] = {
    0x1.2f437cda2412ep-42, 0x1.391c740b0399fp-38, -0x1.0ad1ae83a47cbp-34, -0x1.849ee803db29cp-34,
    0x1.c03813867a62fp-28, -0x1.35aead23a7316p-25, -0x1.36d73a6c01d8fp-22, 0x1.3ca3d76ea3544p-18,
    -0x1.e723726b74d04p-17, -0x1.6d5a95d0fa21bp-13, 0x1.1c2a02beb6aaap-9, -0x1.6d5a95d0a1a1dp-7,
    0x1.e723726b824a9p-6, 0x1.eea5557137ae0p-1};
inline constexpr double kErfcPiece0[] = {
    -0x1.0411fbc493826p-40, 0x1.3a267a0803226p-38, -0x1.248ee0636b504p-36, 0x1.53d1877a518c9p-34,
    -0x1.8eedc14def1d7p-32, 0x1.c0a7f6d7db35cp-30, -0x1.eec1795e2240bp-28, 0x1.0c12612222a31p-25,
    -0x1.1ccfb0094b5abp-23, 0x1.2857145956a67p-21, -0x1.2da3296bad590p-19, 0x1.2bfb5aa046b2dp-17,
    -0x1.2312b25a42c8fp-15, 0x1.131bb16236087p-13, -0x1.f99e41ecae6abp-12, 0x1.c2c72fd724b8ep-10,
    -0x1.84e9ab30e6ac4p-8, 0x1.43b98bac83838p-6, -0x1.0305781330099p-4, 0x1.8c9eb68ff27d7p-3};
inline constexpr double kErfcPiece1[] = {
    -0x1.3137476b75663p-43, 0x1.abec8b10f12edp-41, -0x1.fbffb260b457ap-39, 0x1.5b8bf57ccab7fp-36,
    -0x1.db5c9f9f3a69cp-34, 0x1.3e2df8472c050p-31, -0x1.a4d712388cdffp-29, 0x1.13137194a4c64p-26,
    -0x1.6327180c1a553p-24, 0x1.c4ab558687b51p-22, -0x1.1ca840f59680cp-19, 0x1.6116353e5d060p-17,
    -0x1.afb5ee0417a74p-15, 0x1.03ff7317c4d19p-12, -0x1.34502a30e6472p-10, 0x1.67af48e068356p-8,
    -0x1.9c7f16d0cdcfbp-6, 0x1.d0a2236d493eap-4};

}  // namespace erf_f64_tables

/// Always inlined: it is too large for g++ to inline on its own, and a
/// call keeps the calling loop scalar.
[[gnu::always_inline]] inline double erf_f64(double x) {
  using namespace erf_f64_tables;
  using via_f64::horner;
  const double a = abs_bits(x);
  const double small = x + x * horner(x * x, kErfSmall);
  const double middle = copy_sign64(
      select(a < 1.25, horner((a - 1.0) * 4.0, kErfMiddle0), horner((a - 1.5) * 4.0, kErfMiddle1)), x);
  const double t = select(a < 6.0, a, 6.0);  // NaN -> 6, fixed below
  // t² = hi + lo exactly: t split into two 26-bit halves (Dekker).
  const double split = 134217729.0 * t;  // 2^27 + 1
  const double t_hi = split - (split - t);
  const double t_lo = t - t_hi;
  const double hi = t * t;
  const double lo = ((t_hi * t_hi - hi) + 2.0 * t_hi * t_lo) + t_lo * t_lo;
  const double e = exp_f64(-hi) * (1.0 - lo);
  const double g = select(t < 3.75, horner(t - 2.75, kErfcPiece0), horner((t - 4.875) * (1.0 / 1.125), kErfcPiece1));
  const double large = copy_sign64(1.0 - e * g, x);
  const double r = select(a < 0.75, small, select(a < 1.75, middle, large));
  return select(x != x, x, r);
}

}  // namespace tenact::cpu::vmath
