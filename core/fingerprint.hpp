// The canonical encoding of a validated program and its 128-bit XXH3
// fingerprint (internal to core/: the validator stores both).
#pragma once

#include <string>
#include <string_view>

#include "core/program.hpp"

namespace tenact {

/// Fixed-order binary encoding of everything that makes two programs the
/// same computation: op kinds, operand/result value ids, dtypes and shapes,
/// attributes (dimension expressions in canonical text), input and output
/// names, constraints; for a model, then its weights (names, types, inline
/// data), states (names, types, capacity bytes) and state updates. A
/// program without weights and states has no model part at all. Excludes
/// the program name and intermediate names.
std::string canonical_encoding_of(const SemanticProgram& program);

/// XXH3-128 of `bytes` (seed 0).
Fingerprint fingerprint_of(std::string_view bytes);

}  // namespace tenact
