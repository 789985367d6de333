// The prepare-cache actor: requests for one key meet here and are produced
// once. Handlers only route; the decisions are PrepareCacheStore's
// (actors/cache/prepare_cache_store.hpp) and planning's (PreparationWalk:
// the key, the production, what an outcome settles). Production runs on
// the runtime's planning threads, never on this actor's thread.
#include <unordered_map>

#include "actors/runtime_impl.hpp"
#include "core/guarded.hpp"

namespace tenact {

struct CacheActorState {
  explicit CacheActorState() = default;
  std::unique_ptr<PrepareCacheStore> store;
  std::unordered_map<WaiterId, PrepareJobPtr> waiters;
  WaiterId next_waiter = 0;
  uint64_t dropped_seen = 0;  // evictions the memo was cleared for
};

namespace {

using Self = cache_actor_type::stateful_base<CacheActorState>;

void handle_job(Self* self, Runtime::Impl* rt, PrepareJobPtr job);

// Entries left the store: the facade's memo must not serve them any more.
void sync_memo(Self* self, Runtime::Impl* rt) {
  const uint64_t evictions = self->state.store->stats().evictions;
  if (evictions != self->state.dropped_seen) {
    self->state.dropped_seen = evictions;
    rt->memo.clear();
    rt->plans.clear();
  }
}

// A redirect re-keys the job and looks it up again.
void answer(Self* self, Runtime::Impl* rt, const PrepareJobPtr& job, const ProducedEntry& outcome) {
  if (auto settled = job->walk.settle(outcome)) return job->done(std::move(*settled));
  handle_job(self, rt, job);
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
        Production{std::move(*key), EntryFailed{Error{ErrorCode::Internal, "not produced yet"}, false, nullptr}, registered, job});
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
    auto production = std::make_shared<Production>(Production{std::move(key), std::move(outcome), registered, job});
    caf::anon_send(me, msg::produced_atom::value, std::move(production));
  });
}

void handle_production(Self* self, Runtime::Impl* rt, const ProductionPtr& p) {
  Completion completion = self->state.store->complete(p->key, p->outcome, p->registered);
  if (!p->registered) answer(self, rt, p->job, p->outcome);
  for (WaiterId w : completion.waiters) {
    auto it = self->state.waiters.find(w);
    if (it == self->state.waiters.end()) continue;
    PrepareJobPtr job = std::move(it->second);
    self->state.waiters.erase(it);
    answer(self, rt, job, p->outcome);
  }
  sync_memo(self, rt);
}

cache_actor_type::behavior_type prepare_cache_actor(Self* self, Runtime::Impl* rt) {
  self->state.store = std::make_unique<PrepareCacheStore>(rt->options.cache_byte_budget, rt->use_clock);
  return {
      [=](msg::prepare_atom, PrepareJobPtr job) { handle_job(self, rt, std::move(job)); },
      [=](msg::produced_atom, ProductionPtr p) { handle_production(self, rt, p); },
      [=](msg::produce_atom, ProductionPtr p) {
        p->outcome = p->job->walk.produce(p->key, p->job->engines);
        handle_production(self, rt, p);
      },
      [=](msg::stats_atom) { return std::make_shared<CacheStats>(self->state.store->stats()); },
      [=](msg::clear_atom) {
        self->state.store->clear();
        rt->memo.clear();
        rt->plans.clear();
      },
      [=](msg::epoch_atom, uint64_t epoch) { self->state.store->retire_epochs_before(epoch); },
  };
}

}  // namespace

cache_actor_type spawn_prepare_cache(caf::actor_system& system, Runtime::Impl* rt) {
  return system.spawn(prepare_cache_actor, rt);
}

}  // namespace tenact
