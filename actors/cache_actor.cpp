// The prepare-cache actor: requests for one key meet here and are produced
// once. It owns the store of prepared entries and is the only writer of
// the request memo and the plan cache, which the facade and pipelines read.
// Handlers only route; the decisions are PrepareCacheStore's
// (actors/cache/prepare_cache_store.hpp) and planning's (PreparationWalk:
// the key, the production, what an outcome settles). Production, and the
// pipeline plan of a ready entry, run on the runtime's planning threads,
// never on this actor's thread.
#include <algorithm>
#include <unordered_map>

#include "actors/runtime_impl.hpp"
#include "core/guarded.hpp"

namespace tenact {

struct CacheActorState {
  explicit CacheActorState() = default;
  std::unique_ptr<PrepareCacheStore> store;
  std::shared_ptr<RequestMemo> memo;
  std::shared_ptr<PlanCache> plans;
  std::unordered_map<WaiterId, PrepareJobPtr> waiters;
  WaiterId next_waiter = 0;
  uint64_t dropped_seen = 0;  // evictions the memo was cleared for
  /// The newest epoch and cache generation this actor was told of: an
  /// answer to a request made under an older one is not remembered.
  MemoStamp newest;
};

namespace {

using Self = cache_actor_type::stateful_base<CacheActorState>;

void handle_job(Self* self, Runtime::Impl* rt, PrepareJobPtr job);

void forget_answers(Self* self) {
  self->state.memo->clear();
  self->state.plans->clear();
}

// Entries left the store: the facade's memo must not serve them any more.
void sync_memo(Self* self) {
  const uint64_t evictions = self->state.store->stats().evictions;
  if (evictions != self->state.dropped_seen) {
    self->state.dropped_seen = evictions;
    forget_answers(self);
  }
}

// Remembers a Ready answer in the memo, unless the request was made under
// an epoch or generation that has since been left behind.
void remember(Self* self, const PrepareJob& job, const PreparedProgramPtr& prepared) {
  if (!job.memo) return;
  const MemoStamp& at = job.memo->stamp;
  const MemoStamp& newest = self->state.newest;
  if (at.epoch < newest.epoch || at.generation < newest.generation) return;
  self->state.memo->insert(job.memo->program, job.memo->inputs, job.memo->options, at, prepared);
}

// A redirect re-keys the job and looks it up again.
void answer(Self* self, Runtime::Impl* rt, const PrepareJobPtr& job, const ProducedEntry& outcome) {
  if (auto settled = job->walk.settle(outcome)) {
    if (settled->ok()) remember(self, *job, **settled);
    return job->done(std::move(*settled));
  }
  handle_job(self, rt, job);
}

// The pipeline plan of a ready entry (null otherwise, or when it cannot be
// built: the first run builds it again and reports why). Runs where the
// entry was produced.
PipelinePlanPtr plan_of(const ProducedEntry& outcome) noexcept {
  const auto* ready = std::get_if<EntryReady>(&outcome);
  if (ready == nullptr || !ready->program) return nullptr;
  try {
    auto built = PipelinePlan::build(ready->program);
    return built.ok() ? std::move(*built) : nullptr;
  } catch (...) {
    return nullptr;
  }
}

void handle_job(Self* self, Runtime::Impl* rt, PrepareJobPtr job) {
  auto key = job->walk.key();
  if (!key.ok()) return job->done(key.error());
  const WaiterId waiter = ++self->state.next_waiter;
  CacheLookup found = self->state.store->lookup(*key, waiter, job->cache_in_flight);
  if (const auto& trace = rt->options.trace) {
    const char* what = std::holds_alternative<CacheHit>(found)      ? "hit"
                       : std::holds_alternative<CacheJoined>(found) ? "join"
                                                                    : "miss";
    trace->instant(trace->track("prepare cache"), std::string{what} + " '" + job->walk.context->program->name() + "'",
                   "prepare", steady_now_ns(), {{"key", key->compact_digest().to_hex()}});
  }
  if (auto* hit = std::get_if<CacheHit>(&found)) return answer(self, rt, job, hit->outcome);
  if (std::holds_alternative<CacheJoined>(found)) {
    self->state.waiters.emplace(waiter, std::move(job));
    return;
  }
  const bool registered = std::get<CacheProduce>(found).registered;
  if (registered) self->state.waiters.emplace(waiter, job);
  auto me = caf::actor_cast<cache_actor_type>(self);
  if (rt->options.deterministic_scheduler) {
    // A later turn of this actor produces (message order is the test's).
    auto production = std::make_shared<Production>(
        Production{std::move(*key), EntryFailed{Error{ErrorCode::Internal, "not produced yet"}, false, nullptr}, registered, job, nullptr});
    caf::anon_send(me, msg::produce_atom::value, std::move(production));
    return;
  }
  rt->planning_pool->post([me, job, key = std::move(*key), registered, trace = rt->options.trace]() mutable {
    RuntimeThreadScope runtime_thread;
    const uint64_t begin = steady_now_ns();
    // Out of memory (or threads) while producing is a transient failure:
    // answered, never cached, and the next request tries again.
    ProducedEntry outcome = EntryFailed{Error{ErrorCode::Internal, "not produced"}, false, nullptr};
    try {
      outcome = job->walk.produce(key, job->engines);
    } catch (...) {
      outcome = EntryFailed{error_from_exception("preparing program '" + job->walk.context->program->name() + "'",
                                                 std::current_exception()),
                            false, nullptr};
    }
    if (trace)
      trace->span(trace->track("planning thread " + std::to_string(trace_thread_index())),
                  "production '" + job->walk.context->program->name() + "'", "prepare", begin, steady_now_ns(),
                  {{"key", key.compact_digest().to_hex()},
                   {"outcome", std::holds_alternative<EntryReady>(outcome)      ? "ready"
                               : std::holds_alternative<EntryRedirect>(outcome) ? "redirect"
                                                                                : "failed"}});
    PipelinePlanPtr plan = plan_of(outcome);
    auto production = std::make_shared<Production>(
        Production{std::move(key), std::move(outcome), registered, job, std::move(plan)});
    caf::anon_send(me, msg::produced_atom::value, std::move(production));
  });
}

void handle_production(Self* self, Runtime::Impl* rt, const ProductionPtr& p) {
  Completion completion = self->state.store->complete(p->key, p->outcome, p->registered);
  self->state.plans->insert(p->plan);
  if (!p->registered) answer(self, rt, p->job, p->outcome);
  for (WaiterId w : completion.waiters) {
    auto it = self->state.waiters.find(w);
    if (it == self->state.waiters.end()) continue;
    PrepareJobPtr job = std::move(it->second);
    self->state.waiters.erase(it);
    answer(self, rt, job, p->outcome);
  }
  sync_memo(self);
}

cache_actor_type::behavior_type prepare_cache_actor(Self* self, Runtime::Impl* rt, std::shared_ptr<RequestMemo> memo,
                                                    std::shared_ptr<PlanCache> plans) {
  self->state.store = std::make_unique<PrepareCacheStore>(rt->options.cache_byte_budget, rt->use_clock);
  self->state.memo = std::move(memo);
  self->state.plans = std::move(plans);
  return {
      [=](msg::prepare_atom, PrepareJobPtr job) { handle_job(self, rt, std::move(job)); },
      [=](msg::produced_atom, ProductionPtr p) { handle_production(self, rt, p); },
      [=](msg::produce_atom, ProductionPtr p) {
        p->outcome = p->job->walk.produce(p->key, p->job->engines);
        p->plan = plan_of(p->outcome);
        handle_production(self, rt, p);
      },
      [=](msg::stats_atom) { return std::make_shared<CacheStats>(self->state.store->stats()); },
      [=](msg::clear_atom, uint64_t generation) {
        self->state.newest.generation = std::max(self->state.newest.generation, generation);
        self->state.store->clear();
        forget_answers(self);
      },
      [=](msg::epoch_atom, uint64_t epoch) {
        self->state.newest.epoch = std::max(self->state.newest.epoch, epoch);
        self->state.store->retire_epochs_before(epoch);
        forget_answers(self);
      },
      [=](msg::plan_atom, PipelinePlanPtr plan) { self->state.plans->insert(std::move(plan)); },
  };
}

}  // namespace

cache_actor_type spawn_prepare_cache(caf::actor_system& system, Runtime::Impl* rt, std::shared_ptr<RequestMemo> memo,
                                     std::shared_ptr<PlanCache> plans) {
  return system.spawn(prepare_cache_actor, rt, std::move(memo), std::move(plans));
}

}  // namespace tenact
