// The bodies of group_loops.hpp's loops, generic over the computation type
// T (float, double). Included by group_loops.cpp only: every function is
// always_inline so that each instruction-set copy there compiles its own
// vector code (a default-target function may be inlined into a
// wider-target one, not the reverse). The summation trees and the
// formulas are documented in group_loops.hpp.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "engines/cpu/kernels/vector_math.hpp"
#include "engines/cpu/kernels/vector_math_erf_f64.hpp"
#include "engines/cpu/kernels/vector_math_f64.hpp"
#include "extensions/group_loops.hpp"

#define TENACT_LOOP_INLINE inline __attribute__((always_inline))

namespace tenact::builtin::loops {

// -- per-type primitives --------------------------------------------------------

TENACT_LOOP_INLINE float sel(bool c, float a, float b) { return cpu::vmath::select(c, a, b); }
TENACT_LOOP_INLINE double sel(bool c, double a, double b) {
  const uint64_t m = 0u - static_cast<uint64_t>(c);
  return std::bit_cast<double>((std::bit_cast<uint64_t>(a) & m) | (std::bit_cast<uint64_t>(b) & ~m));
}

/// The branch-free vector_math.hpp (f32), vector_math_f64.hpp and
/// vector_math_erf_f64.hpp (f64) functions.
template <class T> struct Math;
template <> struct Math<float> {
  static TENACT_LOOP_INLINE float exp(float x) { return cpu::vmath::exp_f32(x); }
  static TENACT_LOOP_INLINE float log(float x) { return cpu::vmath::log_f32(x); }
  static TENACT_LOOP_INLINE float erf(float x) { return cpu::vmath::erf_f32(x); }
  static TENACT_LOOP_INLINE float tanh(float x) { return cpu::vmath::tanh_f32(x); }
  static constexpr float kRsqrt2 = 0.707106781186547524f;        // 1/sqrt(2)
  static constexpr float kSqrt2OverPi = 0.797884560802865356f;   // sqrt(2/pi)
  static constexpr float kGeluCubic = 0.044715f;
};
template <> struct Math<double> {
  static TENACT_LOOP_INLINE double exp(double x) { return cpu::vmath::exp_f64(x); }
  static TENACT_LOOP_INLINE double log(double x) { return cpu::vmath::log_f64(x); }
  static TENACT_LOOP_INLINE double erf(double x) { return cpu::vmath::erf_f64(x); }
  static TENACT_LOOP_INLINE double tanh(double x) { return cpu::vmath::tanh_f64(x); }
  static constexpr double kRsqrt2 = 0.707106781186547524;
  static constexpr double kSqrt2OverPi = 0.797884560802865356;
  static constexpr double kGeluCubic = 0.044715;
};

/// v when v > m, else m: softmax's running maximum. A NaN may be dropped
/// or kept here; either way it reaches every result of its group through
/// exp(x - m) and the sum, as the formula's NaN does. (This form, unlike a
/// NaN-propagating select, compiles to maxps and vectorizes; SSE, AVX and
/// a scalar tail give the same bits.)
template <class T>
TENACT_LOOP_INLINE T max_step(T m, T v) {
  return v > m ? v : m;
}

// -- sums of a contiguous row ---------------------------------------------------

/// One leaf: 1 <= n <= kLeaf terms in kLanes lanes, combined pairwise.
template <class T>
TENACT_LOOP_INLINE T leaf_sum(const T* __restrict p, int64_t n) {
  T acc[kLanes];
  for (int j = 0; j < kLanes; ++j) acc[j] = T(0);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
#pragma GCC unroll 16
    for (int j = 0; j < kLanes; ++j) acc[j] += p[i + j];
  }
  for (int j = 0; i + j < n; ++j) acc[j] += p[i + j];
#pragma GCC unroll 16
  for (int w = kLanes / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) acc[j] += acc[j + w];
  return acc[0];
}

/// Binary counter over the leaves of one row: push() them in order.
template <class T>
class PairwiseStack {
 public:
  TENACT_LOOP_INLINE void push(T v) {
    int level = 0;
    while (top_ > 0 && level_[top_ - 1] == level) {
      v = node_[top_ - 1] + v;
      --top_;
      ++level;
    }
    node_[top_] = v;
    level_[top_] = static_cast<uint8_t>(level);
    ++top_;
  }
  /// The sum (n >= 1: at least one leaf was pushed; 0 for none).
  TENACT_LOOP_INLINE T result() const {
    if (top_ == 0) return T(0);
    T s = node_[top_ - 1];
    for (int i = top_ - 2; i >= 0; --i) s = node_[i] + s;
    return s;
  }

 private:
  T node_[64];
  uint8_t level_[64];
  int top_ = 0;
};

template <class T>
TENACT_LOOP_INLINE T row_sum(const T* __restrict x, int64_t n) {
  PairwiseStack<T> stack;
  for (int64_t l = 0; l < n; l += kLeaf) stack.push(leaf_sum(x + l, std::min(kLeaf, n - l)));
  return stack.result();
}

/// Sum of term(x[i]): the terms of each chunk are written to buf (kStore:
/// to out + chunk start, which keeps them) and summed from there.
template <bool kStore, class T, class Term>
TENACT_LOOP_INLINE T row_sum_terms(const T* __restrict x, int64_t n, Term term, T* __restrict out) {
  PairwiseStack<T> stack;
  for (int64_t c = 0; c < n; c += kChunk) {
    const int64_t len = std::min(kChunk, n - c);
    T* __restrict buf = kStore ? out + c : out;
    for (int64_t i = 0; i < len; ++i) buf[i] = term(x[c + i]);
    for (int64_t l = 0; l < len; l += kLeaf) stack.push(leaf_sum(buf + l, std::min(kLeaf, len - l)));
  }
  return stack.result();
}

