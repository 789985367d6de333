// Runtime::Impl: the actor system, the configuration and the actors behind
// the facade (actors/runtime.hpp). Internal to actors/*.cpp and to CAF
// programs that need the handles (runtime_caf.hpp); includes CAF.
//
// Locking: `mutex` guards config, engines and pipelines; it is held only
// for map updates and copies, never while calling an engine or waiting.
// Shutdown order (~Impl): refuse new requests, fail every pending request
// with Shutdown, drop the starts waiting for a backoff, stop the planning pool (queued work still runs to
// completion), wait for engine and transfer work in flight (copies behind
// events still need their copy threads), kill the actors (the transfer
// actor's copy threads go with it), drop every handle, then destroy the
// actor system.
//
// State: the transfer registry actor alone holds the transfer providers
// and decides route changes; the prepare-cache actor alone holds its store
// and alone changes the request memo and the plan cache (it gets them at
// spawn; this struct hands out only const views, which the facade and the
// pipelines read on their own threads, so a cache hit costs no message).
// The configuration snapshot, the engines and the pipelines are the
// facade's, under `mutex` (the registry publishes its changes through it),
// as is the cache generation (bumped by clear_cache).
#pragma once

#include <atomic>
#include <condition_variable>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/actor_messages.hpp"
#include "actors/delayed_starts.hpp"
#include "actors/engine_watch.hpp"
#include "actors/pending_requests.hpp"
#include "actors/pipeline/plan_cache.hpp"
#include "actors/request_memo.hpp"
#include "actors/runtime_caf.hpp"
#include "actors/runtime_link.hpp"
#include "actors/runtime.hpp"
#include "actors/runtime_threads.hpp"
#include "util/worker_pool.hpp"
#include "transfer/providers.hpp"

namespace tenact {

/// A callback that fulfils the returned future (the futures of the facade).
template <class T>
std::pair<std::function<void(Result<T>)>, std::future<Result<T>>> future_callback() {
  auto promise = std::make_shared<std::promise<Result<T>>>();
  auto future = promise->get_future();
  return {[promise](Result<T> r) { promise->set_value(std::move(r)); }, std::move(future)};
}

struct EngineSlot {
  std::shared_ptr<Engine> engine;
  engine_actor_type actor;
  std::shared_ptr<EngineWatch> watch;
};

struct Runtime::Impl {
  explicit Impl(RuntimeOptions options);
  ~Impl();

  RuntimeOptions options;
  uint64_t runtime_id = 0;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> system;
  /// Produces prepared entries off the cache actor's thread.
  std::unique_ptr<WorkerPool> planning_pool;

  mutable std::mutex mutex;
  RuntimeConfigPtr config;
  /// config->epoch(), readable without the mutex (execute's fast check).
  std::atomic<uint64_t> epoch{0};
  std::map<std::string, EngineSlot, std::less<>> engines;
  /// Engines retired because they died (retire_dead_engine), kept until
  /// the runtime goes: the last reference must not be dropped on one of
  /// the engine's own threads (it would join itself).
  std::vector<std::shared_ptr<Engine>> retired_engines;
  std::map<uint64_t, pipeline_actor_type> pipelines;
  uint64_t next_run = 0;
  cache_actor_type cache;
  transfer_actor_type transfer;
  /// Fails requests past their deadline (PendingRequests::expire) on a tick.
  ticker_actor_type ticker;
  /// The typed CAF-native interface (runtime_caf.hpp), as an untyped handle.
  caf::actor gateway;

  /// Stamps every use of a prepared entry: the cache store's and the memo's.
  std::shared_ptr<UseClock> use_clock = std::make_shared<UseClock>();
  /// Bumped by every clear_cache: memo entries of older generations are
  /// never served.
  std::atomic<uint64_t> cache_generation{0};
  /// Read-only views of the cache actor's memo and plan cache.
  const RequestMemo& memo() const { return *memo_; }
  const PlanCache& plans() const { return *plans_; }
  PendingRequests pending;
  /// Starts waiting in wall-clock time (a retry's backoff), started by the
  /// ticker; dropped at shutdown while the engines are still there.
  DelayedStarts delayed;
  /// How models reach the runtime (closed first thing in ~Runtime).
  std::shared_ptr<RuntimeLink> link;
  /// Runs in flight per engine, backpressure and job placement.
  JobBoard jobs{JobBoardOptions{options.max_runs_in_flight_per_engine, options.max_waiting_runs}};
  /// Set while the runtime refuses requests: from the start of shutdown,
  /// or from construction when a thread could not be started.
  std::atomic<bool> closing{false};
  /// Why construction failed (then `closing` is set from the start).
  std::optional<Error> startup_error;
  /// The error a request gets while `closing`: the startup error, or
  /// Shutdown ("<what> after the runtime shut down").
  Error refusal(std::string_view what) const;

