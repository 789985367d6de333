// Transfer providers: who moves a value's bytes along a route (the
// `provider` of a TransferRoute, planning/runtime_config.hpp). The transfer
// actor looks providers up by name and runs them on transfer threads.
//
// Built in: "host_copy" — a fresh dense copy in host memory (two engines'
// host storage classes are distinct memories: the destination must not
// alias the source).
//
// Thread-safety: add() before the providers are shared; run() from any
// thread.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/tensor.hpp"
#include "engines/engine.hpp"

namespace tenact {

using TransferFn =
    std::function<Result<HostTensor>(const HostTensor& value, const Endpoint& from, const Endpoint& to)>;

class TransferProviders {
 public:
  /// With the built-in providers.
  TransferProviders();
  void add(std::string name, TransferFn provider);
  bool has(std::string_view name) const;
  /// Moves `value` from `from` to `to` with `provider`. Errors: Unsupported
  /// naming an unknown provider; the provider's own errors with the route
  /// as context.
  Result<HostTensor> run(std::string_view provider, const HostTensor& value, const Endpoint& from,
                         const Endpoint& to) const;

 private:
  std::map<std::string, TransferFn, std::less<>> providers_;
};

}  // namespace tenact
