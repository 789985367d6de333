// The stages of compile_model_plan (model_plan.hpp), one file each:
//   compile_inputs.cpp      options checked, symbols bound, the value
//                           tensors known before resolution;
//   node_resolution.cpp     each op resolved to a provider, its results'
//                           tensors inferred;
//   weight_storage.cpp      weight components and arenas, states;
//   activation_storage.cpp  lifetimes, aliasing, liveness packing;
//   value_alignment.cpp     one storage pass, the providers' alignment
//                           evidence at it, the fixed point;
//   plan_digest.cpp         fingerprints and the plan's digest;
// (tensor_unification.hpp: contracts against tensors, for node_resolution).
// Internal to planning/model/ and its tests. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "planning/model/model_plan.hpp"

namespace tenact {

// -- options, symbols, tensors known up front ------------------------------------

struct CompileInputs {
  SymbolBindings symbols;
  /// Per ValueId: the tensor known so far (explicit ones, then weights and
  /// states; results once their node is resolved).
  std::vector<std::optional<ResolvedTensorSpec>> tensors;
  /// Ascending, each once.
  std::vector<ValueId> retained;
};

/// Step 1 of the file comment of model_plan.hpp: the names the options use,
/// retention, an explicit tensor for every input (valid and consistent
/// with the declaration), the symbols bound from them.
Result<CompileInputs> check_compile_options(const SemanticProgram& program, const ModelCompileOptions& options);

/// Adds the weights' physical tensors (from `materializer`) and the states'
/// tensors (their shape, contiguous); an explicit tensor for either must
/// equal it ("explicit weight tensor `w` differs from model semantics").
Status add_model_tensors(const SemanticProgram& program, const WeightMaterializer& materializer, CompileInputs& inputs);

// -- node resolution ----------------------------------------------------------------

/// Resolves every op in program order (model_plan.hpp, step 3), setting the
/// tensors of its results in `inputs.tensors`. value_alignment_bytes is
/// left 0 (value_alignment.cpp sets it).
Result<std::vector<NodeResolution>> resolve_nodes(const SemanticProgram& program, const ProviderCatalog& catalog,
                                                  const ModelCompileOptions& options, CompileInputs& inputs);

// -- storage ----------------------------------------------------------------------------

/// What every storage pass reads.
// -- the fused regions preparation will form -----------------------------------

/// What a model's runs will execute as single steps.
struct PredictedExecution {
  /// ModelPlan::fused_regions and ModelPlan::op_windows.
  std::vector<std::vector<size_t>> regions;
  std::vector<std::pair<size_t, size_t>> windows;
  /// Per ValueId: a region member's result that leaves the region for no
  /// reader and is no output (never materialized).
  std::vector<bool> fused;
};

/// The regions plan_elementwise_regions forms for the model's plain
/// program (inputs, weights and states as inputs; outputs, state updates'
/// values and retained values as outputs) with every op at its node's
/// endpoint on queue 0 and the order edges, under options.compiler; and
/// the windows they give (ModelPlan::op_windows).
Result<PredictedExecution> predict_execution(const SemanticProgram& program, const ProviderCatalog& catalog,
                                             const ModelCompileOptions& options,
                                             const std::vector<NodeResolution>& nodes,
                                             const std::vector<ValueId>& retained,
                                             const std::vector<std::pair<size_t, size_t>>& order);

/// The model's extension families, each inferring exactly what the model's
/// validation inferred (to validate programs derived from the model).
ExtensionRegistry model_extensions(const SemanticProgram& program);

struct StorageInputs {
  const SemanticProgram& program;
  const ProviderCatalog& catalog;
  const ModelCompileOptions& options;
  /// Per ValueId, all resolved.
  const std::vector<ResolvedTensorSpec>& tensors;
  const std::vector<NodeResolution>& nodes;
  const std::vector<ValueId>& retained;
  std::string family_fingerprint;
  std::string weight_fingerprint;
  /// Per op its execution window, per ValueId whether it is fused away
  /// (PredictedExecution).
  const PredictedExecution& execution;
};

/// The storage of one pass: for the probe (no alignment yet) every weight
/// component alone at offset 0 and every activation in a resource of its
/// own; otherwise the plan's storage at that value alignment.
struct StoragePass {
  std::optional<uint64_t> alignment;
  std::vector<WeightComponent> components;
  /// Weight arenas, states, activation arenas, unpacked activations.
  std::vector<StorageResource> resources;
  /// Per ValueId.
  std::vector<ValueStorage> storage;
  /// The activation totals of ModelPlan: {total, planned, peak live}.
  struct {
    uint64_t total = 0, planned = 0, peak_live = 0;
  } activation_bytes;
};

/// `value` rounded up to a multiple of `alignment` (a power of two).
/// Errors: InvalidPlan "<what> alignment is invalid" (not a power of two),
/// "<what> alignment overflows u64".
Result<uint64_t> checked_align_up(uint64_t value, uint64_t alignment, std::string_view what = "weight arena");
/// a + b. Errors: InvalidPlan "<what> byte range overflows u64".
Result<uint64_t> checked_end(uint64_t a, uint64_t b, std::string_view what);
/// The position of `engine` in the catalog's engine order.
uint32_t engine_rank(const ProviderCatalog& catalog, std::string_view engine);

/// Weights, then states: their components, places and resources.
Status place_weights_and_states(const StorageInputs& in, StoragePass& pass);
/// Requests and op results: activations (packed when the pass has an
/// alignment and the options pack), aliased results; the activation totals.
Status place_activations(const StorageInputs& in, StoragePass& pass);

/// The whole storage of one pass (`alignment` nullopt: the probe).
Result<StoragePass> plan_storage(const StorageInputs& in, std::optional<uint64_t> alignment);

// -- value alignment ---------------------------------------------------------------------

/// The most passes after the probe: one per bit of a 64-bit alignment, and one.
inline constexpr uint32_t kMaxAlignmentPasses = 65;

/// The providers' evidence at `pass`: per node, its provider's
/// alignment_for the offsets of its operands and results in their
/// resources (each must be a power of two); their maximum. Errors:
/// InvalidPlan "provider value-alignment evidence is not a power of two:
/// ...", "program has no provider value-alignment evidence" (no op).
Result<std::vector<uint64_t>> node_alignment_evidence(const StorageInputs& in, const StoragePass& pass);

struct SettledAlignment {
  uint64_t alignment = 0;
  /// Passes after the probe.
  uint32_t passes = 0;
};

/// The bounded monotonic fixed point: from the probe's evidence A, up to
/// `max_passes` times, evidence E = `evidence_at(A)`; E <= A: settled at A;
/// else A = E. Errors: those of evidence_at; InvalidPlan "provider value
/// alignment did not reach a bounded monotonic fixed point".
Result<SettledAlignment> settle_value_alignment(uint64_t probe_evidence,
                                                const std::function<Result<uint64_t>(uint64_t)>& evidence_at,
                                                uint32_t max_passes = kMaxAlignmentPasses);

// -- fingerprints and digest -------------------------------------------------------------

/// SHA-256 hex of the execution weight schema: the materializer id and each
/// weight's name and physical tensor.
std::string execution_weight_fingerprint(const SemanticProgram& program, std::string_view materializer,
                                         const std::vector<ResolvedTensorSpec>& tensors);
/// SHA-256 hex of the plan's canonical text (everything but `digest`).
std::string plan_digest(const ModelPlan& plan);

}  // namespace tenact
