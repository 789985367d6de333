// The transfer registry actor. It owns the transfer providers (no one else
// holds them), decides every route change — a provider registered once per
// name, a route only for a provider that can copy it, one provider per
// route — and publishes each change as a new configuration epoch (the
// snapshot planning reads). And it runs copies: a transfer batch carries
// one value (the value at its source), in BatchWork::inputs or deferred to
// the batch that makes it, whose event the copy waits on (BatchWork::waits)
// without holding a thread; the copy is handed to where the provider runs
// copies (its run_on, else a copy thread of its own that this actor keeps)
// when the last event is signalled, with the provider this actor resolved
// for it, and publishes and signals (BatchWork::publish, signal) before it
// replies, so work behind it may start at once.
//
// Handlers only route: the registry decisions are RuntimeConfig's and
// TransferProviders' (planning/runtime_config.hpp, transfer/providers.hpp).
#include "actors/runtime_impl.hpp"
#include "transfer/unowned_host.hpp"
#include "core/guarded.hpp"

namespace tenact {

namespace {

struct TransferRegistryState {
  TransferProviders providers;
  /// Per provider without a run_on: its copy thread, started at its first
  /// copy. Destroyed with the actor, after the runtime has waited for every
  /// copy in flight; tasks hold plain pointers to them.
  std::map<std::string, std::unique_ptr<WorkerPool>, std::less<>> copy_threads;
};

using Self = transfer_actor_type::stateful_base<TransferRegistryState>;

// -- copies ----------------------------------------------------------------------------

// Where the provider runs copies: the copy itself, once the waits are signalled ok.
Result<std::vector<Tensor>> copy_value(Runtime::Impl* rt, BatchJob& job) {
  TENACT_TRY(resolve_deferred_inputs(job.work));
  if (job.work.inputs.size() != 1) return Error{ErrorCode::Internal, "a transfer carries one value"};
  const uint64_t begin = steady_now_ns();
  VirtualSpan span;
  auto moved = guarded("running a transfer", [&]() -> Result<Tensor> {
    if (job.destination.engine.empty())  // unowned host memory: from the heap
      return TransferProviders::run_with(job.mover.get(), job.provider,
                                         TransferRequest{job.work.inputs[0], job.source, job.destination,
                                                         unowned_host_memory(), &span});
    auto slot = rt->engine_slot(job.destination.engine);
    if (!slot)
      return Error{ErrorCode::EngineDown, "transfer " + job.source.to_string() + " -> " +
                                              job.destination.to_string() + ": engine '" +
                                              job.destination.engine + "' is not registered"};
    return TransferProviders::run_with(job.mover.get(), job.provider,
                                       TransferRequest{job.work.inputs[0], job.source, job.destination, *slot->engine,
                                                       &span});
  });
  // A simulated link's copy is reported in virtual time, like its devices' kernels.
  if (job.work.timings)
    job.work.timings->ops.push_back(span.set ? OpTiming{0, 0, span.begin_ns, span.end_ns, 0, true}
                                             : OpTiming{0, 0, begin, steady_now_ns(), trace_thread_index(), false});
  if (span.set && job.work.virtual_span) *job.work.virtual_span = span;
  if (!moved.ok()) return moved.error();
  return std::vector<Tensor>{std::move(*moved)};
}

void run_transfer(Runtime::Impl* rt, BatchJobPtr job) {
  rt->work_started();
  auto reply = std::make_shared<LaunchCompletion>(finish_batch_with(job->work, std::move(job->reply)));
  std::vector<EventPtr> waits = std::move(job->work.waits);
  when_all_signaled(waits, [rt, job = std::move(job), reply](Status ready) mutable {
    if (!ready.ok()) {
      job->work = BatchWork{};
      (*reply)(ready.error());
      return rt->work_finished();
    }
    auto run_on = std::move(job->run_on);
    // Counted while handing over too: the copy may finish before run_on
    // returns, and shutdown must not destroy the copy thread under it.
    rt->work_started();
    run_on([rt, job = std::move(job), reply]() mutable {
      RuntimeThreadScope runtime_thread;
      auto copied = copy_value(rt, *job);
      // The source value goes before the caller hears: emptied, not just
      // let go, since the message that carried the job may still hold it.
      job->work = BatchWork{};
      job.reset();
      (*reply)(std::move(copied));
      rt->work_finished();
    });
    rt->work_finished();
  });
}

// -- registry changes ----------------------------------------------------------------

// Builds the next configuration from the current one under the runtime's
// mutex and publishes it; returns its epoch.
template <class Change>
Result<uint64_t> publish_change(Runtime::Impl* rt, const char* what, Change change) {
  std::lock_guard lock(rt->mutex);
  if (rt->closing) return rt->refusal(what);
  TENACT_ASSIGN_OR_RETURN(RuntimeConfigPtr next, change(*rt->config));
  const uint64_t epoch = next->epoch();
  rt->publish(std::move(next));
  return epoch;
}

Result<uint64_t> apply(Runtime::Impl* rt, TransferProviders& providers, RegistryChange& change) {
  switch (change.kind) {
    case RegistryChange::Kind::AddProvider:
      return publish_change(rt, "add_transfer_provider", [&](const RuntimeConfig& config) -> Result<RuntimeConfigPtr> {
        TENACT_ASSIGN_OR_RETURN(auto next, config.with_transfer_provider(change.name));
        TENACT_TRY(providers.add(change.name, std::move(change.provider)));
        return next;
      });
    case RegistryChange::Kind::AddRoute: {
      const TransferRoute& route = change.route;
      if (!providers.has(route.provider))
        return Error{ErrorCode::Unsupported, "no transfer provider '" + route.provider + "' is registered"};
      if (!providers.can_copy(route.provider, route.source, route.destination))
        return Error{ErrorCode::Unsupported, "transfer provider '" + route.provider + "' cannot copy " +
                                                 route.source.to_string() + " -> " + route.destination.to_string()};
      return publish_change(rt, "add_route", [&](const RuntimeConfig& config) { return config.with_route(route); });
    }
    case RegistryChange::Kind::RemoveRoute:
      return publish_change(rt, "remove_route", [&](const RuntimeConfig& config) {
        return config.without_route(change.route.source, change.route.destination);
      });
  }
  return Error{ErrorCode::Internal, "an unknown registry change"};
}

// Where the copies of `provider` run: its run_on, else its copy thread
// (started here, on the actor's thread). Errors: ResourceExhausted when the
// thread cannot be started.
Result<std::function<void(std::function<void()>)>> copy_runner(TransferRegistryState& st, const std::string& name,
                                                               const TransferProvider* provider) {
  if (provider && provider->run_on) return provider->run_on;
  auto it = st.copy_threads.find(name);
  if (it == st.copy_threads.end()) {
    auto pool = WorkerPool::create(1);
    if (!pool.ok()) return pool.error().with_context("the copy thread of transfer provider '" + name + "'");
    it = st.copy_threads.emplace(name, std::move(*pool)).first;
  }
  WorkerPool* thread = it->second.get();
  return std::function<void(std::function<void()>)>{[thread](std::function<void()> task) { thread->post(std::move(task)); }};
}

// A copy whose provider is unknown runs too, and fails naming the route.
void launch(Self* self, Runtime::Impl* rt, BatchJobPtr job) {
  job->mover = self->state.providers.find(job->provider);
  // Launch order is this actor's mailbox order: where a provider orders its
  // completions (a simulated platform), it learns of the copy here.
  if (job->mover && job->mover->order_completions) job->reply = job->mover->order_completions(std::move(job->reply));
  auto runner = copy_runner(self->state, job->provider, job->mover.get());
  if (!runner.ok()) {
    finish_batch_with(job->work, std::move(job->reply))(runner.error());
    return;
  }
  job->run_on = std::move(*runner);
  run_transfer(rt, std::move(job));
}

transfer_actor_type::behavior_type transfer_registry(Self* self, Runtime::Impl* rt) {
  return {
      [=](msg::launch_atom, BatchJobPtr job) { launch(self, rt, std::move(job)); },
      [=](msg::registry_atom, RegistryChangePtr change) {
        auto done = std::move(change->done);
        done(apply(rt, self->state.providers, *change));
      },
  };
}

}  // namespace

transfer_actor_type spawn_transfer_registry(caf::actor_system& system, Runtime::Impl* rt) {
  return system.spawn(transfer_registry, rt);
}

}  // namespace tenact
