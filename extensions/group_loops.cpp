// The families' loops (group_loops.hpp) and their instruction-set copies.
// The pragma precedes the includes so that the inline helpers and the
// loops share one setting: O3 as the CPU kernels' tile files, and no FMA
// contraction (the AVX-512 copies could otherwise fuse a*b+c and change
// bits).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "fp-contract=off")
#elif defined(__clang__)
#pragma clang fp contract(off)
#endif

#include "extensions/group_loops.hpp"

#include "extensions/group_loops_impl.hpp"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define TENACT_LOOPS_X86 1
#else
#define TENACT_LOOPS_X86 0
#endif

namespace tenact::builtin {

namespace loops {
namespace {

// -- softmax and log_softmax: m = max, s = sum exp(x - m) ------------------------

template <class T>
TENACT_LOOP_INLINE void softmax_row(const T* __restrict x, T* __restrict y, int64_t n) {
  const T m = row_max(x, n);
  const T s = row_sum_terms<true>(x, n, ExpShift<T>{m}, y);  // y = exp(x - m)
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] / s;
}

template <class T>
TENACT_LOOP_INLINE void log_softmax_row(const T* __restrict x, T* __restrict y, int64_t n) {
  T buf[kChunk];
  const T m = row_max(x, n);
  const T lse = Math<T>::log(row_sum_terms<false>(x, n, ExpShift<T>{m}, buf));
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - lse;
}

template <class T>
TENACT_LOOP_INLINE void softmax_tile(const Tile<T>& t) {
  T m[kColumnTile], s[kColumnTile];
  column_max(t, m);
  column_sum<true>(t, ColumnExpShift<T>{m}, s);  // y = exp(x - m)
  for (int64_t k = 0; k < t.n; ++k) {
    T* __restrict yr = t.y + k * t.inner;
    for (int64_t j = 0; j < t.w; ++j) yr[j] = yr[j] / s[j];
  }
}

template <class T>
TENACT_LOOP_INLINE void log_softmax_tile(const Tile<T>& t) {
  T m[kColumnTile], lse[kColumnTile];
  column_max(t, m);
  column_sum<false>(t, ColumnExpShift<T>{m}, lse);
  for (int64_t j = 0; j < t.w; ++j) lse[j] = Math<T>::log(lse[j]);
  for (int64_t k = 0; k < t.n; ++k) {
    const T* __restrict xr = t.x + k * t.inner;
    T* __restrict yr = t.y + k * t.inner;
    for (int64_t j = 0; j < t.w; ++j) yr[j] = (xr[j] - m[j]) - lse[j];
  }
}

// -- layer_norm: (x - mean) / sqrt(var + eps) [* scale + bias] ----------------

template <class T>
TENACT_LOOP_INLINE void layer_norm_row(const GroupBlock<T>& b, const T* __restrict x,
                                       T* __restrict y) {
  T buf[kChunk];
  const int64_t n = b.n;
  const T count = static_cast<T>(n);
  const T mean = row_sum(x, n) / count;
  const T var = row_sum_terms<false>(x, n, SquaredDeviation<T>{mean}, buf) / count;
  const T den = std::sqrt(var + b.epsilon);
  if (b.scale != nullptr) {
    const T* __restrict scale = b.scale;
    const T* __restrict bias = b.bias;
    for (int64_t i = 0; i < n; ++i) y[i] = ((x[i] - mean) / den) * scale[i] + bias[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) / den;
  }
}

template <class T>
TENACT_LOOP_INLINE void layer_norm_tile(const GroupBlock<T>& b, const Tile<T>& t) {
  T mean[kColumnTile], den[kColumnTile];
  const T count = static_cast<T>(t.n);
  column_sum<false>(t, ColumnIdentity<T>{}, mean);
  for (int64_t j = 0; j < t.w; ++j) mean[j] = mean[j] / count;
  column_sum<false>(t, ColumnSquaredDeviation<T>{mean}, den);
  for (int64_t j = 0; j < t.w; ++j) den[j] = std::sqrt(den[j] / count + b.epsilon);
  for (int64_t k = 0; k < t.n; ++k) {
    const T* __restrict xr = t.x + k * t.inner;
    T* __restrict yr = t.y + k * t.inner;
    if (b.scale != nullptr) {
      const T scale = b.scale[k], bias = b.bias[k];
      for (int64_t j = 0; j < t.w; ++j) yr[j] = ((xr[j] - mean[j]) / den[j]) * scale + bias;
    } else {
      for (int64_t j = 0; j < t.w; ++j) yr[j] = (xr[j] - mean[j]) / den[j];
    }
  }
}

// -- rms_norm: x / sqrt(mean(x * x) + eps) [* scale] ---------------------------

template <class T>
TENACT_LOOP_INLINE void rms_norm_row(const GroupBlock<T>& b, const T* __restrict x,
                                     T* __restrict y) {
  T buf[kChunk];
  const int64_t n = b.n;
  const T ms = row_sum_terms<false>(x, n, Square<T>{}, buf) / static_cast<T>(n);
  const T den = std::sqrt(ms + b.epsilon);
  if (b.scale != nullptr) {
    const T* __restrict scale = b.scale;
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] / den) * scale[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] / den;
  }
}

