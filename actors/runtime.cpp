// The Runtime facade: configuration changes under one mutex, preparation
// (memo fast path, else context resolution on the caller's thread and one
// message to the prepare-cache actor), execution (one pipeline actor per
// run), and the shutdown sequence.
#include "actors/runtime.hpp"

#include <atomic>
#include <algorithm>
#include <optional>
#include <thread>

#include "actors/inline_run.hpp"
#include "actors/runtime_impl.hpp"
#include "core/guarded.hpp"
#include "planning/plan_validity.hpp"
#include "planning/signature.hpp"
#include "planning/specialization_projection.hpp"

namespace tenact {

namespace {

std::atomic<uint64_t> g_next_runtime_id{1};

size_t default_threads(size_t asked) {
  if (asked) return asked;
  return std::max<size_t>(2, std::thread::hardware_concurrency());
}

// Marks every thread CAF starts (scheduler workers, timer, …) as a runtime
// thread: a request issued there never runs kernels inline.
class MarkRuntimeThreads final : public caf::thread_hook {
 public:
  void init(caf::actor_system&) override {}
  void thread_started() override { mark_runtime_thread(); }
  void thread_terminates() override {}
};

}  // namespace

// -- Impl ---------------------------------------------------------------------------

Runtime::Impl::Impl(RuntimeOptions opts) : options(std::move(opts)) {
  runtime_id = options.runtime_id ? options.runtime_id : g_next_runtime_id.fetch_add(1);
  cfg.set("scheduler.max-threads", default_threads(options.scheduler_threads));
  cfg.set("scheduler.policy", options.deterministic_scheduler ? caf::atom("testing")
                              : options.sharing_scheduler       ? caf::atom("sharing")
                                                                : caf::atom("stealing"));
  cfg.add_thread_hook<MarkRuntimeThreads>();
  system = std::make_unique<caf::actor_system>(cfg);
  auto planning = WorkerPool::create(std::max<size_t>(1, options.planning_threads));
  if (planning.ok()) planning_pool = std::move(*planning);
  else startup_error = planning.error().with_context("the runtime's planning threads");
  closing = startup_error.has_value();
  config = RuntimeConfig::initial(runtime_id, options.policy);
  epoch.store(config->epoch(), std::memory_order_release);
  cache = spawn_prepare_cache(*system, this, memo_, plans_);
  ticker = spawn_deadline_ticker(*system, this);
  transfer = spawn_transfer_registry(*system, this);
}

Runtime::Impl::~Impl() {
  std::map<uint64_t, pipeline_actor_type> runs;
  {
    std::lock_guard lock(mutex);
    closing = true;
    runs = pipelines;
  }
  jobs.fail_all(Error{ErrorCode::Shutdown, "the runtime shut down while the run waited for room on its engines"});
  pending.close(Error{ErrorCode::Shutdown, "the runtime shut down while the request was in flight"});
  delayed.close();  // retries waiting for their backoff: answered just above
  planning_pool.reset();  // queued productions finish; their answers find closed requests
  {
    // Copies waiting on events still post to their copy threads, which the
    // transfer actor keeps: it goes after the last of them.
    std::unique_lock lock(work_mutex_);
    work_cv_.wait(lock, [this] { return work_in_flight_ == 0; });
  }
  for (auto& [id, run] : runs) caf::anon_send_exit(run, caf::exit_reason::kill);
  caf::anon_send_exit(cache, caf::exit_reason::kill);
  caf::anon_send_exit(transfer, caf::exit_reason::kill);
  caf::anon_send_exit(ticker, caf::exit_reason::kill);
  caf::anon_send_exit(gateway, caf::exit_reason::kill);
  {
    std::lock_guard lock(mutex);
    for (auto& [id, slot] : engines) caf::anon_send_exit(slot.actor, caf::exit_reason::kill);
    engines.clear();
    pipelines.clear();
  }
  if (options.deterministic_scheduler) drive_scheduler(*system);  // lets the actors see their exits
  runs.clear();
  cache = cache_actor_type{};
  transfer = transfer_actor_type{};
  ticker = ticker_actor_type{};
  gateway = caf::actor{};
  system.reset();
}

Error Runtime::Impl::refusal(std::string_view what) const {
  if (startup_error) return *startup_error;
  return Error{ErrorCode::Shutdown, std::string{what} + " after the runtime shut down"};
}

void Runtime::Impl::work_started() {
  std::lock_guard lock(work_mutex_);
  ++work_in_flight_;
}

void Runtime::Impl::work_finished() {
  std::lock_guard lock(work_mutex_);
  if (--work_in_flight_ == 0) work_cv_.notify_all();
}

Runtime::Impl::Snapshot Runtime::Impl::snapshot() const {
  std::lock_guard lock(mutex);
  auto objects = std::make_shared<std::map<std::string, std::shared_ptr<Engine>, std::less<>>>();
  for (const auto& [id, slot] : engines) objects->emplace(id, slot.engine);
  EngineLookup lookup = [objects](std::string_view id) -> std::shared_ptr<Engine> {
    auto it = objects->find(id);
    return it == objects->end() ? nullptr : it->second;
  };
  return {config, std::move(lookup)};
}

RuntimeConfigPtr Runtime::Impl::current_config() const {
  std::lock_guard lock(mutex);
  return config;
}

engine_actor_type Runtime::Impl::engine_actor(std::string_view id) const {
  std::lock_guard lock(mutex);
  auto it = engines.find(id);
  return it == engines.end() ? engine_actor_type{} : it->second.actor;
}

std::optional<EngineSlot> Runtime::Impl::engine_slot(std::string_view id) const {
  std::lock_guard lock(mutex);
  auto it = engines.find(id);
  if (it == engines.end()) return std::nullopt;
  return it->second;
}

void Runtime::Impl::publish(RuntimeConfigPtr next) {
  // Called with `mutex` held.
  config = std::move(next);
  epoch.store(config->epoch(), std::memory_order_release);
  // Memo lookups name the epoch they read under, so the old epoch's
  // entries stop being served now; the cache actor drops them.
  caf::anon_send(cache, msg::epoch_atom::value, config->epoch());
}

engine_actor_type Runtime::Impl::retire_dead_engine(const Engine* engine) {
  std::lock_guard lock(mutex);
  if (closing || engine == nullptr) return {};
  auto it = engines.find(engine->identity().id);
  if (it == engines.end() || it->second.engine.get() != engine) return {};  // gone, or registered again
  auto next = config->without_engine(it->first);
  if (!next.ok()) return {};
  engine_actor_type actor = it->second.actor;
  retired_engines.push_back(it->second.engine);
  engines.erase(it);
  publish(std::move(*next));
  return actor;
}

void Runtime::Impl::forget_pipeline(uint64_t run) {
  std::lock_guard lock(mutex);
  pipelines.erase(run);
}

// -- Runtime ------------------------------------------------------------------------

Runtime::Runtime(RuntimeOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  impl_->link = std::make_shared<RuntimeLink>(this);
  impl_->gateway = spawn_gateway(*impl_->system, this, impl_.get());
  if (impl_->options.builtin_extensions && !impl_->closing)
    if (Status s = register_builtin_extensions(*this); !s.ok()) {
      impl_->startup_error = s.error();
      impl_->closing = true;
    }
}
Runtime::~Runtime() {
  // Models calling in from other threads are done before anything goes.
  impl_->link->close();
}

Status Runtime::status() const {
  if (impl_->startup_error) return *impl_->startup_error;
  return ok_status();
}

Status Runtime::register_engine(std::shared_ptr<Engine> engine, uint32_t preference,
                                std::map<std::string, std::string> extension_payloads) {
  if (!engine) return Error{ErrorCode::InvalidAttribute, "register_engine without an engine"};
  std::lock_guard lock(impl_->mutex);
  if (impl_->closing) return impl_->refusal("register_engine");
  EngineRegistration reg{engine->identity(), engine->capabilities(), preference, std::move(extension_payloads)};
  TENACT_ASSIGN_OR_RETURN(auto next, impl_->config->with_engine(std::move(reg)));
  auto watch = std::make_shared<EngineWatch>(engine->identity().id);
  engine_actor_type actor = impl_->system->spawn(engine_actor, engine, watch, impl_.get());
  impl_->engines[engine->identity().id] = EngineSlot{engine, actor, watch};
  impl_->publish(std::move(next));
  return ok_status();
}

Status Runtime::remove_engine(std::string_view id) {
  std::lock_guard lock(impl_->mutex);
  TENACT_ASSIGN_OR_RETURN(auto next, impl_->config->without_engine(id));
  if (auto it = impl_->engines.find(id); it != impl_->engines.end()) impl_->engines.erase(it);
  impl_->publish(std::move(next));
  return ok_status();
}

namespace {

// Sends `change` to the transfer registry and waits for its answer (the
// registry owns providers and routes). From a runtime thread that wait
// could hold up the very threads that answer, so it is refused there.
Status change_registry(Runtime::Impl& rt, const char* what, std::shared_ptr<RegistryChange> change) {
  if (rt.closing) return rt.refusal(what);
  if (on_runtime_thread())
    return Error{ErrorCode::InvalidAttribute, std::string{what} +
                                                  " waits for the transfer registry: call it from a thread of your "
                                                  "own, not from a runtime callback"};
  auto [callback, future] = future_callback<uint64_t>();
  change->done = rt.pending.track<uint64_t>(std::move(callback), "the registry change", rt.options.prepare_deadline);
  caf::anon_send(rt.transfer, msg::registry_atom::value, std::move(change));
  Result<uint64_t> epoch = future.get();
  if (!epoch.ok()) return epoch.error();
  return ok_status();
}

}  // namespace

Status Runtime::add_transfer_provider(std::string name, TransferProvider provider) {
  auto change = std::make_shared<RegistryChange>();
  change->kind = RegistryChange::Kind::AddProvider;
  change->name = std::move(name);
  change->provider = std::move(provider);
  return change_registry(*impl_, "add_transfer_provider", std::move(change));
}

Status Runtime::add_route(TransferRoute route) {
  auto change = std::make_shared<RegistryChange>();
  change->kind = RegistryChange::Kind::AddRoute;
  change->route = std::move(route);
  return change_registry(*impl_, "add_route", std::move(change));
}

Status Runtime::remove_route(const Endpoint& source, const Endpoint& destination) {
  auto change = std::make_shared<RegistryChange>();
  change->kind = RegistryChange::Kind::RemoveRoute;
  change->route = TransferRoute{source, destination, ""};
  return change_registry(*impl_, "remove_route", std::move(change));
}

RuntimeConfigPtr Runtime::config() const { return impl_->current_config(); }

namespace {
/// Set while the facade's memo answers a prepare on this thread.
thread_local bool t_prepare_from_memo = false;
}  // namespace

void Runtime::prepare(std::shared_ptr<const SemanticProgram> program, std::vector<InputDescriptor> inputs,
                      PrepareOptions options, PrepareCallback done) {
  Impl& rt = *impl_;
  if (!program) return done(Error{ErrorCode::InvalidAttribute, "prepare without a program"});
  if (rt.closing) return done(rt.refusal("prepare"));
  const std::string options_text = options.canonical_text();
  // The memo is read under the published epoch (an entry names the epoch
  // it was made in); the snapshot, which copies the engine table, only
  // when preparation goes on.
  if (options.cache_in_flight)
    if (auto hit = rt.memo().find(*program, inputs, options_text,
                                  MemoStamp{rt.epoch.load(std::memory_order_acquire),
                                            rt.cache_generation.load(std::memory_order_acquire)})) {
      if (rt.options.trace)
        rt.options.trace->instant(rt.options.trace->track("prepare cache"), "hit '" + program->name() + "'",
                                  "prepare", steady_now_ns(), {{"path", "facade"}});
      // Answered on this thread, before prepare returns: run() reads the
      // mark in its callback (ExecutionStats::prepare_requests).
      t_prepare_from_memo = true;
      done(std::move(hit));
      t_prepare_from_memo = false;
      return;
    }
  // A named reference, not a structured binding: lambdas below capture it,
  // which clang 14 (the sanitizer builds' compiler) does not allow.
  auto snapshot = rt.snapshot();
  const RuntimeConfigPtr& config = snapshot.config;
  const MemoStamp stamp{config->epoch(), rt.cache_generation.load(std::memory_order_acquire)};
  // The caller's thread resolves the context: the facade's largest
  // allocations, so running out of memory here answers with an error.
  if (auto bound = guarded("preparing", [&] { return bind_signature(*program, signature_of(inputs)); }); !bound.ok())
    return done(bound.error());
  auto context = guarded("preparing", [&] { return resolve_preparation_context(config, program, inputs, options); });
  if (!context.ok()) return done(context.error());
  auto state = guarded("preparing", [&] { return begin_specialization(*program, inputs); });
  if (!state.ok()) return done(state.error());

  auto job = std::make_shared<PrepareJob>();
  job->walk.context = std::make_shared<const PreparationContext>(std::move(*context));
  job->walk.state = std::move(*state);
  job->cache_in_flight = options.cache_in_flight;
  job->engines = std::move(snapshot.engines);
  job->walk.inputs = inputs;
  if (options.cache_in_flight)
    job->memo = PrepareJob::MemoRequest{program, std::move(inputs), options_text, stamp};
  job->done = rt.pending.track<PreparedProgramPtr>(std::move(done), "the preparation", rt.options.prepare_deadline);
  caf::anon_send(rt.cache, msg::prepare_atom::value, std::move(job));
}

std::future<Result<PreparedProgramPtr>> Runtime::prepare(std::shared_ptr<const SemanticProgram> program,
                                                         std::vector<InputDescriptor> inputs,
                                                         PrepareOptions options) {
  auto [callback, future] = future_callback<PreparedProgramPtr>();
  prepare(std::move(program), std::move(inputs), std::move(options), std::move(callback));
  return std::move(future);
}

namespace {

// Copies `value` to `destination` through the transfer actor (see
// Runtime::copy).
void copy_along_route(Runtime::Impl& rt, Tensor value, Endpoint destination, std::function<void(Result<Tensor>)> done) {
  if (rt.closing) return done(rt.refusal("copy"));
  Endpoint source = value.endpoint();
  // Along a registered route; unowned host memory without one is copied by
  // host_copy (it may enter any host memory).
  std::string provider = "host_copy";
  auto config = rt.current_config();
  if (const TransferRoute* route = config->find_route(source, destination)) {
    provider = route->provider;
  } else if (!source.engine.empty()) {
    return done(Error{ErrorCode::Unsupported, "no route from " + source.to_string() + " to " +
                                                  destination.to_string() + " to copy the value along"});
  }
  auto tracked = rt.pending.track<Tensor>(std::move(done), "the copy", rt.options.run_deadline);
  auto job = std::make_shared<BatchJob>();
  job->work.inputs.push_back(std::move(value));
  job->provider = std::move(provider);
  job->source = std::move(source);
  job->destination = std::move(destination);
  job->reply = [tracked](Result<std::vector<Tensor>> r) {
    if (!r.ok()) return tracked(r.error());
    if (r->size() != 1)
      return tracked(Error{ErrorCode::Internal, "a copy came back with " + std::to_string(r->size()) + " values"});
    tracked(std::move(r->front()));
  };
  caf::anon_send(rt.transfer, msg::launch_atom::value, std::move(job));
}

// `done` for outputs delivered at `to` (ExecuteOptions::outputs_to): the
// outputs elsewhere are copied there first, all at once; the first failed
// copy fails the run, naming the output.
ExecuteCallback deliver_outputs_at(Runtime::Impl& rt, Endpoint to, ExecuteCallback done) {
  return [&rt, to = std::move(to), done = std::move(done)](Result<std::vector<Tensor>> r) mutable {
    if (!r.ok()) return done(std::move(r));
    struct Gather {
      std::mutex mutex;
      std::vector<Tensor> outputs;
      std::optional<Error> error;
      size_t left = 1;  // one for the loop below
      ExecuteCallback done;
      void one_done() {
        std::unique_lock lock(mutex);
        if (--left != 0) return;
        lock.unlock();
        if (error) return done(std::move(*error));
        done(std::move(outputs));
      }
    };
    auto gather = std::make_shared<Gather>();
    gather->outputs = std::move(*r);
    gather->done = std::move(done);
    for (size_t i = 0; i < gather->outputs.size(); ++i) {
      if (gather->outputs[i].endpoint() == to) continue;
      {
        std::lock_guard lock(gather->mutex);
        ++gather->left;
      }
      copy_along_route(rt, gather->outputs[i], to, [gather, i](Result<Tensor> copied) {
        {
          std::lock_guard lock(gather->mutex);
          if (!copied.ok() && !gather->error)
            gather->error = copied.error().with_context("delivering output " + std::to_string(i));
          if (copied.ok()) gather->outputs[i] = std::move(*copied);
        }
        gather->one_done();
      });
    }
    gather->one_done();
  };
}

// With tracing on: the runs in flight on each engine of `load`, now.
void trace_queue_depth(Runtime::Impl& rt, const JobLoad& load) {
  if (!rt.options.trace) return;
  const auto queues = rt.jobs.stats();
  const uint64_t now = steady_now_ns();
  for (const JobLoad::Share& s : load.engines)
    if (auto it = queues.find(s.engine); it != queues.end())
      rt.options.trace->counter("runs in flight " + s.engine, now, static_cast<int64_t>(it->second.in_flight));
}

// One run between admission and its answer: what it needs to start again
// when a try fails transiently (programs are pure: a run may be repeated).
struct AdmittedRun {
  Runtime::Impl* rt = nullptr;
  PreparedProgramPtr prepared;
  std::vector<Tensor> inputs;
  SymbolBindings symbols;
  /// The caller's answer, tracked (PendingRequests): when this run answers
  /// first, it adds `tried` to the caller's stats just before; when the
  /// deadline or shutdown answered first, nothing touches the caller's
  /// stats again (the caller may have let them go).
  ExecuteCallback done;
  /// Every try's counters and virtual span (the pipeline writes it while a
  /// try runs; tries never overlap in writing it).
  ExecutionStats tried;
  /// The next try's BatchWork::not_before_ns.
  uint64_t not_before_ns = 0;
  /// ExecuteOptions::destinations and retry_transient.
  PlannedDestinationsPtr destinations;
  bool retry_transient = true;
  std::shared_ptr<const JobLoad> load;
  std::chrono::steady_clock::time_point deadline;
  std::thread::id admitted_on;
  uint32_t tries = 0;
};

void readmit(const std::shared_ptr<AdmittedRun>& run);
void readmit_after(const std::shared_ptr<AdmittedRun>& run, uint64_t wait_ns);

// The inputs go before the caller hears: once a run is answered, the
// runtime holds none of its buffers (a caller may check its engines' memory
// from the callback on).
void answer_run(AdmittedRun& run, Result<std::vector<Tensor>> r) {
  { std::vector<Tensor> spent = std::move(run.inputs); }
  // No batch is in flight any more: the destinations (a model's arena) go
  // back before the caller hears, so its next run finds them idle.
  { PlannedDestinationsPtr spent = std::move(run.destinations); }
  run.done(std::move(r));
}

// A failure another try may not meet: a transient one, or memory that may
// be free once other runs finish.
bool worth_another_try(const Error& e) {
  return e.code() == ErrorCode::TransientFailure || e.code() == ErrorCode::ResourceExhausted;
}

// Starts a try once the job board has admitted it; gives the room back
// when the try is over. A start the board deferred runs on the thread that
// freed the room, marked as the runtime's (no kernel runs inline on it). A
// try that fails worth_another_try is admitted again, up to
// RuntimeOptions::transient_retries times (each counted in the stats),
// after a backoff that doubles each time: in virtual time when the try ran
// on simulated devices (the next try starts no earlier than this one's
// end plus the backoff), else in wall-clock time (the run waits in
// DelayedStarts, holding no engine's room, until the ticker starts it;
// at once under the deterministic scheduler, whose clock a test drives).
void start_try(const std::shared_ptr<AdmittedRun>& run, Status admitted) {
  if (!admitted.ok()) return answer_run(*run, admitted.error());
  Runtime::Impl* rt = run->rt;
  trace_queue_depth(*rt, *run->load);
  auto finish = [run](Result<std::vector<Tensor>> r) {
    run->rt->jobs.finished(*run->load);
    trace_queue_depth(*run->rt, *run->load);
    if (!r.ok() && run->retry_transient && worth_another_try(r.error()) &&
        run->tries < run->rt->options.transient_retries && !run->rt->closing) {
      ++run->tries;
      ++run->tried.retries;
      const uint64_t wait = run->rt->options.retry_backoff_ns << std::min<uint32_t>(run->tries - 1, 20);
      run->tried.backoff_ns += wait;
      if (run->tried.virtual_time) {
        run->not_before_ns = run->tried.virtual_end_ns + wait;
        return readmit(run);
      }
      return readmit_after(run, wait);
    }
    answer_run(*run, std::move(r));
  };
  std::optional<RuntimeThreadScope> deferred;
  if (std::this_thread::get_id() != run->admitted_on) deferred.emplace();
  spawn_pipeline(rt, run->prepared, run->inputs, run->symbols, std::move(finish), &run->tried, run->not_before_ns,
                 run->destinations);
}

void readmit(const std::shared_ptr<AdmittedRun>& run) {
  run->admitted_on = std::this_thread::get_id();
  run->rt->jobs.admit(*run->load, run->deadline, [run](Status s) { start_try(run, std::move(s)); });
}

// readmit() once `wait_ns` of wall-clock time has passed (any thread).
void readmit_after(const std::shared_ptr<AdmittedRun>& run, uint64_t wait_ns) {
  Runtime::Impl& rt = *run->rt;
  if (wait_ns == 0 || rt.options.deterministic_scheduler) return readmit(run);
  const uint64_t id = rt.delayed.hold([run] { readmit(run); });
  if (id == 0) return answer_run(*run, rt.refusal("a retry"));
  caf::delayed_anon_send(rt.ticker, std::chrono::nanoseconds(wait_ns), msg::start_later_atom::value, id);
}

// Starts the run once the job board has room for it on every engine it
// uses (at once, or when a run there finishes). `run` holds the tracked
// answer already.
void admit_run(Runtime::Impl& rt, const std::shared_ptr<AdmittedRun>& run, PreparedProgramPtr prepared,
               std::vector<Tensor> inputs, SymbolBindings symbols) {
  run->rt = &rt;
  run->load = std::make_shared<const JobLoad>(job_load_of(*prepared));
  run->prepared = std::move(prepared);
  run->inputs = std::move(inputs);
  run->symbols = std::move(symbols);
  run->deadline = std::chrono::steady_clock::now() + rt.options.run_deadline;
  readmit(run);
}

}  // namespace

void Runtime::execute(PreparedProgramPtr prepared, std::vector<Tensor> inputs, ExecuteCallback done,
                      ExecutionStats* stats, ExecuteOptions options) {
  Impl& rt = *impl_;
  if (!options.outputs_to.engine.empty()) done = deliver_outputs_at(rt, std::move(options.outputs_to), std::move(done));
  if (!prepared || !prepared->root) return done(Error{ErrorCode::InvalidAttribute, "execute without a prepared program"});
  if (rt.closing) return done(rt.refusal("execute"));
  // Runs only where it is valid (planning/plan_validity.hpp); the check is
  // two loads when the configuration has not moved since preparation.
  if (const RootIdentity* id = prepared->root->identity.get();
      !id || id->runtime_id != rt.runtime_id || id->epoch != rt.epoch.load(std::memory_order_acquire))
    if (Status current = check_plan_current(*prepared, *rt.current_config()); !current.ok())
      return done(current.error());
  const SemanticProgram& program = *prepared->root->program;
  auto symbols = bind_signature(program, signature_of(inputs));
  if (!symbols.ok()) return done(symbols.error());
  // The inputs must fit what the plan was specialized for.
  auto descriptors = describe_inputs(inputs, Endpoint{});
  for (size_t i = 0; i < descriptors.size(); ++i) {
    descriptors[i].placement = prepared->root->schedule->endpoint(prepared->root->schedule->input_locations[i]);
    // A buffer an engine owns must be where the plan takes the input.
    if (Endpoint at = inputs[i].endpoint(); !at.engine.empty() && !(at == descriptors[i].placement))
      return done(Error{ErrorCode::InputMismatch,
                        "input " + std::to_string(i) + " ('" + program.value(program.inputs()[i]).name + "') lives at " +
                            at.to_string() + "; the plan takes it at " + descriptors[i].placement.to_string()});
  }
  auto projection = project(program, prepared->requirements, descriptors);
  if (!projection.ok()) return done(projection.error());
  if (!(*projection == prepared->projection))
    return done(Error{ErrorCode::InputMismatch, "the inputs " + to_string(*projection) +
                                                    " do not fit the specialization the program was prepared for " +
                                                    to_string(prepared->projection)});
  auto run = std::make_shared<AdmittedRun>();
  run->destinations = std::move(options.destinations);
  run->retry_transient = options.retry_transient;
  std::function<void()> add_stats;
  // Runs only from answer_run, while `run` is alive (the tracked answer).
  if (stats) add_stats = [stats, tried = &run->tried] { stats->add(*tried); };
  run->done = rt.pending.track<std::vector<Tensor>>(std::move(done), "the run", rt.options.run_deadline,
                                                    std::move(add_stats));
  admit_run(rt, run, std::move(prepared), std::move(inputs), std::move(*symbols));
}

std::future<Result<std::vector<Tensor>>> Runtime::execute(PreparedProgramPtr prepared,
                                                              std::vector<Tensor> inputs, ExecuteOptions options) {
  auto [callback, future] = future_callback<std::vector<Tensor>>();
  execute(std::move(prepared), std::move(inputs), std::move(callback), nullptr, std::move(options));
  return std::move(future);
}

void Runtime::copy(Tensor value, Endpoint destination, std::function<void(Result<Tensor>)> done) {
  copy_along_route(*impl_, std::move(value), std::move(destination), std::move(done));
}

std::future<Result<Tensor>> Runtime::copy(Tensor value, Endpoint destination) {
  auto [callback, future] = future_callback<Tensor>();
  copy(std::move(value), std::move(destination), std::move(callback));
  return std::move(future);
}

std::future<Result<std::vector<Tensor>>> Runtime::run(std::shared_ptr<const SemanticProgram> program,
                                                          std::vector<Tensor> inputs,
                                                          PrepareOptions options, ExecutionStats* stats) {
  auto [callback, future] = future_callback<std::vector<Tensor>>();
  run(std::move(program), std::move(inputs), std::move(options), std::move(callback), stats);
  return std::move(future);
}

std::vector<InputDescriptor> describe_run_inputs(std::span<const Tensor> inputs) {
  std::vector<InputDescriptor> descriptors;
  descriptors.reserve(inputs.size());
  for (const Tensor& input : inputs) {
    Endpoint at = input.endpoint();
    descriptors.push_back(describe_input(input, at.engine.empty() ? Endpoint{} : std::move(at)));
  }
  return descriptors;
}

bool job_has_placement_choice(const Runtime::Impl& rt, const PrepareOptions& options) {
  if (!options.placement.is_any()) return false;
  if (options.policy != PlacementPolicy::Auto && options.policy != PlacementPolicy::EarliestFinish) return false;
  int with_cost = 0;
  // Held for the loop: a range-for over a temporary's member would let the
  // configuration go while it is read, when another thread publishes a new
  // one (C++20 extends no temporary of the range expression but the last).
  const RuntimeConfigPtr config = rt.current_config();
  for (const EngineEntry& e : config->engines())
    if (e.capabilities.executable) {
      if (!e.capabilities.cost) return false;
      ++with_cost;
    }
  return with_cost > 1;
}

namespace {

// Job placement for run() (RuntimeOptions::balance_jobs): without a
// placement constraint, over several executable engines that all give cost
// estimates, the preference order is rotated to start at the engine that
// holds most of the inputs' bytes, else — when the first engine has runs in
// flight — at the least loaded one. Cost-aware placement puts ops that
// could go anywhere on the first engine of the order (its ties go there).
void balance_job(Runtime::Impl& rt, std::span<const InputDescriptor> inputs, PrepareOptions& options) {
  if (!job_has_placement_choice(rt, options)) return;
  std::vector<std::string> ids;
  const RuntimeConfigPtr config = rt.current_config();  // held for the loop (see job_has_placement_choice)
  for (const EngineEntry& e : config->engines())
    if (e.capabilities.executable) ids.push_back(e.id());
  if (ids.size() < 2) return;  // the configuration changed since the check
  std::map<std::string, uint64_t, std::less<>> held;
  for (const InputDescriptor& in : inputs) {
    if (in.placement.engine.empty()) continue;
    uint64_t bytes = size_of(in.dtype);
    for (int64_t d : in.shape) bytes *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
    held[in.placement.engine] += bytes;
  }
  std::string home;
  uint64_t most = 0;
  for (const std::string& id : ids)
    if (auto it = held.find(id); it != held.end() && it->second > most) most = it->second, home = id;
  if (home.empty()) {
    const auto queues = rt.jobs.stats();
    const auto first = queues.find(ids.front());
    if (first == queues.end() || first->second.in_flight == 0) return;  // idle: no need to move
    home = rt.jobs.least_loaded(ids);
  }
  if (home.empty() || home == ids.front()) return;
  std::rotate(ids.begin(), std::find(ids.begin(), ids.end(), home), ids.end());
  options.placement.engines = std::move(ids);
}

// The executable engines of the current configuration that are not in
// `used`, in preference order (empty when there are none, or when `used` is
// empty: nothing to move away from).
std::vector<std::string> engines_other_than(Runtime::Impl& rt, const std::vector<std::string>& used) {
  std::vector<std::string> others;
  if (used.empty()) return others;
  const RuntimeConfigPtr config = rt.current_config();  // held for the loop (see job_has_placement_choice)
  for (const EngineEntry& e : config->engines())
    if (e.capabilities.executable && std::find(used.begin(), used.end(), e.id()) == used.end()) others.push_back(e.id());
  return others;
}

}  // namespace

void Runtime::run(std::shared_ptr<const SemanticProgram> program, std::vector<Tensor> inputs,
                  PrepareOptions options, ExecuteCallback callback, ExecutionStats* stats) {
  if (try_run_inline(*impl_, program, inputs, options, callback, stats)) return;
  const uint32_t retries = impl_->options.engine_down_retries;
  run_retrying(std::move(program), std::move(inputs), std::move(options), std::move(callback), stats, retries);
}

Result<std::vector<Tensor>> Runtime::run_sync(std::shared_ptr<const SemanticProgram> program,
                                              std::vector<Tensor> inputs, PrepareOptions options,
                                              ExecutionStats* stats) {
  if (on_runtime_thread())
    return Error{ErrorCode::InvalidAttribute,
                 "run_sync called on a runtime thread, where waiting would block what answers it; use run() with "
                 "a callback there"};
  // The caller-thread path answers before try_run_inline returns, so its
  // answer lives here: the callback holds a pointer (stored inside the
  // std::function, no allocation) and nothing waits.
  std::optional<Result<std::vector<Tensor>>> answered_here;
  ExecuteCallback here = [&answered_here](Result<std::vector<Tensor>> r) { answered_here.emplace(std::move(r)); };
  if (try_run_inline(*impl_, program, inputs, options, here, stats)) return std::move(*answered_here);
  // Written by whoever answers, read here once `done` says so (the release
  // store orders the answer before it); shared, as the answering thread
  // still touches `done` after the store.
  struct Answer {
    std::optional<Result<std::vector<Tensor>>> result;
    std::atomic<bool> done{false};
  };
  auto answer = std::make_shared<Answer>();
  run_retrying(std::move(program), std::move(inputs), std::move(options),
               [answer](Result<std::vector<Tensor>> r) {
                 answer->result.emplace(std::move(r));
                 answer->done.store(true, std::memory_order_release);
                 answer->done.notify_one();
               },
               stats, impl_->options.engine_down_retries);
  answer->done.wait(false, std::memory_order_acquire);
  return std::move(*answer->result);
}

void Runtime::run_retrying(std::shared_ptr<const SemanticProgram> program, std::vector<Tensor> inputs,
                           PrepareOptions options, ExecuteCallback callback, ExecutionStats* stats,
                           uint32_t retries_left) {
  std::vector<InputDescriptor> descriptors = describe_run_inputs(inputs);
  // Whether the caller left placement to the runtime (balancing below
  // rotates the preference order, which reads as a constraint).
  const bool unconstrained = options.placement.is_any();
  if (impl_->options.balance_jobs) balance_job(*impl_, descriptors, options);
  // The engines of the plan the try ran (set when prepared).
  auto used = std::make_shared<std::vector<std::string>>();
  if (retries_left > 0) {
    // Answered by a try, or prepared again on the engines left and tried
    // again: when the plan names an engine removed between its preparation
    // and its start (BindingMismatch: nothing of it ran; any run); for a
    // run marked retryable, when an engine it used went down mid-run; and
    // when its tries kept failing transiently (or for memory) and the
    // caller left placement to the runtime: then on the other engines.
    callback = [this, program, inputs, options, stats, retries_left, unconstrained, used,
                callback = std::move(callback)](Result<std::vector<Tensor>> r) mutable {
      const ErrorCode code = r.ok() ? ErrorCode::Internal : r.error().code();
      std::vector<std::string> elsewhere;
      if (!r.ok() && unconstrained && worth_another_try(r.error())) elsewhere = engines_other_than(*impl_, *used);
      const bool replace = !r.ok() && !impl_->closing &&
                           (code == ErrorCode::BindingMismatch || (options.retryable && code == ErrorCode::EngineDown) ||
                            !elsewhere.empty());
      if (!replace) {
        { std::vector<Tensor> spent = std::move(inputs); }  // released before the caller hears
        return callback(std::move(r));
      }
      if (stats) ++stats->replacements;
      if (!elsewhere.empty()) options.placement.engines = std::move(elsewhere);
      run_retrying(std::move(program), std::move(inputs), std::move(options), std::move(callback), stats,
                   retries_left - 1);
    };
  }
  auto shared_inputs = std::make_shared<std::vector<Tensor>>(std::move(inputs));
  prepare(std::move(program), std::move(descriptors), std::move(options),
          [this, shared_inputs, stats, used, callback = std::move(callback)](Result<PreparedProgramPtr> prepared) mutable {
            if (stats && !t_prepare_from_memo) ++stats->prepare_requests;
            if (!prepared.ok()) return callback(prepared.error());
            if ((*prepared)->root && (*prepared)->root->schedule)
              for (const Endpoint& e : (*prepared)->root->schedule->locations) used->push_back(e.engine);
            execute(std::move(*prepared), std::move(*shared_inputs), std::move(callback), stats);
          });
}

std::map<std::string, EngineQueueStats> Runtime::queue_stats() const { return impl_->jobs.stats(); }

CacheStats Runtime::cache_stats() const {
  CacheStats stats;
  if (impl_->closing) return stats;
  caf::scoped_actor self{*impl_->system};
  self->request(impl_->cache, std::chrono::seconds(10), msg::stats_atom::value)
      .receive([&](const CacheStatsPtr& s) { stats = *s; }, [](caf::error&) {});
  stats.hits += impl_->memo().hits();
  return stats;
}

void Runtime::clear_cache() {
  // From now on no memo entry made before is served; the cache actor drops
  // the entries when it handles the message (before any later request from
  // this thread, which it receives after it).
  const uint64_t generation = impl_->cache_generation.fetch_add(1, std::memory_order_acq_rel) + 1;
  caf::anon_send(impl_->cache, msg::clear_atom::value, generation);
}

}  // namespace tenact
