#include "engines/sim/sim_cost.hpp"

#include <algorithm>
#include <variant>
#include <vector>

#include "engines/host_extension.hpp"
#include "engines/sim/sim_world.hpp"

namespace tenact::sim {

KernelWork kernel_work(std::span<const BatchOp> ops, uint32_t first, uint32_t last,
                       std::span<const Tensor> inputs, std::span<const Tensor> outputs) {
  std::vector<ValueExtent> read, written;
  read.reserve(inputs.size());
  written.reserve(outputs.size());
  for (const Tensor& t : inputs) read.push_back(ValueExtent{t.dtype(), t.shape()});
  for (const Tensor& t : outputs) written.push_back(ValueExtent{t.dtype(), t.shape()});
  // A region is elementwise: only a kernel of one dot counts multiply-adds.
  const PreparedOp* one = first == last && first < ops.size() ? ops[first].op.get() : nullptr;
  static const OpAttrs kNoAttrs{};
  const HostExtensionPlan* extension = one ? host_extension_plan(*one) : nullptr;
  return op_work(one ? one->kind : OpKind::Add, one ? one->attrs : kNoAttrs, read, written,
                 extension ? extension->family.get() : nullptr);
}

EngineCostModel cost_model_of(const SimDeviceSpec& device) {
  EngineCostModel m;
  m.rates = device.rates;
  m.memory_bandwidth = device.memory_bandwidth;
  m.launch_latency_ns = device.launch_latency_ns;
  m.memory_bytes = device.memory_bytes;
  m.lanes = std::max<uint32_t>(1, device.streams);
  return m;
}

uint64_t kernel_ns(const SimDeviceSpec& device, const KernelWork& work, double jitter) {
  return estimate_ns(cost_model_of(device), OpWork{work.ops, work.bytes, work.dtype}, jitter);
}

}  // namespace tenact::sim
