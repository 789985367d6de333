// The per-element functions of every elementwise op: the one definition of
// each op's arithmetic, shared by the single-op kernels and the fused
// region executor (both instantiate the tile loops of
// elementwise_tile_loops.hpp over these), so the two give the same bits.
//
// Each op is a function object over *compute* types: bool, the integers,
// float, double, std::complex<float|double> (f16/bf16 operands arrive as
// float and their results are rounded back by the caller). `admits<T>`
// says, per *element* type, whether the op takes it (docs/program-format.md,
// "Type sets"); a tile loop is only instantiated where it is true.
// Semantics and the choices the spec leaves open: elementwise.cpp's header.
#pragma once

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/op_kind.hpp"
#include "engines/cpu/kernels/dtype_dispatch.hpp"
#include "engines/cpu/kernels/reduction_ops.hpp"
#include "engines/cpu/kernels/vector_math.hpp"
#include "engines/cpu/kernels/vector_math_f64.hpp"
#include "engines/cpu/kernels/vector_math_trig_f64.hpp"
#include "engines/cpu/kernels/vector_math_via_f64.hpp"

namespace tenact::cpu::ew {

// -- integer helpers (two's complement wrap, never UB) -------------------------

/// Unsigned type integer arithmetic wraps in: at least `unsigned`, so that
/// uint16 * uint16 does not promote to a signed int that can overflow.
template <class T>
using wrap_t = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T> T wrap_add(T a, T b) { return static_cast<T>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b)); }
template <class T> T wrap_sub(T a, T b) { return static_cast<T>(static_cast<wrap_t<T>>(a) - static_cast<wrap_t<T>>(b)); }
template <class T> T wrap_mul(T a, T b) { return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b)); }

template <class C> inline constexpr bool is_int_v = is_integer_v<C>;
template <class C> inline constexpr bool is_real_v = std::is_floating_point_v<C>;  // float, double

template <class T> inline constexpr bool is_signed_int_v = is_integer_v<T> && std::is_signed_v<T>;
template <class T> inline constexpr bool is_unsigned_int_v = is_integer_v<T> && std::is_unsigned_v<T>;
template <class T> inline constexpr bool is_bool_v = std::is_same_v<T, bool>;
/// f16, bf16, f32, f64 or complex (element types).
template <class T> inline constexpr bool is_float_or_complex_v = is_floating_v<T> || is_complex_v<T>;

// -- NaN-propagating max/min and lexicographic complex order -----------------

template <class C> bool has_nan(C v) {
  if constexpr (is_complex_v<C>) return std::isnan(v.real()) || std::isnan(v.imag());
  else if constexpr (is_real_v<C>) return std::isnan(v);
  else return false;
}
/// a < b, lexicographic (real part first) for complex.
template <class C> bool less(C a, C b) {
  if constexpr (is_complex_v<C>)
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  else return a < b;
}
template <class C> bool less_equal(C a, C b) {
  if constexpr (is_complex_v<C>)
    return a.real() < b.real() || (a.real() == b.real() && a.imag() <= b.imag());
  else return a <= b;
}

/// maximum: bool or; NaN wins (a's first); max(-0, +0) = +0; complex in
/// lexicographic order.
template <class C> C max_value(C a, C b) {
  if constexpr (is_bool_v<C>) return a || b;
  else if constexpr (is_int_v<C>) return a < b ? b : a;
  else if constexpr (is_real_v<C>) return reduction::max_of(a, b);
  else {
    if (has_nan(a)) return a;
    if (has_nan(b)) return b;
    return less(a, b) ? b : a;
  }
}
/// minimum: bool and; NaN wins (a's first); min(-0, +0) = -0.
template <class C> C min_value(C a, C b) {
  if constexpr (is_bool_v<C>) return a && b;
  else if constexpr (is_int_v<C>) return b < a ? b : a;
  else if constexpr (is_real_v<C>) return reduction::min_of(a, b);
  else {
    if (has_nan(a)) return a;
    if (has_nan(b)) return b;
    return less(b, a) ? b : a;
  }
}

