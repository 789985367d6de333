#include "engines/sim/sim_cost.hpp"

#include <algorithm>
#include <variant>

#include "engines/sim/sim_world.hpp"

namespace tenact::sim {

namespace {

constexpr uint64_t kSaturated = uint64_t{1} << 63;

uint64_t saturating_mul(uint64_t a, uint64_t b) {
  if (a != 0 && b > kSaturated / a) return kSaturated;
  return std::min(a * b, kSaturated);
}

uint64_t saturating_add(uint64_t a, uint64_t b) { return std::min(kSaturated, a + std::min(b, kSaturated)); }

uint64_t elements(const Tensor& t) {
  const int64_t n = t.element_count();
  return n > 0 ? static_cast<uint64_t>(n) : 0;
}

}  // namespace

KernelWork kernel_work(std::span<const BatchOp> ops, uint32_t first, uint32_t last,
                       std::span<const Tensor> inputs, std::span<const Tensor> outputs) {
  KernelWork w;
  uint64_t read = 0, written = 0;
  for (const Tensor& t : inputs) {
    read = saturating_add(read, elements(t));
    w.bytes = saturating_add(w.bytes, saturating_mul(elements(t), size_of(t.dtype())));
  }
  for (const Tensor& t : outputs) {
    written = saturating_add(written, elements(t));
    w.bytes = saturating_add(w.bytes, saturating_mul(elements(t), size_of(t.dtype())));
  }
  if (!outputs.empty()) w.dtype = outputs.front().dtype();
  else if (!inputs.empty()) w.dtype = inputs.front().dtype();
  w.ops = std::max(read, written);
  if (first == last && first < ops.size() && ops[first].op && ops[first].op->kind == OpKind::DotGeneral &&
      !inputs.empty() && !outputs.empty()) {
    const auto* dot = std::get_if<DotGeneralAttrs>(&ops[first].op->attrs);
    if (dot != nullptr) {
      uint64_t contracted = 1;
      for (int64_t d : dot->lhs_contracting_dimensions)
        if (d >= 0 && static_cast<size_t>(d) < inputs[0].shape().size())
          contracted = saturating_mul(contracted, static_cast<uint64_t>(std::max<int64_t>(0, inputs[0].shape()[d])));
      w.ops = saturating_mul(elements(outputs[0]), contracted);
      w.dtype = inputs[0].dtype();
    }
  }
  return w;
}

uint64_t kernel_ns(const SimDeviceSpec& device, const KernelWork& work, double jitter) {
  const double compute = static_cast<double>(work.ops) / device.rates.for_dtype(work.dtype);
  const double memory = static_cast<double>(work.bytes) / device.memory_bandwidth;
  return device.launch_latency_ns + virtual_ns(std::max(compute, memory) * jitter);
}

}  // namespace tenact::sim
