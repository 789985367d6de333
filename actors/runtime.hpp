// The Runtime: Tenact's facade for plain C++ callers. It owns a CAF actor
// system, the configuration snapshot and the actors: one engine actor per
// registered engine, the prepare-cache actor, and a pipeline actor per
// execution. No CAF header is included here (callers compile fast); CAF
// programs use actors/runtime_caf.hpp for the actor handles.
//
// Threading contract: every member function is safe from many threads at
// once. Callbacks run on a runtime thread (a CAF scheduler thread, a
// planning thread or an engine thread) and must not block, or on the
// calling thread before the call returns: for answers known at once
// (errors, prepare hits) and for small single-batch runs the engine ran
// inline (RuntimeOptions::caller_runs_small_batches). Requests issued from
// inside a callback never run inline. Futures may be waited on from any
// thread that is not a runtime thread.
//
// Lifetime: destroying the Runtime fails every request still in flight with
// ErrorCode::Shutdown (callbacks are called, futures become ready), waits
// for work already running on engines to finish, and joins every thread;
// requests made after destruction began fail with Shutdown at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/cache/prepare_cache_store.hpp"
#include "actors/job_board.hpp"
#include "actors/model.hpp"
#include "actors/trace_recorder.hpp"
#include "core/error.hpp"
#include "core/extension.hpp"
#include "core/program.hpp"
#include "core/tensor.hpp"
#include "engines/engine.hpp"
#include "planning/input_signature.hpp"
#include "planning/prepare_options.hpp"
#include "planning/prepared_program.hpp"
#include "planning/runtime_config.hpp"
#include "transfer/providers.hpp"

