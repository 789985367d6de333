// A transfer route: values at `source` may be moved to `destination` by the
// provider named `provider` (transfer/providers.hpp). Routes are part of the
// runtime's configuration snapshot (planning/runtime_config.hpp), which
// planning reads to find how an operand reaches the engine that needs it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/endpoint.hpp"

namespace tenact {

/// What a copy along a route is estimated to cost: latency_ns +
/// bytes / bandwidth (engines/cost_model.hpp, copy_estimate_ns).
struct RouteCost {
  uint64_t latency_ns = 0;
  /// Bytes per second; positive.
  double bandwidth = 1e10;
  friend bool operator==(const RouteCost&, const RouteCost&) = default;
};

struct TransferRoute {
  Endpoint source;
  Endpoint destination;
  /// Who moves the bytes: "host_copy", "cuda_h2d", "sim_link", ...
  std::string provider;
  /// For cost-aware placement (nullopt: unknown, counted as free; the
  /// bytes moved still count against a placement).
  std::optional<RouteCost> cost = std::nullopt;
  friend bool operator==(const TransferRoute&, const TransferRoute&) = default;
};

}  // namespace tenact
