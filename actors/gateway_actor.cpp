// The typed gateway of runtime_caf.hpp. Runs go through the facade; the
// facade's completion (on a runtime thread) comes back as a message, and
// the gateway delivers the response promise on its own thread (CAF
// promises must not be delivered from foreign threads).
#include <unordered_map>

#include "actors/runtime_caf.hpp"
#include "actors/runtime_impl.hpp"

namespace tenact {

namespace {

struct GatewayState {
  uint64_t next = 0;
  std::unordered_map<uint64_t, caf::typed_response_promise<RunResultPtr>> pending;
};

runtime_gateway::behavior_type gateway(runtime_gateway::stateful_pointer<GatewayState> self, Runtime* runtime,
                                       Runtime::Impl* rt) {
  return {
      [=](msg::run_atom, const RunRequestPtr& request) -> caf::result<RunResultPtr> {
        auto promise = self->make_response_promise<RunResultPtr>();
        if (!request || !request->program) {
          promise.deliver(std::make_shared<const Result<std::vector<Tensor>>>(
              Error{ErrorCode::InvalidAttribute, "run request without a program"}));
          return promise;
        }
        const uint64_t id = ++self->state.next;
        self->state.pending.emplace(id, promise);
        auto me = caf::actor_cast<runtime_gateway>(self);
        runtime->run(request->program, request->inputs, request->options,
                     [me, id](Result<std::vector<Tensor>> r) {
                       caf::anon_send(me, msg::run_done_atom::value, id,
                                      std::make_shared<const Result<std::vector<Tensor>>>(std::move(r)));
                     });
        return promise;
      },
      [=](msg::cache_stats_atom) -> caf::result<CacheStatsReply> {
        auto promise = self->make_response_promise<CacheStatsReply>();
        self->request(rt->cache, std::chrono::seconds(10), msg::stats_atom::value)
            .then([promise](const CacheStatsPtr& s) mutable { promise.deliver(CacheStatsReply{s}); },
                  [promise](caf::error& e) mutable { promise.deliver(std::move(e)); });
        return promise;
      },
      [=](msg::run_done_atom, uint64_t id, const RunResultPtr& result) {
        auto it = self->state.pending.find(id);
        if (it == self->state.pending.end()) return;
        it->second.deliver(result);
        self->state.pending.erase(it);
      },
  };
}

}  // namespace

caf::actor spawn_gateway(caf::actor_system& system, Runtime* runtime, Runtime::Impl* rt) {
  return caf::actor_cast<caf::actor>(system.spawn(gateway, runtime, rt));
}

runtime_gateway gateway_of(Runtime& runtime) {
  return caf::actor_cast<runtime_gateway>(runtime.impl().gateway);
}

caf::actor_system& actor_system_of(Runtime& runtime) { return *runtime.impl().system; }

size_t drive_scheduler(caf::actor_system& system) {
  // The actors run on this thread now: it is a runtime thread meanwhile.
  RuntimeThreadScope runtime_thread;
  auto* coordinator = dynamic_cast<caf::scheduler::test_coordinator*>(&system.scheduler());
  return coordinator ? coordinator->run() : 0;
}

}  // namespace tenact
