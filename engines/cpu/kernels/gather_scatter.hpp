// gather and scatter on the CPU, with StableHLO's full dimension numbers
// (batching dims included). Called by run_indexing.
//
// Contract:
// - gather clamps every start index as StableHLO does:
//   clamp(start, 0, operand_dim - slice_size); unsigned indices are taken as
//   they are (large ones clamp to the end). Windows copy by element size.
//   Parallel over index positions (disjoint output windows).
// - scatter skips out-of-bounds update elements one by one and applies the
//   updates serially in row-major order of `updates` (replace: the last
//   duplicate wins). f16/bf16 add and multiply compute in f32 and round to
//   the dtype after every update; bool add is or, multiply is and; complex
//   max/min are lexicographic. The copy of the operand into the result is
//   parallel; the updates are not (their order is the semantics). The
//   InPlace variant skips the copy: the same updates go straight into
//   operand 0's buffer (dense row-major), which is returned as the result.
// - Indices are never trusted: any value is either clamped (gather) or
//   skipped (scatter). Attribute shapes are checked here as far as memory
//   safety needs; a malformed call is an error, never a crash.
#pragma once

#include <vector>

#include "core/error.hpp"
#include "core/tensor.hpp"
#include "engines/cpu/kernels/kernel.hpp"

namespace tenact::cpu {

Result<std::vector<HostTensor>> run_gather(const KernelCall& call);
Result<std::vector<HostTensor>> run_scatter(const KernelCall& call);

}  // namespace tenact::cpu
