// The pipeline actor: one per execution. It owns the run's PipelineRun
// (actors/pipeline/pipeline_run.hpp), sends each ready batch to the engine
// actor of its location (transfers to the transfer actor), and answers the
// requester once: with the outputs, the first error (naming the unit, op
// and engine), or EngineDown when an engine actor it uses dies. It quits
// right after answering. (Deadlines are the runtime's: PendingRequests
// fails a run past its deadline; the actor then finishes quietly.)
#include <algorithm>
#include <unordered_map>

#include "actors/direct_launch.hpp"
#include "actors/runtime_impl.hpp"
#include "core/guarded.hpp"
#include "actors/pipeline/batch_work_build.hpp"
#include "actors/pipeline/pipeline_run.hpp"

namespace tenact {

struct PipelineInit {
  uint64_t run_id = 0;
  std::optional<PipelineRun> run;
  SymbolBindings symbols;
  std::vector<engine_actor_type> location_actors;  // per LocationId
  ExecuteCallback done;
  ExecutionStats* stats = nullptr;
  uint64_t not_before_ns = 0;  // BatchWork::not_before_ns of every engine batch
};

/// A batch enqueued behind events: what later batches wait on and read.
struct EnqueuedBatch {
  EventPtr signal;
  PublishedResultsPtr publish;
  /// The events it waits on (a failure caused by one of them is left to
  /// the batch that failed first to report).
  std::vector<EventPtr> waits;
};

/// Where a copy comes from while its producer may not have run: the batch
/// and the index in its outputs.
struct CopyProducer {
  uint64_t batch = 0;  // 0: none
  uint32_t index = 0;
};

struct PipelineActorState {
  std::shared_ptr<PipelineInit> init;
  std::unordered_map<uint64_t, std::vector<uint32_t>> batches;
  /// Enqueue-behind-events runs only: per batch id, per copy id.
  std::unordered_map<uint64_t, EnqueuedBatch> enqueued;
  std::vector<CopyProducer> producers;
  /// Enqueue-behind-events runs only: per unit, the batch it was enqueued
  /// in (0: none yet).
  std::vector<uint64_t> unit_batch;
  /// Tracing only: per batch, the instruction each batch op runs.
  std::unordered_map<uint64_t, std::vector<uint32_t>> batch_instructions;
  uint64_t next_batch = 0;
  bool answered = false;
};

namespace {

using Self = pipeline_actor_type::stateful_base<PipelineActorState>;

void finish(Self* self, Runtime::Impl* rt, Result<std::vector<Tensor>> result) {
  auto& st = self->state;
  if (st.answered) return;
  st.answered = true;
  auto done = std::move(st.init->done);
  const uint64_t run_id = st.init->run_id;
  st.init.reset();  // releases every tensor the run holds
  st.batches.clear();
  st.enqueued.clear();
  st.producers.clear();
  done(std::move(result));
  rt->forget_pipeline(run_id);
  self->quit();
}

// Records a finished batch in the run: its outputs, or its failure (also
// when the outputs do not fit the units).
void record_batch(PipelineRun& run, std::span<const uint32_t> units, Result<std::vector<Tensor>> result) {
  if (!result.ok()) return run.fail_batch(units, result.error());
  if (Status stored = run.batch_done(units, std::move(*result)); !stored.ok()) run.fail_batch(units, stored.error());
}

// Enqueue behind events: a batch's inputs that are held go in work.inputs,
// the others are deferred to the batches that make them, whose events it
// waits on. Records what this batch makes for the batches after it.
// Errors: Internal for an input nobody holds or makes (a plan bug).
Status enqueue_behind_events(PipelineActorState& st, const PipelineRun& run, uint64_t id,
                             const PipelineBatch& batch, BatchWork& work, std::vector<uint32_t>* instructions) {
  const std::vector<CopyId> ids = run.batch_input_ids(batch.units);
  std::vector<CopyId> order;
  order.reserve(ids.size());
  for (CopyId c : ids)
    if (run.holds(c)) order.push_back(c);
  const size_t held = order.size();
  for (CopyId c : ids)
    if (!run.holds(c)) order.push_back(c);
  const bool transfer = run.unit(batch.units.front()).kind == PipelineUnitKind::Transfer;
  if (!transfer) work = build_work(run, batch.units, order, instructions);
  EnqueuedBatch mine;
  for (size_t k = 0; k < order.size(); ++k) {
    if (k < held) {
      work.inputs.push_back(run.held(order[k]));
      continue;
    }
    const CopyProducer& p = st.producers[order[k]];
    auto producer = p.batch == 0 ? st.enqueued.end() : st.enqueued.find(p.batch);
    if (producer == st.enqueued.end())
      return Error{ErrorCode::Internal, run.plan().describe_unit(batch.units.front()) + " reads " +
                                            run.plan().staging().describe_slot(run.plan().copy(order[k]).slot) +
                                            ", which nobody holds or makes"};
    work.deferred.push_back(DeferredInput{producer->second.publish, p.index});
    if (std::find(work.waits.begin(), work.waits.end(), producer->second.signal) == work.waits.end())
      work.waits.push_back(producer->second.signal);
  }
  // Dependencies that pass no value (order edges: a state's readers before
  // its in-place update) wait on their batch's signal too.
  for (uint32_t u : batch.units) {
    st.unit_batch[u] = id;
    for (uint32_t d : run.unit(u).dependencies) {
      const uint64_t other = st.unit_batch[d];
      if (other == 0 || other == id) continue;
      auto producer = st.enqueued.find(other);
      if (producer == st.enqueued.end()) continue;  // done before this batch was enqueued
      if (std::find(work.waits.begin(), work.waits.end(), producer->second.signal) == work.waits.end())
        work.waits.push_back(producer->second.signal);
    }
  }
  const std::vector<CopyId> made = run.batch_output_ids(batch.units);
  for (size_t k = 0; k < made.size(); ++k) st.producers[made[k]] = CopyProducer{id, static_cast<uint32_t>(k)};
  mine.signal = Event::create("batch " + std::to_string(id) + " at " + run.plan().endpoint(batch.location).to_string());
  mine.publish = std::make_shared<PublishedResults>();
  mine.waits = work.waits;
  work.signal = mine.signal;
  work.publish = mine.publish;
  st.enqueued.emplace(id, std::move(mine));
  return ok_status();
}

void dispatch(Self* self, Runtime::Impl* rt) {
  auto& st = self->state;
  PipelineRun& run = *st.init->run;
  auto me = caf::actor_cast<pipeline_actor_type>(self);
  const bool behind_events = rt->options.enqueue_behind_events;
  if (behind_events && st.producers.empty()) {
    st.producers.resize(run.plan().copy_count());
    st.unit_batch.assign(run.unit_count(), 0);
  }
  for (PipelineBatch& batch : behind_events ? run.take_all_batches() : run.take_ready_batches()) {
    const uint64_t id = ++st.next_batch;
    auto job = std::make_shared<BatchJob>();
    job->batch_id = id;
    std::shared_ptr<BatchTimings> timings = rt->options.trace ? std::make_shared<BatchTimings>() : nullptr;
    std::shared_ptr<VirtualSpan> span = st.init->stats ? std::make_shared<VirtualSpan>() : nullptr;
    job->reply = [me, id, timings, span](Result<std::vector<Tensor>> r) {
      caf::anon_send(me, msg::batch_done_atom::value,
                     std::make_shared<BatchResult>(BatchResult{id, std::move(r), timings, span}));
    };
    const PipelineUnit& first = run.unit(batch.units.front());
    if (st.init->stats) ++st.init->stats->batches;
    std::vector<uint32_t> instructions;
    if (behind_events) {
      Status enqueued = enqueue_behind_events(st, run, id, batch, job->work, timings ? &instructions : nullptr);
      if (!enqueued.ok()) return run.fail_batch(batch.units, enqueued.error());  // the caller answers
    }
    if (first.kind == PipelineUnitKind::Transfer) {
      if (!behind_events) job->work.inputs = run.batch_inputs(batch.units);
      job->provider = first.provider;
      job->source = run.plan().endpoint(first.source);
      job->destination = run.plan().endpoint(first.location);
      job->work.timings = timings;
      job->work.virtual_span = span;
      if (st.init->stats) ++st.init->stats->transfers;
      st.batches.emplace(id, std::move(batch.units));
      self->send(rt->transfer, msg::launch_atom::value, std::move(job));
    } else {
      if (!behind_events) job->work = build_held_work(run, batch.units, timings ? &instructions : nullptr);
      job->work.symbols = st.init->symbols;
      job->work.queue = batch.queue;
      job->work.not_before_ns = st.init->not_before_ns;
      job->work.timings = timings;
      job->work.virtual_span = span;
      if (timings) st.batch_instructions.emplace(id, std::move(instructions));
      const engine_actor_type& target = st.init->location_actors[batch.location];
      st.batches.emplace(id, std::move(batch.units));
      self->send(target, msg::launch_atom::value, std::move(job));
    }
  }
}

// Spans of a finished batch on its engine's thread tracks (or its link's).
void trace_batch(Self* self, Runtime::Impl* rt, const BatchResult& result, const std::vector<uint32_t>& units) {
  auto& st = self->state;
  TraceRecorder& trace = *rt->options.trace;
  const PipelineRun& run = *st.init->run;
  const PipelineUnit& first = run.unit(units.front());
  const std::map<std::string, std::string> args{{"run", std::to_string(st.init->run_id)},
                                                {"batch", std::to_string(result.batch_id)}};
  if (first.kind == PipelineUnitKind::Transfer) {
    const std::string link = run.plan().endpoint(first.source).to_string() + " -> " +
                             run.plan().endpoint(first.location).to_string();
    // A simulated link's copies are drawn in virtual time, on a track of their own.
    for (const OpTiming& t : result.timings->ops)
      trace.span(trace.track("transfer " + link + (t.virtual_time ? " (virtual time)" : "")),
                 "transfer '" + run.plan().staging().slots[first.slot].name + "'", "transfer", t.begin_ns, t.end_ns,
                 args, t.virtual_time);
    return;
  }
  const std::string engine = run.plan().endpoint(first.location).engine;
  auto it = st.batch_instructions.find(result.batch_id);
  const ExecProgram& staging = run.plan().staging();
  for (const OpTiming& t : result.timings->ops) {
    std::string name;
    if (it != st.batch_instructions.end() && t.op < it->second.size() && t.first_op < it->second.size()) {
      const uint32_t last = it->second[t.op], firsti = it->second[t.first_op];
      name = t.op == t.first_op ? "#" + std::to_string(last) + " " + std::string{to_string(staging.instructions[last].kind)}
                                : "region #" + std::to_string(firsti) + "..#" + std::to_string(last);
    }
    const std::string track = t.virtual_time
                                  ? "engine " + engine + " / stream " + std::to_string(t.thread) + " (virtual time)"
                                  : "engine " + engine + " / thread " + std::to_string(t.thread);
    trace.span(trace.track(track), name, "op", t.begin_ns, t.end_ns, args, t.virtual_time);
  }
  if (it != st.batch_instructions.end()) st.batch_instructions.erase(it);
}

// A failed run is answered once no batch of it is in flight any more: its
// answer then means none of its work still runs or holds memory, and a
// retry of it never overlaps its failed try (so retries replay exactly in
// virtual time). A batch whose engine actor goes down never reports; the
// down handler answers at once for it.
void finish_if_drained(Self* self, Runtime::Impl* rt) {
  auto& st = self->state;
  PipelineRun& run = *st.init->run;
  if (run.failed() && st.batches.empty()) finish(self, rt, *run.error());
}

void on_batch_done(Self* self, Runtime::Impl* rt, const BatchResultPtr& result) {
  auto& st = self->state;
  if (st.answered) return;
  auto it = st.batches.find(result->batch_id);
  if (it == st.batches.end()) return;
  std::vector<uint32_t> units = std::move(it->second);
  st.batches.erase(it);
  if (auto e = st.enqueued.find(result->batch_id); e != st.enqueued.end()) {
    const bool waited_on_failure =
        !result->result.ok() && std::any_of(e->second.waits.begin(), e->second.waits.end(), [](const EventPtr& w) {
          auto outcome = w->outcome();
          return outcome && !outcome->ok();
        });
    st.enqueued.erase(e);
    // The batch that failed first reports its own error (it signals its
    // event before it reports); this one only says it waited on it.
    if (waited_on_failure) return finish_if_drained(self, rt);
  }
  if (rt->options.trace && result->timings) trace_batch(self, rt, *result, units);
  if (st.init->stats && result->virtual_span) st.init->stats->cover(*result->virtual_span);
  PipelineRun& run = *st.init->run;
  record_batch(run, units, std::move(result->result));
  if (!run.failed() && st.init->stats) st.init->stats->units += units.size();
  if (!run.failed()) dispatch(self, rt);
  if (run.failed()) return finish_if_drained(self, rt);  // nothing more starts; what runs is waited for
  if (run.finished()) finish(self, rt, run.take_outputs());
}

pipeline_actor_type::behavior_type pipeline_actor(Self* self, Runtime::Impl* rt, std::shared_ptr<PipelineInit> init) {
  self->state.init = std::move(init);
  for (size_t loc = 0; loc < self->state.init->location_actors.size(); ++loc)
    self->monitor(self->state.init->location_actors[loc]);
  // A handler that throws (out of memory) kills the actor in CAF 0.17; the
  // run is answered with the error first, so no request is lost.
  self->set_exception_handler([=](caf::scheduled_actor*, std::exception_ptr& caught) -> caf::error {
    finish(self, rt, error_from_exception("running the pipeline", caught));
    return caf::make_error(caf::sec::runtime_error);
  });
  self->set_down_handler([=](caf::down_msg& down) {
    if (self->state.answered) return;
    // A run that failed already (waiting for its batches in flight) keeps
    // its first error: a device that died says so before its actor exits.
    if (self->state.init->run->failed()) return finish(self, rt, *self->state.init->run->error());
    std::string which = "an engine";
    const auto& actors = self->state.init->location_actors;
    const auto& plan = self->state.init->run->plan();
    for (size_t loc = 0; loc < actors.size(); ++loc)
      if (actors[loc].address() == down.source) which = "engine '" + plan.endpoint(static_cast<LocationId>(loc)).engine + "'";
    finish(self, rt, Error{ErrorCode::EngineDown, "the engine actor of " + which +
                                                      " went down during the run (" + caf::to_string(down.reason) + ")"});
  });
  return {
      [=](msg::start_atom) {
        dispatch(self, rt);
        auto& run = *self->state.init->run;
        if (run.failed()) return finish_if_drained(self, rt);
        if (run.finished()) finish(self, rt, run.take_outputs());
      },
      [=](msg::batch_done_atom, BatchResultPtr result) { on_batch_done(self, rt, result); },
  };
}

}  // namespace

namespace {

// The fast path: the PipelineRun is owned by the batch's completion (one
// thread at a time: this caller, then the engine thread). The engine
// actor's watch fails the run if the actor dies first; whichever of the
// two comes first answers (`done` fires once).
void run_single_batch(Runtime::Impl* rt, PipelineRun run, const SymbolBindings& symbols, ExecuteCallback done,
                      ExecutionStats* stats, uint64_t not_before_ns) {
  auto batches = run.take_ready_batches();
  if (batches.size() != 1 || batches[0].units.size() != run.unit_count())
    return done(Error{ErrorCode::Internal, "a single-location run did not form one batch"});
  const Endpoint where = run.plan().endpoint(batches[0].location);
  auto slot = rt->engine_slot(where.engine);
  if (!slot) return done(Error{ErrorCode::EngineDown, "engine '" + where.engine + "' is not registered any more"});
  BatchWork work = build_held_work(run, batches[0].units, nullptr);
  work.symbols = symbols;
  work.queue = batches[0].queue;
  work.not_before_ns = not_before_ns;
  std::shared_ptr<VirtualSpan> span = stats ? std::make_shared<VirtualSpan>() : nullptr;
  work.virtual_span = span;
  work.caller_may_run = rt->options.caller_runs_small_batches && !on_runtime_thread();
  if (stats) {
    stats->batches += 1;
    stats->units += batches[0].units.size();
  }
  auto state = std::make_shared<PipelineRun>(std::move(run));
  auto units = std::make_shared<std::vector<uint32_t>>(std::move(batches[0].units));
  auto complete = [state, units](Result<std::vector<Tensor>> r) {
    record_batch(*state, *units, std::move(r));
    return state->take_outputs();
  };
  // Stats are written only by whoever answers.
  auto answering = [stats, span] {
    if (stats && span) stats->cover(*span);
  };
  launch_direct(rt, *slot, std::move(work), std::move(complete), std::move(answering), std::move(done));
}

}  // namespace

void spawn_pipeline(Runtime::Impl* rt, std::shared_ptr<const PreparedProgram> program,
                    std::vector<Tensor> inputs, SymbolBindings symbols, ExecuteCallback done,
                    ExecutionStats* stats, uint64_t not_before_ns, PlannedDestinationsPtr destinations) {
  PipelinePlanPtr plan = rt->plans().find(*program);
  if (!plan) {
    // Not built with its entry (the cache has let it go since, or it could
    // not be built there): build it here and hand it to the cache actor.
    auto built = PipelinePlan::build(program);
    if (!built.ok()) return done(built.error());
    plan = std::move(*built);
    caf::anon_send(rt->cache, msg::plan_atom::value, plan);
  }
  // One batch of one lane goes to the engine directly, without a pipeline
  // actor (two thread hops instead of four).
  const bool fast = rt->options.direct_single_batch && !rt->options.trace && plan->single_lane();
  auto run = PipelineRun::start(std::move(plan), std::move(inputs));
  if (!run.ok()) return done(run.error());
  run->set_destinations(std::move(destinations));
  if (fast) return run_single_batch(rt, std::move(*run), symbols, std::move(done), stats, not_before_ns);
  auto init = std::make_shared<PipelineInit>();
  const ScheduledGraph& graph = run->plan().schedule();
  for (const Endpoint& e : graph.locations) {
    engine_actor_type a = rt->engine_actor(e.engine);
    if (!a) return done(Error{ErrorCode::EngineDown, "engine '" + e.engine + "' is not registered any more"});
    init->location_actors.push_back(std::move(a));
  }
  init->run.emplace(std::move(*run));
  init->symbols = std::move(symbols);
  init->done = std::move(done);
  init->stats = stats;
  init->not_before_ns = not_before_ns;
  std::unique_lock lock(rt->mutex);
  if (rt->closing) {
    lock.unlock();
    return init->done(rt->refusal("execute"));
  }
  init->run_id = ++rt->next_run;
  const uint64_t id = init->run_id;
  pipeline_actor_type pipeline = rt->system->spawn(pipeline_actor, rt, init);
  rt->pipelines.emplace(id, pipeline);
  lock.unlock();
  caf::anon_send(pipeline, msg::start_atom::value);
}

}  // namespace tenact
