// Tile functions of the binary arithmetic and logical elementwise ops.
// Compiled at O3 (see elementwise_tile_loops.hpp).
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
TileFn binary_for(DType t) {
  return visit_dtype(t, [](auto tag) -> TileFn {
    using T = typename decltype(tag)::type;
    if constexpr (Op::template admits<T>) return &binary_tile<Op, T>;
    else return nullptr;
  });
}

}  // namespace

TileFn binary_tile_for(OpKind kind, DType t) {
  // f32/f64 arithmetic, maximum and minimum: the widest copy this CPU runs
  // (same bits, elementwise_tiles_vmath.cpp).
  if (t == DType::F32 || t == DType::F64)
    if (TileFn wide = binary_float_tile(kind, t, best_vmath_isa())) return wide;
  switch (kind) {
    case OpKind::Add: return binary_for<Add>(t);
    case OpKind::Subtract: return binary_for<Subtract>(t);
    case OpKind::Multiply: return binary_for<Multiply>(t);
    case OpKind::Divide: return binary_for<Divide>(t);
    case OpKind::Remainder: return binary_for<Remainder>(t);
    case OpKind::Maximum: return binary_for<Maximum>(t);
    case OpKind::Minimum: return binary_for<Minimum>(t);
    case OpKind::Power: return binary_for<Power>(t);
    case OpKind::And: return binary_for<And>(t);
    case OpKind::Or: return binary_for<Or>(t);
    case OpKind::Xor: return binary_for<Xor>(t);
    default: return nullptr;
  }
}

}  // namespace tenact::cpu::ew