template <class T>
TENACT_LOOP_INLINE T row_max(const T* __restrict x, int64_t n) {
  T acc[kLanes];
  for (int j = 0; j < kLanes; ++j) acc[j] = x[0];
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
#pragma GCC unroll 16
    for (int j = 0; j < kLanes; ++j) acc[j] = max_step(acc[j], x[i + j]);
  }
  for (int j = 0; i + j < n; ++j) acc[j] = max_step(acc[j], x[i + j]);
  for (int w = kLanes / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) acc[j] = max_step(acc[j], acc[j + w]);
  return acc[0];
}

template <class T> struct ExpShift {
  T m;
  TENACT_LOOP_INLINE T operator()(T v) const { return Math<T>::exp(v - m); }
};
template <class T> struct SquaredDeviation {
  T mean;
  TENACT_LOOP_INLINE T operator()(T v) const {
    const T d = v - mean;
    return d * d;
  }
};
template <class T> struct Square {
  TENACT_LOOP_INLINE T operator()(T v) const { return v * v; }
};

// -- sums down columns ---------------------------------------------------------

/// Binary counter over leaves that are vectors of w <= kColumnTile sums.
template <class T>
class ColumnStack {
 public:
  /// Adds leaf v (clobbered).
  TENACT_LOOP_INLINE void push(T* __restrict v, int64_t w) {
    int level = 0;
    while (top_ > 0 && level_[top_ - 1] == level) {
      const T* __restrict left = node_[top_ - 1];
      for (int64_t j = 0; j < w; ++j) v[j] = left[j] + v[j];
      --top_;
      ++level;
    }
    T* __restrict dst = node_[top_];
    for (int64_t j = 0; j < w; ++j) dst[j] = v[j];
    level_[top_] = static_cast<uint8_t>(level);
    ++top_;
  }
  /// The sums (n >= 1: at least one leaf was pushed; 0 for none).
  TENACT_LOOP_INLINE void result(T* __restrict out, int64_t w) const {
    const int top = top_ > 0 ? top_ : 1;
    for (int64_t j = 0; j < w; ++j) out[j] = top_ > 0 ? node_[top - 1][j] : T(0);
    for (int i = top - 2; i >= 0; --i)
      for (int64_t j = 0; j < w; ++j) out[j] = node_[i][j] + out[j];
  }

 private:
  T node_[64][kColumnTile];
  uint8_t level_[64];
  int top_ = 0;
};

/// The columns [j0, j0 + w) of block row o: x(k, j) = x[k * inner + j].
template <class T>
struct Tile {
  const T* __restrict x;
  T* __restrict y;
  int64_t n, inner, w;

  static TENACT_LOOP_INLINE Tile of(const GroupBlock<T>& b, int64_t item) {
    const int64_t tiles = (b.inner + kColumnTile - 1) / kColumnTile;
    const int64_t o = item / tiles;
    const int64_t j0 = (item % tiles) * kColumnTile;
    const int64_t base = o * b.n * b.inner + j0;
    return Tile{b.x + base, b.y + base, b.n, b.inner, std::min(kColumnTile, b.inner - j0)};
  }
};

/// out[j] = sum over k of term(v(k, j), j): leaves of 4 consecutive k.
/// kStore: each term is also written to y(k, j).
template <bool kStore, class T, class Term>
TENACT_LOOP_INLINE void column_sum(const Tile<T>& t, const Term& term, T* __restrict out) {
  ColumnStack<T> stack;
  T acc[kColumnTile];
  for (int64_t k0 = 0; k0 < t.n; k0 += 4) {
    const int64_t kk = std::min<int64_t>(4, t.n - k0);
    for (int64_t k = k0; k < k0 + kk; ++k) {
      const T* __restrict xr = t.x + k * t.inner;
      T* __restrict yr = t.y + k * t.inner;
      if (k == k0) {
        for (int64_t j = 0; j < t.w; ++j) {
          const T v = term(xr[j], j);
          if constexpr (kStore) yr[j] = v;
          acc[j] = v;
        }
      } else {
        for (int64_t j = 0; j < t.w; ++j) {
          const T v = term(xr[j], j);
          if constexpr (kStore) yr[j] = v;
          acc[j] = acc[j] + v;
        }
      }
    }
    stack.push(acc, t.w);
  }
  stack.result(out, t.w);
}

template <class T> struct ColumnIdentity {
  TENACT_LOOP_INLINE T operator()(T v, int64_t) const { return v; }
};
template <class T> struct ColumnExpShift {
  const T* __restrict m;
  TENACT_LOOP_INLINE T operator()(T v, int64_t j) const { return Math<T>::exp(v - m[j]); }
};
template <class T> struct ColumnSquaredDeviation {
  const T* __restrict mean;
  TENACT_LOOP_INLINE T operator()(T v, int64_t j) const {
    const T d = v - mean[j];
    return d * d;
  }
};
template <class T> struct ColumnSquare {
  TENACT_LOOP_INLINE T operator()(T v, int64_t) const { return v * v; }
};

template <class T>
TENACT_LOOP_INLINE void column_max(const Tile<T>& t, T* __restrict m) {
  for (int64_t j = 0; j < t.w; ++j) m[j] = t.x[j];
  for (int64_t k = 1; k < t.n; ++k) {
    const T* __restrict xr = t.x + k * t.inner;
    for (int64_t j = 0; j < t.w; ++j) m[j] = max_step(m[j], xr[j]);
  }
}

}  // namespace tenact::builtin::loops