namespace tenact {

struct RuntimeOptions {
  /// CAF scheduler threads; 0: the machine's hardware concurrency (at
  /// least 2).
  size_t scheduler_threads = 0;
  /// CAF's 'sharing' scheduler wakes a worker through a condition variable
  /// when a plain thread enqueues (tens of µs faster than 'stealing' for
  /// facade calls on small machines; see the CAF notes).
  bool sharing_scheduler = true;
  /// Threads that produce prepared entries (off the cache actor's thread).
  size_t planning_threads = 1;
  /// The prepare cache's byte budget (retained bytes, LRU eviction).
  uint64_t cache_byte_budget = 256ull << 20;
  /// Every execution fails with Timeout past this deadline.
  std::chrono::milliseconds run_deadline{std::chrono::minutes(10)};
  /// Every preparation fails with Timeout past this deadline.
  std::chrono::milliseconds prepare_deadline{std::chrono::minutes(10)};
  /// Identity of this runtime in prepared keys; 0: a fresh process-wide
  /// number.
  uint64_t runtime_id = 0;
  /// The execution policy of the first configuration snapshot.
  ExecutionPolicy policy;
  /// When set, every op, transfer and prepare-cache event is recorded.
  std::shared_ptr<TraceRecorder> trace;
  /// A run that is one batch on one engine (no transfers) goes to the
  /// engine directly instead of through a pipeline actor: two thread hops
  /// instead of four. The engine actor's death still fails it at once.
  /// Off: every run has its pipeline actor (tracing always does).
  bool direct_single_batch = true;
  /// On the direct single-batch path, a request issued from a client's own
  /// thread (not one of the runtime's: CAF's, the planning and transfer
  /// pools, engine completions) lets the engine run the batch on that
  /// thread when it judges the work cheaper than a hand-off to its own
  /// threads (BatchWork::caller_may_run; the CPU engine's bound is
  /// CpuEngineOptions::inline_work_limit). The callback then runs before
  /// execute()/run() returns. Off: every batch goes to the engine's threads.
  bool caller_runs_small_batches = true;
  /// A run over several engines (or with transfers) enqueues all its
  /// batches at once, each behind the events of the batches it reads
  /// (BatchWork::waits, deferred inputs): work on a device follows its
  /// producers without waiting for the host to hear of them, and copies
  /// wait on events too. Off: each batch is sent once the pipeline has
  /// heard that its inputs are done (the host-mediated path).
  bool enqueue_behind_events = true;
  /// Tests about message order: CAF's deterministic test coordinator
  /// instead of scheduler threads, and productions as messages to the
  /// cache actor instead of planning-thread work. Nothing runs until the
  /// test drives the scheduler (runtime_caf.hpp, drive_scheduler);
  /// cache_stats() is not for this mode, and runs through a pipeline actor
  /// wait for the test to drive them too (direct single batches do not).
  bool deterministic_scheduler = false;
  /// Backpressure (actors/job_board.hpp): at most this many runs in flight
  /// per engine; a run that would exceed it waits in the runtime until a
  /// run there finishes, failing with Timeout past run_deadline. 0: no
  /// bound.
  uint32_t max_runs_in_flight_per_engine = 0;
  /// Runs that may wait for room at once; one more is refused at once with
  /// LimitExceeded ("the runtime is full").
  size_t max_waiting_runs = 4096;
  /// run() with no placement constraint, over several engines that all give
  /// cost estimates: the job's ops go to the least loaded engine where they
  /// could go to any (the engine holding most of its inputs' bytes first,
  /// else the one with the least estimated work in flight; the preference
  /// order is rotated to start there, one prepared entry per rotation).
  /// Off: the registered preference order, whatever the load.
  bool balance_jobs = true;
  /// A run that fails with TransientFailure (an injected fault of a
  /// simulated device, a device hiccup) or ResourceExhausted (an allocation
  /// failed: memory may be free again once other runs are done) is tried
  /// again, whole (programs are pure), up to this many times;
  /// ExecutionStats::retries counts them.
  uint32_t transient_retries = 3;
  /// Backoff before each such retry, doubling with each try (counted in
  /// ExecutionStats::backoff_ns): on simulated devices in virtual time (the
  /// retry's batches start no earlier than the failed try's end plus the
  /// backoff), elsewhere in wall-clock time (the run waits in the runtime,
  /// holding no room on its engines; a shutdown meanwhile answers it
  /// Shutdown).
  uint64_t retry_backoff_ns = 20000;
  /// A run() marked retryable (PrepareOptions::retryable) that fails with
  /// EngineDown is prepared again on the engines left and run again, up to
  /// this many times (ExecutionStats::replacements counts them). So is any
  /// run() whose plan named an engine removed before the run started
  /// (BindingMismatch: a device died between its preparation and its
  /// start; nothing of it ran).
  uint32_t engine_down_retries = 2;
  /// Registers the built-in extension module `tenact` at start, as
  /// register_builtin_extensions does.
  bool builtin_extensions = false;
};

using PreparedProgramPtr = std::shared_ptr<const PreparedProgram>;
using PrepareCallback = std::function<void(Result<PreparedProgramPtr>)>;
using ExecuteCallback = std::function<void(Result<std::vector<Tensor>>)>;

/// How one execution delivers its results.
struct ExecuteOptions {
  /// Empty (the default): each output stays in the buffer of the engine
  /// that produced it, so a chain of runs never goes through the host.
  /// Otherwise every output that lives elsewhere is copied here along a
  /// registered route before the run answers (e.g. {"cpu", "host"} to read
  /// device results back); a missing route fails the run naming the output.
  Endpoint outputs_to{};
  /// Where op results are written (a model's planned activation arena:
  /// BatchOp::destinations, per op of the program); null: memory of their
  /// own. Held until the run's last batch is done, not only until it is
  /// answered.
  PlannedDestinationsPtr destinations{};
  /// Whether a run that fails with TransientFailure or ResourceExhausted is
  /// tried again (RuntimeOptions::transient_retries). Off for runs that
  /// are not pure, e.g. those that update a model's states in place.
  bool retry_transient = true;
};

/// Counters of one execution, for tools and tests.
struct ExecutionStats {
  uint64_t units = 0;      // instructions, regions and transfers run
  uint64_t batches = 0;    // messages sent to engines and the transfer path
  uint64_t transfers = 0;
  /// Tries repeated after a transient failure (RuntimeOptions::
  /// transient_retries); units, batches and transfers count every try.
  uint64_t retries = 0;
  /// Times a run was prepared again on other engines: a retryable run
  /// after an engine went down, a run whose transient failures outlasted
  /// its retries (placed away from the engines it failed on), or one whose
  /// plan named an engine removed before it started.
  uint64_t replacements = 0;
  /// The nanoseconds its retries waited (RuntimeOptions::retry_backoff_ns):
  /// virtual on simulated devices, wall-clock elsewhere.
  uint64_t backoff_ns = 0;
  /// run() only: its prepares that the facade's memo did not answer, each
  /// a request to the prepare cache (which found the plan or produced it);
  /// 0 when every prepare was a memo hit (no message sent).
  uint64_t prepare_requests = 0;
  /// Whether any of the run's work ran on a simulated device or link;
  /// then when its first kernel or copy started and its last one ended,
  /// in the platform's virtual nanoseconds.
  bool virtual_time = false;
  uint64_t virtual_begin_ns = 0;
  uint64_t virtual_end_ns = 0;
  /// The run's virtual makespan (0 when virtual_time is false).
  uint64_t virtual_makespan_ns() const { return virtual_time ? virtual_end_ns - virtual_begin_ns : 0; }
  /// Widens the virtual span by a batch's.
  void cover(const VirtualSpan& span) {
    if (!span.set) return;
    virtual_begin_ns = virtual_time ? std::min(virtual_begin_ns, span.begin_ns) : span.begin_ns;
    virtual_end_ns = virtual_time ? std::max(virtual_end_ns, span.end_ns) : span.end_ns;
    virtual_time = true;
  }
  /// Adds another's counters and widens the span by its span.
  void add(const ExecutionStats& other) {
    units += other.units;
    batches += other.batches;
    transfers += other.transfers;
    retries += other.retries;
    replacements += other.replacements;
    backoff_ns += other.backoff_ns;
    prepare_requests += other.prepare_requests;
    if (other.virtual_time) cover(VirtualSpan{true, other.virtual_begin_ns, other.virtual_end_ns});
  }
};

class Runtime;

/// Registers the built-in module `tenact` (docs/program-format.md, "The
/// built-in module": tenact.softmax, tenact.log_softmax, tenact.layer_norm,
/// tenact.rms_norm, tenact.gelu) with `runtime`. Errors as
/// Runtime::register_extension (a second call: InvalidAttribute).
Status register_builtin_extensions(Runtime& runtime);

class Runtime {
 public:
  /// Starts the actor system and the runtime's own threads. When a thread
  /// cannot be started (ResourceExhausted; LimitExceeded for more than
  /// WorkerPool::kMaxThreads planning threads), the runtime refuses
  /// every request with that error, and status() returns it.
  explicit Runtime(RuntimeOptions options = {});
  ~Runtime();
  /// Ok, or why the runtime could not start.
  Status status() const;
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // -- configuration (each change is a new epoch) --------------------------------
  /// Registers (or re-registers) `engine` and spawns its engine actor.
  Status register_engine(std::shared_ptr<Engine> engine, uint32_t preference = 0,
                         std::map<std::string, std::string> extension_payloads = {});
  Status remove_engine(std::string_view id);
  /// Registers extension family `family` (core/extension.hpp), a new
  /// epoch: programs that use it validate against extensions() from now
  /// on, and every engine that runs host kernels (the CPU engine, the
  /// simulated devices) gets a slot for it when the family has a host
  /// kernel, now and when registered later. `planning_configs` gives the
  /// slot's planning configuration per engine id (engines not named get
  /// none); a payload given to register_engine for the family wins.
  /// Plans prepared before are unchanged. Errors: InvalidAttribute for a
  /// family check_extension_family refuses or a name registered already
  /// (one definition per name: a family never changes under a plan).
  Status register_extension(ExtensionFamily family,
                            std::map<std::string, std::string> planning_configs = {});
  /// The families registered so far (validate programs against it:
  /// load_program(text, rt.extensions())). A snapshot; safe to keep.
  ExtensionRegistry extensions() const;
  /// Registers a transfer provider under `name` (a new epoch): routes may
  /// then name it, and preparations after it use those routes; plans made
  /// before are unchanged. Errors: InvalidAttribute for an empty name, no
  /// copy function, or a name registered already (built-in: host_copy).
  Status add_transfer_provider(std::string name, TransferProvider provider);
  /// Adds a route (one provider per route: remove it to change provider).
  /// Errors: Unsupported for an unknown provider or one that cannot copy
  /// between the endpoints; InvalidAttribute as RuntimeConfig::with_route.
  Status add_route(TransferRoute route);
  Status remove_route(const Endpoint& source, const Endpoint& destination);
  RuntimeConfigPtr config() const;

