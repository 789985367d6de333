#include "engines/engine.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

namespace tenact {

bool EngineCapabilities::serves(OpFamily family) const {
  return std::find(op_families.begin(), op_families.end(), family) != op_families.end();
}

bool EngineCapabilities::runs(OpKind kind) const {
  return serves(family_of(kind)) && std::find(lacks.begin(), lacks.end(), kind) == lacks.end();
}

PrepareAnswer answer_core_op(const EngineIdentity& engine, const EngineCapabilities& capabilities,
                             const OpPrepareRequest& request) {
  const Endpoint& at = request.binding.endpoint;
  if (at.engine != engine.id || std::find(capabilities.storage_classes.begin(), capabilities.storage_classes.end(),
                                          at.storage_class) == capabilities.storage_classes.end())
    return Unsupported{"engine '" + engine.id + "' cannot run at " + at.to_string()};
  if (!capabilities.runs(request.kind)) {
    std::string what = std::string{to_string(request.kind)};
    if (const auto* ext = std::get_if<ExtensionAttrs>(&request.attrs)) what += " family '" + ext->family + "'";
    return Unsupported{"engine '" + engine.id + "' has no kernel for " + what};
  }
  return std::shared_ptr<const PreparedOp>(PreparedOp::answering(request));
}

bool EngineCapabilities::has_extension(std::string_view family) const {
  return std::find(extension_families.begin(), extension_families.end(), family) !=
         extension_families.end();
}

std::shared_ptr<PreparedOp> PreparedOp::answering(const OpPrepareRequest& request) {
  auto op = std::make_shared<PreparedOp>();
  op->kind = request.kind;
  op->attrs = request.attrs;
  op->results = request.results;
  op->binding = request.binding;
  op->specialization = request.specialization;
  op->projection = request.projection;
  op->provider = request.provider;
  return op;
}

std::string OpBinding::to_string() const {
  return endpoint.to_string() + " (" + engine.hardware_class + ", registration " +
         std::to_string(engine.registration) + ", context " + std::to_string(engine.context) +
         ", runtime " + std::to_string(runtime_id) + ", epoch " + std::to_string(epoch) + ")";
}

uint32_t trace_thread_index() {
  static std::atomic<uint32_t> next{0};
  thread_local const uint32_t index = next.fetch_add(1) + 1;
  return index;
}

uint64_t steady_now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

Status validate_batch(const BatchWork& work) {
  auto bad = [](std::string what) { return Error{ErrorCode::Internal, "malformed batch: " + what}; };
  auto check_ref = [&](const BatchRef& ref, size_t before, const std::string& where) -> Status {
    if (ref.from == BatchRef::From::Input) {
      if (ref.index >= work.inputs.size() + work.deferred.size())
        return bad(where + " reads input " + std::to_string(ref.index) + " of " +
                   std::to_string(work.inputs.size() + work.deferred.size()));
      return ok_status();
    }
    if (ref.index >= before)
      return bad(where + " reads op " + std::to_string(ref.index) + ", which does not run before it");
    const auto& op = work.ops[ref.index].op;
    if (!op || ref.result >= op->results.size())
      return bad(where + " reads result " + std::to_string(ref.result) + " of op " + std::to_string(ref.index));
    return ok_status();
  };
  for (size_t i = 0; i < work.ops.size(); ++i) {
    if (!work.ops[i].op) return bad("op " + std::to_string(i) + " has no plan");
    for (const BatchRef& ref : work.ops[i].operands)
      TENACT_TRY(check_ref(ref, i, "op " + std::to_string(i)));
  }
  for (const BatchRef& ref : work.outputs) TENACT_TRY(check_ref(ref, work.ops.size(), "an output"));
  if (!work.op_names.empty() && work.op_names.size() != work.ops.size())
    return bad(std::to_string(work.op_names.size()) + " op names for " + std::to_string(work.ops.size()) + " ops");
  uint64_t end = 0;
  for (const BatchRegion& r : work.regions) {
    if (r.first < end || uint64_t{r.first} + r.count > work.ops.size() || r.count == 0)
      return bad("region of ops [" + std::to_string(r.first) + ", +" + std::to_string(r.count) + ")");
    end = uint64_t{r.first} + r.count;
    for (const BatchRef& ref : r.outputs)
      if (ref.from != BatchRef::From::Op || ref.index < r.first || ref.index >= end)
        return bad("a region output outside its ops");
  }
  return ok_status();
}

namespace {

// Runs a batch op by op through Engine::launch. Each op is launched when
// the previous one has completed; a completion that arrives while launch()
// is still running (an engine that completes synchronously) is picked up by
// the launching loop instead of recursing, so batch length never grows the
// stack.
class BatchChain : public std::enable_shared_from_this<BatchChain> {
 public:
  BatchChain(Engine& engine, BatchWork work, LaunchCompletion done)
      : engine_(engine), work_(std::move(work)), done_(std::move(done)), results_(work_.ops.size()) {}

