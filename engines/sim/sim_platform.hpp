// The description of a simulated machine: its devices (memory, streams,
// rates) and the links between them and the host, as a platform file
// (JSON, docs/platform-format.md; examples in examples/platforms/) or N
// identical default devices (default_platform). Plain data, CAF-free; the
// simulated engines (sim_engine.hpp) and their transfer providers
// (sim_links.hpp) charge virtual time from it.
//
// Units: bytes, bytes per second, operations per second, nanoseconds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/op_kind.hpp"
#include "engines/cost_model.hpp"
#include "engines/sim/sim_faults.hpp"

namespace tenact::sim {

/// Arithmetic rates of one device, in operations per second, per dtype
/// class. An op's work counts one operation per multiply-add of a dot and
/// one per element of everything else (engines/cost_model.hpp).
using SimRates = DTypeRates;

struct SimDeviceSpec {
  /// "sim:0", "sim:1", ...: the engine id (unique in a platform).
  std::string id;
  /// Device memory, in bytes (allocations past it are LimitExceeded).
  uint64_t memory_bytes = uint64_t{16} << 30;
  /// In-order streams (the engine's queues); at least 1.
  uint32_t streams = 4;
  SimRates rates;
  /// Bytes per second the device's memory moves (an op's bytes read plus
  /// written at this rate).
  double memory_bandwidth = 3e12;
  /// Virtual nanoseconds every kernel launch costs before its work.
  uint64_t launch_latency_ns = 5000;
  /// Host threads that compute this device's results (0: 1).
  uint32_t host_threads = 1;
  /// Ops the device has no kernel for: refused at prepare (Unsupported
  /// naming the device and the op), so a plan puts them elsewhere.
  std::vector<OpKind> lacks;
};

/// A link moves bytes between two endpoints of the platform: "host" (the
/// host's memory) or a device id. Links are directed; a file may declare
/// one with "bidirectional" to get both directions.
struct SimLinkSpec {
  std::string from;
  std::string to;
  double bandwidth = 25e9;  // bytes per second
  uint64_t latency_ns = 10000;
};

struct SimPlatform {
  std::string name = "default";
  std::vector<SimDeviceSpec> devices;
  std::vector<SimLinkSpec> links;
  /// Seeds the only randomness the simulation has: the per-kernel jitter
  /// below.
  uint64_t seed = 0;
  /// Each kernel's cost is multiplied by a factor drawn uniformly from
  /// [1 - jitter, 1 + jitter] (deterministic per seed, device, stream and
  /// submission index); 0: none. At most 0.5.
  double jitter = 0;
  /// What goes wrong on it, seeded (engines/sim/sim_faults.hpp); none by
  /// default. Set in code or by `tenact run --faults`.
  SimFaultSpec faults;

  const SimDeviceSpec* device(std::string_view id) const;
  /// The link from -> to ("host" or a device id), or null.
  const SimLinkSpec* link(std::string_view from, std::string_view to) const;
};

/// `count` identical default devices sim:0 .. sim:count-1, each with a
/// link to and from the host and a peer link to and from every other
/// device (peer links at 4x the host links' bandwidth). Errors:
/// InvalidAttribute for count 0 or above 64.
Result<SimPlatform> default_platform(uint32_t count);

/// Parses a platform file's text (docs/platform-format.md); the result
/// passes validate_platform. A file without "links" gets a host link each
/// way per device (SimLinkSpec defaults); "links": [] means none. Every
/// message starts "platform: " and names the path of the field
/// ("devices[1].memory_bytes"). Errors: Parse for malformed JSON or a
/// duplicate key; LimitExceeded for nesting deeper than the JSON depth
/// limit; Schema for a field that is missing, unknown or of the wrong type,
/// or an unknown "format"; InvalidAttribute for a value out of range, a
/// malformed or duplicate device id, a link naming an unknown endpoint or
/// itself, or a duplicate link (after "bidirectional" expansion).
Result<SimPlatform> parse_platform(std::string_view json_text);
/// Reads and parses a platform file. Errors: Io naming the path
/// (LimitExceeded for a file over 1 MiB); then parse_platform's, with the
/// path as context.
Result<SimPlatform> load_platform(const std::string& path);

/// Checks a platform built in code: every range parse_platform checks of a
/// file (InvalidAttribute, same messages; links are named by their index
/// in `platform.links`), device ids well formed and unique, links between
/// known, distinct endpoints and not duplicated, jitter in [0, 0.5], every
/// device fault naming a device of the platform.
Status validate_platform(const SimPlatform& platform);

}  // namespace tenact::sim
