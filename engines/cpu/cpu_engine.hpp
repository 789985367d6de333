// The CPU engine: every core op on every dtype, on host memory, with a
// worker pool sized to the machine; dot_general on OpenBLAS. The reference
// engine every other engine is checked against.
//
// Threads: the engine owns its WorkerPool; launch() and launch_batch() post
// the work to it and the kernels run there (never on a CAF scheduler
// thread), splitting large work over the pool. One exception: a batch whose
// launcher allows it (BatchWork::caller_may_run, set only on a client's own
// thread) and whose estimated work is at most inline_work_limit element
// visits (batch_work_estimate.hpp: dots by their multiply-adds) runs on the
// launching thread, because posting and waking a worker costs
// more than the work (about 10-20 us here against ~2 us for 5 ops on 1,000
// elements). OpenBLAS gets as many threads as the pool (blas_threads.hpp).
// Providers: the CPU kernels' (cpu_providers.hpp), values aligned to
// kTensorAlignment (64 bytes); prepare honours a model's provider choice
// and batch ops' destinations are written into (cpu_batch_runner.hpp).
// Queues: as many in-order queues as pool threads (BatchWork::queue); a
// batch for kAnyQueue goes straight to the pool, unordered, as it always
// did. Waits are honoured without holding a thread (host_queue.hpp).
// All members are safe from many threads.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "engines/cpu/host_queue.hpp"
#include "engines/cpu/kernels/fused_elementwise.hpp"
#include "util/worker_pool.hpp"
#include "engines/engine.hpp"

namespace tenact::cpu {

/// The CPU engine's default size-class cache of each storage class (see
/// CpuEngineOptions::host_cache): on, freed blocks up to 128 MiB kept, 256
/// MiB per storage class at most.
inline HostCacheOptions default_cpu_host_cache() {
  HostCacheOptions o;
  o.enabled = true;
  o.max_cached_bytes = uint64_t{256} << 20;
  o.max_cached_block = size_t{128} << 20;
  return o;
}

struct CpuEngineOptions {
  /// Worker threads; 0 = the machine's hardware concurrency; at most
  /// WorkerPool::kMaxThreads.
  size_t threads = 0;
  /// Engine id within a runtime.
  std::string id = "cpu";
  uint64_t registration = 0;
  /// Declares fused_elementwise_regions (planning then forms regions for
  /// this engine). Off: every op runs as its own kernel.
  bool fuse_regions = true;
  /// The largest batch, in element visits (batch_work_estimate.hpp), run on
  /// the launching thread when BatchWork::caller_may_run allows it; 0 never.
  /// 32,768 visits take ~3-10 us on one core here.
  uint64_t inline_work_limit = 32768;
  /// Its storage classes, each a counted host memory of its own (buffers
  /// carry endpoint id/CLASS); the first is the default. Tests give a second
  /// engine e.g. {"pinned"} to have two kinds of host memory to copy between.
  std::vector<std::string> storage_classes = {"host"};
  /// The size-class cache of each storage class's memory (HostCacheOptions
  /// in core/buffer.hpp), default_cpu_host_cache(): freed results are kept
  /// and handed to later kernels instead of going back to the heap
  /// (re-zeroed for a zero-filled request, as they are, with no memset,
  /// for results a kernel writes in full: BufferFill::Unspecified). That
  /// saves ~70 ns per buffer at 4 KiB (allocator_bench) and, for large
  /// results, the page
  /// faults and the kernel's zeroing of fresh pages (cpu_bench's chain: a
  /// 64 MiB result). The price: an idle engine holds up to 256 MiB per
  /// storage class of freed memory (memory_stats' cached_bytes) until it
  /// is destroyed. `enabled = false` restores reserved == allocated.
  HostCacheOptions host_cache = default_cpu_host_cache();
  /// Declares cpu_cost_model(threads) as its cost estimates (placement is
  /// then cost-aware where every candidate engine has estimates).
  bool cost_estimates = true;
};

/// The CPU engine's cost estimates with `threads` worker threads: rates
/// and bandwidth that scale with the threads, a fixed per-kernel overhead,
/// one lane (a batch uses every thread) on the resource "host cores"
/// that every CPU engine shares, unbounded memory.
EngineCostModel cpu_cost_model(size_t threads);

class CpuEngine final : public Engine {
  struct Passkey {};

