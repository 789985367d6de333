// How much work a batch is, in element visits, before running it: what the
// CPU engine weighs against a hand-off to its pool (inline_work_limit).
//
// The estimate is sum over ops of (elements of every operand + elements of
// every result), with results' shapes evaluated under the batch's symbols
// (an upper-bound extent counts at its bound). It is linear in the data, so
// only ops whose cost is linear in what they read and write are counted:
// families Elementwise, Layout, Indexing and Reduction. Dot (cost grows
// with the contraction) and Extension ops, an Unknown extent, a shape that
// does not evaluate, or a sum that overflows give no estimate.
// Pure function; cost O(ops + operands).
#pragma once

#include <cstdint>
#include <optional>

#include "engines/engine.hpp"

namespace tenact::cpu {

std::optional<uint64_t> linear_element_work(const BatchWork& work);

}  // namespace tenact::cpu
