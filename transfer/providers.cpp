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

TransferProviders::TransferProviders() { add("host_copy", host_copy); }

void TransferProviders::add(std::string name, TransferFn provider) {
  providers_[std::move(name)] = std::move(provider);
}

bool TransferProviders::has(std::string_view name) const { return providers_.find(name) != providers_.end(); }

Result<Tensor> TransferProviders::run(std::string_view provider, const TransferRequest& request) const {
  const std::string route =
      request.from.to_string() + " -> " + request.to.to_string() + " via " + std::string{provider};
  auto it = providers_.find(provider);
  if (it == providers_.end())
    return Error{ErrorCode::Unsupported, "no transfer provider '" + std::string{provider} +
                                             "' is registered (route " + route + ")"};
  auto moved = it->second(request);
  if (!moved.ok()) return moved.error().with_context("transfer " + route);
  return moved;
}

}  // namespace tenact
