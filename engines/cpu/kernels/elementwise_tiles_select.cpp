// Tile functions of compare, select and clamp. Compiled at O3 (see
// elementwise_tile_loops.hpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

#include "engines/cpu/kernels/elementwise_functions.hpp"
#include "engines/cpu/kernels/elementwise_kernels.hpp"
#include "engines/cpu/kernels/elementwise_tile_loops.hpp"

namespace tenact::cpu::ew {

namespace {

template <CompareDirection D>
TileFn compare_for(DType t) {
  return visit_dtype(t, [](auto tag) -> TileFn {
    using T = typename decltype(tag)::type;
    return &binary_tile<Compare<D>, T>;
  });
}

}  // namespace

TileFn compare_tile_for(CompareDirection direction, DType t) {
  switch (direction) {
    case CompareDirection::EQ: return compare_for<CompareDirection::EQ>(t);
    case CompareDirection::NE: return compare_for<CompareDirection::NE>(t);
    case CompareDirection::LT: return compare_for<CompareDirection::LT>(t);
    case CompareDirection::LE: return compare_for<CompareDirection::LE>(t);
    case CompareDirection::GT: return compare_for<CompareDirection::GT>(t);
    case CompareDirection::GE: return compare_for<CompareDirection::GE>(t);
  }
  return nullptr;
}

TileFn select_tile_for(DType t) {
  return visit_element_size(t, [](auto tag) -> TileFn {
    return &select_tile<typename decltype(tag)::type>;
  });
}

TileFn clamp_tile_for(DType t) {
  return visit_dtype(t, [](auto tag) -> TileFn {
    using T = typename decltype(tag)::type;
    return &ternary_tile<Clamp, T>;
  });
}

}  // namespace tenact::cpu::ew
