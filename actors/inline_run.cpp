#include "actors/inline_run.hpp"

#include <new>

#include "actors/pipeline/inline_batch.hpp"
#include "actors/pipeline/plan_cache.hpp"
#include "actors/request_memo.hpp"
#include "actors/runtime_threads.hpp"
#include "planning/input_signature.hpp"

namespace tenact {

namespace {

// Whether `input` is what `d` describes, as describe_run_inputs would
// describe it (no allocation).
bool described_by(const Tensor& input, const InputDescriptor& d) {
  if (input.dtype() != d.dtype || input.shape() != d.shape || input.strides() != d.strides ||
      alignment_log2_of(input.data()) != d.alignment_log2)
    return false;
  const Buffer* buffer = input.buffer().get();
  if (buffer && !buffer->endpoint().engine.empty()) return buffer->endpoint() == d.placement;
  return d.placement.engine.empty() && d.placement.storage_class.empty();
}

// The last memo answer a thread used and the request it answered: a run
// of the same program object with the same options, under the same stamp
// and memo version, whose inputs are what it described, gets the same
// answer without describing its inputs or hashing them (the memo answers
// as a function of exactly these). Holds nothing alive: the program and
// the prepared program are weak references.
struct LastHit {
  uint64_t memo_serial = 0;
  uint64_t memo_version = 0;
  MemoStamp stamp;
  const SemanticProgram* program_address = nullptr;
  std::weak_ptr<const SemanticProgram> program;
  std::string options;
  std::vector<InputDescriptor> inputs;
  std::weak_ptr<const PreparedProgram> prepared;

  PreparedProgramPtr find(const RequestMemo& memo, uint64_t version, const std::shared_ptr<const SemanticProgram>& p,
                          std::span<const Tensor> run_inputs, const std::string& options_text, MemoStamp s) const {
    if (memo_serial != memo.serial() || memo_version != version || !(stamp == s) ||
        program_address != p.get() || inputs.size() != run_inputs.size() || options != options_text)
      return nullptr;
    if (program.owner_before(p) || p.owner_before(program)) return nullptr;  // another program at that address
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!described_by(run_inputs[i], inputs[i])) return nullptr;
    return prepared.lock();
  }
};

thread_local LastHit t_last_hit;

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
  const uint64_t epoch = rt.epoch.load(std::memory_order_acquire);
  const MemoStamp stamp{epoch, rt.cache_generation.load(std::memory_order_acquire)};
  const RequestMemo& memo = rt.memo();
  const uint64_t memo_version = memo.version();  // before the find (see RequestMemo::version)
  std::string options_text = options.canonical_text();
  // Counted as a hit only once it is used here (else the usual path looks
  // again and counts it).
  PreparedProgramPtr prepared = t_last_hit.find(memo, memo_version, program, inputs, options_text, stamp);
  if (!prepared) {
    std::vector<InputDescriptor> described = describe_run_inputs(inputs);
    prepared = memo.find(*program, described, options_text, stamp, /*count=*/false);
    if (!prepared) return false;
    t_last_hit = LastHit{memo.serial(), memo_version, stamp, program.get(), program, std::move(options_text),
                         std::move(described), prepared};
  }
  const std::vector<InputDescriptor>& descriptors = t_last_hit.inputs;
  if (!prepared->root || !prepared->root->schedule) return false;
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
