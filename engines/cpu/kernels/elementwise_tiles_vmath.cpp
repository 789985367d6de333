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

#include "engines/cpu/kernels/vector_math.hpp"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define TENACT_VMATH_X86 1
#else
#define TENACT_VMATH_X86 0
#endif

namespace tenact::cpu::ew {

namespace {

using F32Fn = float (*)(float);

/// out[i] = Fn(in[i]): the body every variant inlines (a default-target
/// function may be inlined into a wider-target one, not the reverse).
template <F32Fn Fn>
[[gnu::always_inline]] inline void map_f32(const std::byte* const* operands, std::byte* out,
                                           int64_t n) {
  const float* __restrict a = reinterpret_cast<const float*>(operands[0]);
  float* __restrict o = reinterpret_cast<float*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = Fn(a[i]);
}

template <F32Fn Fn>
void tile_baseline(const std::byte* const* operands, std::byte* out, int64_t n) {
  map_f32<Fn>(operands, out, n);
}

#if TENACT_VMATH_X86
template <F32Fn Fn>
__attribute__((target("avx2"))) void tile_avx2(const std::byte* const* operands, std::byte* out,
                                                int64_t n) {
  map_f32<Fn>(operands, out, n);
}

// 512-bit vectors: on Zen 4 the tanh loop ran ~1.5x faster than with AVX2
// (g++ would otherwise pick the vector width from its tuning).
#if defined(__clang__)
#define TENACT_VMATH_AVX512_TARGET "avx512f"
#else
#define TENACT_VMATH_AVX512_TARGET "avx512f,prefer-vector-width=512"
#endif
template <F32Fn Fn>
__attribute__((target(TENACT_VMATH_AVX512_TARGET))) void tile_avx512(
    const std::byte* const* operands, std::byte* out, int64_t n) {
  map_f32<Fn>(operands, out, n);
}
#endif

template <F32Fn Fn>
TileFn tile_for(VmathIsa isa) {
  switch (isa) {
    case VmathIsa::Baseline: return &tile_baseline<Fn>;
#if TENACT_VMATH_X86
    case VmathIsa::Avx2: return &tile_avx2<Fn>;
    case VmathIsa::Avx512: return &tile_avx512<Fn>;
#endif
    default: return nullptr;
  }
}

}  // namespace

TileFn vmath_f32_tile(OpKind kind, VmathIsa isa) {
  switch (kind) {
    case OpKind::Exponential: return tile_for<vmath::exp_f32>(isa);
    case OpKind::Log: return tile_for<vmath::log_f32>(isa);
    case OpKind::Tanh: return tile_for<vmath::tanh_f32>(isa);
    case OpKind::Logistic: return tile_for<vmath::logistic_f32>(isa);
    default: return nullptr;
  }
}

}  // namespace tenact::cpu::ew