  Status resolve() { return resolve_deferred_inputs(work_); }

  void run() {
    for (;;) {
      if (next_ == work_.ops.size()) return finish();
      const BatchOp& op = work_.ops[next_];
      std::vector<Tensor> inputs;
      inputs.reserve(op.operands.size());
      for (const BatchRef& ref : op.operands) inputs.push_back(value(ref));
      state_.store(kLaunching);
      auto self = shared_from_this();
      begin_ns_ = work_.timings ? steady_now_ns() : 0;
      engine_.launch(op.op, std::move(inputs), work_.symbols, [self](Result<std::vector<Tensor>> r) {
        if (self->work_.timings)
          self->work_.timings->ops.push_back(OpTiming{static_cast<uint32_t>(self->next_),
                                                      static_cast<uint32_t>(self->next_), self->begin_ns_,
                                                      steady_now_ns(), trace_thread_index(), false});
        self->store(std::move(r));
        if (self->state_.exchange(kCompleted) == kLaunching) return;  // the loop goes on
        if (self->advance()) self->run();
      });
      if (state_.exchange(kReturned) != kCompleted) return;  // the completion goes on
      if (!advance()) return;
    }
  }

 private:
  static constexpr int kLaunching = 0, kCompleted = 1, kReturned = 2;

  const Tensor& value(const BatchRef& ref) const {
    return ref.from == BatchRef::From::Input ? work_.inputs[ref.index] : results_[ref.index][ref.result];
  }
  void store(Result<std::vector<Tensor>> r) {
    if (!r.ok()) {
      error_ = r.error().with_context("batch op " + std::to_string(next_) + " (" +
                                      std::string{to_string(work_.ops[next_].op->kind)} + ")");
      return;
    }
    results_[next_] = std::move(*r);
  }
  // False when the batch has failed (and was answered).
  bool advance() {
    if (error_) {
      done_(std::move(*error_));
      return false;
    }
    const auto& op = work_.ops[next_];
    if (results_[next_].size() != op.op->results.size()) {
      done_(Error{ErrorCode::ExecutionFailed, "batch op " + std::to_string(next_) + " returned " +
                                                  std::to_string(results_[next_].size()) + " results, expected " +
                                                  std::to_string(op.op->results.size())});
      return false;
    }
    ++next_;
    return true;
  }
  void finish() {
    std::vector<Tensor> out;
    out.reserve(work_.outputs.size());
    for (const BatchRef& ref : work_.outputs) out.push_back(value(ref));
    work_.inputs.clear();
    results_.clear();
    done_(std::move(out));
  }

