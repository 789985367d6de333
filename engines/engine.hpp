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
// - allocate(), memory_stats(): safe from many threads.
// - launch(): asynchronous. It returns at once; the work runs on the
//   engine's own threads or streams (never on the caller's), and `done` is
//   called exactly once, from an engine thread, with the outputs or the
//   error. Inputs stay alive until `done` runs (the engine holds them).
//
// Memory. Values are Tensors over Buffers (core/buffer.hpp) that the engine
// owns in one of its storage classes: allocate() hands them out, an op's
// results are buffers of the storage class the op was bound to, and each
// buffer goes back to its engine's allocator when its last user drops it
// (after the engine object itself, if need be: buffers keep the allocator
// alive). Inputs may be any buffer the engine can read at the op's
// endpoint; nothing outside the engine and its transfer providers reads a
// buffer that is not host addressable.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "core/dim_expr.hpp"
#include "core/endpoint.hpp"
#include "core/error.hpp"
#include "core/extension.hpp"
#include "core/op_attrs.hpp"
#include "core/op_kind.hpp"
#include "core/shape.hpp"
#include "core/tensor.hpp"
#include "engines/cost_model.hpp"
#include "engines/event.hpp"
#include "engines/specialization_types.hpp"
#include "engines/tensor_contract.hpp"

namespace tenact {

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
  /// Extension families this engine has slots for. The runtime adds one
  /// for each registered family the engine can run (host_extension_kernels).
  std::vector<std::string> extension_families;
  /// Runs the host kernels of registered extension families
  /// (ExtensionFamily::prepare_host; engines/host_extension.hpp): the
  /// runtime gives the engine a slot for every family that has one.
  bool host_extension_kernels = false;
  /// Storage classes program inputs may arrive in (empty: the default).
  std::vector<std::string> accepted_input_storage;
  /// Runs planned elementwise regions (planning/elementwise_regions.hpp)
  /// as one fused pass; planning forms regions only on such engines.
  bool fused_elementwise_regions = false;
  /// In-order queues (streams) a batch may name (BatchWork::queue): 0 to
  /// queues - 1. 0: none; batches then go with kAnyQueue only.
  uint32_t queues = 0;
  /// Core ops of its families it has no kernel for: placement puts them
  /// elsewhere, and prepare refuses them (Unsupported).
  std::vector<OpKind> lacks;
  /// What its kernels cost, for cost-aware placement (nullopt: no
  /// estimates; placement then falls back to engine preference).
  std::optional<EngineCostModel> cost;
  /// Its kernels with their tensor contracts (engines/tensor_contract.hpp),
  /// which a model's plan resolves ops to; null or empty: none declared
  /// (the engine then serves no model op).
  OpProviderList providers{};

  bool serves(OpFamily family) const;
  /// serves(family_of(kind)) and `kind` is not among `lacks`.
  bool runs(OpKind kind) const;
  bool has_extension(std::string_view family) const;
};

// -- preparing one op ----------------------------------------------------------------

/// Where and how an op is asked to run: the endpoint and the identity of
/// everything the plan is valid for.
/// A plan is valid only for the runtime, configuration epoch and engine
/// registration it was prepared under.
struct OpBinding {
  Endpoint endpoint;
  uint64_t runtime_id = 0;
  /// The configuration snapshot's epoch.
  uint64_t epoch = 0;
  /// The engine's identity: id (== endpoint.engine), hardware class,
  /// registration and context identity.
  EngineIdentity engine;
  friend bool operator==(const OpBinding&, const OpBinding&) = default;
  /// "cpu/host (x86_64-host, registration 1, context 7, runtime 3, epoch 2)".
  std::string to_string() const;
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
  /// What `specialization` fixes of the caller's signature: the only facts
  /// about the inputs the plan may rely on.
  SpecializationProjection projection;
  /// Values of the symbols the specialization fixes (empty when none).
  SymbolBindings fixed_symbols;
  /// For an extension op whose family the runtime registered: its
  /// definition (null for a slot the engine declared on its own) and the
  /// planning configuration of the engine's slot for it (null: none).
  ExtensionFamilyPtr extension;
  std::shared_ptr<const std::string> planning_config;
  /// Set when a model's plan resolved the op to one of the engine's
  /// providers: the engine prepares it for that provider and those operand
  /// layouts (Unsupported when it has no such provider), and echoes it.
  std::shared_ptr<const ProviderChoice> provider{};
};