 public:
  /// The engine with its worker pool started. Errors (WorkerPool::create):
  /// LimitExceeded for more than WorkerPool::kMaxThreads threads,
  /// ResourceExhausted when the machine refuses a thread.
  static Result<std::shared_ptr<CpuEngine>> create(CpuEngineOptions options = {});
  CpuEngine(Passkey, CpuEngineOptions options, std::unique_ptr<WorkerPool> pool);
  ~CpuEngine() override;

  const EngineIdentity& identity() const override { return identity_; }
  const EngineCapabilities& capabilities() const override { return capabilities_; }
  PrepareAnswer prepare(const OpPrepareRequest& request) override;
  /// From the storage class's counted host memory.
  Result<Tensor> allocate(std::string_view storage_class, DType dtype,
                          std::vector<int64_t> shape) override;
  Result<MemoryStats> memory_stats(std::string_view storage_class) const override;
  /// Results go to the memory of the op's storage class (the kernels
  /// allocate them from the host buffer source installed while they run).
  /// Inputs must be host addressable (InputMismatch otherwise).
  void launch(std::shared_ptr<const PreparedOp> op, std::vector<Tensor> inputs,
              SymbolBindings symbols, LaunchCompletion done) override;
  /// One pool task runs the whole batch (cpu_batch_runner.hpp).
  void launch_batch(BatchWork work, LaunchCompletion done) override;
  /// Runs a batch of at most inline_work_limit element visits here when its
  /// queue is idle (Engine::run_on_caller).
  std::optional<Result<std::vector<Tensor>>> run_on_caller(const BatchWork& work) override;

  /// The pool kernels split work over (for synchronous callers that run
  /// kernels on their own thread, e.g. run_program_on_cpu).
  WorkerPool& pool() { return *pool_; }
  /// Fused-region counters of everything this engine ran.
  FusedCounters& fused_counters() { return fused_counters_; }
  /// Batches run on the launching thread (inline_work_limit).
  uint64_t inline_batches() const { return inline_batches_.load(std::memory_order_relaxed); }
  /// Ops it ran (a fused region counts its members) and the wall-clock
  /// nanoseconds its batches and launches took, summed over threads.
  uint64_t ops_run() const { return ops_run_.load(std::memory_order_relaxed); }
  uint64_t busy_ns() const { return busy_ns_.load(std::memory_order_relaxed); }

  static constexpr const char* kHostStorage = "host";

 private:
  /// The memory of `storage_class`, or nullptr when the engine lacks it.
  HostBufferSource* memory(std::string_view storage_class) const;

  EngineIdentity identity_;
  EngineCapabilities capabilities_;
  /// One per storage class, parallel to capabilities_.storage_classes.
  /// Declared before pool_: the pool's threads (joined when pool_ goes)
  /// may still be using them.
  std::vector<std::shared_ptr<HostBufferSource>> memories_;
  std::unique_ptr<WorkerPool> pool_;
  /// capabilities_.queues in-order queues over pool_; ~CpuEngine lets go
  /// of them, then stops the pool (which runs what is posted).
  std::vector<std::shared_ptr<HostQueue>> queues_;
  std::atomic<uint64_t> next_queue_{0};
  FusedCounters fused_counters_;
  uint64_t inline_work_limit_;
  std::atomic<uint64_t> inline_batches_{0};
  std::atomic<uint64_t> ops_run_{0};
  std::atomic<uint64_t> busy_ns_{0};
};

}  // namespace tenact::cpu
