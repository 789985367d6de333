// The matrix product without BLAS: integers (wrapping, in the unsigned
// type of their width) and floating products whose sizes BLAS's 32-bit
// integers cannot describe.
//
// Contract: C (m x n, row-major) = A (m x k) * B (k x n), all dense
// row-major, for the rows [row_begin, row_end) of C. Each C element sums
// its k products in order of k (error of a float sum <= k * eps * sum|a||b|
// to first order). Blocked over k and n so that a panel of B stays in
// cache while the rows of A stream past it. No allocation; writes only
// its rows of C.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace tenact::cpu::dot {

/// a * b that wraps for unsigned integers narrower than int (which would
/// otherwise promote to int and overflow).
template <class C> inline C mul(const C& a, const C& b) {
  if constexpr (std::is_integral_v<C> && sizeof(C) < sizeof(unsigned)) {
    return static_cast<C>(static_cast<unsigned>(a) * static_cast<unsigned>(b));
  } else {
    return a * b;
  }
}

/// c[j] += a * b[j] for j < n.
template <class C>
void axpy_row(C* __restrict c, const C a, const C* __restrict b, int64_t n) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    for (int t = 0; t < 16; ++t) c[j + t] = static_cast<C>(c[j + t] + mul(a, b[j + t]));
  for (; j < n; ++j) c[j] = static_cast<C>(c[j] + mul(a, b[j]));
}

inline constexpr int64_t kLoopBlockK = 256;
inline constexpr int64_t kLoopBlockN = 512;

template <class C>
void gemm_rows(const C* a, const C* b, C* c, int64_t n, int64_t k, int64_t row_begin,
               int64_t row_end) {
  for (int64_t i = row_begin; i < row_end; ++i) std::fill(c + i * n, c + (i + 1) * n, C{});
  for (int64_t n0 = 0; n0 < n; n0 += kLoopBlockN) {
    const int64_t nw = std::min(kLoopBlockN, n - n0);
    for (int64_t k0 = 0; k0 < k; k0 += kLoopBlockK) {
      const int64_t k1 = std::min(k, k0 + kLoopBlockK);
      for (int64_t i = row_begin; i < row_end; ++i) {
        C* ci = c + i * n + n0;
        for (int64_t p = k0; p < k1; ++p) axpy_row(ci, a[i * k + p], b + p * n + n0, nw);
      }
    }
  }
}

}  // namespace tenact::cpu::dot
