// From a model plan to what the runtime prepares and runs: a plain program
// (no weights, no states) whose inputs are the model's inputs, then one
// input per weight component (a weight read on two devices is two inputs,
// each read by the ops on its device), then the states; whose ops are the
// model's, each pinned to its node's engine, queue 0 and provider choice
// (ExecutionPins, planning/prepare_options.hpp), with the order edges of
// in-place updates; and whose outputs are the model's outputs, then each
// state update's value, then each retained value. Plus, per op result,
// where it is written in its device's activation arena (the packed
// activations), and the arenas.
//
// One queue per device: every op of a device runs in program order there,
// which is what makes program-order liveness (and so the packing) valid.
//
// Pure; the result is immutable once made and safe to share.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/endpoint.hpp"
#include "core/error.hpp"
#include "core/program.hpp"
#include "planning/model/model_plan.hpp"
#include "planning/prepare_options.hpp"

namespace tenact {

/// What one input of the derived program is.
struct ExecutionInput {
  enum class Kind : uint8_t { Input, Weight, State };
  Kind kind = Kind::Input;
  /// Input: index into program.inputs(); Weight: into plan.weight_components;
  /// State: into program.states().
  size_t index = 0;
};

/// Where one op result is written: a range of an activation arena.
struct ArenaSlot {
  /// Index into ModelExecution::arenas.
  size_t arena = 0;
  uint64_t offset_bytes = 0;
  uint64_t bytes = 0;
  /// The planned (capacity) tensor: dense, row-major.
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
};

struct ActivationArena {
  std::string resource;
  Endpoint endpoint;
  uint64_t bytes = 0;
  uint64_t alignment = 0;
};

struct ModelExecution {
  std::shared_ptr<const ModelPlan> plan;
  /// The plain program: validated, is_model() false.
  std::shared_ptr<const SemanticProgram> program;
  /// One per input of `program`, in order.
  std::vector<ExecutionInput> inputs;
  /// Outputs of `program`: [0, model_outputs) the model's outputs, then one
  /// per state update (program->state_updates() order of the model), then
  /// one per retained value (plan->retained order).
  size_t model_outputs = 0;
  size_t state_update_outputs = 0;
  size_t retained_outputs = 0;
  /// What preparation takes: one pin per op, the order edges, the digest.
  std::shared_ptr<const ExecutionPins> pins;
  /// Per op of `program`, per result: its arena slot, or nullopt.
  std::vector<std::vector<std::optional<ArenaSlot>>> destinations;
  std::vector<ActivationArena> arenas;
};

/// Derives the execution of `plan`. Errors: Internal for a plan that does
/// not fit its program; the validation errors of the derived program
/// (never expected).
Result<std::shared_ptr<const ModelExecution>> derive_model_execution(std::shared_ptr<const ModelPlan> plan);

}  // namespace tenact
