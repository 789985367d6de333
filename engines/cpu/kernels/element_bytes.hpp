// Elements as bytes, for kernels that move elements without arithmetic
// (copies, transposes, gathers, scatters' replace): a 16-byte element type
// and loads and stores through memcpy (no alignment or aliasing
// assumptions; each compiles to single moves).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tenact::cpu {

/// The element type of 16-byte dtypes (c128) when only bytes matter.
struct Bytes16 {
  uint64_t lo, hi;
};

template <class T>
inline T load_element(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class T>
inline void store_element(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

}  // namespace tenact::cpu
