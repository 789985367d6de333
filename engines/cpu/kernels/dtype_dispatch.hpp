// Dtype dispatch for the CPU kernels: the C++ element type of every DType,
// a visitor that calls a generic lambda with a type tag, and a few traits.
// Shared by all kernel files (read-only for them; owned by the elementwise
// kernels).
//
// Usage:
//   visit_dtype(t.dtype(), [&](auto tag) {
//     using T = typename decltype(tag)::type;
//     ...
//   });
// Every branch of the visitor is instantiated, so the lambda must compile
// for all fifteen element types (use `if constexpr` with the traits below
// to exclude those an op rejects).
#pragma once

#include <complex>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "core/dtype.hpp"
#include "core/half.hpp"
#include "engines/cpu/kernels/element_bytes.hpp"

namespace tenact::cpu {

template <class T>
struct TypeTag {
  using type = T;
};

/// The element type stored for each DType (bool is one byte, as `bool`).
template <DType D> struct ElementOf;
template <> struct ElementOf<DType::Bool> { using type = bool; };
template <> struct ElementOf<DType::I8> { using type = int8_t; };
template <> struct ElementOf<DType::I16> { using type = int16_t; };
template <> struct ElementOf<DType::I32> { using type = int32_t; };
template <> struct ElementOf<DType::I64> { using type = int64_t; };
template <> struct ElementOf<DType::U8> { using type = uint8_t; };
template <> struct ElementOf<DType::U16> { using type = uint16_t; };
template <> struct ElementOf<DType::U32> { using type = uint32_t; };
template <> struct ElementOf<DType::U64> { using type = uint64_t; };
template <> struct ElementOf<DType::F16> { using type = f16; };
template <> struct ElementOf<DType::BF16> { using type = bf16; };
template <> struct ElementOf<DType::F32> { using type = float; };
template <> struct ElementOf<DType::F64> { using type = double; };
template <> struct ElementOf<DType::C64> { using type = std::complex<float>; };
template <> struct ElementOf<DType::C128> { using type = std::complex<double>; };
template <DType D> using element_t = typename ElementOf<D>::type;

// -- traits --------------------------------------------------------------------

template <class T> inline constexpr bool is_half_v = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;
template <class T> inline constexpr bool is_complex_v = false;
template <class R> inline constexpr bool is_complex_v<std::complex<R>> = true;
template <class T>
inline constexpr bool is_floating_v = std::is_floating_point_v<T> || is_half_v<T>;
/// Integer element types (bool excluded).
template <class T>
inline constexpr bool is_integer_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

/// The component type of a complex type, T itself otherwise.
template <class T> struct RealOf { using type = T; };
template <class R> struct RealOf<std::complex<R>> { using type = R; };
template <class T> using real_of_t = typename RealOf<T>::type;

/// The type arithmetic is done in: float for f16/bf16, T otherwise.
template <class T> struct ComputeOf { using type = T; };
template <> struct ComputeOf<f16> { using type = float; };
template <> struct ComputeOf<bf16> { using type = float; };
template <class T> using compute_t = typename ComputeOf<T>::type;

/// The DType of an element type.
template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
template <> constexpr DType dtype_of<int8_t>() { return DType::I8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::I16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::I32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::I64; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::U8; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::U16; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::U32; }
template <> constexpr DType dtype_of<uint64_t>() { return DType::U64; }
template <> constexpr DType dtype_of<f16>() { return DType::F16; }
template <> constexpr DType dtype_of<bf16>() { return DType::BF16; }
template <> constexpr DType dtype_of<float>() { return DType::F32; }
template <> constexpr DType dtype_of<double>() { return DType::F64; }
template <> constexpr DType dtype_of<std::complex<float>>() { return DType::C64; }
template <> constexpr DType dtype_of<std::complex<double>>() { return DType::C128; }

// -- visitor -------------------------------------------------------------------

/// Calls f(TypeTag<T>{}) with the element type of `dtype` and returns what
/// it returns (every instantiation must return the same type). `BoolAs`
/// is the tag type for Bool: a kernel that keeps bool bytes in a wrapper
/// names it, and one that rejects bool before dispatching names another
/// element type so that no bool body is instantiated.
template <class BoolAs = bool, class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Bool: return std::forward<F>(f)(TypeTag<BoolAs>{});
    case DType::I8: return std::forward<F>(f)(TypeTag<int8_t>{});
    case DType::I16: return std::forward<F>(f)(TypeTag<int16_t>{});
    case DType::I32: return std::forward<F>(f)(TypeTag<int32_t>{});
    case DType::I64: return std::forward<F>(f)(TypeTag<int64_t>{});
    case DType::U8: return std::forward<F>(f)(TypeTag<uint8_t>{});
    case DType::U16: return std::forward<F>(f)(TypeTag<uint16_t>{});
    case DType::U32: return std::forward<F>(f)(TypeTag<uint32_t>{});
    case DType::U64: return std::forward<F>(f)(TypeTag<uint64_t>{});
    case DType::F16: return std::forward<F>(f)(TypeTag<f16>{});
    case DType::BF16: return std::forward<F>(f)(TypeTag<bf16>{});
    case DType::F32: return std::forward<F>(f)(TypeTag<float>{});
    case DType::F64: return std::forward<F>(f)(TypeTag<double>{});
    case DType::C64: return std::forward<F>(f)(TypeTag<std::complex<float>>{});
    case DType::C128: break;
  }
  return std::forward<F>(f)(TypeTag<std::complex<double>>{});
}

/// Calls f(TypeTag<T>{}) only for element types of the same size as
/// `dtype` — byte movers (copy, gather, transpose) that need no arithmetic
/// use this to instantiate five bodies instead of fifteen. The tag's type
/// is an unsigned integer (or Bytes16, element_bytes.hpp) of that size.
template <class F>
decltype(auto) visit_element_size(DType dtype, F&& f) {
  switch (size_of(dtype)) {
    case 1: return std::forward<F>(f)(TypeTag<uint8_t>{});
    case 2: return std::forward<F>(f)(TypeTag<uint16_t>{});
    case 4: return std::forward<F>(f)(TypeTag<uint32_t>{});
    case 8: return std::forward<F>(f)(TypeTag<uint64_t>{});
    default: break;
  }
  return std::forward<F>(f)(TypeTag<Bytes16>{});
}

// -- element conversions ---------------------------------------------------------

/// Widens an element to its compute type (f16/bf16 -> float; others as is).
template <class T>
inline compute_t<T> to_compute(T v) {
  if constexpr (is_half_v<T>) return v.to_float();
  else return v;
}
/// Rounds a compute value back to the element type (float -> f16/bf16 in
/// one rounding; others as is).
template <class T>
inline T from_compute(compute_t<T> v) {
  if constexpr (is_half_v<T>) return T{v};
  else return v;
}

}  // namespace tenact::cpu
