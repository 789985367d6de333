#include "transfer/providers.hpp"

namespace tenact {

TransferProviders::TransferProviders() {
  add("host_copy", [](const HostTensor& value, const Endpoint&, const Endpoint&) { return value.clone(); });
}

void TransferProviders::add(std::string name, TransferFn provider) {
  providers_[std::move(name)] = std::move(provider);
}

bool TransferProviders::has(std::string_view name) const { return providers_.find(name) != providers_.end(); }

Result<HostTensor> TransferProviders::run(std::string_view provider, const HostTensor& value,
                                          const Endpoint& from, const Endpoint& to) const {
  const std::string route = from.to_string() + " -> " + to.to_string() + " via " + std::string{provider};
  auto it = providers_.find(provider);
  if (it == providers_.end())
    return Error{ErrorCode::Unsupported, "no transfer provider '" + std::string{provider} +
                                             "' is registered (route " + route + ")"};
  auto moved = it->second(value, from, to);
  if (!moved.ok()) return moved.error().with_context("transfer " + route);
  return moved;
}

}  // namespace tenact
