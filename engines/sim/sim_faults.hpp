// Seeded fault injection for the simulated devices: what may go wrong, and
// the decision, for each kernel, allocation and copy, whether it does.
// Every decision is a pure function of the fault seed and of where the
// event happens (device, stream, the kernel's index on its stream; the
// device's allocation count; the link and its copy count), so a run that
// failed replays exactly with the same seed.
//
// The fault kinds and how the simulated devices answer them:
//  - transient: each kernel fails with this probability; the batch fails
//    with TransientFailure naming device, stream and op (the next try may
//    pass: the runtime may retry it);
//  - fail_ops: these op kinds fail deterministically: the device refuses
//    to prepare them (Unsupported, which the prepare cache keeps);
//  - allocation: each allocation fails with this probability
//    (ResourceExhausted naming the device);
//  - transfer: each copy along a simulated link fails with this
//    probability (TransientFailure naming the link);
//  - per device: dies at a virtual time or after a number of ops (from
//    then on every launch fails with EngineDown naming the cause), or is
//    slow (every kernel's cost times a factor >= 1).
//
// The flag form (`tenact run|stress --faults SPEC`): comma-separated
// KEY=VALUE items:
//   seed=N           the fault seed (default 0)
//   transient=P      probability per kernel, 0 to 1
//   fail=OP          an op name of the program format (repeatable)
//   alloc=P          probability per allocation
//   transfer=P       probability per copy
//   die=DEV@Nops     DEV dies after N ops;  die=DEV@Nns: at virtual time N
//   slow=DEV*F       DEV's kernels take F times as long (F >= 1)
// e.g. "seed=7,transient=0.01,fail=cholesky,die=sim:2@500ops,slow=sim:1*2.5".
// Pure data and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/op_kind.hpp"

namespace tenact::sim {

struct SimDeviceFault {
  std::string device;
  std::optional<uint64_t> dies_at_ns;
  std::optional<uint64_t> dies_after_ops;
  double slow = 1.0;
  friend bool operator==(const SimDeviceFault&, const SimDeviceFault&) = default;
};

struct SimFaultSpec {
  uint64_t seed = 0;
  double transient = 0;
  std::vector<OpKind> fail_ops;
  double allocation = 0;
  double transfer = 0;
  std::vector<SimDeviceFault> devices;

  bool any() const;
  /// The fault of `device` (null when none is given).
  const SimDeviceFault* device(std::string_view id) const;
  /// Whether ops of `kind` fail deterministically.
  bool fails(OpKind kind) const;
  /// The flag form again (canonical: the keys in the order above).
  std::string to_string() const;
  friend bool operator==(const SimFaultSpec&, const SimFaultSpec&) = default;
};

/// Parses the flag form. Errors (InvalidAttribute, message starting
/// "faults: " and naming the item): an item without '=', an unknown key, a
/// probability outside [0, 1] or not a number, an unknown op name, a
/// malformed device fault, a slow factor below 1 or not finite, a device
/// given twice for the same kind of fault.
Result<SimFaultSpec> parse_fault_spec(std::string_view text);

/// What a fault draw is about (each kind draws from its own stream).
enum class FaultDraw : uint8_t { Transient = 1, Allocation, Transfer };

/// A uniform number in [0, 1): a pure function of its arguments (a
/// SplitMix64 hash of them).
double fault_unit(uint64_t seed, FaultDraw what, uint64_t a, uint64_t b, uint64_t c);

/// Whether the event (a, b, c) of kind `what` fails with probability `p`.
inline bool fault_happens(double p, uint64_t seed, FaultDraw what, uint64_t a, uint64_t b, uint64_t c) {
  return p > 0 && fault_unit(seed, what, a, b, c) < p;
}

}  // namespace tenact::sim
