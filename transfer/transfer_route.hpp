// A transfer route: values at `source` may be moved to `destination` by the
// provider named `provider` (transfer/providers.hpp). Routes are part of the
// runtime's configuration snapshot (planning/runtime_config.hpp), which
// planning reads to find how an operand reaches the engine that needs it.
#pragma once

#include <string>

#include "core/endpoint.hpp"

namespace tenact {

struct TransferRoute {
  Endpoint source;
  Endpoint destination;
  /// Who moves the bytes: "host_copy", "cuda_h2d", "sim_link", ...
  std::string provider;
  friend bool operator==(const TransferRoute&, const TransferRoute&) = default;
};

}  // namespace tenact
