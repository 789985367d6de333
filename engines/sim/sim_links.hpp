// The simulated platform's links as a transfer provider ("sim_link") and
// the routes they give: the host's memory <-> each device's memory, and
// device <-> device (peer), wherever the platform has a link. A copy's
// destination is ready, in virtual time, the link's latency plus bytes /
// bandwidth after its source (sim_world.hpp), and counts as bytes out of
// its source device and into its destination device. Copies are answered
// in virtual-time order among the platform's completions (sim_sequencer.hpp)
// and report when they ran in virtual time (TransferRequest::virtual_span).
//
// Only this provider and the sim engines read the devices' memory (host
// pages behind device views, sim_memory.hpp). Register the provider once
// per runtime (Runtime::add_transfer_provider), then the routes.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engines/sim/sim_world.hpp"
#include "transfer/providers.hpp"
#include "transfer/transfer_route.hpp"

namespace tenact::sim {

inline constexpr const char* kSimLinkProvider = "sim_link";

/// The provider of `world`'s links. can_copy: both ends are the host's
/// memory (any host-addressable endpoint: an engine's "host" or "pinned",
/// or unowned host memory) or a device of `world` ("sim:N/device"), not
/// both the host, with a link between them. Copy errors: Unsupported for an
/// end it cannot read or write; the destination's allocation errors
/// (LimitExceeded naming a full device).
TransferProvider sim_link_provider(std::shared_ptr<SimWorld> world);

/// Routes for every link of the platform: between each of `host_endpoints`
/// (host-addressable endpoints, e.g. {"cpu", "host"}) and each device
/// linked with the host, and between linked devices; each named
/// `provider`.
std::vector<TransferRoute> sim_routes(const SimWorld& world, std::span<const Endpoint> host_endpoints,
                                      const std::string& provider = kSimLinkProvider);

}  // namespace tenact::sim
