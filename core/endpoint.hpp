// Where memory lives: an engine and one of its storage classes ("cpu/host",
// "cuda:0/device", "cuda:0/pinned", "sim:1/device"). A buffer's endpoint
// names the allocator that owns it (core/tensor.hpp); planning places values
// at endpoints and routes move them between endpoints.
//
// Host memory that no engine owns (made by a caller, read from a file) has
// the endpoint Endpoint::unowned_host(): engine "", storage class "host".
#pragma once

#include <string>

namespace tenact {

struct Endpoint {
  std::string engine;         // "cpu", "cuda:0", "sim:2"; "" for unowned host memory
  std::string storage_class;  // "host", "device", "pinned"
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
  friend auto operator<=>(const Endpoint&, const Endpoint&) = default;
  /// "cpu/host" ("/host" for unowned host memory).
  std::string to_string() const { return engine + "/" + storage_class; }
  static Endpoint unowned_host() { return Endpoint{"", "host"}; }
};

}  // namespace tenact