/// An op prepared by an engine. Carries exactly the binding, the
/// specialization and the projection it was prepared for (a plan that
/// differs violates the provider contract: BindingMismatch,
/// ProjectionMismatch). `payload` is the engine's own, opaque data.
struct PreparedOp {
  OpKind kind = OpKind::Add;
  OpAttrs attrs;
  std::vector<ValueType> results;
  OpBinding binding;
  SpecializationRequirements specialization;
  SpecializationProjection projection;
  std::shared_ptr<const void> payload;
  /// The provider it was prepared for (OpPrepareRequest::provider), or null.
  std::shared_ptr<const ProviderChoice> provider{};

  /// A plan that echoes `request` exactly (kind, attributes, results,
  /// binding, specialization, projection), with no payload: what a correct
  /// provider returns before adding its own data.
  static std::shared_ptr<PreparedOp> answering(const OpPrepareRequest& request);
};

struct NeedsSpecialization {
  SpecializationRequirements requirements;
  std::string reason;
};

struct Unsupported {
  std::string reason;
};

/// Prepared, a request for more specialization, a deterministic refusal
/// (cached by the prepare cache), or an error: DeterminismUnsupported (the
/// op cannot be made deterministic as asked; cached like Unsupported) or
/// any other code, e.g. LimitExceeded for a workspace that does not fit
/// now (transient: the next request prepares again).
using PrepareAnswer =
    std::variant<std::shared_ptr<const PreparedOp>, NeedsSpecialization, Unsupported, Error>;

/// Called exactly once per launch, from an engine thread.
using LaunchCompletion = std::function<void(Result<std::vector<Tensor>>)>;

// -- batches ---------------------------------------------------------------------

/// Where a batch op's operand comes from: one of the batch's inputs, or
/// result `result` of an earlier op of the batch.
struct BatchRef {
  enum class From : uint8_t { Input, Op };
  From from = From::Input;
  uint32_t index = 0;
  uint32_t result = 0;
  static BatchRef input(uint32_t i) { return {From::Input, i, 0}; }
  static BatchRef op(uint32_t i, uint32_t r = 0) { return {From::Op, i, r}; }
  friend bool operator==(const BatchRef&, const BatchRef&) = default;
};

struct BatchOp {
  std::shared_ptr<const PreparedOp> op;
  std::vector<BatchRef> operands;
  /// Empty, or one per result: where the engine writes that result when
  /// the tensor is set (a dense row-major region of a planned arena, of
  /// the result's dtype and at least its bytes: the result is a view of
  /// its buffer at its offset). An unset tensor, or a result larger than
  /// its destination, gets memory of its own. Engines that ignore it stay
  /// correct.
  std::vector<Tensor> destinations{};
};

/// Destinations for a whole run (a model run's planned activation arena):
/// per op of the program (SemanticProgram op index), what its BatchOp's
/// `destinations` are (empty: none). Immutable once shared.
struct PlannedDestinations {
  std::vector<std::vector<Tensor>> by_op;
};
using PlannedDestinationsPtr = std::shared_ptr<const PlannedDestinations>;

/// What an engine compiled for one planned region, shared by every run of
/// it: the prepared plan keeps one per region and hands it to each batch
/// (BatchRegion::memo), so an engine compiles a region once, not per run.
/// The region's ops, their operand pattern and dtypes are the same in
/// every batch it is handed with; the batch-local positions of its
/// operands are not. Thread-safe: runs on many threads find and keep
/// concurrently (a mutex held for a pointer copy).
class RegionMemo {
 public:
  /// What was kept under `owner` (an address naming the engine code that
  /// kept it, and so the object's type), or null.
  std::shared_ptr<const void> find(const void* owner) const;
  /// Keeps `compiled` under `owner` unless something is kept already;
  /// returns what is kept then (the first keeper wins a race, and a
  /// different owner's object is replaced).
  std::shared_ptr<const void> keep(const void* owner, std::shared_ptr<const void> compiled);

 private:
  mutable std::mutex mutex_;
  const void* owner_ = nullptr;
  std::shared_ptr<const void> compiled_;
};

/// Consecutive ops of a batch [first, first + count) that form one planned
/// elementwise region: an engine with fused_elementwise_regions runs them
/// as one pass, keeping only `outputs` (refs into the range) materialized.
struct BatchRegion {
  uint32_t first = 0;
  uint32_t count = 0;
  std::vector<BatchRef> outputs;
  /// Null, or the region's memo in the prepared plan (see RegionMemo).
  std::shared_ptr<RegionMemo> memo{};
};

