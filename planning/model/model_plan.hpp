// The plan compiler: a model (a SemanticProgram with weights and states)
// compiled against the providers' tensor contracts into an executable plan
// with planned storage. Pure functions: no engine is called, no memory is
// allocated for tensors.
//
// compile_model_plan, in order:
//  1. options are validated: every node and value they name exists (nodes
//     are named by their first result's name), retention names op results,
//     every program input has an explicit tensor — its capacity: the
//     largest extents a run may bring; the compiler never guesses one —
//     consistent with the program's declared input (the program's symbols
//     are bound from these tensors);
//  2. the weight materializer is selected exactly by id; it gives each
//     weight's physical tensor;
//  3. value tensors: explicit ones, weights' physical ones, states' (their
//     shape, contiguous); then, op by op in program order, the node is
//     resolved to a provider: candidates in catalog order that serve the
//     op instance and have its required capabilities (a preferred provider
//     alone when the options name one); the first whose contracts unify
//     with the operands' tensors (and explicit result tensors) and infer
//     every other result wins (why is recorded). A state update's node
//     tries the providers whose result must alias the state's operand
//     first (written in place), then the others (computed into storage of
//     its own, which replaces the state after the run); other nodes never
//     take providers with must-alias results. Every
//     inferred result must equal the program's own inference at the bound
//     symbols (a provider that disagrees violates its contract);
//  4. storage: weights get one physical component per device that reads
//     them, placed in one arena per (device, physical dtype), each at an
//     offset aligned to max(value alignment, element size); the value
//     alignment is the providers' largest evidence, found by a probe pass
//     (every component alone at offset 0) and iterated over the arena
//     layout until no provider asks for more (a bounded monotonic fixed
//     point); states get a resource each, capacity aligned to the element
//     size; must-alias results share their input's storage; every other op
//     result is an activation: packed by liveness into one arena per device
//     (values whose lifetimes in program order do not overlap share bytes)
//     unless it is a program output, retained, read on another device,
//     produced by an extension op, a state's new contents not written in
//     place, or packing is off — then it has a
//     resource of its own. Resource ids are content-addressed
//     (resource_ids.hpp).
//
// Errors are InvalidPlan (ErrorCode::InvalidPlan) naming the node, value,
// provider or option concerned, e.g.
//   "node `h` input[1] `w1` dimension[1]=7 violates `Range{minimum: 1, maximum: 4}`"
//   "node `h` output dtype is ambiguous; provide an explicit tensor"
//   "node `h` output range is ambiguous; provide an explicit tensor"
//   "node `h` output layout is ambiguous; provide an explicit tensor"
//   "node `h` output symbol `n` is unresolved; provide an explicit tensor"
//   "program compile options reference an unknown node `x`"
//   "program compile options contain an unknown semantic value `x`"
//   "completion retention must reference a semantic node output: `x`"
//   "every program input requires an explicit canonical tensor capacity: `x`"
//
// Thread-safe: pure; the plan is immutable once made.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/endpoint.hpp"
#include "core/error.hpp"
#include "core/program.hpp"
#include "core/tensor_layout.hpp"
#include "engines/tensor_contract.hpp"
#include "planning/model/provider_catalog.hpp"
#include "planning/model/weight_materializers.hpp"
#include "planning/prepare_options.hpp"