  // -- preparation --------------------------------------------------------------
  /// Prepares `program` for inputs described by `inputs` (see
  /// planning/prepared_program.hpp). A ready entry is served without a
  /// message round trip; misses and joins meet in the prepare-cache actor.
  std::future<Result<PreparedProgramPtr>> prepare(std::shared_ptr<const SemanticProgram> program,
                                                  std::vector<InputDescriptor> inputs,
                                                  PrepareOptions options = {});
  void prepare(std::shared_ptr<const SemanticProgram> program, std::vector<InputDescriptor> inputs,
               PrepareOptions options, PrepareCallback done);

  // -- execution ----------------------------------------------------------------
  /// Runs a prepared program on `inputs` (host tensors, in program order)
  /// as a pipeline of engine batches. Errors name the unit, op and engine.
  ///
  /// A prepared program runs only where it is valid
  /// (planning/plan_validity.hpp): a plan prepared by another Runtime, or
  /// one using an engine that was removed or registered again since
  /// (whatever its capabilities), or a transfer route that was removed or
  /// given another provider, is refused with BindingMismatch naming what
  /// moved — prepare it again. A plan whose engines and routes are as they
  /// were runs as prepared, whatever else changed (engines or routes it
  /// does not use, new epochs): it is still the plan preparing would give
  /// for the engines it names. Nothing is re-prepared behind the caller's
  /// back.
  std::future<Result<std::vector<Tensor>>> execute(PreparedProgramPtr prepared,
                                                       std::vector<Tensor> inputs, ExecuteOptions options = {});
  void execute(PreparedProgramPtr prepared, std::vector<Tensor> inputs, ExecuteCallback done,
               ExecutionStats* stats = nullptr, ExecuteOptions options = {});