/// When each op of a batch ran, for traces: steady-clock nanoseconds and
/// the small number of the thread (or stream) that ran it.
struct OpTiming {
  uint32_t op = 0;
  /// For a fused region: its last op is `op`, its first `first_op`.
  uint32_t first_op = 0;
  uint64_t begin_ns = 0;
  uint64_t end_ns = 0;
  uint32_t thread = 0;
  /// Set by a simulated device: begin and end are virtual nanoseconds and
  /// `thread` is the stream.
  bool virtual_time = false;
};
struct BatchTimings {
  std::vector<OpTiming> ops;
};

/// When a simulated device's batch (or a copy along a simulated link) ran
/// in virtual nanoseconds: from its first kernel's start to its last one's
/// end. Left unset by engines that run in wall-clock time.
struct VirtualSpan {
  bool set = false;
  uint64_t begin_ns = 0;
  uint64_t end_ns = 0;
  /// Widens the span to cover [begin, end].
  void cover(uint64_t begin, uint64_t end) {
    begin_ns = set ? std::min(begin_ns, begin) : begin;
    end_ns = set ? std::max(end_ns, end) : end;
    set = true;
  }
};

/// A small, stable number for the calling thread (1, 2, ... in order of
/// first call), for trace tracks. Thread-safe.
uint32_t trace_thread_index();
/// steady_clock now, in nanoseconds.
uint64_t steady_now_ns();

/// The results a batch hands to batches enqueued behind it before the host
/// hears of it: written once by the producing engine, before the batch's
/// signal event is signalled. A reader waits on that event first (its
/// signal orders the write before every read); nobody writes afterwards.
struct PublishedResults {
  std::vector<Tensor> tensors;
};
using PublishedResultsPtr = std::shared_ptr<PublishedResults>;

/// A batch input that exists only once another batch has run: tensor
/// `index` of what that batch publishes.
struct DeferredInput {
  PublishedResultsPtr from;
  uint32_t index = 0;
};

/// What an engine keeps about a BatchWork that a launcher runs again and
/// again unchanged (Engine::run_on_caller): opaque to the launcher, which
/// drops it whenever it changes the work's ops, regions, symbols or the
/// shapes of its inputs.
struct CallerNotes {
  explicit CallerNotes(const void* writer) : owner(writer) {}
  virtual ~CallerNotes() = default;
  /// The engine that wrote them (an engine reads only its own notes).
  const void* owner;
};

/// Several ops sent to one engine at once, run in order (each op's
/// operands are batch inputs or results of earlier ops): one message and
/// one completion instead of one per op. Intermediate results the batch
/// does not output may be freed as soon as their last reader has run.
struct BatchWork {
  std::vector<Tensor> inputs;
  std::vector<BatchOp> ops;
  std::vector<BatchRegion> regions;
  /// The results to return, in this order.
  std::vector<BatchRef> outputs;
  SymbolBindings symbols;
  /// When set, the engine records when each op (or fused region) ran;
  /// written by the engine before `done` is called.
  std::shared_ptr<BatchTimings> timings;
  /// When set, a simulated engine writes when the batch ran in virtual
  /// time, before `done` is called (the runtime's per-run makespan).
  std::shared_ptr<VirtualSpan> virtual_span;
  /// A retry's backoff: a simulated device starts the batch no earlier than
  /// this virtual time (ns); 0: no bound. Other engines ignore it.
  uint64_t not_before_ns = 0;
  /// Set by the runtime only when the launching thread is a client's own
  /// thread (never a CAF scheduler thread or a runtime pool): the engine
  /// may then run a batch it judges cheaper than a hand-off to its own
  /// threads right there, calling `done` before launch_batch returns.
  /// Engines that ignore it stay correct.
  bool caller_may_run = false;
  /// Optional, empty or one per op: how errors name each op (otherwise
  /// "batch op I (KIND)"); for callers that know the program behind a batch.
  std::vector<std::string> op_names;

  // -- queues and events ---------------------------------------------------------
  /// The queue it goes to: batches of one queue start in submission order,
  /// each after the previous one has finished. kAnyQueue: the engine
  /// chooses, with no order relative to other batches.
  uint32_t queue = kAnyQueue;
  static constexpr uint32_t kAnyQueue = UINT32_MAX;
  /// Written by Engine::run_on_caller on the thread that holds the work
  /// (a launcher runs a work on one thread at a time); see CallerNotes.
  /// Copies of a work share it: a launcher that copies a work to change it
  /// resets it.
  mutable std::shared_ptr<CallerNotes> caller_notes;
  /// The batch starts only once every one is signalled; when one failed,
  /// the batch does not run and fails with that error ("waiting on ...").
  std::vector<EventPtr> waits;
  /// When set, signalled with the batch's outcome once it has run (or
  /// failed), before `done` is called.
  EventPtr signal;
  /// Inputs produced by batches that may not have run yet: BatchRef input
  /// i >= inputs.size() is deferred[i - inputs.size()]. The batch lists
  /// each producer's signal in `waits`; the engine resolves them
  /// (resolve_deferred_inputs) once its waits are signalled, before it
  /// reads an input.
  std::vector<DeferredInput> deferred;
  /// When set, the outputs (work.outputs order) are stored here before
  /// `signal` is signalled: what batches behind this one read.
  PublishedResultsPtr publish;
};