  Engine& engine_;
  BatchWork work_;
  LaunchCompletion done_;
  std::vector<std::vector<Tensor>> results_;
  std::optional<Error> error_;
  size_t next_ = 0;
  uint64_t begin_ns_ = 0;
  std::atomic<int> state_{kLaunching};
};

}  // namespace

Result<MemoryStats> Engine::memory_stats(std::string_view storage_class) const {
  return Error{ErrorCode::Unsupported, "engine '" + identity().id + "' keeps no memory statistics for '" +
                                           std::string{storage_class} + "'"};
}

// The completions below are called once; they drop what they hold before
// `done` runs, so that whoever `done` wakes sees only its own references.
LaunchCompletion signal_then(EventPtr signal, LaunchCompletion done) {
  if (!signal) return done;
  return [signal = std::move(signal), done = std::move(done)](Result<std::vector<Tensor>> r) mutable {
    signal->signal(r.ok() ? ok_status() : Status{r.error()});
    signal.reset();
    done(std::move(r));
  };
}

LaunchCompletion finish_batch_with(BatchWork& work, LaunchCompletion done) {
  if (!work.publish) return signal_then(std::move(work.signal), std::move(done));
  return [signal = std::move(work.signal), publish = std::move(work.publish),
          done = std::move(done)](Result<std::vector<Tensor>> r) mutable {
    if (r.ok()) publish->tensors = *r;
    publish.reset();
    if (signal) signal->signal(r.ok() ? ok_status() : Status{r.error()});
    signal.reset();
    done(std::move(r));
  };
}

Status resolve_deferred_inputs(BatchWork& work) {
  if (work.deferred.empty()) return ok_status();
  work.inputs.reserve(work.inputs.size() + work.deferred.size());
  for (size_t k = 0; k < work.deferred.size(); ++k) {
    const DeferredInput& d = work.deferred[k];
    if (!d.from || d.index >= d.from->tensors.size())
      return Error{ErrorCode::Internal, "batch input " + std::to_string(work.inputs.size()) +
                                            " (deferred " + std::to_string(k) + ") was not published by its producer"};
    work.inputs.push_back(d.from->tensors[d.index]);
  }
  work.deferred.clear();
  return ok_status();
}

Status check_queue(const BatchWork& work, const EngineIdentity& engine, const EngineCapabilities& capabilities) {
  if (work.queue == BatchWork::kAnyQueue || work.queue < capabilities.queues) return ok_status();
  return Error{ErrorCode::Internal, "engine '" + engine.id + "' has " + std::to_string(capabilities.queues) +
                                        " queues; a batch was sent to queue " + std::to_string(work.queue)};
}

std::optional<Result<std::vector<Tensor>>> Engine::run_on_caller(const BatchWork&) { return std::nullopt; }

void Engine::launch_batch(BatchWork work, LaunchCompletion done) {
  LaunchCompletion finish = finish_batch_with(work, std::move(done));
  if (Status valid = validate_batch(work); !valid.ok()) return finish(valid.error());
  if (Status queue = check_queue(work, identity(), capabilities()); !queue.ok()) return finish(queue.error());
  if (work.waits.empty() && work.deferred.empty())
    return std::make_shared<BatchChain>(*this, std::move(work), std::move(finish))->run();
  std::vector<EventPtr> waits = std::move(work.waits);
  auto chain = std::make_shared<BatchChain>(*this, std::move(work), finish);
  when_all_signaled(waits, [chain, finish](Status ready) {
    if (!ready.ok()) return finish(ready.error());
    if (Status resolved = chain->resolve(); !resolved.ok()) return finish(resolved.error());
    chain->run();
  });
}

std::shared_ptr<const void> RegionMemo::find(const void* owner) const {
  std::lock_guard lock{mutex_};
  return owner_ == owner ? compiled_ : nullptr;
}

std::shared_ptr<const void> RegionMemo::keep(const void* owner, std::shared_ptr<const void> compiled) {
  std::lock_guard lock{mutex_};
  if (owner_ != owner || compiled_ == nullptr) {
    owner_ = owner;
    compiled_ = std::move(compiled);
  }
  return compiled_;
}

}  // namespace tenact
