// The deadline ticker: every tick it fails the requests past their
// deadline (PendingRequests::expire). One timer for all requests, so a
// request's deadline costs no timer entry of its own (a delayed message
// per run would pin memory for the whole deadline, minutes at a time).
// It also starts what waited in wall-clock time (a retry's backoff): the
// delayed message carries an id, the runtime's DelayedStarts the work. A
// start does not block: it admits a run, which a CAF thread may do (a
// runtime thread: nothing it starts runs a kernel inline).
#include "actors/runtime_impl.hpp"

namespace tenact {

namespace {

// Ticks often enough for short deadlines (tests use a few hundred ms).
std::chrono::milliseconds tick_of(const RuntimeOptions& o) {
  const auto shortest = std::min(o.run_deadline, o.prepare_deadline);
  return std::clamp(shortest / 10, std::chrono::milliseconds{5}, std::chrono::milliseconds{100});
}

ticker_actor_type::behavior_type deadline_ticker(ticker_actor_type::pointer self, Runtime::Impl* rt) {
  const auto tick = tick_of(rt->options);
  self->delayed_send(self, tick, msg::tick_atom::value);
  return {
      [=](msg::tick_atom) {
        rt->jobs.expire();  // first: a waiting run's error names the full engines
        rt->pending.expire();
        self->delayed_send(self, tick, msg::tick_atom::value);
      },
      [=](msg::start_later_atom, uint64_t id) {
        if (auto start = rt->delayed.take(id)) (*start)();
      },
  };
}

}  // namespace

ticker_actor_type spawn_deadline_ticker(caf::actor_system& system, Runtime::Impl* rt) {
  return system.spawn(deadline_ticker, rt);
}

}  // namespace tenact
