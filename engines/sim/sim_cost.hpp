// The simulated devices' cost model: what one kernel (an op, or a fused
// elementwise region) costs in virtual time on a device.
//
//   cost = launch_latency_ns + max(work / rate(dtype), bytes / memory_bandwidth)
//
// scaled by the platform's jitter factor. `work` counts one operation per
// multiply-add of a dot_general (result elements x contracted extent) and
// one per element of everything else (the larger of what it reads and
// writes); `bytes` is every element read plus every element written, at
// its dtype's size (a broadcast operand counts as the elements read). The
// dtype is the dot's operand dtype, else the first result's.
// Pure functions: cheap, no allocation, no state.
#pragma once

#include <cstdint>
#include <span>

#include "core/dtype.hpp"
#include "core/tensor.hpp"
#include "engines/engine.hpp"
#include "engines/sim/sim_platform.hpp"

namespace tenact::sim {

struct KernelWork {
  /// Arithmetic operations (saturating at 2^63).
  uint64_t ops = 0;
  uint64_t bytes = 0;
  DType dtype = DType::F32;
};

/// The work of ops `first`..`last` of a batch (one op, or one region),
/// from the tensors the kernel read and wrote.
KernelWork kernel_work(std::span<const BatchOp> ops, uint32_t first, uint32_t last,
                       std::span<const Tensor> inputs, std::span<const Tensor> outputs);

/// Virtual nanoseconds `work` takes on `device`, times `jitter`.
uint64_t kernel_ns(const SimDeviceSpec& device, const KernelWork& work, double jitter = 1.0);

}  // namespace tenact::sim
