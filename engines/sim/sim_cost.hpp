// The simulated devices' cost model: what one kernel (an op, or a fused
// elementwise region) costs in virtual time on a device.
//
//   cost = launch_latency_ns + max(work / rate(dtype), bytes / memory_bandwidth)
//
// the body scaled by the platform's jitter factor: the formula of
// engines/cost_model.hpp (op_work, estimate_ns), which placement uses to
// estimate the same kernels. A broadcast operand counts as the elements
// read; a region's kernel is elementwise (no multiply-adds).
// Pure functions: cheap, no state.
#pragma once

#include <cstdint>
#include <span>

#include "core/dtype.hpp"
#include "core/tensor.hpp"
#include "engines/engine.hpp"
#include "engines/sim/sim_platform.hpp"

namespace tenact::sim {

using KernelWork = OpWork;

/// The work of ops `first`..`last` of a batch (one op, or one region),
/// from the tensors the kernel read and wrote.
KernelWork kernel_work(std::span<const BatchOp> ops, uint32_t first, uint32_t last,
                       std::span<const Tensor> inputs, std::span<const Tensor> outputs);

/// The device's cost model for placement: its rates, bandwidth, launch
/// latency and memory, one lane per stream. kernel_ns charges by it.
EngineCostModel cost_model_of(const SimDeviceSpec& device);

/// Virtual nanoseconds `work` takes on `device`, its body times `jitter`
/// (estimate_ns of cost_model_of(device)).
uint64_t kernel_ns(const SimDeviceSpec& device, const KernelWork& work, double jitter = 1.0);

}  // namespace tenact::sim
