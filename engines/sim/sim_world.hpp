// The state one simulated platform's engines and links share: when each
// value they made is ready in virtual time, what every link and device has
// moved, and the deterministic jitter of the platform's seed.
//
// Virtual time. Every stream of every device has a clock (kept by its
// engine); a kernel starts at max(its stream's clock, the ready time of
// each input) and ends after its cost (sim_cost.hpp). A copy along a link
// starts when its source is ready and takes latency + bytes / bandwidth
// (links are not shared resources here: two copies on one link overlap).
// Ready times are recorded per buffer (weakly: a value that is gone is
// forgotten), so a consumer on another device or a copy sees its
// producer's time without any event carrying it. Values the simulation did
// not make (host memory from outside) are ready at 0.
//
// Determinism: given the order in which each stream receives its batches
// (the order the runtime submits them, which is fixed when runs are
// enqueued behind events) every virtual time is a function of the
// program, the platform and its seed, whatever the host's timing. The
// runtime hears of the platform's completions in virtual-time order
// (sequencer(), sim_sequencer.hpp), so what it does in answer is too.
//
// Thread-safe: every member from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tensor.hpp"
#include "engines/sim/sim_platform.hpp"
#include "engines/sim/sim_sequencer.hpp"

namespace tenact::sim {

/// What one device moved and did (counters only grow).
struct SimDeviceCounters {
  std::atomic<uint64_t> kernels{0};
  std::atomic<uint64_t> ops{0};
  /// Bytes that came into the device's memory (copies in, host inputs
  /// uploaded) and left it (copies out).
  std::atomic<uint64_t> bytes_in{0};
  std::atomic<uint64_t> bytes_out{0};
  /// Virtual nanoseconds its streams spent running kernels (summed over
  /// streams, so up to streams x the makespan).
  std::atomic<uint64_t> busy_ns{0};
};

struct SimLinkStats {
  std::string from, to;
  uint64_t copies = 0;
  uint64_t bytes = 0;
  uint64_t busy_ns = 0;
};

class SimWorld {
 public:
  /// Errors: validate_platform's.
  static Result<std::shared_ptr<SimWorld>> create(SimPlatform platform);
  explicit SimWorld(SimPlatform platform);

  const SimPlatform& platform() const { return platform_; }
  /// The index of device `id` in platform().devices, or -1.
  int device_index(std::string_view id) const;
  SimDeviceCounters& counters(size_t device) { return *counters_[device]; }
  /// Orders the completions of every device's streams and every link's
  /// copies; device d's stream s is lane first_lane(d) + s.
  SimSequencer& sequencer() { return *sequencer_; }
  uint32_t first_lane(size_t device) const { return first_lane_[device]; }
  const SimDeviceCounters& counters(size_t device) const { return *counters_[device]; }

  /// When `value`'s contents are ready in virtual nanoseconds (0 when the
  /// simulation did not make it).
  uint64_t ready_at(const Tensor& value) const;
  /// Records that `value`'s buffer is ready at `time` (and advances now()).
  void set_ready(const Tensor& value, uint64_t time);

  /// Charges a copy of `bytes` along the link from -> to ("host" or a
  /// device id) whose source is ready at `ready`: returns when it is done.
  /// Errors: Unsupported naming both ends when the platform has no such
  /// link; TransientFailure when the platform's faults fail the copy
  /// (drawn from the link, `ready` and `bytes`).
  Result<uint64_t> charge_link(std::string_view from, std::string_view to, uint64_t bytes, uint64_t ready);
  std::vector<SimLinkStats> link_stats() const;

  /// The cost factor of kernel `sequence` on (device, stream): 1 without
  /// jitter, else uniform in [1 - jitter, 1 + jitter], a pure function of
  /// the seed and the three numbers.
  double jitter(size_t device, uint32_t stream, uint64_t sequence) const;

  /// The latest virtual time any kernel or copy of this platform ended at.
  uint64_t now() const { return now_.load(std::memory_order_acquire); }
  void advance_to(uint64_t time);

 private:
  struct Ready {
    std::weak_ptr<Buffer> buffer;
    uint64_t time = 0;
  };
  void prune_locked();

  const SimPlatform platform_;
  std::vector<std::unique_ptr<SimDeviceCounters>> counters_;
  std::vector<uint32_t> first_lane_;
  std::unique_ptr<SimSequencer> sequencer_;
  mutable std::mutex mutex_;
  std::unordered_map<const Buffer*, Ready> ready_;
  size_t prune_at_ = 1024;
  std::map<std::pair<std::string, std::string>, SimLinkStats> links_;
  std::atomic<uint64_t> now_{0};
};

/// Virtual nanoseconds for `seconds` of simulated work, saturating at
/// 2^62 (no overflow from a huge tensor or a tiny rate).
uint64_t virtual_ns(double seconds);

}  // namespace tenact::sim
