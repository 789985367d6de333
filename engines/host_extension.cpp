#include "engines/host_extension.hpp"

#include <algorithm>

namespace tenact {

PrepareAnswer answer_host_extension(const EngineIdentity& engine, const EngineCapabilities& capabilities,
                                    const OpPrepareRequest& request) {
  const auto* attrs = std::get_if<ExtensionAttrs>(&request.attrs);
  if (request.kind != OpKind::Extension || attrs == nullptr)
    return Error{ErrorCode::Internal, "answer_host_extension called for a core op"};
  const std::string who = "engine '" + engine.id + "', extension family '" + attrs->family + "'";
  const Endpoint& at = request.binding.endpoint;
  const auto& classes = capabilities.storage_classes;
  if (at.engine != engine.id || std::find(classes.begin(), classes.end(), at.storage_class) == classes.end())
    return Unsupported{"engine '" + engine.id + "' cannot run at " + at.to_string()};
  if (!capabilities.host_extension_kernels || !request.extension || !request.extension->prepare_host)
    return Unsupported{who + ": no host kernel"};
  if (request.extension->name != attrs->family)
    return Error{ErrorCode::Internal, who + ": the request carries the definition of '" +
                                          request.extension->name + "'"};
  const std::string_view config = request.planning_config ? std::string_view{*request.planning_config}
                                                          : std::string_view{};
  const ExtensionPrepareCall call{*attrs, request.operands, request.results, engine.id, config};
  Result<HostExtensionKernel> kernel = request.extension->prepare_host(call);
  if (!kernel.ok()) {
    if (kernel.error().code() == ErrorCode::Unsupported) return Unsupported{who + ": " + kernel.error().message()};
    return kernel.error().with_context(who);
  }
  if (!*kernel) return Error{ErrorCode::ProviderContract, who + ": prepare_host returned an empty kernel"};
  auto plan = PreparedOp::answering(request);
  plan->payload = std::make_shared<const HostExtensionPlan>(HostExtensionPlan{request.extension, std::move(*kernel)});
  return std::shared_ptr<const PreparedOp>(std::move(plan));
}

const HostExtensionPlan* host_extension_plan(const PreparedOp& op) {
  if (op.kind != OpKind::Extension || !op.payload) return nullptr;
  return static_cast<const HostExtensionPlan*>(op.payload.get());
}

}  // namespace tenact
