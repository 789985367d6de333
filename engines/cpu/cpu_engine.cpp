#include "engines/cpu/cpu_engine.hpp"

#include <unistd.h>

#include "core/guarded.hpp"
#include "engines/cpu/batch_work_estimate.hpp"
#include "engines/cpu/cpu_batch_runner.hpp"
#include "engines/cpu/cpu_providers.hpp"
#include "engines/cpu/kernels/blas_threads.hpp"
#include "engines/cpu/kernels/kernel.hpp"

namespace tenact::cpu {

Result<std::shared_ptr<CpuEngine>> CpuEngine::create(CpuEngineOptions options) {
  auto pool = WorkerPool::create(options.threads);
  if (!pool.ok()) return pool.error().with_context("CPU engine '" + options.id + "'");
  return guarded("creating CPU engine '" + options.id + "'", [&]() -> Result<std::shared_ptr<CpuEngine>> {
    WorkerPool& threads = **pool;
    return owned_off_pool(new CpuEngine(Passkey{}, std::move(options), std::move(*pool)), threads);
  });
}

CpuEngine::CpuEngine(Passkey, CpuEngineOptions options, std::unique_ptr<WorkerPool> pool)
    : pool_(std::move(pool)), inline_work_limit_(options.inline_work_limit) {
  identity_.id = std::move(options.id);
  identity_.hardware_class = "x86_64-host";
  identity_.registration = options.registration;
  identity_.context = static_cast<uint64_t>(::getpid());
  if (options.storage_classes.empty()) options.storage_classes = {kHostStorage};
  capabilities_.storage_classes = options.storage_classes;
  capabilities_.default_storage_class = options.storage_classes.front();
  for (const auto& storage : options.storage_classes)
    memories_.push_back(HostBufferSource::create(Endpoint{identity_.id, storage}, options.host_cache));
  capabilities_.executable = true;
  capabilities_.op_families = {OpFamily::Elementwise, OpFamily::Reduction, OpFamily::Indexing,
                               OpFamily::Dot, OpFamily::Layout};
  capabilities_.accepted_input_storage = options.storage_classes;
  capabilities_.host_extension_kernels = true;
  capabilities_.fused_elementwise_regions = options.fuse_regions;
  capabilities_.queues = static_cast<uint32_t>(pool_->thread_count());
  if (options.cost_estimates) capabilities_.cost = cpu_cost_model(pool_->thread_count());
  capabilities_.providers = cpu_op_providers(kTensorAlignment);
  for (uint32_t q = 0; q < capabilities_.queues; ++q)
    queues_.push_back(HostQueue::create(*pool_, "queue " + std::to_string(q) + " of engine '" + identity_.id + "'"));
  set_blas_threads(static_cast<int>(pool_->thread_count()));
}

EngineCostModel cpu_cost_model(size_t threads) {
  // Per thread, about what the kernels reach on the 2-core development
  // machine (bench/cpu_bench): OpenBLAS sgemm ~24e9 multiply-adds/s per core,
  // dgemm half of it, the converting f16/bf16 and integer dots far less;
  // elementwise passes ~10 GB/s per core.
  const double t = static_cast<double>(std::max<size_t>(1, threads));
  EngineCostModel m;
  m.rates = DTypeRates{2e9 * t, 24e9 * t, 12e9 * t, 4e9 * t, 6e9 * t, 3e9 * t};
  m.memory_bandwidth = 10e9 * t;
  m.launch_latency_ns = 2000;  // a hand-off to the pool and the kernel's setup
  m.memory_bytes = 0;          // host memory: not bounded by placement
  m.lanes = 1;                 // a batch uses every thread
  m.resource = "host cores";   // every CPU engine of the process runs on them
  return m;
}

CpuEngine::~CpuEngine() {
  queues_.clear();  // work on the pool still holds the queues it serves
  pool_.reset();
}

PrepareAnswer CpuEngine::prepare(const OpPrepareRequest& request) {
  return answer_with_cpu_kernels(identity_, capabilities_, request);
}

HostBufferSource* CpuEngine::memory(std::string_view storage_class) const {
  for (size_t i = 0; i < memories_.size(); ++i)
    if (capabilities_.storage_classes[i] == storage_class) return memories_[i].get();
  return nullptr;
}

Result<Tensor> CpuEngine::allocate(std::string_view storage_class, DType dtype,
                                   std::vector<int64_t> shape) {
  HostBufferSource* source = memory(storage_class);
  if (source == nullptr)
    return Error{ErrorCode::Unsupported, "engine '" + identity_.id + "' has no storage class '" +
                                             std::string{storage_class} + "'"};
  HostBufferScope scope(source);
  return Tensor::zeros(dtype, std::move(shape));
}

Result<MemoryStats> CpuEngine::memory_stats(std::string_view storage_class) const {
  HostBufferSource* source = memory(storage_class);
  if (source == nullptr)
    return Error{ErrorCode::Unsupported, "engine '" + identity_.id + "' has no storage class '" +
                                             std::string{storage_class} + "'"};
  return source->stats();
}

namespace {

/// InputMismatch naming the first input the host cannot address.
Status check_host_inputs(std::span<const Tensor> inputs, const std::string& engine) {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].is_host())
      return Error{ErrorCode::InputMismatch, "input " + std::to_string(i) + " lives in " +
                                                 inputs[i].endpoint().to_string() +
                                                 " memory, which CPU engine '" + engine +
                                                 "' cannot read"};
  return ok_status();
}

