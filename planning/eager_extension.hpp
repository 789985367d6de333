// The eager single-op path for extension ops: one extension op prepared directly
// against one exact engine — no staging, no dispatch search, no cache —
// with the same filters and validations as the compiled path.
//
// Pure apart from one Engine::prepare call; thread-safe. Cost: O(inputs).
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/op_attrs.hpp"
#include "core/shape.hpp"
#include "engines/engine.hpp"
#include "planning/input_signature.hpp"
#include "planning/prepared_program.hpp"
#include "planning/runtime_config.hpp"

namespace tenact {

/// Prepares extension op `op` with result types `results` for `inputs` on
/// engine `engine_id`, pinned: no other engine is considered.
///  - Unsupported (an answer, so callers may fall back to the compiled
///    path) when the engine is not registered, is not executable, or has
///    no slot for the op's family; no request is built then.
///  - NoInputIngress (an error) when the engine accepts some input in none
///    of its storage classes, naming the input and its placement.
///  - Otherwise the engine's answer. The request carries the binding of
///    the engine's default storage class under `config` and the
///    polymorphic specialization and projection; a Prepared plan is
///    validated (WrongOperationFamily, BindingMismatch,
///    ProjectionMismatch errors). NeedsSpecialization and Unsupported are
///    returned as they are; an engine's Error answer is returned as the
///    error. EngineDown when the lookup has no engine object for the id.
Result<PrepareAnswer> prepare_extension_immediate(const RuntimeConfig& config,
                                                  const EngineLookup& engines,
                                                  std::string_view engine_id,
                                                  const ExtensionAttrs& op,
                                                  const std::vector<ValueType>& results,
                                                  std::span<const InputDescriptor> inputs);

}  // namespace tenact