// -- unary ops -------------------------------------------------------------------

struct Negate {
  template <class T> static constexpr bool admits = is_integer_v<T> || is_float_or_complex_v<T>;
  template <class C> C operator()(C a) const {
    if constexpr (is_int_v<C>) return wrap_sub<C>(0, a);
    else return -a;
  }
};

struct Abs {  // complex -> its real type
  template <class T> static constexpr bool admits = is_signed_int_v<T> || is_float_or_complex_v<T>;
  template <class C> real_of_t<C> operator()(C a) const {
    if constexpr (is_int_v<C>) return a < 0 ? wrap_sub<C>(0, a) : a;  // abs(MIN) = MIN
    else if constexpr (is_complex_v<C>) return std::abs(a);
    else return std::fabs(a);
  }
};

struct Sign {
  template <class T> static constexpr bool admits = is_signed_int_v<T> || is_float_or_complex_v<T>;
  template <class C> C operator()(C a) const {
    if constexpr (is_int_v<C>) return static_cast<C>((a > 0) - (a < 0));
    else if constexpr (is_real_v<C>) return a > 0 ? C(1) : (a < 0 ? C(-1) : a);  // ±0, NaN as is
    else {
      using R = real_of_t<C>;
      const R nan = std::numeric_limits<R>::quiet_NaN();
      if (has_nan(a)) return C(nan, nan);
      if (a.real() == 0 && a.imag() == 0) return a;
      // a/|a| without overflow: scale by the larger magnitude first; an
      // infinite component counts as ±1, the finite one then as ±0.
      R re = a.real(), im = a.imag();
      if (std::isinf(re) || std::isinf(im)) {
        re = std::isinf(re) ? std::copysign(R(1), re) : std::copysign(R(0), re);
        im = std::isinf(im) ? std::copysign(R(1), im) : std::copysign(R(0), im);
      } else {
        const R s = std::fmax(std::fabs(re), std::fabs(im));
        re /= s;
        im /= s;
      }
      const R m = std::hypot(re, im);
      return C(re / m, im / m);
    }
  }
};

struct Exp {
  template <class T> static constexpr bool admits = is_float_or_complex_v<T>;
  template <class C> C operator()(C a) const {
    if constexpr (std::is_same_v<C, float>) return vmath::exp_f32(a);
    else if constexpr (std::is_same_v<C, double>) return vmath::exp_f64(a);
    else return std::exp(a);
  }
};

struct Log {
  template <class T> static constexpr bool admits = is_float_or_complex_v<T>;
  template <class C> C operator()(C a) const {
    if constexpr (std::is_same_v<C, float>) return vmath::log_f32(a);
    else if constexpr (std::is_same_v<C, double>) return vmath::log_f64(a);
    else return std::log(a);
  }
};

struct Sine {
  template <class T> static constexpr bool admits = is_float_or_complex_v<T>;
  template <class C> C operator()(C a) const {
    if constexpr (std::is_same_v<C, float>) return vmath::sin_f32(a);
    else if constexpr (std::is_same_v<C, double>) return vmath::sin_f64(a);
    else return std::sin(a);
  }
};

struct Cosine {
  template <class T> static constexpr bool admits = is_float_or_complex_v<T>;
  template <class C> C operator()(C a) const {
    if constexpr (std::is_same_v<C, float>) return vmath::cos_f32(a);
    else if constexpr (std::is_same_v<C, double>) return vmath::cos_f64(a);
    else return std::cos(a);
  }
};

struct Tanh {
  template <class T> static constexpr bool admits = is_float_or_complex_v<T>;
  template <class C> C operator()(C a) const {
    if constexpr (std::is_same_v<C, float>) return vmath::tanh_f32(a);
    else if constexpr (std::is_same_v<C, double>) return vmath::tanh_f64(a);
    else return std::tanh(a);
  }
};

