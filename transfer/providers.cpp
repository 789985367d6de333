#include "transfer/providers.hpp"

namespace tenact {

Result<Tensor> host_copy(const TransferRequest& request) {
  const Tensor& value = request.value;
  if (!value.is_host())
    return Error{ErrorCode::Unsupported, "host_copy cannot read " + value.endpoint().to_string() +
                                             " memory (the host cannot address it)"};
  TENACT_ASSIGN_OR_RETURN(Tensor copy, request.destination.allocate(request.to.storage_class,
                                                                    value.dtype(), value.shape()));
  if (!copy.is_host() || !copy.is_contiguous())
    return Error{ErrorCode::Unsupported, "host_copy cannot write " + copy.endpoint().to_string() +
                                             " memory (not dense host memory)"};
  TENACT_TRY(value.copy_to_dense(copy.data()));
  return copy;
}

TransferProviders::TransferProviders() {
  providers_.emplace("host_copy", std::make_shared<const TransferProvider>(TransferProvider{host_copy, {}}));
}

Status TransferProviders::add(std::string name, TransferProvider provider) {
  if (name.empty()) return Error{ErrorCode::InvalidAttribute, "a transfer provider needs a name"};
  if (!provider.copy)
    return Error{ErrorCode::InvalidAttribute, "transfer provider '" + name + "' has no copy function"};
  auto shared = std::make_shared<const TransferProvider>(std::move(provider));
  std::lock_guard lock(mutex_);
  if (providers_.count(name))
    return Error{ErrorCode::InvalidAttribute, "transfer provider '" + name + "' is registered already"};
  providers_.emplace(std::move(name), std::move(shared));
  return ok_status();
}

std::shared_ptr<const TransferProvider> TransferProviders::find(std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto it = providers_.find(name);
  return it == providers_.end() ? nullptr : it->second;
}

bool TransferProviders::has(std::string_view name) const { return find(name) != nullptr; }

bool TransferProviders::can_copy(std::string_view name, const Endpoint& from, const Endpoint& to) const {
  auto provider = find(name);
  return provider && (!provider->can_copy || provider->can_copy(from, to));
}

Result<Tensor> TransferProviders::run(std::string_view provider, const TransferRequest& request) const {
  return run_with(find(provider).get(), provider, request);
}

Result<Tensor> TransferProviders::run_with(const TransferProvider* found, std::string_view provider,
                                           const TransferRequest& request) {
  if (!found) {
    const std::string route =
        request.from.to_string() + " -> " + request.to.to_string() + " via " + std::string{provider};
    return Error{ErrorCode::Unsupported, "no transfer provider '" + std::string{provider} +
                                             "' is registered (route " + route + ")"};
  }
  auto moved = found->copy(request);
  if (!moved.ok())
    return moved.error().with_context("transfer " + request.from.to_string() + " -> " +
                                      request.to.to_string() + " via " + std::string{provider});
  return moved;
}

}  // namespace tenact