namespace tenact {

struct ModelCompileOptions {
  /// Explicit tensors by value name: required for every program input (its
  /// capacity), optional for any other value (a result whose contract does
  /// not fix its tensor); for a weight or a state it must equal what the
  /// model gives.
  std::map<std::string, ResolvedTensorSpec> tensors;
  /// Per node (its first result's name): capabilities its provider must have.
  std::map<std::string, std::vector<std::string>> required_capabilities;
  /// Per node: the qualified provider id to use.
  std::map<std::string, std::string> preferred_providers;
  /// Values kept readable after a run (completion retention): op results.
  std::vector<std::string> retain;
  /// Every op result kept readable ("for determinism" diagnostics).
  bool retain_all = false;
  std::string weight_materializer{kIdentityMaterializer};
  /// Pack activations of a device into one arena by liveness; off: each
  /// activation has a resource of its own.
  bool pack_activations = true;
  /// What the runs are prepared with (fusion, region size): the plan
  /// predicts the fused regions from it, since a region runs as one step.
  CompilerOptions compiler;
};

/// How one op was resolved.
struct NodeResolution {
  /// Index of the op in the program.
  size_t op = 0;
  /// Its first result's name.
  std::string node;
  /// Qualified provider id ("cpu/dot_general.blas"), its engine and where
  /// its values live.
  std::string provider;
  std::string engine;
  Endpoint endpoint;
  /// What the engine prepares the op for.
  ProviderChoice choice;
  std::vector<std::string> capabilities;
  /// Per result: the contract's alias policy.
  std::vector<AliasPolicy> result_aliases;
  /// The provider's alignment evidence at the final storage.
  uint64_t value_alignment_bytes = 0;
  /// Why this provider: "preferred by the options", "the first provider in
  /// catalog order whose contract fits (also fitting: ...)", "...; rejected:
  /// cpu/x (reason)".
  std::string why;
};

enum class ResourceKind : uint8_t { WeightArena, State, Activation, ActivationArena };
/// "weight-arena", "state", "activation", "activation-arena".
std::string_view to_string(ResourceKind kind) noexcept;

/// One block of storage the model needs on one device.
struct StorageResource {
  /// resource/<kind>/sha256/<hex> (resource_ids.hpp).
  std::string id;
  ResourceKind kind = ResourceKind::Activation;
  Endpoint endpoint;
  /// Weight arenas: their physical element type; states and activations:
  /// the value's; activation arenas: u8.
  DType dtype = DType::U8;
  uint64_t bytes = 0;
  uint64_t alignment = 0;
  /// What it holds, for reports: "weights w1, w2", "state k_cache",
  /// "value h", "12 activations".
  std::string holds;
};

/// Where a value's bytes are: a resource and a range in it.
struct StoragePlace {
  std::string resource;
  Endpoint endpoint;
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
};

struct ValueStorage {
  enum class Kind : uint8_t {
    /// A program input: the caller's buffer (its capacity bounds it).
    Request,
    Weight,
    State,
    /// An op result in an activation arena or a resource of its own.
    Activation,
    /// A result that must alias an operand: the operand's storage.
    Aliased,
  };
  Kind kind = Kind::Request;
  /// Weights: one per device copy; others: one (a request: none).
  std::vector<StoragePlace> places;
  /// Aliased: the value whose storage it shares.
  std::optional<ValueId> aliases;
  /// Activations: whether it is in its device's arena, else why not ("a
  /// program output", "retained", "read on another device", "an extension
  /// op's result", "packing off").
  bool packed = false;
  std::string unpacked_because;
  /// Activations: a result of a fused region that leaves it for no reader:
  /// never materialized, no storage.
  bool fused = false;
  /// Activations: its lifetime in program order (first and last op).
  size_t first_op = 0;
  size_t last_op = 0;
};

/// One physical copy of a weight on one device.
struct WeightComponent {
  /// "<weight name>@<engine>/<storage class>".
  std::string id;
  ValueId weight = 0;
  Endpoint endpoint;
  ResolvedTensorSpec tensor;
  /// The weight arena it is in and where.
  std::string resource;
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
};

struct ModelPlan {
  std::shared_ptr<const SemanticProgram> program;
  /// The program's fingerprint (32 hex digits): the family fingerprint.
  std::string family_fingerprint;
  std::string weight_materializer;
  /// SHA-256 hex of the execution weight schema (materializer id, each
  /// weight's physical tensor).
  std::string execution_weight_fingerprint;
  /// The program's symbols bound from the input tensors.
  SymbolBindings symbols;
  /// The compiler options the runs are prepared with (what the regions
  /// were predicted under).
  CompilerOptions compiler;
  /// Per ValueId: its resolved tensor.
  std::vector<ResolvedTensorSpec> tensors;
  /// Per op, in program order.
  std::vector<NodeResolution> nodes;
  std::vector<WeightComponent> weight_components;
  /// Weight arenas, states, activation arenas, unpacked activations.
  std::vector<StorageResource> resources;
  /// Per ValueId.
  std::vector<ValueStorage> storage;
  /// Values kept readable after a run, ascending ValueId.
  std::vector<ValueId> retained;
  /// The value alignment the fixed point settled at, and the passes it
  /// took after the probe (1: the probe's evidence held).
  uint64_t value_alignment_bytes = 0;
  uint32_t alignment_passes = 0;
  /// Bytes of every activation added up (no reuse), of the activation
  /// arenas plus the activations outside them (what the plan allocates),
  /// and the most bytes of activations live at once in program order (the
  /// lower bound any packing meets).
  uint64_t total_activation_bytes = 0;
  uint64_t planned_activation_bytes = 0;
  uint64_t peak_live_activation_bytes = 0;
  /// (before, after) op pairs: a state's other readers run before its
  /// in-place update.
  std::vector<std::pair<size_t, size_t>> order;
  /// The elementwise regions preparation will fuse (planning/
  /// elementwise_regions.hpp, on the model's endpoints, queue 0 and order
  /// edges), each as its ops ascending; a member's result that leaves no
  /// region is never materialized (ValueStorage::fused).
  std::vector<std::vector<size_t>> fused_regions;
  /// Per op: when it runs, as a closed interval of op indices. An op runs
  /// in its own place in program order unless a fused region spans it: a
  /// region runs as one step once its inputs exist, so every op of a
  /// device between the first and last member of overlapping regions may
  /// run anywhere in that span. Lifetimes are taken over these windows.
  std::vector<std::pair<size_t, size_t>> op_windows;
  /// SHA-256 hex of the plan's canonical text: equal plans, equal digests.
  std::string digest;

  const NodeResolution& node(size_t op) const { return nodes[op]; }
  /// The resource of `id`, or nullptr.
  const StorageResource* resource(std::string_view id) const;
};

/// Compiles `program` (see the file comment). `program` must not be null.
Result<std::shared_ptr<const ModelPlan>> compile_model_plan(
    std::shared_ptr<const SemanticProgram> program, const ProviderCatalog& catalog,
    const ModelCompileOptions& options,
    const WeightMaterializerRegistry& materializers = WeightMaterializerRegistry::builtin());

}  // namespace tenact