struct Sqrt {
  template <class T> static constexpr bool admits = is_float_or_complex_v<T>;
  template <class C> C operator()(C a) const { return std::sqrt(a); }
};

struct Rsqrt {
  template <class T> static constexpr bool admits = is_float_or_complex_v<T>;
  template <class C> C operator()(C a) const {
    // f32 through f64: sqrt and divide in 53 bits, one final rounding.
    if constexpr (std::is_same_v<C, float>)
      return static_cast<float>(1.0 / std::sqrt(static_cast<double>(a)));
    else return C(1) / std::sqrt(a);
  }
};

struct ExponentialMinusOne {
  template <class T> static constexpr bool admits = is_float_or_complex_v<T>;
  template <class C> C operator()(C a) const {
    if constexpr (is_complex_v<C>) {
      using R = real_of_t<C>;
      const R x = a.real(), y = a.imag();
      if (!std::isfinite(x) || !std::isfinite(y)) return std::exp(a) - C(1);
      // e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y/2): no cancellation near 0.
      const R h = std::sin(y / 2);
      return C(std::expm1(x) * std::cos(y) - 2 * h * h, std::exp(x) * std::sin(y));
    } else if constexpr (std::is_same_v<C, float>) {
      return vmath::expm1_f32(a);
    } else {
      return vmath::expm1_f64(a);
    }
  }
};

struct LogPlusOne {
  template <class T> static constexpr bool admits = is_float_or_complex_v<T>;
  template <class C> C operator()(C a) const {
    if constexpr (is_complex_v<C>) {
      using R = real_of_t<C>;
      const R x = a.real(), y = a.imag();
      if (!(std::fabs(x) < R(0.5) && std::fabs(y) < R(0.5))) return std::log(C(1) + a);
      // log|1+z| = log1p(2x + x^2 + y^2) / 2 keeps the digits near 0.
      return C(std::log1p(x * (2 + x) + y * y) / 2, std::atan2(y, 1 + x));
    } else if constexpr (std::is_same_v<C, float>) {
      return vmath::log1p_f32(a);
    } else {
      return vmath::log1p_f64(a);
    }
  }
};

struct Conj {
  template <class T> static constexpr bool admits = is_float_or_complex_v<T>;
  template <class C> C operator()(C a) const {
    if constexpr (is_complex_v<C>) return std::conj(a);
    else return a;
  }
};

struct Floor {
  template <class T> static constexpr bool admits = is_floating_v<T>;
  template <class C> C operator()(C a) const { return std::floor(a); }
};
struct Ceil {
  template <class T> static constexpr bool admits = is_floating_v<T>;
  template <class C> C operator()(C a) const { return std::ceil(a); }
};
struct RoundNearestEven {  // the default rounding mode: ties to even
  template <class T> static constexpr bool admits = is_floating_v<T>;
  template <class C> C operator()(C a) const { return std::nearbyint(a); }
};
struct RoundNearestAfz {
  template <class T> static constexpr bool admits = is_floating_v<T>;
  template <class C> C operator()(C a) const { return std::round(a); }
};

struct Logistic {
  template <class T> static constexpr bool admits = is_float_or_complex_v<T>;
  template <class C> C operator()(C a) const {
    if constexpr (std::is_same_v<C, float>) return vmath::logistic_f32(a);
    else if constexpr (is_complex_v<C>) return C(1) / (C(1) + std::exp(-a));
    else return vmath::logistic_f64(a);
  }
};

struct Not {
  template <class T> static constexpr bool admits = is_bool_v<T> || is_integer_v<T>;
  template <class C> C operator()(C a) const {
    if constexpr (is_bool_v<C>) return !a;
    else return static_cast<C>(~a);
  }
};

// -- binary ops ----------------------------------------------------------------

