// The f32 vector-math tile loops per instruction set (see
// elementwise_tiles_vmath.hpp). The pragma precedes the includes so that the
// inline vmath functions and the loops share one setting: O3 as the other
// tile files, and no FMA contraction (the AVX-512 copies could otherwise
// fuse a*b+c and change bits).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "fp-contract=off")
#elif defined(__clang__)
#pragma clang fp contract(off)
#endif

#include "engines/cpu/kernels/elementwise_tiles_vmath.hpp"

#include "engines/cpu/kernels/elementwise_functions.hpp"
#include "engines/cpu/kernels/vector_math.hpp"
#include "engines/cpu/kernels/vector_math_f64.hpp"
#include "engines/cpu/kernels/vector_math_trig_f64.hpp"
#include "engines/cpu/kernels/vector_math_via_f64.hpp"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define TENACT_VMATH_X86 1
#else
#define TENACT_VMATH_X86 0
#endif

namespace tenact::cpu::ew {

namespace {

using F32Fn = float (*)(float);

/// The loop bodies every variant inlines (a default-target function may be
/// inlined into a wider-target one, not the reverse), one struct per shape.
/// Plain: out[i] = Fn(in[i]).
template <F32Fn Fn>
struct Plain {
  [[gnu::always_inline]] static void run(const std::byte* const* operands, std::byte* out,
                                         int64_t n) {
    const float* __restrict a = reinterpret_cast<const float*>(operands[0]);
    float* __restrict o = reinterpret_cast<float*>(out);
    for (int64_t i = 0; i < n; ++i) o[i] = Fn(a[i]);
  }
};

/// Plain64: out[i] = Fn(in[i]) on f64.
template <double (*Fn)(double)>
struct Plain64 {
  [[gnu::always_inline]] static void run(const std::byte* const* operands, std::byte* out,
                                         int64_t n) {
    const double* __restrict a = reinterpret_cast<const double*>(operands[0]);
    double* __restrict o = reinterpret_cast<double*>(out);
    for (int64_t i = 0; i < n; ++i) o[i] = Fn(a[i]);
  }
};

/// Binary: out[i] = Op(a[i], b[i]) on f32/f64 arithmetic, maximum and
/// minimum (the body of binary_tile<Op, T>). One IEEE operation or a
/// compare-and-select, which rounds the same at every width; only a NaN's
/// payload may differ when both operands are NaN (vector code may commute
/// add and multiply, and the instruction keeps its first source's payload;
/// the format fixes that the result is NaN, not which payload it carries).
template <class Op, class T>
struct Binary {
  [[gnu::always_inline]] static void run(const std::byte* const* operands, std::byte* out, int64_t n) {
    const T* __restrict a = reinterpret_cast<const T*>(operands[0]);
    const T* __restrict b = reinterpret_cast<const T*>(operands[1]);
    T* __restrict o = reinterpret_cast<T*>(out);
    const Op op{};
    for (int64_t i = 0; i < n; ++i) o[i] = op(a[i], b[i]);
  }
};

/// Checked: out[i] = Core(in[i]) over the tile, noting whether any input is
/// Outside (both vectorized), then, only if one is, Libm(in[i]) where
/// Outside(in[i]): the bits of the scalar `Outside ? Libm : Core`
/// (vector_math_via_f64.hpp, vector_math_trig_f64.hpp) at the cost of one
/// pass when no input is. T: float or double.
template <class T, T (*Core)(T), bool (*Outside)(T), T (*Libm)(T)>
struct Checked {
  [[gnu::always_inline]] static void run(const std::byte* const* operands, std::byte* out,
                                         int64_t n) {
    const T* __restrict a = reinterpret_cast<const T*>(operands[0]);
    T* __restrict o = reinterpret_cast<T*>(out);
    int any_outside = 0;
    for (int64_t i = 0; i < n; ++i) {
      o[i] = Core(a[i]);
      any_outside |= static_cast<int>(Outside(a[i]));
    }
    if (any_outside != 0) [[unlikely]]
      for (int64_t i = 0; i < n; ++i)
        if (Outside(a[i])) o[i] = Libm(a[i]);
  }
};

template <class Body>
void tile_baseline(const std::byte* const* operands, std::byte* out, int64_t n) {
  Body::run(operands, out, n);
}

#if TENACT_VMATH_X86
template <class Body>
__attribute__((target("avx2"))) void tile_avx2(const std::byte* const* operands, std::byte* out,
                                                int64_t n) {
  Body::run(operands, out, n);
}

// 512-bit vectors: on Zen 4 the tanh loop ran ~1.5x faster than with AVX2
// (g++ would otherwise pick the vector width from its tuning).
#if defined(__clang__)
#define TENACT_VMATH_AVX512_TARGET "avx512f"
#else
#define TENACT_VMATH_AVX512_TARGET "avx512f,prefer-vector-width=512"
#endif
template <class Body>
__attribute__((target(TENACT_VMATH_AVX512_TARGET))) void tile_avx512(
    const std::byte* const* operands, std::byte* out, int64_t n) {
  Body::run(operands, out, n);
}
#endif

template <class Body>
TileFn tile_for(VmathIsa isa) {
  switch (isa) {
    case VmathIsa::Baseline: return &tile_baseline<Body>;
#if TENACT_VMATH_X86
    case VmathIsa::Avx2: return &tile_avx2<Body>;
    case VmathIsa::Avx512: return &tile_avx512<Body>;
#endif
    default: return nullptr;
  }
}

}  // namespace

TileFn vmath_f32_tile(OpKind kind, VmathIsa isa) {
  switch (kind) {
    case OpKind::Exponential: return tile_for<Plain<vmath::exp_f32>>(isa);
    case OpKind::Log: return tile_for<Plain<vmath::log_f32>>(isa);
    case OpKind::Tanh: return tile_for<Plain<vmath::tanh_f32>>(isa);
    case OpKind::Logistic: return tile_for<Plain<vmath::logistic_f32>>(isa);
    case OpKind::ExponentialMinusOne: return tile_for<Plain<vmath::expm1_f32>>(isa);
    case OpKind::LogPlusOne: return tile_for<Plain<vmath::log1p_f32>>(isa);
    case OpKind::Sine:
      return tile_for<Checked<float, vmath::sin_f32_core, vmath::trig_f32_fallback, vmath::sin_f32_libm>>(isa);
    case OpKind::Cosine:
      return tile_for<Checked<float, vmath::cos_f32_core, vmath::trig_f32_fallback, vmath::cos_f32_libm>>(isa);
    default: return nullptr;
  }
}

TileFn vmath_f64_tile(OpKind kind, VmathIsa isa) {
  switch (kind) {
    case OpKind::Exponential: return tile_for<Plain64<vmath::exp_f64>>(isa);
    case OpKind::Log: return tile_for<Plain64<vmath::log_f64>>(isa);
    case OpKind::Tanh: return tile_for<Plain64<vmath::tanh_f64>>(isa);
    case OpKind::Logistic: return tile_for<Plain64<vmath::logistic_f64>>(isa);
    case OpKind::ExponentialMinusOne: return tile_for<Plain64<vmath::expm1_f64>>(isa);
    case OpKind::LogPlusOne: return tile_for<Plain64<vmath::log1p_f64>>(isa);
    case OpKind::Sine:
      return tile_for<Checked<double, vmath::sin_f64_core, vmath::trig_f64_fallback, vmath::sin_f64_libm>>(isa);
    case OpKind::Cosine:
      return tile_for<Checked<double, vmath::cos_f64_core, vmath::trig_f64_fallback, vmath::cos_f64_libm>>(isa);
    default: return nullptr;
  }
}

namespace {

/// The f32 or f64 copy for a wide isa (the baseline is binary_tile itself).
template <class Op>
TileFn binary_wide_for(DType t, VmathIsa isa) {
  if (isa == VmathIsa::Baseline) return nullptr;
  if (t == DType::F32) return tile_for<Binary<Op, float>>(isa);
  if (t == DType::F64) return tile_for<Binary<Op, double>>(isa);
  return nullptr;
}

}  // namespace

TileFn binary_float_tile(OpKind kind, DType t, VmathIsa isa) {
  switch (kind) {
    case OpKind::Add: return binary_wide_for<Add>(t, isa);
    case OpKind::Subtract: return binary_wide_for<Subtract>(t, isa);
    case OpKind::Multiply: return binary_wide_for<Multiply>(t, isa);
    case OpKind::Divide: return binary_wide_for<Divide>(t, isa);
    case OpKind::Maximum: return binary_wide_for<Maximum>(t, isa);
    case OpKind::Minimum: return binary_wide_for<Minimum>(t, isa);
    default: return nullptr;
  }
}

}  // namespace tenact::cpu::ew