  /// prepare() for the inputs' own descriptors (at the most preferred
  /// engine's default storage class), then execute().
  /// `stats`, when given, is written before the future is ready; the
  /// caller keeps it alive until then. Cost: a std::promise's set_value
  /// makes a futex system call with glibc (its std::call_once), ~2 us on
  /// the 2-core VM of bench/runtime_bench even when the run is answered
  /// on this thread; run_sync has none.
  std::future<Result<std::vector<Tensor>>> run(std::shared_ptr<const SemanticProgram> program,
                                                   std::vector<Tensor> inputs,
                                                   PrepareOptions options = {}, ExecutionStats* stats = nullptr);
  /// `stats`, when given, is the run's (as execute's): the caller keeps it
  /// alive until `done` is called.
  void run(std::shared_ptr<const SemanticProgram> program, std::vector<Tensor> inputs,
           PrepareOptions options, ExecuteCallback done, ExecutionStats* stats = nullptr);
  /// run(), answered to this thread: returns when the run is answered,
  /// with its answer. A prepared small program on the CPU engine is run on
  /// this thread with no future, promise or wait (the cost of a C++ call
  /// plus the kernels); any other run waits for its answer without a
  /// busy loop. Errors: as run()'s; InvalidAttribute when called on one of
  /// the runtime's threads (a CAF scheduler thread, an engine's or a run's
  /// callback), where waiting would block what answers it.
  Result<std::vector<Tensor>> run_sync(std::shared_ptr<const SemanticProgram> program, std::vector<Tensor> inputs,
                                       PrepareOptions options = {}, ExecutionStats* stats = nullptr);

