#include "engines/cpu/cpu_engine.hpp"

#include <unistd.h>

#include "core/guarded.hpp"
#include "engines/cpu/batch_work_estimate.hpp"
#include "engines/cpu/cpu_batch_runner.hpp"
#include "engines/cpu/kernels/blas_threads.hpp"
#include "engines/cpu/kernels/kernel.hpp"

namespace tenact::cpu {

Result<std::shared_ptr<CpuEngine>> CpuEngine::create(CpuEngineOptions options) {
  auto pool = WorkerPool::create(options.threads);
  if (!pool.ok()) return pool.error().with_context("CPU engine '" + options.id + "'");
  return guarded("creating CPU engine '" + options.id + "'", [&]() -> Result<std::shared_ptr<CpuEngine>> {
    return std::make_shared<CpuEngine>(Passkey{}, std::move(options), std::move(*pool));
  });
}

CpuEngine::CpuEngine(Passkey, CpuEngineOptions options, std::unique_ptr<WorkerPool> pool)
    : pool_(std::move(pool)), inline_work_limit_(options.inline_work_limit) {
  identity_.id = std::move(options.id);
  identity_.hardware_class = "x86_64-host";
  identity_.registration = options.registration;
  identity_.context = static_cast<uint64_t>(::getpid());
  capabilities_.storage_classes = {kHostStorage};
  capabilities_.default_storage_class = kHostStorage;
  capabilities_.executable = true;
  capabilities_.op_families = {OpFamily::Elementwise, OpFamily::Reduction, OpFamily::Indexing,
                               OpFamily::Dot, OpFamily::Layout};
  capabilities_.accepted_input_storage = {kHostStorage};
  capabilities_.fused_elementwise_regions = options.fuse_regions;
  set_blas_threads(static_cast<int>(pool_->thread_count()));
}

CpuEngine::~CpuEngine() = default;

PrepareAnswer CpuEngine::prepare(const OpPrepareRequest& request) {
  if (request.binding.endpoint.engine != identity_.id ||
      request.binding.endpoint.storage_class != kHostStorage)
    return Unsupported{"engine '" + identity_.id + "' cannot run at " + request.binding.endpoint.to_string()};
  if (!capabilities_.serves(family_of(request.kind))) {
    std::string what = std::string{to_string(request.kind)};
    if (const auto* ext = std::get_if<ExtensionAttrs>(&request.attrs)) what += " family '" + ext->family + "'";
    return Unsupported{"engine '" + identity_.id + "' has no kernel for " + what};
  }
  return std::shared_ptr<const PreparedOp>(PreparedOp::answering(request));
}

Result<HostTensor> CpuEngine::allocate(std::string_view storage_class, DType dtype,
                                       std::vector<int64_t> shape) {
  if (storage_class != kHostStorage)
    return Error{ErrorCode::Unsupported, "engine '" + identity_.id + "' has no storage class '" +
                                             std::string{storage_class} + "'"};
  return HostTensor::zeros(dtype, std::move(shape));
}

void CpuEngine::launch(std::shared_ptr<const PreparedOp> op, std::vector<HostTensor> inputs,
                       SymbolBindings symbols, LaunchCompletion done) {
  WorkerPool* pool = pool_.get();
  pool_->post([op = std::move(op), inputs = std::move(inputs), symbols = std::move(symbols),
               done = std::move(done), pool]() mutable {
    done(guarded("running an op", [&] {
      KernelCall call{op->kind, op->attrs, inputs, op->results, symbols, pool};
      return run_kernel(call);
    }));
  });
}

void CpuEngine::launch_batch(BatchWork work, LaunchCompletion done) {
  if (Status valid = validate_batch(work); !valid.ok()) return done(valid.error());
  WorkerPool* pool = pool_.get();
  FusedCounters* counters = &fused_counters_;
  if (work.caller_may_run && inline_work_limit_ > 0) {
    auto estimate = linear_element_work(work);
    if (estimate && *estimate <= inline_work_limit_) {
      inline_batches_.fetch_add(1, std::memory_order_relaxed);
      return done(guarded("running a batch", [&] { return run_batch_on_cpu(work, *pool, counters); }));
    }
  }
  pool_->post([work = std::move(work), done = std::move(done), pool, counters]() mutable {
    done(guarded("running a batch", [&] { return run_batch_on_cpu(work, *pool, counters); }));
  });
}

}  // namespace tenact::cpu
