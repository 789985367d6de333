// Tile functions of the unary elementwise ops (negate ... not).
// Compiled at O3 (see elementwise_tile_loops.hpp); the pragma precedes the
// includes so inline library code and our loops share one setting.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

#include "engines/cpu/kernels/elementwise_functions.hpp"
#include "engines/cpu/kernels/elementwise_kernels.hpp"
#include "engines/cpu/kernels/elementwise_tile_loops.hpp"
#include "engines/cpu/kernels/elementwise_tiles_vmath.hpp"

namespace tenact::cpu::ew {

namespace {

template <class Op>
TileFn unary_for(DType t) {
  return visit_dtype(t, [](auto tag) -> TileFn {
    using T = typename decltype(tag)::type;
    if constexpr (Op::template admits<T>) return &unary_tile<Op, T>;
    else return nullptr;
  });
}

}  // namespace

TileFn unary_tile_for(OpKind kind, DType t) {
  // f32 exp/log/tanh/logistic/expm1/log1p/sine/cosine: the widest copy
  // this CPU runs (same bits as unary_tile<Op, float>, see
  // elementwise_tiles_vmath.hpp).
  if (t == DType::F32)
    if (TileFn wide = vmath_f32_tile(kind, best_vmath_isa())) return wide;
  // f64 exp/log/tanh/logistic/expm1/log1p likewise (vector_math_f64.hpp).
  if (t == DType::F64)
    if (TileFn wide = vmath_f64_tile(kind, best_vmath_isa())) return wide;
  switch (kind) {
    case OpKind::Negate: return unary_for<Negate>(t);
    case OpKind::Abs: return unary_for<Abs>(t);
    case OpKind::Sign: return unary_for<Sign>(t);
    case OpKind::Exponential: return unary_for<Exp>(t);
    case OpKind::Log: return unary_for<Log>(t);
    case OpKind::Sine: return unary_for<Sine>(t);
    case OpKind::Cosine: return unary_for<Cosine>(t);
    case OpKind::Tanh: return unary_for<Tanh>(t);
    case OpKind::Sqrt: return unary_for<Sqrt>(t);
    case OpKind::Rsqrt: return unary_for<Rsqrt>(t);
    case OpKind::ExponentialMinusOne: return unary_for<ExponentialMinusOne>(t);
    case OpKind::LogPlusOne: return unary_for<LogPlusOne>(t);
    case OpKind::Conj: return unary_for<Conj>(t);
    case OpKind::Floor: return unary_for<Floor>(t);
    case OpKind::Ceil: return unary_for<Ceil>(t);
    case OpKind::RoundNearestEven: return unary_for<RoundNearestEven>(t);
    case OpKind::RoundNearestAfz: return unary_for<RoundNearestAfz>(t);
    case OpKind::Logistic: return unary_for<Logistic>(t);
    case OpKind::Not: return unary_for<Not>(t);
    default: return nullptr;
  }
}

DType unary_result_dtype(OpKind kind, DType t) {
  return kind == OpKind::Abs ? real_component(t) : t;
}

}  // namespace tenact::cpu::ew
