// Tile functions of convert, one per (source, target) dtype pair (225).
// Compiled at O3 (see elementwise_tile_loops.hpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

#include "engines/cpu/kernels/elementwise_functions.hpp"
#include "engines/cpu/kernels/elementwise_kernels.hpp"
#include "engines/cpu/kernels/elementwise_tile_loops.hpp"

namespace tenact::cpu::ew {

TileFn convert_tile_for(DType from, DType to) {
  return visit_dtype(from, [to](auto from_tag) -> TileFn {
    using From = typename decltype(from_tag)::type;
    return visit_dtype(to, [](auto to_tag) -> TileFn {
      using To = typename decltype(to_tag)::type;
      return &convert_tile<To, From>;
    });
  });
}

}  // namespace tenact::cpu::ew
