// Checked integer arithmetic for sizes, dimensions and byte counts.
// Overflow is reported, never wrapped (DESIGN.md, "Rules that hold everywhere").
#pragma once

#include <cstdint>
#include <optional>

namespace tenact {

inline std::optional<int64_t> checked_add(int64_t a, int64_t b) noexcept {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_sub(int64_t a, int64_t b) noexcept {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) noexcept {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<uint64_t> checked_add_u(uint64_t a, uint64_t b) noexcept {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<uint64_t> checked_mul_u(uint64_t a, uint64_t b) noexcept {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace tenact
