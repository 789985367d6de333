// Transfer providers: who moves a value's bytes along a route (the
// `provider` of a TransferRoute, transfer/transfer_route.hpp). The transfer
// actor looks providers up by name and runs them on transfer threads.
//
// A provider gets the value at its source and the destination engine, which
// allocates the copy (Engine::allocate at the route's destination storage
// class): the copy is a buffer the destination engine owns, and goes back to
// it when its last user drops it.
//
// Built in: "host_copy" — a dense copy between two host-addressable
// memories (two engines' host storage classes are distinct memories: the
// destination never aliases the source).
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

/// One copy along a route.
struct TransferRequest {
  const Tensor& value;
  const Endpoint& from;
  const Endpoint& to;
  /// The engine that owns `to`: it allocates the copy.
  Engine& destination;
};

using TransferFn = std::function<Result<Tensor>(const TransferRequest& request)>;

/// The built-in host_copy provider.
Result<Tensor> host_copy(const TransferRequest& request);

class TransferProviders {
 public:
  /// With the built-in providers.
  TransferProviders();
  void add(std::string name, TransferFn provider);
  bool has(std::string_view name) const;
  /// Moves `request.value` with `provider`. Errors: Unsupported naming an
  /// unknown provider; the provider's own errors with the route as context
  /// ("transfer cpu/host -> cpu:1/pinned via host_copy: ...").
  Result<Tensor> run(std::string_view provider, const TransferRequest& request) const;

 private:
  std::map<std::string, TransferFn, std::less<>> providers_;
};

}  // namespace tenact
