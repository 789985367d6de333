// The five reductions as policies over element types: what an element
// loads as, how two partial results combine, the identity, and how the
// final partial rounds to the result dtype.
//
// Contract (docs/program-format.md, "Decisions"):
// - sums and products of integers wrap (done in the unsigned type of the
//   same width); bool sum/max is or, prod/min is and;
// - f16/bf16 accumulate in f32 and round once in finish();
// - max/min propagate NaN (the NaN operand itself is kept) and order
//   -0 < +0 (IEEE 754-2019 maximum/minimum); complex values order
//   lexicographically, real part first, and a complex value with a NaN
//   component propagates like a NaN;
// - sum of squares of complex is re*re + im*im per element, real result.
// Every member is a pure static function: policies hold no state. Element
// traits (is_half_v, is_complex_v, real_of_t) are dtype_dispatch.hpp's.
#pragma once

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/half.hpp"
#include "engines/cpu/kernels/dtype_dispatch.hpp"

namespace tenact::cpu::reduction {

/// Bool elements are stored as one byte, 0 or 1.
using BoolByte = uint8_t;

/// The arithmetic type an element computes in (f16/bf16 -> float; signed
/// integers -> the unsigned type of their width; others unchanged).
template <class T> struct CalcOf { using type = T; };
template <> struct CalcOf<f16> { using type = float; };
template <> struct CalcOf<bf16> { using type = float; };
template <> struct CalcOf<int8_t> { using type = uint8_t; };
template <> struct CalcOf<int16_t> { using type = uint16_t; };
template <> struct CalcOf<int32_t> { using type = uint32_t; };
template <> struct CalcOf<int64_t> { using type = uint64_t; };
template <class T> using calc_t = typename CalcOf<T>::type;

template <class T> inline calc_t<T> to_calc(const T& x) {
  if constexpr (is_half_v<T>) return x.to_float();
  else return static_cast<calc_t<T>>(x);
}

/// The value max/min compare: f16/bf16 widen to float, others unchanged
/// (signed integers keep their sign).
template <class T> inline std::conditional_t<is_half_v<T>, float, T> load_ordered(const T& x) {
  if constexpr (is_half_v<T>) return x.to_float();
  else return x;
}

template <class Out, class C> inline Out from_calc(const C& c) {
  if constexpr (is_half_v<Out>) return Out{c};
  else return static_cast<Out>(c);
}

/// Wrapping product of two unsigned integers of one width, without the
/// undefined behaviour of promotion to int (uint16 * uint16 overflows int).
template <class U> inline U wrap_mul(U a, U b) {
  if constexpr (sizeof(U) < sizeof(unsigned)) {
    return static_cast<U>(static_cast<unsigned>(a) * static_cast<unsigned>(b));
  } else {
    return static_cast<U>(a * b);
  }
}

template <class C> inline bool is_nan(const C& x) {
  if constexpr (is_complex_v<C>) return x.real() != x.real() || x.imag() != x.imag();
  else if constexpr (std::is_floating_point_v<C>) return x != x;
  else return false;
}

/// Bitwise and/or of two floats' representations.
template <class C> inline C bitwise_and(C a, C b) {
  using U = std::conditional_t<sizeof(C) == 4, uint32_t, uint64_t>;
  return std::bit_cast<C>(static_cast<U>(std::bit_cast<U>(a) & std::bit_cast<U>(b)));
}
template <class C> inline C bitwise_or(C a, C b) {
  using U = std::conditional_t<sizeof(C) == 4, uint32_t, uint64_t>;
  return std::bit_cast<C>(static_cast<U>(std::bit_cast<U>(a) | std::bit_cast<U>(b)));
}

/// IEEE 754-2019 maximum on reals (NaN-propagating, a's NaN first,
/// -0 < +0); lexicographic on complex; plain on integers. The one
/// definition of the rule: the elementwise maximum calls it too.
template <class C> inline C max_of(const C& a, const C& b) {
  if constexpr (is_complex_v<C>) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    if (a.real() != b.real()) return a.real() > b.real() ? a : b;
    return b.imag() > a.imag() ? b : a;
  } else if constexpr (std::is_floating_point_v<C>) {
    // No branches, so that lane loops vectorize (AVX2: a compare or two
    // and three blends per vector): b where b is greater, or b is NaN and
    // a is not; where a == b, the bitwise and (equal non-NaN values have
    // equal bits except zeros, where it picks +0 unless both are -0).
    const bool take_b = (a < b) | ((b != b) & (a == a));
    const C picked = take_b ? b : a;
    return a == b ? bitwise_and(a, b) : picked;
  } else {
    return a > b ? a : b;
  }
}

/// minimum's counterpart of max_of.
template <class C> inline C min_of(const C& a, const C& b) {
  if constexpr (is_complex_v<C>) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    if (a.real() != b.real()) return a.real() < b.real() ? a : b;
    return b.imag() < a.imag() ? b : a;
  } else if constexpr (std::is_floating_point_v<C>) {
    // As max_of; for equal zeros the bitwise or picks -0 unless both are +0.
    const bool take_b = (b < a) | ((b != b) & (a == a));
    const C picked = take_b ? b : a;
    return a == b ? bitwise_or(a, b) : picked;
  } else {
    return a < b ? a : b;
  }
}

