// Transfer providers: who moves a value's bytes along a route (the
// `provider` of a TransferRoute, transfer/transfer_route.hpp). The transfer
// registry (the transfer actor) owns them, looks them up by name and runs
// their copies where each says (TransferProvider::run_on, else a copy
// thread of its own).
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
// Thread-safety: every member from any thread, also while copies run.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
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
  /// A provider that moves values in virtual time (a simulated link)
  /// writes when the copy ran here, when it is set.
  VirtualSpan* virtual_span = nullptr;
};

using TransferFn = std::function<Result<Tensor>(const TransferRequest& request)>;

/// A named way of moving values: the copy, and which routes it serves.
struct TransferProvider {
  TransferFn copy;
  /// Whether it can move values from `from` to `to` (asked when a route is
  /// added); empty: every route.
  std::function<bool(const Endpoint& from, const Endpoint& to)> can_copy;
  /// Where its copies run: hands the copy task to the provider's own copy
  /// engine (a thread or a stream callback of its own), which runs it once,
  /// soon, off the caller's thread, and must not drop it. Empty: on a copy
  /// thread the registry keeps for this provider alone.
  std::function<void(std::function<void()> copy_task)> run_on = {};
  /// Called when a copy is launched (on the registry's thread, in launch
  /// order, before its waits): returns the completion the copy calls when
  /// done, which may hold `done` back to order it among the provider's
  /// other completions (a simulated platform answers in virtual-time
  /// order). It must call `done` exactly once. Empty: `done` as it is.
  std::function<LaunchCompletion(LaunchCompletion done)> order_completions = {};
};

/// The built-in host_copy provider's copy.
Result<Tensor> host_copy(const TransferRequest& request);

class TransferProviders {
 public:
  /// With the built-in providers.
  TransferProviders();
  /// Errors: InvalidAttribute for an empty name, a provider without a copy,
  /// or a name that is registered already (a provider is never replaced:
  /// plans made with it would silently change).
  Status add(std::string name, TransferProvider provider);
  bool has(std::string_view name) const;
  /// Whether `name` is registered and serves from -> to.
  bool can_copy(std::string_view name, const Endpoint& from, const Endpoint& to) const;
  /// Moves `request.value` with `provider`, on the calling thread. Errors:
  /// Unsupported naming an unknown provider; the provider's own errors with
  /// the route as context ("transfer cpu/host -> cpu:1/pinned via
  /// host_copy: ...").
  Result<Tensor> run(std::string_view provider, const TransferRequest& request) const;
  /// The provider registered as `name` (null when none): kept alive by the
  /// pointer, so a copy can run with it on another thread.
  std::shared_ptr<const TransferProvider> find(std::string_view name) const;
  /// Runs `provider` (null: Unsupported naming `name`) with the errors of
  /// run().
  static Result<Tensor> run_with(const TransferProvider* provider, std::string_view name,
                                 const TransferRequest& request);

 private:

  /// Guards providers_ (lookups copy the pointer; copies run unlocked).
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const TransferProvider>, std::less<>> providers_;
};

}  // namespace tenact
