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

/// a + b and a * b, or `cap` where the exact result exceeds it (estimates
/// and counts that must stay ordered instead of failing); never wraps.
constexpr uint64_t saturating_add(uint64_t a, uint64_t b, uint64_t cap) noexcept {
  uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) || r > cap ? cap : r;
}
constexpr uint64_t saturating_mul(uint64_t a, uint64_t b, uint64_t cap) noexcept {
  uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) || r > cap ? cap : r;
}

}  // namespace tenact
