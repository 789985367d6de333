// The specialization loop of preparation: start
// from polymorphic requirements; when an engine answers
// NeedsSpecialization, merge its requirements into the current ones, check
// that the result strictly widens them, count the redirect against the
// retry bound, and project the signature through the new requirements.
// Each redirect consumes at least one "edge" of the requirement lattice,
// so the bound — the number of edges still open when preparation starts —
// bounds the loop.
//
// Pure functions and values; thread-safe. Cost: O(inputs × rank) per call.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/error.hpp"
#include "core/program.hpp"
#include "engines/engine.hpp"
#include "planning/input_signature.hpp"
#include "planning/specialization_projection.hpp"

namespace tenact {

/// True when `next` requires everything `previous` requires and strictly
/// more in at least one field of one input: dtype and rank (false < true),
/// concrete dims (set inclusion), placement (None < StorageClass < Device),
/// layout (None < Class < ExactStrides), alignment (none < 2^0 < 2^1 ...).
/// An empty list means polymorphic; lists of different non-zero lengths
/// never widen.
bool strictly_widens(const SpecializationRequirements& previous,
                     const SpecializationRequirements& next);

/// strictly_widens as a Status. Errors: NonWideningSpecialization naming
/// the first input and field that `next` drops or narrows, or saying that
/// no input grows; ProviderContract for a list of the wrong length.
Status check_widening(const SemanticProgram& program, const SpecializationRequirements& previous,
                      const SpecializationRequirements& next);

/// The least requirements that require both `a` and `b` (per input: or of
/// the flags, union of the axes, maximum of placement, layout and
/// alignment), canonical. Errors: ProviderContract when a list does not
/// have one entry per program input (empty lists are polymorphic).
Result<SpecializationRequirements> merge_requirements(const SpecializationRequirements& a,
                                                      const SpecializationRequirements& b,
                                                      size_t inputs);

/// Edges one input can still widen along (what bounds the retries):
/// !dtype + !rank + (rank - |concrete dims|) + placement edges (None 2,
/// StorageClass 1, Device 0) + layout edges (same) + alignment edges
/// (required none: 64 if the input's alignment is known, else 0; required
/// r with known alignment a: 63 - min(r, a); unknown alignment: 0).
/// nullopt when the requirement fixes more axes than `rank` or an
/// alignment above 63.
std::optional<uint64_t> input_retry_bound(const InputRequirement& requirement, size_t rank,
                                          std::optional<uint8_t> alignment_log2);

/// Sum of input_retry_bound over the inputs: how many redirects a
/// preparation starting at `requirements` may follow. Errors:
/// InputMismatch (descriptor count), ProviderContract (requirements that do
/// not fit an input, naming it), Overflow (the sum).
Result<uint64_t> retry_bound(const SemanticProgram& program,
                             const SpecializationRequirements& requirements,
                             std::span<const InputDescriptor> inputs);

/// Where one preparation stands in its specialization loop.
struct SpecializationState {
  /// Canonical (one entry per input).
  SpecializationRequirements requirements;
  SpecializationProjection projection;
  /// Redirects followed so far.
  uint64_t redirects = 0;
  /// The retry bound computed when the loop started.
  uint64_t retry_bound = 0;
};

/// Polymorphic requirements, their projection, zero redirects and the
/// retry bound of `inputs`. Errors: those of project() and retry_bound().
Result<SpecializationState> begin_specialization(const SemanticProgram& program,
                                                 std::span<const InputDescriptor> inputs);

/// Follows one NeedsSpecialization answer: merges answer.requirements into
/// current.requirements, then (in this order) fails with
/// NonWideningSpecialization when the merge adds nothing (the message names
/// `asked_by`, the engine's reason and, per input, what it asked for that
/// was already required), with SpecializationRetryLimitExceeded when this
/// redirect would exceed the bound (the message gives the attempts and the
/// bound), or with the ProviderContract error of projecting requirements
/// that do not fit the inputs. `asked_by` names who asked, e.g.
/// "engine 'cpu' for op #2 (add -> 'z')".
Result<SpecializationState> follow_redirect(const SemanticProgram& program,
                                            std::span<const InputDescriptor> inputs,
                                            const SpecializationState& current,
                                            const NeedsSpecialization& answer,
                                            std::string_view asked_by);

}  // namespace tenact