  // -- one extension op, eagerly ---------------------------------------------------
  /// Runs one op of extension family `family` with `attributes_json` (a
  /// JSON object's text; "{}" for none) on `inputs`, pinned to engine
  /// `engine`: the op is validated as in a program (the family's result
  /// inference), prepared directly on that engine — no staging, no program
  /// cache — and launched. When the engine answers Unsupported (no slot
  /// for the family, a kernel that refuses the dtype) or cannot take an
  /// input where it lives, it falls back to the compiled path: a one-op
  /// program prepared through the cache, placed with `engine` most
  /// preferred and the other engines after it (transfers inserted as
  /// needed), and that path's error if it fails too. Results stay
  /// where the engine produced them, as with run(). Errors: MissingExtension
  /// for an unregistered family, Parse or Schema for attributes that are
  /// not a JSON object, the family's inference errors, NoEligibleEngine
  /// naming an engine that is not registered, Shutdown after shutdown.
  std::future<Result<std::vector<Tensor>>> run_op(std::string family, std::string attributes_json,
                                                  std::vector<Tensor> inputs, std::string engine);
  void run_op(std::string family, std::string attributes_json, std::vector<Tensor> inputs,
              std::string engine, ExecuteCallback done);

  // -- models --------------------------------------------------------------------
  /// Compiles `program` — a model with weights and states, or any plain
  /// program — into a plan against the registered engines' provider
  /// contracts (planning/model/model_plan.hpp, with `options.compile` and
  /// `options.placement`) and loads it (actors/model.hpp): the weights
  /// (`weights` by name; a weight's inline data where the map has none)
  /// materialized and uploaded once to every device that reads them, one
  /// arena per dtype per device; states allocated with their capacity and
  /// zero-filled. Blocks the calling thread until loaded, so it is refused
  /// (Internal) on a runtime thread. Errors: a weight missing, unknown or
  /// of the wrong dtype or shape (InputMismatch, naming it); the plan
  /// compiler's (InvalidPlan, NoEligibleEngine); allocation and copy
  /// failures naming the device; Shutdown.
  Result<ModelPtr> load_model(std::shared_ptr<const SemanticProgram> program,
                              std::map<std::string, Tensor> weights, ModelOptions options = {});

  // -- copies --------------------------------------------------------------------
  // (run() with `retries_left` tries left after an engine went down.)
 private:
  void run_retrying(std::shared_ptr<const SemanticProgram> program, std::vector<Tensor> inputs,
                    PrepareOptions options, ExecuteCallback done, ExecutionStats* stats, uint32_t retries_left);

 public:

  /// Copies `value` to `destination` (an engine's storage class),
  /// asynchronously where the route's provider runs copies, along the registered route
  /// from where the value lives (unowned host memory: with host_copy): how
  /// a result left in an engine's memory is read back, or a value placed
  /// for the next run. The copy is a buffer the destination engine owns.
  /// `done` runs once, on a runtime thread. Errors: Unsupported when no
  /// route joins the two endpoints (naming both); the provider's errors,
  /// with the route as context; Shutdown once shutdown has begun; Timeout
  /// past the run deadline.
  void copy(Tensor value, Endpoint destination, std::function<void(Result<Tensor>)> done);
  std::future<Result<Tensor>> copy(Tensor value, Endpoint destination);

  // -- the prepare cache --------------------------------------------------------
  CacheStats cache_stats() const;
  /// Per engine: runs in flight now and at most, runs admitted and of
  /// those the ones that waited for room, estimated work in flight
  /// (actors/job_board.hpp). Engines no run has used are absent.
  std::map<std::string, EngineQueueStats> queue_stats() const;
  void clear_cache();

  /// The runtime's internals (actor system and actors); see runtime_caf.hpp.
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tenact