template <class T>
TENACT_LOOP_INLINE void rms_norm_tile(const GroupBlock<T>& b, const Tile<T>& t) {
  T den[kColumnTile];
  const T count = static_cast<T>(t.n);
  column_sum<false>(t, ColumnSquare<T>{}, den);
  for (int64_t j = 0; j < t.w; ++j) den[j] = std::sqrt(den[j] / count + b.epsilon);
  for (int64_t k = 0; k < t.n; ++k) {
    const T* __restrict xr = t.x + k * t.inner;
    T* __restrict yr = t.y + k * t.inner;
    if (b.scale != nullptr) {
      const T scale = b.scale[k];
      for (int64_t j = 0; j < t.w; ++j) yr[j] = (xr[j] / den[j]) * scale;
    } else {
      for (int64_t j = 0; j < t.w; ++j) yr[j] = xr[j] / den[j];
    }
  }
}

// -- gelu ------------------------------------------------------------------------

/// x * (1 + erf(x / sqrt(2))) / 2, evaluated as (x / 2) * (1 + erf(x *
/// fl(1/sqrt(2)))): x / sqrt(2) takes two roundings either way; halving x
/// first is exact (but for subnormal x) and saves a rounding, and x * 2
/// cannot overflow near the largest finite x. gelu(-inf) = -0, the limit
/// (the formula would give -inf * 0 = NaN).
template <class T>
TENACT_LOOP_INLINE T gelu_erf(T x) {
  const T r = (T(0.5) * x) * (T(1) + Math<T>::erf(x * Math<T>::kRsqrt2));
  return sel(x == -std::numeric_limits<T>::infinity(), T(-0.0), r);
}

/// x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) / 2, x^3 = (x * x) * x,
/// halved first as above; gelu(-inf) = -0. (x^3 overflows for large |x|
/// as written; tanh(±inf) = ±1 then gives the right limits.)
template <class T>
TENACT_LOOP_INLINE T gelu_tanh(T x) {
  const T cube = (x * x) * x;
  const T inner = Math<T>::kSqrt2OverPi * (x + Math<T>::kGeluCubic * cube);
  const T r = (T(0.5) * x) * (T(1) + Math<T>::tanh(inner));
  return sel(x == -std::numeric_limits<T>::infinity(), T(-0.0), r);
}

// -- entry points per family ------------------------------------------------------

