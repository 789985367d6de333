// The transfer actor: runs transfers through their providers
// (transfer/providers.hpp) on the runtime's transfer threads, replying to
// the requesting pipeline from there. A transfer batch carries one input
// (the value at its source) in BatchWork::inputs, and the route in the
// job's transfer fields.
#include "actors/runtime_impl.hpp"
#include "core/guarded.hpp"

namespace tenact {

caf::behavior transfer_actor(caf::event_based_actor* self, Runtime::Impl* rt) {
  (void)self;
  return {
      [=](msg::launch_atom, BatchJobPtr job) {
        rt->work_started();
        rt->transfer_pool->post([job, rt] {
          RuntimeThreadScope runtime_thread;
          Result<std::vector<Tensor>> out = std::vector<Tensor>{};
          if (job->work.inputs.size() != 1) {
            out = Error{ErrorCode::Internal, "a transfer carries one value"};
          } else {
            const uint64_t begin = steady_now_ns();
            auto moved = guarded("running a transfer", [&]() -> Result<Tensor> {
              auto slot = rt->engine_slot(job->destination.engine);
              if (!slot)
                return Error{ErrorCode::EngineDown, "transfer " + job->source.to_string() + " -> " +
                                                        job->destination.to_string() + ": engine '" +
                                                        job->destination.engine + "' is not registered"};
              return rt->providers.run(job->provider, TransferRequest{job->work.inputs[0], job->source,
                                                                      job->destination, *slot->engine});
            });
            if (moved.ok()) out = std::vector<Tensor>{std::move(*moved)};
            else out = moved.error();
            if (job->work.timings)
              job->work.timings->ops.push_back(OpTiming{0, 0, begin, steady_now_ns(), trace_thread_index()});
          }
          job->reply(std::move(out));
          rt->work_finished();
        });
      },
  };
}

}  // namespace tenact