/// Runs `work` (validated by the caller) with the kernels' results in
/// `results` (the completion runs after the scope ends: what it allocates
/// is not the engine's), and destinations in that memory written into.
Result<std::vector<Tensor>> run_batch_in(HostBufferSource* results, const BatchWork& work,
                                         WorkerPool& pool, FusedCounters* counters) {
  HostBufferScope scope(results);
  return run_validated_batch_on_cpu(work, pool, counters, nullptr, results->endpoint());
}

}  // namespace

void CpuEngine::launch(std::shared_ptr<const PreparedOp> op, std::vector<Tensor> inputs,
                       SymbolBindings symbols, LaunchCompletion done) {
  if (Status host = check_host_inputs(inputs, identity_.id); !host.ok()) return done(host.error());
  WorkerPool* pool = pool_.get();
  HostBufferSource* results = memory(op->binding.endpoint.storage_class);
  if (results == nullptr) results = memories_.front().get();
  pool_->post([this, op = std::move(op), inputs = std::move(inputs), symbols = std::move(symbols),
               done = std::move(done), pool, results]() mutable {
    const uint64_t begin = steady_now_ns();
    auto outcome = guarded("running an op", [&] {
      HostBufferScope scope(results);  // the kernels' results, not the completion's
      return run_kernel(kernel_call_for(*op, inputs, symbols, pool));
    });
    ops_run_.fetch_add(1, std::memory_order_relaxed);
    busy_ns_.fetch_add(steady_now_ns() - begin, std::memory_order_relaxed);
    done(std::move(outcome));
  });
}

