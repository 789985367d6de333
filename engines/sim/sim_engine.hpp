// A simulated GPU (`sim:0`, `sim:1`, ...): computes real results with the
// CPU kernels, on host threads of its own, into device memory of its own
// (sim_memory.hpp: counted against the device's capacity, LimitExceeded
// naming the device past it), and charges virtual time from the platform's
// cost model (sim_cost.hpp, sim_world.hpp).
//
// Streams: as many in-order queues as the device has streams; a batch for
// kAnyQueue goes to the next stream in turn (deterministic in submission
// order). Each stream has a virtual clock: a batch starts at max(the
// clock, its inputs' ready times, the arrival of host inputs it uploads
// over the device's host link) and advances the clock by each kernel's
// cost. Waits are honoured without holding a thread.
//
// Providers: the CPU kernels' (engines/cpu/cpu_providers.hpp) less the
// ops the device lacks, values aligned to 256 bytes. A batch op's
// destinations in this device's memory are written into (the result is a
// view of the destination's buffer); others are ignored.
//
// Memory: one storage class, "device"; buffers it hands out are not host
// addressable. Program inputs in host memory (the caller's) are uploaded
// by the engine over its link from the host (counted as bytes in, charged
// to the stream); results stay on the device: read them back with a copy
// along a sim link (sim_links.hpp).
//
// Threads: launch() and launch_batch() return at once; kernels run on the
// engine's pool. A batch's events are signalled as soon as it is done; its
// completion is called in virtual-time order among the platform's
// (sim_sequencer.hpp), from this engine's pool or another device's or
// link's thread of the same platform. All members are safe from
// many threads.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engines/cpu/host_queue.hpp"
#include "engines/cpu/kernels/fused_elementwise.hpp"
#include "engines/engine.hpp"
#include "engines/sim/sim_world.hpp"
#include "util/worker_pool.hpp"

namespace tenact::sim {

struct SimEngineOptions {
  /// The platform this device belongs to (shared with its peers and links).
  std::shared_ptr<SimWorld> world;
  /// Its id among world->platform().devices ("sim:0").
  std::string device;
  uint64_t registration = 0;
  /// Declares fused_elementwise_regions (a region is one kernel: one launch).
  bool fuse_regions = true;
};

/// What one device did (SimEngine::stats).
struct SimEngineStats {
  uint64_t kernels = 0;
  uint64_t ops = 0;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  uint64_t allocated_bytes = 0;
  uint64_t peak_bytes = 0;
  /// Virtual nanoseconds of kernels, summed over streams.
  uint64_t busy_ns = 0;
  /// Each stream's virtual clock: when its last batch ended.
  std::vector<uint64_t> stream_clock_ns;
};

class SimEngine final : public Engine {
  struct Passkey {};

 public:
  static constexpr const char* kDeviceStorage = "device";
  /// The value alignment its providers declare: what a GPU allocator
  /// aligns to (cudaMalloc: 256 bytes).
  static constexpr uint64_t kSimValueAlignment = 256;

  /// Errors: InvalidAttribute for a missing world or a device the platform
  /// lacks; WorkerPool::create's for its host threads.
  static Result<std::shared_ptr<SimEngine>> create(SimEngineOptions options);
  SimEngine(Passkey, SimEngineOptions options, size_t index, std::unique_ptr<WorkerPool> pool);
  ~SimEngine() override;

  const EngineIdentity& identity() const override { return identity_; }
  const EngineCapabilities& capabilities() const override { return capabilities_; }
  PrepareAnswer prepare(const OpPrepareRequest& request) override;
  /// A zero-filled device buffer. Errors: Unsupported for another storage
  /// class; LimitExceeded past the device's memory.
  Result<Tensor> allocate(std::string_view storage_class, DType dtype, std::vector<int64_t> shape) override;
  Result<MemoryStats> memory_stats(std::string_view storage_class) const override;
  /// One op as a batch of one (launch_batch).
  void launch(std::shared_ptr<const PreparedOp> op, std::vector<Tensor> inputs, SymbolBindings symbols,
              LaunchCompletion done) override;
  void launch_batch(BatchWork work, LaunchCompletion done) override;

  SimEngineStats stats() const;
  const SimDeviceSpec& device() const { return world_->platform().devices[index_]; }
  const std::shared_ptr<SimWorld>& world() const { return world_; }

 private:
  /// Runs `work` on `stream` (its queue's thread, in order): inputs in,
  /// kernels, the clock advanced, results out as device views.
  Result<std::vector<Tensor>> run_on_stream(BatchWork& work, uint32_t stream);
  /// `done`, delivered in virtual-time order among the platform's
  /// completions (SimWorld::sequencer); call it on `stream`'s queue.
  LaunchCompletion in_virtual_time_order(uint32_t stream, LaunchCompletion done);
  /// The batch's inputs as the kernels read them (host views of device
  /// buffers; host memory uploaded first), and when the last one is ready.
  /// Uploads widen `span` when it is set.
  Result<uint64_t> bring_inputs_in(std::vector<Tensor>& inputs, VirtualSpan* span);
  /// The ops' destinations as the kernels write them: host views of those
  /// in this device's memory, unset tensors for the others (ignored). Maps
  /// each view's buffer to the destination's own.
  Result<std::unordered_map<const Buffer*, std::shared_ptr<Buffer>>> bring_destinations_in(
      std::vector<BatchOp>& ops);
  /// The injected faults of a batch about to run on `stream` from virtual
  /// time `start` (sim_faults.hpp): the device dead (EngineDown, and so on
  /// for every later batch), a kernel's transient failure, a failed
  /// allocation. ok: it runs.
  Status injected_fault(const BatchWork& work, uint32_t stream, uint64_t start);

  EngineIdentity identity_;
  EngineCapabilities capabilities_;
  std::shared_ptr<SimWorld> world_;
  size_t index_;
  std::shared_ptr<HostBufferSource> memory_;
  /// Declared after memory_ (the pool's threads use it) and before the
  /// queues, which it outlives.
  std::unique_ptr<WorkerPool> pool_;
  std::vector<std::shared_ptr<cpu::HostQueue>> queues_;
  /// Per stream: its virtual clock and the kernels it ran (jitter's index).
  /// Written only by the stream's own queue, one batch at a time.
  std::unique_ptr<std::atomic<uint64_t>[]> clocks_;
  std::unique_ptr<uint64_t[]> sequences_;
  /// Per stream: the ops it was asked to run, failed tries included (the
  /// index of injected-fault draws); written only by its own queue.
  std::vector<uint64_t> fault_draws_;
  std::atomic<uint64_t> next_stream_{0};
  /// Why the device died of an injected fault (empty: alive); set once,
  /// under dead_mutex_.
  std::mutex dead_mutex_;
  std::string dead_because_;
  std::atomic<bool> dead_{false};
  cpu::FusedCounters fused_counters_;
};

}  // namespace tenact::sim
