// The engine interface: the one contract between planning and every engine
// (CPU, simulated, CUDA, remote). Depends on core/ only, so planning can
// read capabilities and ask engines to prepare ops without depending on any
// engine; an engine knows nothing of actors (the engine actor adapts it).
//
// Threading contract:
// - identity(), capabilities(): immutable after construction, any thread.
// - prepare(): pure with respect to the engine's state (it may consult
//   caches of its own), safe from many threads at once; never blocks on
//   device work.
// - allocate(): safe from many threads.
// - launch(): asynchronous. It returns at once; the work runs on the
//   engine's own threads or streams (never on the caller's), and `done` is
//   called exactly once, from an engine thread, with the outputs or the
//   error. Inputs stay alive until `done` runs (the engine holds them).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "core/dim_expr.hpp"
#include "core/error.hpp"
#include "core/op_attrs.hpp"
#include "core/op_kind.hpp"
#include "core/shape.hpp"
#include "core/tensor.hpp"

namespace tenact {

/// Where a buffer lives: an engine and one of its storage classes.
struct Endpoint {
  std::string engine;         // "cpu", "cuda:0", "sim:2"
  std::string storage_class;  // "host", "device", "pinned"
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
  std::string to_string() const { return engine + "/" + storage_class; }
};

struct EngineIdentity {
  std::string id;              // unique within a runtime
  std::string hardware_class;  // e.g. "x86_64", "sm_90", "sim-gpu"
  /// Bumped each time an engine is registered under the same id.
  uint64_t registration = 0;
  /// Identity of the execution context (process, device context): two
  /// engines with equal ids but different contexts do not share plans.
  uint64_t context = 0;
  friend bool operator==(const EngineIdentity&, const EngineIdentity&) = default;
};

struct EngineCapabilities {
  std::vector<std::string> storage_classes;  // non-empty
  std::string default_storage_class;         // one of storage_classes
  /// A preparation-only engine can plan but not run: preparation that
  /// would need to run on it fails with NoExecutableEngine.
  bool executable = true;
  std::vector<OpFamily> op_families;
  /// Extension families this engine has slots for.
  std::vector<std::string> extension_families;
  /// Storage classes program inputs may arrive in (empty: the default).
  std::vector<std::string> accepted_input_storage;

  bool serves(OpFamily family) const;
  bool has_extension(std::string_view family) const;
};

// -- specialization --------------------------------------------------------------

enum class PlacementSpecialization : uint8_t { None, StorageClass, Device };
enum class LayoutSpecialization : uint8_t { None, Class, ExactStrides };

/// What a prepared plan may assume about one program input. "None"/false
/// everywhere is the most general plan (shape-polymorphic).
struct InputRequirement {
  bool dtype = false;
  bool rank = false;
  /// Axes whose concrete extent the plan is specialized for.
  std::vector<size_t> concrete_dims;
  PlacementSpecialization placement = PlacementSpecialization::None;
  LayoutSpecialization layout = LayoutSpecialization::None;
  /// Minimum alignment the plan relies on, as log2 bytes.
  std::optional<uint8_t> alignment_log2;
  friend bool operator==(const InputRequirement&, const InputRequirement&) = default;
};

struct SpecializationRequirements {
  std::vector<InputRequirement> inputs;  // one per program input, or empty (none)
  friend bool operator==(const SpecializationRequirements&, const SpecializationRequirements&) = default;
};

// -- preparing one op ----------------------------------------------------------------

/// Where and how an op is asked to run.
struct OpBinding {
  Endpoint endpoint;
  friend bool operator==(const OpBinding&, const OpBinding&) = default;
};

struct OpPrepareRequest {
  /// Index of the op in its program, for messages.
  size_t op_index = 0;
  OpKind kind = OpKind::Add;
  OpAttrs attrs;
  std::vector<ValueType> operands;
  std::vector<ValueType> results;
  OpBinding binding;
  SpecializationRequirements specialization;
  /// Values of the symbols the specialization fixes (empty when none).
  SymbolBindings fixed_symbols;
};

/// An op prepared by an engine. Carries exactly the binding and the
/// specialization it was prepared for (a plan that differs violates the
/// provider contract). `payload` is the engine's own, opaque data.
struct PreparedOp {
  OpKind kind = OpKind::Add;
  OpAttrs attrs;
  std::vector<ValueType> results;
  OpBinding binding;
  SpecializationRequirements specialization;
  std::shared_ptr<const void> payload;
};

struct NeedsSpecialization {
  SpecializationRequirements requirements;
  std::string reason;
};

struct Unsupported {
  std::string reason;
};

using PrepareAnswer = std::variant<std::shared_ptr<const PreparedOp>, NeedsSpecialization, Unsupported>;

/// Called exactly once per launch, from an engine thread.
using LaunchCompletion = std::function<void(Result<std::vector<HostTensor>>)>;

class Engine {
 public:
  virtual ~Engine() = default;

  virtual const EngineIdentity& identity() const = 0;
  virtual const EngineCapabilities& capabilities() const = 0;

  /// Prepares one op for `request.binding`; see PrepareAnswer.
  virtual PrepareAnswer prepare(const OpPrepareRequest& request) = 0;

  /// A zero-filled dense tensor in `storage_class`. Errors: Unsupported for
  /// a storage class the engine lacks, LimitExceeded/ExecutionFailed.
  virtual Result<HostTensor> allocate(std::string_view storage_class, DType dtype,
                                      std::vector<int64_t> shape) = 0;

  /// Runs a prepared op asynchronously (see the file comment). `symbols`
  /// gives every symbol's concrete value for this run.
  virtual void launch(std::shared_ptr<const PreparedOp> op, std::vector<HostTensor> inputs,
                      SymbolBindings symbols, LaunchCompletion done) = 0;
};

}  // namespace tenact
