#include "engines/sim/sim_links.hpp"

#include <optional>

#include "engines/sim/sim_engine.hpp"
#include "engines/sim/sim_memory.hpp"

namespace tenact::sim {

namespace {

// The platform's name of an endpoint: a device id for a device of `world`
// at its device memory, "host" for other host memory, nothing otherwise.
std::optional<std::string> platform_end(const SimWorld& world, const Endpoint& at) {
  if (world.device_index(at.engine) >= 0) {
    if (at.storage_class == SimEngine::kDeviceStorage) return at.engine;
    return std::nullopt;
  }
  if (at.storage_class == "host" || at.storage_class == "pinned") return std::string{"host"};
  return std::nullopt;
}

Result<Tensor> copy_along_link(SimWorld& world, const TransferRequest& request) {
  auto from = platform_end(world, request.from);
  auto to = platform_end(world, request.to);
  if (!from || !to)
    return Error{ErrorCode::Unsupported, "sim_link moves values between the host and the devices of platform '" +
                                             world.platform().name + "' only"};
  const Tensor& value = request.value;
  const bool source_is_device = *from != "host";
  if (!value.is_host() && !(source_is_device && value.endpoint() == request.from))
    return Error{ErrorCode::Unsupported, "sim_link cannot read " + value.endpoint().to_string() + " memory"};
  const uint64_t ready = world.ready_at(value);
  TENACT_ASSIGN_OR_RETURN(Tensor source, host_view(value));
  TENACT_ASSIGN_OR_RETURN(Tensor copy,
                          request.destination.allocate(request.to.storage_class, value.dtype(), value.shape()));
  const bool destination_is_device = *to != "host";
  if (!copy.is_contiguous() || (!copy.is_host() && !(destination_is_device && copy.endpoint() == request.to)))
    return Error{ErrorCode::Unsupported, "sim_link cannot write " + copy.endpoint().to_string() + " memory"};
  TENACT_TRY(source.copy_to_dense(copy.data()));
  const uint64_t bytes = static_cast<uint64_t>(value.element_count()) * size_of(value.dtype());
  TENACT_ASSIGN_OR_RETURN(uint64_t arrived, world.charge_link(*from, *to, bytes, ready));
  world.set_ready(copy, arrived);
  if (request.virtual_span) request.virtual_span->cover(ready, arrived);
  return copy;
}

}  // namespace

TransferProvider sim_link_provider(std::shared_ptr<SimWorld> world) {
  TransferProvider provider;
  provider.copy = [world](const TransferRequest& request) { return copy_along_link(*world, request); };
  // Copies are answered in virtual-time order among the platform's
  // completions (their end: when the copy is ready; a failed copy at 0).
  provider.order_completions = [world](LaunchCompletion done) -> LaunchCompletion {
    const SimSequencer::Ticket ticket = world->sequencer().submit(world->sequencer().copy_lane());
    return [world, ticket, done = std::move(done)](Result<std::vector<Tensor>> r) mutable {
      const uint64_t time = r.ok() && !r->empty() ? world->ready_at(r->front()) : 0;
      world->sequencer().finish(ticket, time, [done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
    };
  };
  provider.can_copy = [world](const Endpoint& from, const Endpoint& to) {
    auto a = platform_end(*world, from);
    auto b = platform_end(*world, to);
    return a && b && !(*a == "host" && *b == "host") && world->platform().link(*a, *b) != nullptr;
  };
  return provider;
}

std::vector<TransferRoute> sim_routes(const SimWorld& world, std::span<const Endpoint> host_endpoints,
                                      const std::string& provider) {
  std::vector<TransferRoute> routes;
  const auto device_endpoint = [](const std::string& id) { return Endpoint{id, SimEngine::kDeviceStorage}; };
  for (const SimLinkSpec& link : world.platform().links) {
    const bool from_host = link.from == "host", to_host = link.to == "host";
    if (from_host && to_host) continue;
    const RouteCost cost{link.latency_ns, link.bandwidth};
    if (from_host) {
      for (const Endpoint& host : host_endpoints) routes.push_back({host, device_endpoint(link.to), provider, cost});
    } else if (to_host) {
      for (const Endpoint& host : host_endpoints) routes.push_back({device_endpoint(link.from), host, provider, cost});
    } else {
      routes.push_back({device_endpoint(link.from), device_endpoint(link.to), provider, cost});
    }
  }
  return routes;
}

}  // namespace tenact::sim
