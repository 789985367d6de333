#include "engines/sim/sim_engine.hpp"

#include <unistd.h>

#include <algorithm>

#include "core/guarded.hpp"
#include "engines/cpu/cpu_batch_runner.hpp"
#include "engines/cpu/cpu_providers.hpp"
#include "engines/sim/sim_cost.hpp"
#include "engines/sim/sim_memory.hpp"

namespace tenact::sim {

Result<std::shared_ptr<SimEngine>> SimEngine::create(SimEngineOptions options) {
  if (!options.world) return Error{ErrorCode::InvalidAttribute, "sim engine '" + options.device + "' has no platform"};
  const int index = options.world->device_index(options.device);
  if (index < 0)
    return Error{ErrorCode::InvalidAttribute, "platform '" + options.world->platform().name + "' has no device '" +
                                                  options.device + "'"};
  const SimDeviceSpec& spec = options.world->platform().devices[static_cast<size_t>(index)];
  auto pool = WorkerPool::create(std::max<uint32_t>(1, spec.host_threads));
  if (!pool.ok()) return pool.error().with_context("sim engine '" + options.device + "'");
  return guarded("creating sim engine '" + options.device + "'", [&]() -> Result<std::shared_ptr<SimEngine>> {
    WorkerPool& threads = **pool;
    return owned_off_pool(new SimEngine(Passkey{}, std::move(options), static_cast<size_t>(index), std::move(*pool)),
                          threads);
  });
}

SimEngine::SimEngine(Passkey, SimEngineOptions options, size_t index, std::unique_ptr<WorkerPool> pool)
    : world_(std::move(options.world)), index_(index), pool_(std::move(pool)) {
  const SimDeviceSpec& spec = device();
  identity_.id = spec.id;
  identity_.hardware_class = "sim-gpu";
  identity_.registration = options.registration;
  identity_.context = static_cast<uint64_t>(::getpid());
  capabilities_.storage_classes = {kDeviceStorage};
  capabilities_.default_storage_class = kDeviceStorage;
  capabilities_.executable = true;
  capabilities_.op_families = {OpFamily::Elementwise, OpFamily::Reduction, OpFamily::Indexing, OpFamily::Dot,
                               OpFamily::Layout};
  capabilities_.accepted_input_storage = {kDeviceStorage};
  capabilities_.host_extension_kernels = true;  // run on the host, charged by the family's estimate
  capabilities_.fused_elementwise_regions = options.fuse_regions;
  capabilities_.queues = std::max<uint32_t>(1, spec.streams);
  capabilities_.lacks = spec.lacks;
  capabilities_.cost = cost_model_of(spec);
  capabilities_.providers = cpu::cpu_op_providers(kSimValueAlignment, spec.lacks);
  memory_ = HostBufferSource::create(Endpoint{spec.id, kDeviceStorage}, {}, HostSourceLimits{spec.memory_bytes});
  clocks_ = std::make_unique<std::atomic<uint64_t>[]>(capabilities_.queues);
  sequences_ = std::make_unique<uint64_t[]>(capabilities_.queues);
  fault_draws_.assign(capabilities_.queues, 0);
  for (uint32_t q = 0; q < capabilities_.queues; ++q) {
    clocks_[q].store(0);
    sequences_[q] = 0;
    queues_.push_back(cpu::HostQueue::create(*pool_, "stream " + std::to_string(q) + " of '" + spec.id + "'"));
  }
}

SimEngine::~SimEngine() {
  queues_.clear();  // work on the pool still holds the queues it serves
  pool_.reset();
}

PrepareAnswer SimEngine::prepare(const OpPrepareRequest& request) {
  const SimFaultSpec& faults = world_->platform().faults;
  if (faults.fails(request.kind))
    return Unsupported{"'" + identity_.id + "': op #" + std::to_string(request.op_index) + " (" +
                       std::string{to_string(request.kind)} + ") fails deterministically (injected fault, seed " +
                       std::to_string(faults.seed) + ")"};
  return cpu::answer_with_cpu_kernels(identity_, capabilities_, request);
}

Status SimEngine::injected_fault(const BatchWork& work, uint32_t stream, uint64_t start) {
  const SimFaultSpec& faults = world_->platform().faults;
  if (!faults.any()) return ok_status();
  if (const SimDeviceFault* d = faults.device(identity_.id); d && !dead_.load()) {
    std::string why;
    if (d->dies_after_ops && world_->counters(index_).ops.load() >= *d->dies_after_ops)
      why = "after " + std::to_string(*d->dies_after_ops) + " ops";
    if (d->dies_at_ns && start >= *d->dies_at_ns) why = "at virtual time " + std::to_string(*d->dies_at_ns) + " ns";
    if (!why.empty()) {
      std::lock_guard lock(dead_mutex_);
      if (dead_because_.empty()) dead_because_ = why;
      dead_.store(true);
    }
  }
  if (dead_.load()) {
    std::lock_guard lock(dead_mutex_);
    return Error{ErrorCode::EngineDown, "'" + identity_.id + "' is down: it died " + dead_because_ +
                                            " (injected fault, seed " + std::to_string(faults.seed) + ")"};
  }
  // Draws are keyed by the stream's count of ops tried, which a failed
  // batch advances too: a retry draws anew, and a replay draws the same.
  const uint64_t first = fault_draws_[stream];
  fault_draws_[stream] += work.ops.size();
  for (size_t k = 0; k < work.ops.size(); ++k)
    if (fault_happens(faults.transient, faults.seed, FaultDraw::Transient, index_, stream, first + k)) {
      const BatchOp& op = work.ops[k];
      return Error{ErrorCode::TransientFailure,
                   "'" + identity_.id + "' stream " + std::to_string(stream) + ": " +
                       (op.op ? std::string{to_string(op.op->kind)} : std::string{"an op"}) + " (op " +
                       std::to_string(first + k) + " tried on the stream) failed transiently (injected fault, seed " +
                       std::to_string(faults.seed) + ")"};
    }
  if (fault_happens(faults.allocation, faults.seed, FaultDraw::Allocation, index_, stream, first))
    return Error{ErrorCode::ResourceExhausted, "'" + identity_.id + "' stream " + std::to_string(stream) +
                                                   ": allocating a batch's results failed (injected fault, seed " +
                                                   std::to_string(faults.seed) + ")"};
  (void)start;
  return ok_status();
}

Result<Tensor> SimEngine::allocate(std::string_view storage_class, DType dtype, std::vector<int64_t> shape) {
  if (storage_class != kDeviceStorage)
    return Error{ErrorCode::Unsupported,
                 "engine '" + identity_.id + "' has no storage class '" + std::string{storage_class} + "'"};
  Result<Tensor> made = [&] {
    HostBufferScope scope(memory_.get());
    return Tensor::zeros(dtype, std::move(shape));
  }();
  if (!made.ok()) return made.error();
  return device_view(*made);
}

Result<MemoryStats> SimEngine::memory_stats(std::string_view storage_class) const {
  if (storage_class != kDeviceStorage)
    return Error{ErrorCode::Unsupported,
                 "engine '" + identity_.id + "' has no storage class '" + std::string{storage_class} + "'"};
  return memory_->stats();
}

void SimEngine::launch(std::shared_ptr<const PreparedOp> op, std::vector<Tensor> inputs, SymbolBindings symbols,
                       LaunchCompletion done) {
  BatchWork work;
  BatchOp batch_op;
  for (uint32_t i = 0; i < inputs.size(); ++i) batch_op.operands.push_back(BatchRef::input(i));
  for (uint32_t r = 0; r < op->results.size(); ++r) work.outputs.push_back(BatchRef::op(0, r));
  batch_op.op = std::move(op);
  work.ops.push_back(std::move(batch_op));
  work.inputs = std::move(inputs);
  work.symbols = std::move(symbols);
  launch_batch(std::move(work), std::move(done));
}

void SimEngine::launch_batch(BatchWork work, LaunchCompletion done) {
  Status valid = validate_batch(work);
  if (valid.ok()) valid = check_queue(work, identity_, capabilities_);
  if (!valid.ok()) return finish_batch_with(work, std::move(done))(valid.error());
  const uint32_t stream = work.queue != BatchWork::kAnyQueue
                              ? work.queue
                              : static_cast<uint32_t>(next_stream_.fetch_add(1) % capabilities_.queues);
  // Events are signalled when the batch is done on the host (work behind
  // them starts at once); the caller hears in virtual-time order.
  LaunchCompletion finish = finish_batch_with(work, in_virtual_time_order(stream, std::move(done)));
  std::vector<EventPtr> waits = std::move(work.waits);
  queues_[stream]->submit(std::move(waits), [this, stream, work = std::move(work),
                                              finish = std::move(finish)](Status ready) mutable {
    if (!ready.ok()) return finish(ready.error());
    auto outcome = guarded("running a batch on '" + identity_.id + "'", [&] { return run_on_stream(work, stream); });
    { BatchWork spent = std::move(work); }  // the inputs go before the caller hears
    finish(std::move(outcome));
  });
}

LaunchCompletion SimEngine::in_virtual_time_order(uint32_t stream, LaunchCompletion done) {
  const SimSequencer::Ticket ticket = world_->sequencer().submit(world_->first_lane(index_) + stream);
  // Called on the stream's queue, before the next batch on the stream
  // starts: its clock is this batch's end.
  return [this, stream, ticket, done = std::move(done)](Result<std::vector<Tensor>> r) mutable {
    world_->sequencer().finish(ticket, clocks_[stream].load(std::memory_order_relaxed),
                               [done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
  };
}

Result<uint64_t> SimEngine::bring_inputs_in(std::vector<Tensor>& inputs, VirtualSpan* span) {
  uint64_t ready = 0;
  const Endpoint mine{identity_.id, kDeviceStorage};
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor& in = inputs[i];
    if (in.is_host()) {
      // The caller's host memory: uploaded over the link from the host.
      Result<Tensor> copy = [&] {
        HostBufferScope scope(memory_.get());
        return Tensor::zeros(in.dtype(), in.shape());
      }();
      if (!copy.ok()) return copy.error().with_context("uploading input " + std::to_string(i) + " to '" + identity_.id + "'");
      TENACT_TRY(in.copy_to_dense(copy->data()));
      const uint64_t bytes = copy->buffer() ? copy->buffer()->size() : 0;
      auto arrived = world_->charge_link("host", identity_.id, bytes, world_->ready_at(in));
      if (!arrived.ok() && arrived.error().code() == ErrorCode::TransientFailure)
        return arrived.error().with_context("uploading input " + std::to_string(i) + " to '" + identity_.id + "'");
      if (!arrived.ok())
        return Error{ErrorCode::InputMismatch, "input " + std::to_string(i) + " is host memory and " +
                                                   arrived.error().message() + " to upload it"};
      ready = std::max(ready, *arrived);
      if (span) span->cover(world_->ready_at(in), *arrived);
      in = std::move(*copy);
      continue;
    }
    if (in.endpoint() != mine)
      return Error{ErrorCode::InputMismatch, "input " + std::to_string(i) + " lives in " + in.endpoint().to_string() +
                                                 " memory, which '" + identity_.id + "' cannot read"};
    ready = std::max(ready, world_->ready_at(in));
    TENACT_ASSIGN_OR_RETURN(in, host_view(in));
  }
  return ready;
}

Result<std::unordered_map<const Buffer*, std::shared_ptr<Buffer>>> SimEngine::bring_destinations_in(
    std::vector<BatchOp>& ops) {
  std::unordered_map<const Buffer*, std::shared_ptr<Buffer>> device_buffer_of;
  const Endpoint mine{identity_.id, kDeviceStorage};
  for (BatchOp& op : ops)
    for (Tensor& d : op.destinations) {
      if (!d.buffer() || d.endpoint() != mine) {
        d = Tensor{};
        continue;
      }
      TENACT_ASSIGN_OR_RETURN(Tensor view, host_view(d));
      device_buffer_of[view.buffer().get()] = d.buffer();
      d = std::move(view);
    }
  return device_buffer_of;
}

Result<std::vector<Tensor>> SimEngine::run_on_stream(BatchWork& work, uint32_t stream) {
  if (!work.deferred.empty()) TENACT_TRY(resolve_deferred_inputs(work));
  TENACT_ASSIGN_OR_RETURN(uint64_t inputs_ready, bring_inputs_in(work.inputs, work.virtual_span.get()));
  TENACT_ASSIGN_OR_RETURN(auto device_buffer_of, bring_destinations_in(work.ops));
  const uint64_t start = std::max({clocks_[stream].load(std::memory_order_relaxed), inputs_ready, work.not_before_ns});
  if (Status fault = injected_fault(work, stream, start); !fault.ok()) {
    // A failed try still took its launch on the stream.
    const uint64_t end = start + device().launch_latency_ns;
    clocks_[stream].store(end, std::memory_order_relaxed);
    world_->advance_to(end);
    if (work.virtual_span) work.virtual_span->cover(start, end);
    return fault.error();
  }
  const SimDeviceFault* fault = world_->platform().faults.device(identity_.id);
  const double slow = fault ? fault->slow : 1.0;
  uint64_t now = start;
  uint64_t kernels = 0, ops = 0;
  const SimDeviceSpec& spec = device();
  // A device reports when its kernels ran in virtual time, on its streams,
  // not the host threads' wall-clock times.
  std::shared_ptr<BatchTimings> timings = std::move(work.timings);
  const cpu::KernelObserver observer = [&](const cpu::KernelRun& run) {
    const KernelWork w = kernel_work(work.ops, run.first_op, run.last_op, run.inputs, run.outputs);
    const uint64_t begin = now;
    now += kernel_ns(spec, w, slow * world_->jitter(index_, stream, sequences_[stream]++));
    kernels += 1;
    ops += run.last_op - run.first_op + 1;
    if (timings) timings->ops.push_back(OpTiming{run.last_op, run.first_op, begin, now, stream, true});
  };
  Result<std::vector<Tensor>> outputs = [&] {
    HostBufferScope scope(memory_.get());
    return cpu::run_batch_on_cpu(work, *pool_, &fused_counters_, &observer, Endpoint{identity_.id, kDeviceStorage});
  }();
  // What ran took its time, also when a later kernel failed.
  clocks_[stream].store(now, std::memory_order_relaxed);
  SimDeviceCounters& counters = world_->counters(index_);
  counters.kernels.fetch_add(kernels);
  counters.ops.fetch_add(ops);
  counters.busy_ns.fetch_add(now - start);
  world_->advance_to(now);
  if (work.virtual_span) work.virtual_span->cover(start, now);
  if (!outputs.ok()) return outputs.error();
  for (Tensor& out : *outputs) {
    // A result written into a destination is a view of the destination's
    // own buffer; any other a device view of the kernel's.
    auto in_destination = out.buffer() ? device_buffer_of.find(out.buffer().get()) : device_buffer_of.end();
    if (in_destination != device_buffer_of.end()) {
      TENACT_ASSIGN_OR_RETURN(out, Tensor::view(in_destination->second, out.dtype(), out.shape(), out.strides(),
                                                out.offset()));
    } else {
      TENACT_ASSIGN_OR_RETURN(out, device_view(out));
    }
    world_->set_ready(out, now);
  }
  return outputs;
}

SimEngineStats SimEngine::stats() const {
  SimEngineStats s;
  const SimDeviceCounters& c = world_->counters(index_);
  s.kernels = c.kernels.load();
  s.ops = c.ops.load();
  s.bytes_in = c.bytes_in.load();
  s.bytes_out = c.bytes_out.load();
  s.busy_ns = c.busy_ns.load();
  const MemoryStats m = memory_->stats();
  s.allocated_bytes = m.allocated_bytes;
  s.peak_bytes = m.peak_allocated_bytes;
  for (uint32_t q = 0; q < capabilities_.queues; ++q) s.stream_clock_ns.push_back(clocks_[q].load());
  return s;
}

}  // namespace tenact::sim
