// The CPU engine: every core op on every dtype, on host memory, with a
// worker pool sized to the machine; dot_general on OpenBLAS. The reference
// engine every other engine is checked against.
//
// Threads: the engine owns its WorkerPool; launch() posts the op to it and
// the kernel runs there (never on the caller's thread — in particular never
// on a CAF scheduler thread), splitting large work over the pool. OpenBLAS
// gets as many threads as the pool (blas_threads.hpp). All members are safe
// from many threads.
#pragma once

#include <memory>
#include <string>

#include "engines/cpu/kernels/fused_elementwise.hpp"
#include "engines/cpu/kernels/worker_pool.hpp"
#include "engines/engine.hpp"

namespace tenact::cpu {

struct CpuEngineOptions {
  /// Worker threads; 0 = the machine's hardware concurrency.
  size_t threads = 0;
  /// Engine id within a runtime.
  std::string id = "cpu";
  uint64_t registration = 0;
  /// Declares fused_elementwise_regions (planning then forms regions for
  /// this engine). Off: every op runs as its own kernel.
  bool fuse_regions = true;
};

class CpuEngine final : public Engine {
 public:
  explicit CpuEngine(CpuEngineOptions options = {});
  ~CpuEngine() override;

  const EngineIdentity& identity() const override { return identity_; }
  const EngineCapabilities& capabilities() const override { return capabilities_; }
  PrepareAnswer prepare(const OpPrepareRequest& request) override;
  Result<HostTensor> allocate(std::string_view storage_class, DType dtype,
                              std::vector<int64_t> shape) override;
  void launch(std::shared_ptr<const PreparedOp> op, std::vector<HostTensor> inputs,
              SymbolBindings symbols, LaunchCompletion done) override;
  /// One pool task runs the whole batch (cpu_batch_runner.hpp).
  void launch_batch(BatchWork work, LaunchCompletion done) override;

  /// The pool kernels split work over (for synchronous callers that run
  /// kernels on their own thread, e.g. run_program_on_cpu).
  WorkerPool& pool() { return *pool_; }
  /// Fused-region counters of everything this engine ran.
  FusedCounters& fused_counters() { return fused_counters_; }

  static constexpr const char* kHostStorage = "host";

 private:
  EngineIdentity identity_;
  EngineCapabilities capabilities_;
  std::unique_ptr<WorkerPool> pool_;
  FusedCounters fused_counters_;
};

}  // namespace tenact::cpu