struct Add {
  template <class T> static constexpr bool admits = true;
  template <class C> C operator()(C a, C b) const {
    if constexpr (is_bool_v<C>) return a || b;
    else if constexpr (is_int_v<C>) return wrap_add(a, b);
    else return a + b;
  }
};
struct Subtract {
  template <class T> static constexpr bool admits = !is_bool_v<T>;
  template <class C> C operator()(C a, C b) const {
    if constexpr (is_int_v<C>) return wrap_sub(a, b);
    else return a - b;
  }
};
struct Multiply {
  template <class T> static constexpr bool admits = true;
  template <class C> C operator()(C a, C b) const {
    if constexpr (is_bool_v<C>) return a && b;
    else if constexpr (is_int_v<C>) return wrap_mul(a, b);
    else return a * b;
  }
};
/// Integers: truncating; x / 0 = -1 (all ones: UINT_MAX for unsigned);
/// MIN / -1 = MIN.
struct Divide {
  template <class T> static constexpr bool admits = !is_bool_v<T>;
  template <class C> C operator()(C a, C b) const {
    if constexpr (is_int_v<C>) {
      if (b == 0) return static_cast<C>(~C(0));
      if constexpr (std::is_signed_v<C>)
        if (b == -1) return wrap_sub<C>(0, a);  // MIN / -1 wraps to MIN
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
};
/// Sign of the dividend. Integers: x % 0 = x, MIN % -1 = 0. Floats: fmod.
struct Remainder {
  template <class T> static constexpr bool admits = is_integer_v<T> || is_floating_v<T>;
  template <class C> C operator()(C a, C b) const {
    if constexpr (is_int_v<C>) {
      if (b == 0) return a;
      if constexpr (std::is_signed_v<C>)
        if (b == -1) return 0;
      return static_cast<C>(a % b);
    } else {
      return std::fmod(a, b);
    }
  }
};
struct Maximum {
  template <class T> static constexpr bool admits = true;
  template <class C> C operator()(C a, C b) const { return max_value(a, b); }
};
struct Minimum {
  template <class T> static constexpr bool admits = true;
  template <class C> C operator()(C a, C b) const { return min_value(a, b); }
};

/// Integer power by squaring (wrapping); a negative exponent gives 1 for
/// base 1, ±1 for base -1 by parity, 0 otherwise (docs/program-format.md).
template <class C> C integer_power(C base, C exponent) {
  if constexpr (std::is_signed_v<C>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exponent & 1) ? C(-1) : C(1);
      return 0;
    }
  }
  using W = wrap_t<C>;
  W result = 1;
  W b = static_cast<W>(base);
  auto e = static_cast<std::make_unsigned_t<C>>(exponent);
  while (e != 0) {
    if (e & 1u) result = static_cast<W>(result * b);
    b = static_cast<W>(b * b);
    e = static_cast<decltype(e)>(e >> 1);
  }
  return static_cast<C>(result);
}

struct Power {
  template <class T> static constexpr bool admits = !is_bool_v<T>;
  template <class C> C operator()(C a, C b) const {
    if constexpr (is_int_v<C>) return integer_power(a, b);
    else return std::pow(a, b);
  }
};

struct And {
  template <class T> static constexpr bool admits = is_bool_v<T> || is_integer_v<T>;
  template <class C> C operator()(C a, C b) const {
    if constexpr (is_bool_v<C>) return a && b;
    else return static_cast<C>(a & b);
  }
};
struct Or {
  template <class T> static constexpr bool admits = is_bool_v<T> || is_integer_v<T>;
  template <class C> C operator()(C a, C b) const {
    if constexpr (is_bool_v<C>) return a || b;
    else return static_cast<C>(a | b);
  }
};
struct Xor {
  template <class T> static constexpr bool admits = is_bool_v<T> || is_integer_v<T>;
  template <class C> C operator()(C a, C b) const {
    if constexpr (is_bool_v<C>) return a != b;
    else return static_cast<C>(a ^ b);
  }
};