template <class C> inline C highest() {
  if constexpr (is_complex_v<C>) {
    using R = typename C::value_type;
    return C{std::numeric_limits<R>::infinity(), std::numeric_limits<R>::infinity()};
  } else if constexpr (std::is_floating_point_v<C>) {
    return std::numeric_limits<C>::infinity();
  } else {
    return std::numeric_limits<C>::max();
  }
}

template <class C> inline C lowest() {
  if constexpr (is_complex_v<C>) {
    using R = typename C::value_type;
    return C{-std::numeric_limits<R>::infinity(), -std::numeric_limits<R>::infinity()};
  } else if constexpr (std::is_floating_point_v<C>) {
    return -std::numeric_limits<C>::infinity();
  } else {
    return std::numeric_limits<C>::lowest();
  }
}

// Each policy: In (stored element), Acc (partial result), Out (stored
// result), identity(), load(In) -> Acc, combine(Acc, Acc) -> Acc,
// finish(Acc) -> Out, and kSelectCombine: true when combine() is a chain
// of selects (float max/min), which vectorizes only as a rolled loop.

template <class T> struct SumOp {
  using In = T;
  using Acc = calc_t<T>;
  using Out = T;
  static constexpr bool kSelectCombine = false;
  static Acc identity() { return Acc{}; }
  static Acc load(const In& x) { return to_calc(x); }
  static Acc combine(const Acc& a, const Acc& b) { return static_cast<Acc>(a + b); }
  static Out finish(const Acc& a) { return from_calc<Out>(a); }
};

template <class T> struct SumSquaresOp {
  using In = T;
  using Calc = calc_t<T>;
  using Acc = std::conditional_t<is_complex_v<T>, real_of_t<T>, Calc>;
  using Out = real_of_t<T>;
  static constexpr bool kSelectCombine = false;
  static Acc identity() { return Acc{}; }
  static Acc load(const In& x) {
    if constexpr (is_complex_v<T>) {
      return x.real() * x.real() + x.imag() * x.imag();
    } else if constexpr (std::is_integral_v<Acc>) {
      const Acc c = to_calc(x);
      return wrap_mul<Acc>(c, c);
    } else {
      const Acc c = to_calc(x);
      return c * c;
    }
  }
  static Acc combine(const Acc& a, const Acc& b) { return static_cast<Acc>(a + b); }
  static Out finish(const Acc& a) { return from_calc<Out>(a); }
};

template <class T> struct ProdOp {
  using In = T;
  using Acc = calc_t<T>;
  using Out = T;
  static constexpr bool kSelectCombine = false;
  static Acc identity() { return Acc{1}; }
  static Acc load(const In& x) { return to_calc(x); }
  static Acc combine(const Acc& a, const Acc& b) {
    if constexpr (std::is_integral_v<Acc>) return wrap_mul<Acc>(a, b);
    else return a * b;
  }
  static Out finish(const Acc& a) { return from_calc<Out>(a); }
};

template <class T> struct MaxOp {
  using In = T;
  using Acc = std::conditional_t<is_half_v<T>, float, T>;
  using Out = T;
  static constexpr bool kSelectCombine = std::is_floating_point_v<Acc>;
  static Acc identity() { return lowest<Acc>(); }
  static Acc load(const In& x) { return load_ordered(x); }
  static Acc combine(const Acc& a, const Acc& b) { return max_of(a, b); }
  static Out finish(const Acc& a) { return from_calc<Out>(a); }
};

template <class T> struct MinOp {
  using In = T;
  using Acc = std::conditional_t<is_half_v<T>, float, T>;
  using Out = T;
  static constexpr bool kSelectCombine = std::is_floating_point_v<Acc>;
  static Acc identity() { return highest<Acc>(); }
  static Acc load(const In& x) { return load_ordered(x); }
  static Acc combine(const Acc& a, const Acc& b) { return min_of(a, b); }
  static Out finish(const Acc& a) { return from_calc<Out>(a); }
};

/// bool: or (sum, max) and and (prod, min) over bytes that hold 0 or 1.
struct BoolOrOp {
  using In = BoolByte;
  using Acc = BoolByte;
  using Out = BoolByte;
  static constexpr bool kSelectCombine = false;
  static Acc identity() { return 0; }
  static Acc load(const In& x) { return x != 0; }
  static Acc combine(const Acc& a, const Acc& b) { return static_cast<Acc>(a | b); }
  static Out finish(const Acc& a) { return a; }
};

struct BoolAndOp {
  using In = BoolByte;
  using Acc = BoolByte;
  using Out = BoolByte;
  static constexpr bool kSelectCombine = false;
  static Acc identity() { return 1; }
  static Acc load(const In& x) { return x != 0; }
  static Acc combine(const Acc& a, const Acc& b) { return static_cast<Acc>(a & b); }
  static Out finish(const Acc& a) { return a; }
};

}  // namespace tenact::cpu::reduction