template <class T>
TENACT_LOOP_INLINE void softmax_items(const GroupBlock<T>& b, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    if (b.inner == 1) softmax_row(b.x + i * b.n, b.y + i * b.n, b.n);
    else softmax_tile(Tile<T>::of(b, i));
  }
}
template <class T>
TENACT_LOOP_INLINE void log_softmax_items(const GroupBlock<T>& b, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    if (b.inner == 1) log_softmax_row(b.x + i * b.n, b.y + i * b.n, b.n);
    else log_softmax_tile(Tile<T>::of(b, i));
  }
}
template <class T>
TENACT_LOOP_INLINE void layer_norm_items(const GroupBlock<T>& b, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    if (b.inner == 1) layer_norm_row(b, b.x + i * b.n, b.y + i * b.n);
    else layer_norm_tile(b, Tile<T>::of(b, i));
  }
}
template <class T>
TENACT_LOOP_INLINE void rms_norm_items(const GroupBlock<T>& b, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    if (b.inner == 1) rms_norm_row(b, b.x + i * b.n, b.y + i * b.n);
    else rms_norm_tile(b, Tile<T>::of(b, i));
  }
}
template <class T>
TENACT_LOOP_INLINE void gelu_erf_map(const T* __restrict x, T* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = gelu_erf(x[i]);
}
template <class T>
TENACT_LOOP_INLINE void gelu_tanh_map(const T* __restrict x, T* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = gelu_tanh(x[i]);
}

// One copy of every entry point per target and computation type T: TARGET
// is empty for the baseline or a target attribute.
#define TENACT_DEFINE_LOOPS(SUFFIX, TARGET, T)                                                  \
  TARGET void softmax_##SUFFIX(const GroupBlock<T>& b, int64_t i0, int64_t i1) {                \
    softmax_items(b, i0, i1);                                                                   \
  }                                                                                             \
  TARGET void log_softmax_##SUFFIX(const GroupBlock<T>& b, int64_t i0, int64_t i1) {            \
    log_softmax_items(b, i0, i1);                                                               \
  }                                                                                             \
  TARGET void layer_norm_##SUFFIX(const GroupBlock<T>& b, int64_t i0, int64_t i1) {             \
    layer_norm_items(b, i0, i1);                                                                \
  }                                                                                             \
  TARGET void rms_norm_##SUFFIX(const GroupBlock<T>& b, int64_t i0, int64_t i1) {               \
    rms_norm_items(b, i0, i1);                                                                  \
  }                                                                                             \
  TARGET void gelu_erf_##SUFFIX(const T* x, T* y, int64_t n) { gelu_erf_map(x, y, n); }         \
  TARGET void gelu_tanh_##SUFFIX(const T* x, T* y, int64_t n) { gelu_tanh_map(x, y, n); }       \
  const LoopTable<T> kTable_##SUFFIX{softmax_##SUFFIX,  log_softmax_##SUFFIX,                    \
                                     layer_norm_##SUFFIX, rms_norm_##SUFFIX,                     \
                                     gelu_erf_##SUFFIX, gelu_tanh_##SUFFIX};

// 512-bit vectors, as the CPU kernels' vmath tiles (g++ would otherwise
// pick the width from its tuning).
#if defined(__clang__)
#define TENACT_AVX512_TARGET __attribute__((target("avx512f")))
#else
#define TENACT_AVX512_TARGET __attribute__((target("avx512f,prefer-vector-width=512")))
#endif

TENACT_DEFINE_LOOPS(baseline, , float)
TENACT_DEFINE_LOOPS(f64_baseline, , double)
#if TENACT_LOOPS_X86
TENACT_DEFINE_LOOPS(avx2, __attribute__((target("avx2"))), float)
TENACT_DEFINE_LOOPS(avx512, TENACT_AVX512_TARGET, float)
TENACT_DEFINE_LOOPS(f64_avx2, __attribute__((target("avx2"))), double)
TENACT_DEFINE_LOOPS(f64_avx512, TENACT_AVX512_TARGET, double)
#endif

}  // namespace
}  // namespace loops

const LoopTable<float>& f32_loops(LoopIsa isa) {
#if TENACT_LOOPS_X86
  if (isa == LoopIsa::Avx2) return loops::kTable_avx2;
  if (isa == LoopIsa::Avx512) return loops::kTable_avx512;
#endif
  (void)isa;
  return loops::kTable_baseline;
}

const LoopTable<double>& f64_loops(LoopIsa isa) {
#if TENACT_LOOPS_X86
  if (isa == LoopIsa::Avx2) return loops::kTable_f64_avx2;
  if (isa == LoopIsa::Avx512) return loops::kTable_f64_avx512;
#endif
  (void)isa;
  return loops::kTable_f64_baseline;
}

}  // namespace tenact::builtin