/// Moves the deferred inputs' tensors to the end of work.inputs (call once
/// the waits are signalled ok). Errors: Internal naming an input its
/// producer did not publish.
Status resolve_deferred_inputs(BatchWork& work);

/// `done` preceded by signalling `signal` (when set) with the outcome: what
/// an engine calls to finish a batch (BatchWork::signal).
LaunchCompletion signal_then(EventPtr signal, LaunchCompletion done);
/// The same for a batch: takes work.signal and work.publish; on success the
/// outputs are published first, then the signal, then `done`.
LaunchCompletion finish_batch_with(BatchWork& work, LaunchCompletion done);

/// Checks the refs of `work` (each points at an input or an earlier op's
/// result that exists; regions lie within the ops, in order, without
/// overlap). Errors: Internal naming the first bad ref.
Status validate_batch(const BatchWork& work);
/// Internal error naming the engine when work.queue is neither kAnyQueue
/// nor one of the engine's queues.
Status check_queue(const BatchWork& work, const EngineIdentity& engine, const EngineCapabilities& capabilities);

/// What an engine that runs the core ops with kernels of its own answers:
/// the echoing plan (PreparedOp::answering) when `request` is bound to one
/// of its storage classes and it serves the op's family, else Unsupported
/// naming the engine and the endpoint or the op (and extension family).
PrepareAnswer answer_core_op(const EngineIdentity& engine, const EngineCapabilities& capabilities,
                             const OpPrepareRequest& request);

class Engine {
 public:
  virtual ~Engine() = default;

  virtual const EngineIdentity& identity() const = 0;
  virtual const EngineCapabilities& capabilities() const = 0;

  /// Prepares one op for `request.binding`; see PrepareAnswer.
  virtual PrepareAnswer prepare(const OpPrepareRequest& request) = 0;

  /// A zero-filled dense tensor in `storage_class`, in a buffer this engine
  /// owns (endpoint: this engine's id and `storage_class`). Errors:
  /// Unsupported for a storage class the engine lacks; LimitExceeded for a
  /// size over the limits or a full device; ResourceExhausted when the
  /// memory cannot be had.
  virtual Result<Tensor> allocate(std::string_view storage_class, DType dtype,
                                  std::vector<int64_t> shape) = 0;

  /// Counters of the allocator behind `storage_class`: bytes allocated now
  /// (buffers alive), reserved (held from the system, caches included),
  /// the peak of allocated, allocations and releases. Errors: Unsupported
  /// for a storage class the engine lacks or does not count (the default).
  virtual Result<MemoryStats> memory_stats(std::string_view storage_class) const;

  /// Runs a prepared op asynchronously (see the file comment). `symbols`
  /// gives every symbol's concrete value for this run.
  virtual void launch(std::shared_ptr<const PreparedOp> op, std::vector<Tensor> inputs,
                      SymbolBindings symbols, LaunchCompletion done) = 0;

  /// Runs a batch asynchronously: `done` is called exactly once, from an
  /// engine thread, with work.outputs' tensors or the first error (its
  /// message names the failing op; later ops do not run). Honours
  /// work.queue, work.waits and work.signal (see BatchWork); a queue the
  /// engine does not have is an Internal error. The default waits for
  /// work.waits, then chains launch() calls, each next op launched from the
  /// previous one's completion (no fusion, no queues); engines override it
  /// to run a batch in one go and to keep queues.
  virtual void launch_batch(BatchWork work, LaunchCompletion done);

  /// Runs `work` on the calling thread, now, when the engine judges it
  /// cheaper than a hand-off to its own threads and its queue is idle, and
  /// returns the outcome (as launch_batch's `done` would get it); nullopt
  /// when it did not run it (the caller then launches it). Only for a
  /// client's own thread (BatchWork::caller_may_run's rule) and a batch
  /// with no waits, signal, deferred inputs or publish. Leaves `work` as
  /// it was but for BatchWork::caller_notes, where the engine may keep what
  /// it would otherwise work out again on the next run of the same work
  /// (a caller may run it again). The default runs nothing.
  virtual std::optional<Result<std::vector<Tensor>>> run_on_caller(const BatchWork& work);
};

}  // namespace tenact
