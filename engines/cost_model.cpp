#include "engines/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <variant>

#include "core/checked.hpp"

namespace tenact {

namespace {

constexpr uint64_t kSaturated = uint64_t{1} << 63;
constexpr double kMaxNs = 4611686018427387904.0;  // 2^62

uint64_t saturating_mul(uint64_t a, uint64_t b) { return tenact::saturating_mul(a, b, kSaturated); }
uint64_t saturating_add(uint64_t a, uint64_t b) { return tenact::saturating_add(a, b, kSaturated); }

uint64_t elements(const ValueExtent& v) {
  uint64_t n = 1;
  for (int64_t d : v.shape) n = saturating_mul(n, d > 0 ? static_cast<uint64_t>(d) : 0);
  return n;
}

// Whole nanoseconds for `seconds`, rounded up, saturating at 2^62.
uint64_t to_ns(double seconds) {
  const double ns = std::ceil(seconds * 1e9);
  if (!(ns > 0)) return 0;  // NaN and non-positive: nothing
  return ns >= kMaxNs ? static_cast<uint64_t>(kMaxNs) : static_cast<uint64_t>(ns);
}

}  // namespace

double DTypeRates::for_dtype(DType dtype) const {
  switch (dtype) {
    case DType::F16:
    case DType::BF16: return f16;
    case DType::F32: return f32;
    case DType::F64: return f64;
    case DType::C64: return complex64;
    case DType::C128: return complex128;
    case DType::Bool:
    case DType::I8: case DType::I16: case DType::I32: case DType::I64:
    case DType::U8: case DType::U16: case DType::U32: case DType::U64: return integer;
  }
  return integer;  // unreachable for a valid DType
}

OpWork op_work(OpKind kind, const OpAttrs& attrs, std::span<const ValueExtent> operands,
               std::span<const ValueExtent> results, const ExtensionFamily* extension) {
  OpWork w;
  uint64_t read = 0, written = 0;
  for (const ValueExtent& v : operands) {
    read = saturating_add(read, elements(v));
    w.bytes = saturating_add(w.bytes, saturating_mul(elements(v), size_of(v.dtype)));
  }
  for (const ValueExtent& v : results) {
    written = saturating_add(written, elements(v));
    w.bytes = saturating_add(w.bytes, saturating_mul(elements(v), size_of(v.dtype)));
  }
  if (!results.empty()) w.dtype = results.front().dtype;
  else if (!operands.empty()) w.dtype = operands.front().dtype;
  w.ops = std::max(read, written);
  const auto* dot = kind == OpKind::DotGeneral ? std::get_if<DotGeneralAttrs>(&attrs) : nullptr;
  if (dot != nullptr && !operands.empty() && !results.empty()) {
    uint64_t contracted = 1;
    const auto& lhs = operands[0].shape;
    for (int64_t d : dot->lhs_contracting_dimensions)
      if (d >= 0 && static_cast<size_t>(d) < lhs.size())
        contracted = saturating_mul(contracted, static_cast<uint64_t>(std::max<int64_t>(0, lhs[d])));
    w.ops = saturating_mul(elements(results[0]), contracted);
    w.dtype = operands[0].dtype;
  }
  const auto* ext = kind == OpKind::Extension ? std::get_if<ExtensionAttrs>(&attrs) : nullptr;
  if (ext != nullptr && extension != nullptr && extension->estimate) {
    const ExtensionWork work = extension->estimate(ExtensionWorkCall{*ext, operands, results});
    w.ops = std::min(work.ops, kSaturated);
    w.bytes = std::min(work.bytes, kSaturated);
  }
  return w;
}

uint64_t estimate_ns(const EngineCostModel& model, const OpWork& work, double factor) {
  const double compute = static_cast<double>(work.ops) / model.rates.for_dtype(work.dtype);
  const double memory = static_cast<double>(work.bytes) / model.memory_bandwidth;
  const uint64_t body = to_ns(std::max(compute, memory) * factor);
  return std::min<uint64_t>(model.launch_latency_ns + body, static_cast<uint64_t>(kMaxNs));
}

uint64_t copy_estimate_ns(uint64_t latency_ns, double bandwidth, uint64_t bytes) {
  const uint64_t body = to_ns(static_cast<double>(bytes) / bandwidth);
  return std::min<uint64_t>(std::min(latency_ns, static_cast<uint64_t>(kMaxNs)) + body,
                            static_cast<uint64_t>(kMaxNs));
}

}  // namespace tenact
