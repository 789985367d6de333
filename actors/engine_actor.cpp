// The engine actor: wraps any Engine. A batch message is handed to the
// engine's own threads (Engine::launch_batch returns at once; no kernel
// runs on a CAF scheduler thread); the engine's completion replies to the
// requesting pipeline directly from the engine thread (one hop, no round
// trip through this actor). Pipelines monitor the engine actor, and
// single-batch runs that go to the engine directly register with its
// EngineWatch: when the actor dies, the runs using it fail at once with
// EngineDown.
#include "actors/runtime_impl.hpp"

namespace tenact {

engine_actor_type::behavior_type engine_actor(engine_actor_type::pointer self, std::shared_ptr<Engine> engine,
                           std::shared_ptr<EngineWatch> watch, Runtime::Impl* rt) {
  // Runs that bypass this actor (the single-batch fast path) fail with it.
  self->attach_functor([watch](const caf::error& reason) { watch->down(caf::to_string(reason)); });
  return {
      [=](msg::launch_atom, BatchJobPtr job) {
        rt->work_started();
        auto reply = std::move(job->reply);
        engine->launch_batch(std::move(job->work), [reply = std::move(reply), rt, raw = engine.get()](Result<std::vector<Tensor>> r) {
          // (A raw pointer: the engine runs this callback, so it is alive,
          // and a reference here could be the last, dropped on the engine's
          // own thread.) An engine that says it is down (an injected device death) leaves
          // the configuration before the run hears of it (a retry is placed
          // on the engines left); its actor exits after the answer is in
          // the pipeline's mailbox, so the run fails with the engine's words.
          engine_actor_type retired;
          if (!r.ok() && r.error().code() == ErrorCode::EngineDown) retired = rt->retire_dead_engine(raw);
          reply(std::move(r));
          if (retired) caf::anon_send_exit(retired, caf::exit_reason::user_shutdown);
          rt->work_finished();
        });
      },
  };
}

}  // namespace tenact