void CpuEngine::launch_batch(BatchWork work, LaunchCompletion done) {
  LaunchCompletion finish = finish_batch_with(work, std::move(done));
  if (Status valid = validate_batch(work); !valid.ok()) return finish(valid.error());
  if (Status queue = check_queue(work, identity_, capabilities_); !queue.ok()) return finish(queue.error());
  if (Status host = check_host_inputs(work.inputs, identity_.id); !host.ok()) return finish(host.error());
  WorkerPool* pool = pool_.get();
  FusedCounters* counters = &fused_counters_;
  // Results go to the memory the batch's ops are bound to (one engine, one
  // endpoint per batch).
  HostBufferSource* results =
      work.ops.empty() ? nullptr : memory(work.ops.front().op->binding.endpoint.storage_class);
  if (results == nullptr) results = memories_.front().get();
  bool here = false;
  if (work.caller_may_run && inline_work_limit_ > 0) {
    auto estimate = linear_element_work(work);
    if (estimate && *estimate <= inline_work_limit_) here = true;
  }
  const uint32_t queue = work.queue;
  std::vector<EventPtr> waits = std::move(work.waits);
  auto run = [this, work = std::move(work), finish = std::move(finish), pool, counters, results](Status ready) mutable {
    if (!ready.ok()) return finish(ready.error());
    if (!work.deferred.empty()) {
      if (Status resolved = resolve_deferred_inputs(work); !resolved.ok()) return finish(resolved.error());
      if (Status host = check_host_inputs(work.inputs, identity_.id); !host.ok()) return finish(host.error());
    }
    const uint64_t begin = steady_now_ns();
    auto outcome = guarded("running a batch", [&] { return run_batch_in(results, work, *pool, counters); });
    ops_run_.fetch_add(work.ops.size(), std::memory_order_relaxed);
    busy_ns_.fetch_add(steady_now_ns() - begin, std::memory_order_relaxed);
    { BatchWork spent = std::move(work); }  // the inputs go before the caller hears
    finish(std::move(outcome));
  };
  if (queue != BatchWork::kAnyQueue) {
    if (queues_[queue]->submit(std::move(waits), std::move(run), here))
      inline_batches_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (waits.empty() && here) {
    inline_batches_.fetch_add(1, std::memory_order_relaxed);
    return run(ok_status());
  }
  if (waits.empty()) return pool_->post([run = std::move(run)]() mutable { run(ok_status()); });
  // Any queue, with waits: one of the queues, in turn (the queue holds the
  // waiting without a thread, and fails it if the engine goes first).
  const uint64_t turn = next_queue_.fetch_add(1, std::memory_order_relaxed);
  queues_[turn % queues_.size()]->submit(std::move(waits), std::move(run));
}

namespace {

/// What run_on_caller learns of a work once: whether it is small enough to
/// run here; a work noted `small` has passed validate_batch and check_queue
/// (neither depends on the inputs' data or placement) and has its plan.
struct CpuCallerNotes final : CallerNotes {
  using CallerNotes::CallerNotes;
  bool small = false;
  BatchPlan plan;
  /// One per op: what its kernel keeps between runs.
  std::vector<KernelKeep> keeps;
};

}  // namespace

std::optional<Result<std::vector<Tensor>>> CpuEngine::run_on_caller(const BatchWork& work) {
  if (inline_work_limit_ == 0 || !work.caller_may_run || !work.waits.empty() || work.signal || work.publish ||
      !work.deferred.empty())
    return std::nullopt;
  auto* notes = work.caller_notes && work.caller_notes->owner == this
                    ? static_cast<CpuCallerNotes*>(work.caller_notes.get())
                    : nullptr;
  if (!notes) {
    const auto estimate = linear_element_work(work);
    if (!estimate || *estimate > inline_work_limit_) {
      work.caller_notes = std::make_shared<CpuCallerNotes>(this);  // not small: declined at once next time
      return std::nullopt;
    }
    if (Status valid = validate_batch(work); !valid.ok()) return Result<std::vector<Tensor>>{valid.error()};
    if (Status queue = check_queue(work, identity_, capabilities_); !queue.ok())
      return Result<std::vector<Tensor>>{queue.error()};
    auto made = std::make_shared<CpuCallerNotes>(this);
    made->small = true;
    made->plan = plan_batch_on_cpu(work);
    made->keeps.resize(work.ops.size());
    notes = made.get();
    work.caller_notes = std::move(made);
  }
  if (!notes->small) return std::nullopt;
  if (Status host = check_host_inputs(work.inputs, identity_.id); !host.ok())
    return Result<std::vector<Tensor>>{host.error()};
  HostBufferSource* results = work.ops.empty() ? nullptr : memory(work.ops.front().op->binding.endpoint.storage_class);
  if (results == nullptr) results = memories_.front().get();
  std::optional<Result<std::vector<Tensor>>> outcome;
  auto run = [&] {
    const uint64_t begin = steady_now_ns();
    outcome = guarded("running a batch", [&]() -> Result<std::vector<Tensor>> {
      HostBufferScope scope(results);
      return run_planned_batch_on_cpu(work, notes->plan, notes->keeps, *pool_, &fused_counters_,
                                      results->endpoint());
    });
    ops_run_.fetch_add(work.ops.size(), std::memory_order_relaxed);
    busy_ns_.fetch_add(steady_now_ns() - begin, std::memory_order_relaxed);
  };
  if (work.queue == BatchWork::kAnyQueue) {
    run();
  } else if (!queues_[work.queue]->run_here_if_idle(run)) {
    return std::nullopt;  // the queue has work: this batch goes behind it
  }
  inline_batches_.fetch_add(1, std::memory_order_relaxed);
  return outcome;
}

}  // namespace tenact::cpu
