// A batch sent to an engine directly, without a pipeline actor: the fast
// path of single-batch runs and of eager extension ops (two thread hops
// instead of four). Internal to actors/*.cpp. A template, so the hot path
// pays for no std::function of its own.
#pragma once

#include <atomic>
#include <memory>
#include <utility>

#include "actors/runtime_impl.hpp"

namespace tenact {

/// Launches `work` on the engine of `slot`. `complete(Result<std::vector<
/// Tensor>>)` runs exactly once, on the engine's thread (or the caller's,
/// when the engine ran the batch inline) inside a RuntimeThreadScope, with
/// the batch's outcome, and returns the answer. `done` is called exactly
/// once: with that answer — right after `answering()`, which runs only
/// then — or with EngineDown when the engine actor dies first (the batch's
/// answer is then dropped). An engine that answers EngineDown leaves the
/// configuration first. The runtime counts the batch as work in flight
/// until `complete` has run.
template <class Complete, class Answering>
void launch_direct(Runtime::Impl* rt, const EngineSlot& slot, BatchWork work, Complete complete,
                   Answering answering, ExecuteCallback done) {
  auto once = std::make_shared<std::atomic<bool>>(false);
  auto answer = std::make_shared<ExecuteCallback>(std::move(done));
  auto fire = [once, answer](Result<std::vector<Tensor>> r) {
    if (!once->exchange(true)) (*answer)(std::move(r));
  };
  const uint64_t token = slot.watch->add([fire](const Error& e) { fire(e); });
  if (token == 0)
    return fire(Error{ErrorCode::EngineDown,
                      "the engine actor of engine '" + slot.engine->identity().id + "' is down"});
  rt->work_started();
  slot.engine->launch_batch(std::move(work), [rt, once, answer, watch = slot.watch, token,
                                              complete = std::move(complete), answering = std::move(answering),
                                              raw = slot.engine.get()](Result<std::vector<Tensor>> r) mutable {
    // A request the callback issues must not run inline (which also bounds
    // the stack when callbacks chain requests).
    RuntimeThreadScope runtime_thread;
    watch->remove(token);
    // An engine that says it is down leaves the configuration first; its
    // actor exits once this run has its answer (see engine_actor.cpp).
    engine_actor_type retired;
    if (!r.ok() && r.error().code() == ErrorCode::EngineDown) retired = rt->retire_dead_engine(raw);
    Result<std::vector<Tensor>> outcome = complete(std::move(r));
    // Only whoever answers touches what the caller owns (the caller may let
    // it go once answered, e.g. by the watch when the engine actor died).
    if (!once->exchange(true)) {
      answering();
      (*answer)(std::move(outcome));
    }
    if (retired) caf::anon_send_exit(retired, caf::exit_reason::user_shutdown);
    rt->work_finished();
  });
}

}  // namespace tenact