  /// Engine and transfer work in flight (launches whose completion has
  /// not returned yet); ~Impl waits for 0.
  void work_started();
  void work_finished();

  /// The current configuration and an engine lookup over the current
  /// engine objects, taken together under the runtime's mutex.
  struct Snapshot {
    RuntimeConfigPtr config;
    EngineLookup engines;
  };
  Snapshot snapshot() const;
  /// The current configuration snapshot.
  RuntimeConfigPtr current_config() const;
  /// The engine actor of `id` (invalid handle when none).
  engine_actor_type engine_actor(std::string_view id) const;
  /// The engine slot of `id` (empty when none).
  std::optional<EngineSlot> engine_slot(std::string_view id) const;
  /// Publishes a configuration change: the new snapshot, and the cache
  /// actor told (it retires the old epochs' entries and clears the memo).
  void publish(RuntimeConfigPtr next);
  void forget_pipeline(uint64_t run);
  /// `engine` said it is down for good (EngineDown from its own launch):
  /// it leaves the configuration (a new epoch, so nothing is placed on it
  /// again). Returns its actor, which the caller makes exit once it has
  /// answered the run that heard of it (the run then fails with the
  /// engine's own words; the others with the actor's exit); an invalid
  /// handle when it is not the engine registered under its id any more.
  /// Any thread.
  engine_actor_type retire_dead_engine(const Engine* engine);

 private:
  /// The cache actor's (it alone changes them; spawn_prepare_cache).
  std::shared_ptr<RequestMemo> memo_ = std::make_shared<RequestMemo>(use_clock);
  std::shared_ptr<PlanCache> plans_ = std::make_shared<PlanCache>();
  std::mutex work_mutex_;
  std::condition_variable work_cv_;
  int64_t work_in_flight_ = 0;
};

/// How run() describes its inputs to prepare: an input in an engine's
/// memory is placed where it lives; unowned host memory may enter wherever
/// the plan takes inputs.
std::vector<InputDescriptor> describe_run_inputs(std::span<const Tensor> inputs);

/// Whether run()'s job placement (RuntimeOptions::balance_jobs) has a
/// choice to make for `options`: placement left open under the Auto or
/// EarliestFinish policy, and more than one executable engine, all of which
/// give cost estimates. Reads the current configuration; any thread.
bool job_has_placement_choice(const Runtime::Impl& rt, const PrepareOptions& options);

/// Behaviors of the actors (one file each).
/// The cache actor gets the only mutable handles of the memo and the plan
/// cache.
cache_actor_type spawn_prepare_cache(caf::actor_system& system, Runtime::Impl* rt,
                                     std::shared_ptr<RequestMemo> memo, std::shared_ptr<PlanCache> plans);
ticker_actor_type spawn_deadline_ticker(caf::actor_system& system, Runtime::Impl* rt);
caf::actor spawn_gateway(caf::actor_system& system, Runtime* runtime, Runtime::Impl* rt);
engine_actor_type::behavior_type engine_actor(engine_actor_type::pointer self, std::shared_ptr<Engine> engine,
                                              std::shared_ptr<EngineWatch> watch, Runtime::Impl* rt);
transfer_actor_type spawn_transfer_registry(caf::actor_system& system, Runtime::Impl* rt);

/// Spawns the pipeline actor of one run; `done` is called exactly once.
/// Every engine batch carries `not_before_ns` (BatchWork: a retry's
/// virtual-time backoff on simulated devices) and its ops' `destinations`.
void spawn_pipeline(Runtime::Impl* rt, std::shared_ptr<const PreparedProgram> program,
                    std::vector<Tensor> inputs, SymbolBindings symbols, ExecuteCallback done,
                    ExecutionStats* stats, uint64_t not_before_ns = 0,
                    PlannedDestinationsPtr destinations = nullptr);

}  // namespace tenact
