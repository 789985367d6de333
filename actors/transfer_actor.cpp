// The transfer actor: runs transfers through their providers
// (transfer/providers.hpp) on the runtime's transfer threads, replying to
// the requesting pipeline from there. A transfer batch carries one value
// (the value at its source): in BatchWork::inputs, or deferred to the batch
// that makes it, whose event the transfer waits on (BatchWork::waits) —
// without holding a thread: the copy is posted to a transfer thread when
// the last event is signalled. It publishes and signals (BatchWork::publish,
// signal) before it replies, so work behind it may start at once.
#include "actors/runtime_impl.hpp"
#include "core/guarded.hpp"

namespace tenact {

namespace {

// On a transfer thread: the copy itself, once the waits are signalled ok.
Result<std::vector<Tensor>> copy_value(Runtime::Impl* rt, BatchJob& job) {
  TENACT_TRY(resolve_deferred_inputs(job.work));
  if (job.work.inputs.size() != 1) return Error{ErrorCode::Internal, "a transfer carries one value"};
  const uint64_t begin = steady_now_ns();
  auto moved = guarded("running a transfer", [&]() -> Result<Tensor> {
    auto slot = rt->engine_slot(job.destination.engine);
    if (!slot)
      return Error{ErrorCode::EngineDown, "transfer " + job.source.to_string() + " -> " +
                                              job.destination.to_string() + ": engine '" +
                                              job.destination.engine + "' is not registered"};
    return rt->providers.run(job.provider,
                             TransferRequest{job.work.inputs[0], job.source, job.destination, *slot->engine});
  });
  if (job.work.timings)
    job.work.timings->ops.push_back(OpTiming{0, 0, begin, steady_now_ns(), trace_thread_index()});
  if (!moved.ok()) return moved.error();
  return std::vector<Tensor>{std::move(*moved)};
}

void run_transfer(Runtime::Impl* rt, BatchJobPtr job) {
  rt->work_started();
  auto reply = std::make_shared<LaunchCompletion>(finish_batch_with(job->work, std::move(job->reply)));
  std::vector<EventPtr> waits = std::move(job->work.waits);
  when_all_signaled(waits, [rt, job = std::move(job), reply](Status ready) mutable {
    if (!ready.ok()) {
      (*reply)(ready.error());
      return rt->work_finished();
    }
    rt->transfer_pool->post([rt, job = std::move(job), reply]() mutable {
      RuntimeThreadScope runtime_thread;
      auto copied = copy_value(rt, *job);
      job.reset();  // the source value goes before the pipeline hears
      (*reply)(std::move(copied));
      rt->work_finished();
    });
  });
}

}  // namespace

caf::behavior transfer_actor(caf::event_based_actor* self, Runtime::Impl* rt) {
  (void)self;
  return {
      [=](msg::launch_atom, BatchJobPtr job) { run_transfer(rt, std::move(job)); },
  };
}

}  // namespace tenact