/// compare: NaN compares false except NE; complex LT/LE/GT/GE lexicographic.
template <CompareDirection D>
struct Compare {
  template <class T> static constexpr bool admits = true;
  template <class C> bool operator()(C a, C b) const {
    if constexpr (D == CompareDirection::EQ) return a == b;
    else if constexpr (D == CompareDirection::NE) return !(a == b);
    else if constexpr (D == CompareDirection::LT) return less(a, b);
    else if constexpr (D == CompareDirection::LE) return less_equal(a, b);
    else if constexpr (D == CompareDirection::GT) return less(b, a);
    else return less_equal(b, a);
  }
};

// -- ternary ops -------------------------------------------------------------------

/// clamp(min, x, max) = minimum(maximum(x, min), max), so NaN propagates
/// and min > max gives max, as StableHLO.
struct Clamp {
  template <class T> static constexpr bool admits = true;
  template <class C> C operator()(C lo, C x, C hi) const { return min_value(max_value(x, lo), hi); }
};

// -- convert ---------------------------------------------------------------------

/// Float -> integer: truncates toward zero, saturates, NaN -> 0.
template <class To, class From>
To float_to_integer(From v) {
  static_assert(is_real_v<From> && is_integer_v<To>);
  if (v != v) return 0;
  if constexpr (std::is_signed_v<To>) {
    constexpr From lo = static_cast<From>(std::numeric_limits<To>::min());  // -2^k, exact
    if (v <= lo) return std::numeric_limits<To>::min();
  } else {
    if (v <= 0) return 0;  // (-1, 0] truncates to 0; below saturates to 0
  }
  // 2^digits, exact in float and double: the first value past max.
  constexpr From past_max = static_cast<From>(std::numeric_limits<To>::max() / 2 + 1) * From(2);
  if (v >= past_max) return std::numeric_limits<To>::max();
  return static_cast<To>(v);
}

/// convert between element (storage) types, docs/program-format.md "convert":
/// one rounding into floats (f16/bf16 from wide sources through half.hpp's
/// exact constructors), float -> int truncates and saturates, int -> int
/// wraps, -> bool is x != 0, complex -> any real type (bool included) drops
/// the imaginary part first (so 0+1i -> bool is false), real -> complex has
/// imaginary part 0.
template <class To, class From>
To convert_value(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_complex_v<From>) {
    using R = real_of_t<From>;
    if constexpr (is_complex_v<To>) {
      using TR = real_of_t<To>;
      return To(convert_value<TR, R>(v.real()), convert_value<TR, R>(v.imag()));
    } else {
      return convert_value<To, R>(v.real());
    }
  } else if constexpr (is_complex_v<To>) {
    using TR = real_of_t<To>;
    return To(convert_value<TR, From>(v), TR(0));
  } else if constexpr (is_bool_v<To>) {
    return to_compute(v) != 0;
  } else if constexpr (is_bool_v<From>) {
    return convert_value<To, uint8_t>(v ? 1 : 0);
  } else if constexpr (is_integer_v<To>) {
    if constexpr (is_integer_v<From>) return static_cast<To>(v);  // wraps (C++20)
    else return float_to_integer<To>(to_compute(v));
  } else if constexpr (is_half_v<To>) {
    if constexpr (is_half_v<From>) return To(v.to_float());  // exact, then one rounding
    else if constexpr (is_real_v<From>) return To(v);        // float or double constructor
    else if constexpr (sizeof(From) <= 2) return To(static_cast<float>(v));  // exact in float
    else if constexpr (std::is_signed_v<From>) return To(static_cast<int64_t>(v));
    else return To(static_cast<uint64_t>(v));
  } else {  // float or double
    if constexpr (is_half_v<From>) return static_cast<To>(v.to_float());
    else return static_cast<To>(v);  // integers and double -> float: one rounding
  }
}

}  // namespace tenact::cpu::ew
