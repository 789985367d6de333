// The tile loops every elementwise kernel is made of: out[i] = op(in[i]...)
// over dense arrays, instantiated per (op, element type). Included only by
// the elementwise_tiles_*.cpp files, which compile them with
// `#pragma GCC optimize("O3")` so that g++'s vectorizer runs with its full
// cost model (the project builds at -O2, where g++ 12 only vectorizes loops
// whose trip count is a known multiple of the vector width).
//
// Contract of every loop: `operands[k]` points at n elements of operand k,
// `out` at n elements of the result, all in the storage layout of their
// element types (bool: one byte, 0 or 1); `out` overlaps no operand (the
// pointers are __restrict). f16/bf16 compute in float and round once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "engines/cpu/kernels/dtype_dispatch.hpp"
#include "engines/cpu/kernels/elementwise_kernels.hpp"

namespace tenact::cpu::ew {

/// How an element type is held in memory (bool as a 0/1 byte, so that a
/// foreign byte never becomes an invalid `bool`).
template <class T> using storage_t = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

/// The element itself (bool from its byte).
template <class T> inline T from_storage(storage_t<T> s) {
  if constexpr (std::is_same_v<T, bool>) return s != 0;
  else return s;
}
template <class T> inline compute_t<T> load(storage_t<T> s) {
  if constexpr (std::is_same_v<T, bool>) return s != 0;
  else return to_compute(s);
}
template <class T> inline storage_t<T> store(compute_t<T> v) {
  if constexpr (std::is_same_v<T, bool>) return static_cast<uint8_t>(v ? 1 : 0);
  else return from_compute<T>(v);
}

/// The result element type of an op whose compute result is `Ret` on
/// element type T: T itself when Ret is T's compute type (f16 stays f16),
/// bool for predicates, the real type for complex abs.
template <class T, class Ret>
using result_element_t = std::conditional_t<std::is_same_v<Ret, compute_t<T>>, T, Ret>;

template <class Op, class T>
using unary_result_t = result_element_t<T, decltype(Op{}(std::declval<compute_t<T>>()))>;
template <class Op, class T>
using binary_result_t =
    result_element_t<T, decltype(Op{}(std::declval<compute_t<T>>(), std::declval<compute_t<T>>()))>;

template <class Op, class T>
void unary_tile(const std::byte* const* operands, std::byte* out, int64_t n) {
  using R = unary_result_t<Op, T>;
  const auto* __restrict a = reinterpret_cast<const storage_t<T>*>(operands[0]);
  auto* __restrict o = reinterpret_cast<storage_t<R>*>(out);
  const Op op{};
  for (int64_t i = 0; i < n; ++i) o[i] = store<R>(op(load<T>(a[i])));
}

template <class Op, class T>
void binary_tile(const std::byte* const* operands, std::byte* out, int64_t n) {
  using R = binary_result_t<Op, T>;
  const auto* __restrict a = reinterpret_cast<const storage_t<T>*>(operands[0]);
  const auto* __restrict b = reinterpret_cast<const storage_t<T>*>(operands[1]);
  auto* __restrict o = reinterpret_cast<storage_t<R>*>(out);
  const Op op{};
  for (int64_t i = 0; i < n; ++i) o[i] = store<R>(op(load<T>(a[i]), load<T>(b[i])));
}

template <class Op, class T>
void ternary_tile(const std::byte* const* operands, std::byte* out, int64_t n) {
  const auto* __restrict a = reinterpret_cast<const storage_t<T>*>(operands[0]);
  const auto* __restrict b = reinterpret_cast<const storage_t<T>*>(operands[1]);
  const auto* __restrict c = reinterpret_cast<const storage_t<T>*>(operands[2]);
  auto* __restrict o = reinterpret_cast<storage_t<T>*>(out);
  const Op op{};
  for (int64_t i = 0; i < n; ++i)
    o[i] = store<T>(op(load<T>(a[i]), load<T>(b[i]), load<T>(c[i])));
}

/// select(pred, on_true, on_false) moves bytes: one loop per element size.
template <class Word>
void select_tile(const std::byte* const* operands, std::byte* out, int64_t n) {
  const auto* __restrict p = reinterpret_cast<const uint8_t*>(operands[0]);
  const auto* __restrict t = reinterpret_cast<const Word*>(operands[1]);
  const auto* __restrict f = reinterpret_cast<const Word*>(operands[2]);
  auto* __restrict o = reinterpret_cast<Word*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = p[i] != 0 ? t[i] : f[i];
}

template <class To, class From>
void convert_tile(const std::byte* const* operands, std::byte* out, int64_t n) {
  const auto* __restrict a = reinterpret_cast<const storage_t<From>*>(operands[0]);
  auto* __restrict o = reinterpret_cast<storage_t<To>*>(out);
  for (int64_t i = 0; i < n; ++i) {
    const To r = convert_value<To, From>(from_storage<From>(a[i]));
    if constexpr (std::is_same_v<To, bool>) o[i] = r ? 1 : 0;
    else o[i] = r;
  }
}

}  // namespace tenact::cpu::ew
