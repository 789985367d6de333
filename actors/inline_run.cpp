#include "actors/inline_run.hpp"

#include <new>

#include "actors/pipeline/inline_batch.hpp"
#include "actors/pipeline/plan_cache.hpp"
#include "actors/request_memo.hpp"
#include "actors/runtime_threads.hpp"

namespace tenact {

namespace {

// Counts the run's work in flight (shutdown waits for it) for a scope.
struct WorkInFlight {
  Runtime::Impl& rt;
  explicit WorkInFlight(Runtime::Impl& r) : rt(r) { rt.work_started(); }
  ~WorkInFlight() { rt.work_finished(); }
};

}  // namespace

bool try_run_inline(Runtime::Impl& rt, const std::shared_ptr<const SemanticProgram>& program,
                    std::vector<Tensor>& inputs, const PrepareOptions& options, ExecuteCallback& done,
                    ExecutionStats* stats) {
  const RuntimeOptions& o = rt.options;
  if (!program || !o.direct_single_batch || !o.caller_runs_small_batches || o.trace ||
      o.max_runs_in_flight_per_engine != 0 || !options.cache_in_flight || rt.closing || on_runtime_thread())
    return false;
  if (o.balance_jobs && job_has_placement_choice(rt, options)) return false;  // run() would place it
  const std::vector<InputDescriptor> descriptors = describe_run_inputs(inputs);
  const uint64_t epoch = rt.epoch.load(std::memory_order_acquire);
  const MemoStamp stamp{epoch, rt.cache_generation.load(std::memory_order_acquire)};
  // Counted as a hit only once it is used here (else the usual path looks
  // again and counts it).
  PreparedProgramPtr prepared =
      rt.memo().find(*program, descriptors, options.canonical_text(), stamp, /*count=*/false);
  if (!prepared || !prepared->root || !prepared->root->schedule) return false;
  // The plan is current (execute's fast check; anything else: the usual
  // path checks it whole), and engine-owned inputs are where it takes them.
  const RootIdentity* id = prepared->root->identity.get();
  if (!id || id->runtime_id != rt.runtime_id || id->epoch != epoch) return false;
  const ScheduledGraph& schedule = *prepared->root->schedule;
  if (schedule.input_locations.size() != inputs.size()) return false;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!descriptors[i].placement.engine.empty() &&
        !(descriptors[i].placement == schedule.endpoint(schedule.input_locations[i])))
      return false;
  std::shared_ptr<const PipelinePlan> plan = rt.plans().find(*prepared);
  if (!plan) return false;
  std::shared_ptr<const InlineBatch> batch;
  try {
    batch = PipelinePlan::inline_batch(plan, inputs);
  } catch (const std::exception&) {
    return false;  // could not be built now (memory, a plan it cannot read): the usual path
  }
  if (!batch) return false;
  std::optional<EngineSlot> slot = rt.engine_slot(batch->endpoint().engine);
  if (!slot) return false;
  // Nothing the caller sees has changed until the answer: a failure, or
  // running out of memory on the way, leaves the run to the usual path.
  std::optional<std::vector<Tensor>> answered;
  try {
    auto lease = batch->lease(*program, inputs);
    if (!lease.ok()) return false;
    WorkInFlight in_flight{rt};
    std::optional<Result<std::vector<Tensor>>> outcome = slot->engine->run_on_caller(lease->work());
    if (!outcome || !outcome->ok()) return false;
    lease->release_inputs();
    auto outputs = batch->outputs(inputs, std::move(**outcome));
    if (!outputs.ok()) return false;
    answered = std::move(*outputs);
  } catch (const std::bad_alloc&) {
    return false;
  }
  rt.memo().count_hit(*prepared);
  if (stats) {
    stats->batches += 1;
    stats->units += batch->units();
  }
  // A request the callback makes must not run inline (which also bounds
  // the stack when callbacks chain requests).
  RuntimeThreadScope runtime_thread;
  { std::vector<Tensor> spent = std::move(inputs); }  // released before the caller hears
  ExecuteCallback answer = std::move(done);
  answer(std::move(*answered));
  return true;
}

}  // namespace tenact
