// What an engine says an op costs it, for cost-aware placement
// (planning/cost_placement.hpp): a descriptor in the engine's capabilities,
// never a call into the engine, so planning stays pure.
//
//   estimate = launch_latency_ns + max(ops / rate(dtype), bytes / memory_bandwidth)
//
// `ops` counts one operation per multiply-add of a dot_general (result
// elements x contracted extent) and one per element of every other op (the
// larger of what it reads and what it writes); `bytes` is every element
// read plus every element written at its dtype's size; the dtype is a dot's
// lhs dtype, else the first result's (else the first operand's). The
// simulated devices charge virtual time by the same formula
// (engines/sim/sim_cost.hpp), so on them an estimate is exact up to jitter.
// Pure functions: no allocation, no state; safe from any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/dtype.hpp"
#include "core/extension.hpp"
#include "core/op_attrs.hpp"
#include "core/op_kind.hpp"
#include "core/shape.hpp"

namespace tenact {

/// Operations per second, one rate per dtype class.
struct DTypeRates {
  double f16 = 400e12;  // f16 and bf16
  double f32 = 60e12;
  double f64 = 30e12;
  double integer = 30e12;     // every integer dtype and bool
  double complex64 = 15e12;   // a complex multiply-add counts as one op
  double complex128 = 7.5e12;
  /// The rate for `dtype`'s class.
  double for_dtype(DType dtype) const;
  friend bool operator==(const DTypeRates&, const DTypeRates&) = default;
};

struct EngineCostModel {
  DTypeRates rates;
  /// Bytes per second the engine's memory moves; positive.
  double memory_bandwidth = 3e12;
  /// Nanoseconds every kernel costs before its work.
  uint64_t launch_latency_ns = 0;
  /// Memory placement may fill on this engine, in bytes (0: unbounded).
  uint64_t memory_bytes = 0;
  /// Kernels the engine runs at once, each on its own queue 0 .. lanes - 1
  /// when lanes > 1 (the engine then has at least that many queues); 1: one
  /// at a time, or spread by the engine itself (work goes with kAnyQueue).
  uint32_t lanes = 1;
  /// Engines that name the same resource share its lanes and memory (the
  /// CPU engines of one process share the machine's cores); empty: the
  /// engine's own.
  std::string resource;
  friend bool operator==(const EngineCostModel&, const EngineCostModel&) = default;
};


struct OpWork {
  /// Arithmetic operations and bytes moved, each saturating at 2^63.
  uint64_t ops = 0;
  uint64_t bytes = 0;
  DType dtype = DType::F32;
};

/// The work of one op of `kind` (attrs for a dot's contracting dimensions).
/// An extension op counts as an elementwise one unless `extension`, its
/// family, has an estimate: that estimate's ops and bytes then.
OpWork op_work(OpKind kind, const OpAttrs& attrs, std::span<const ValueExtent> operands,
               std::span<const ValueExtent> results, const ExtensionFamily* extension = nullptr);

/// Nanoseconds `work` takes under `model`, its body (the max term) times
/// `factor` and rounded up to a whole nanosecond; saturating at 2^62.
uint64_t estimate_ns(const EngineCostModel& model, const OpWork& work, double factor = 1.0);

/// Nanoseconds a copy of `bytes` takes over a link of `latency_ns` and
/// `bandwidth` bytes per second (rounded up; saturating at 2^62).
uint64_t copy_estimate_ns(uint64_t latency_ns, double bandwidth, uint64_t bytes);

}  // namespace tenact
