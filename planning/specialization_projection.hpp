// Specialization requirements (engines/engine.hpp) in canonical form, and
// their projection of a signature: the part of each input that a plan
// prepared under those requirements is allowed to assume. Two signatures
// with equal projections can share one prepared entry; the projection is
// part of the prepared-entry key.
//
// Pure functions and values; thread-safe. Cost: O(inputs × rank).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/program.hpp"
#include "engines/engine.hpp"
#include "planning/input_signature.hpp"
#include "planning/key_encoding.hpp"

namespace tenact {

/// Requirements that assume nothing about `inputs` inputs (the starting
/// point of every preparation).
SpecializationRequirements polymorphic_requirements(size_t inputs);

/// The canonical form of `requirements` for a program with `inputs`
/// inputs: an empty list becomes one polymorphic entry per input, and each
/// entry's concrete_dims are sorted ascending without duplicates. Equal
/// meanings have equal canonical forms. Errors: ProviderContract when the
/// list is neither empty nor one entry per input.
Result<SpecializationRequirements> canonical_requirements(
    const SpecializationRequirements& requirements, size_t inputs);

/// "dtype, rank, concrete axes [0, 1], placement device, layout class,
/// alignment >= 2^4", or "none".
std::string describe_requirement(const InputRequirement& requirement);

/// "input 'x': dtype, rank, concrete axes [0, 1], placement device, layout
/// class, alignment >= 2^4; input 'w': none".
std::string describe_requirements(const SemanticProgram& program,
                                  const SpecializationRequirements& requirements);

/// XXH3-64 of encode(): consistent with ==.
uint64_t hash_of(const SpecializationProjection& projection);
/// "[x: f32, rank 2, dims {0: 4}, at host, row_major, align 2^6; w: -]".
std::string to_string(const SpecializationProjection& projection);

/// Projects `inputs` through `requirements` (canonicalized first).
/// Errors: InputMismatch when `inputs` is not one descriptor per program
/// input; ProviderContract when the requirements do not fit the program
/// (wrong entry count, a concrete axis outside an input's rank), naming
/// the input and the axis.
Result<SpecializationProjection> project(const SemanticProgram& program,
                                         const SpecializationRequirements& requirements,
                                         std::span<const InputDescriptor> inputs);

/// Fixed-order encodings (the fields of prepared-entry keys).
void encode(KeyEncoder& out, const SpecializationRequirements& requirements);
void encode(KeyEncoder& out, const SpecializationProjection& projection);

std::string_view to_string(PlacementSpecialization placement) noexcept;
std::string_view to_string(LayoutSpecialization layout) noexcept;

}  // namespace tenact
