// How much work a batch is, in element visits, before running it: what the
// CPU engine weighs against a hand-off to its pool (inline_work_limit).
//
// The estimate is sum over ops of (elements of every operand + elements of
// every result), with results' shapes evaluated under the batch's symbols
// (an upper-bound extent counts at its bound), plus, for a dot_general, one
// visit per kMacsPerVisit multiply-adds (its result's elements times the
// lhs's contracted extents: in a BLAS kernel a multiply-add costs a
// fraction of what a linear op spends on an element). Extension ops, a dot
// without its attributes, an Unknown extent, a shape that does not
// evaluate, or a sum that overflows give no estimate.
// Pure function, no allocation beyond one count per result; cost
// O(ops + operands + contracting dimensions).
#pragma once

#include <cstdint>
#include <optional>

#include "engines/engine.hpp"

namespace tenact::cpu {

/// Multiply-adds of a dot_general counted as one element visit.
inline constexpr uint64_t kMacsPerVisit = 4;

std::optional<uint64_t> linear_element_work(const BatchWork& work);

}  // namespace tenact::cpu
