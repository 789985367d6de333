#include "setup/engine_setup.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include "engines/sim/sim_links.hpp"
#include "setup/cuda_engine_setup.hpp"

namespace tenact::setup {

namespace {

// N of "PREFIX:N": decimal, below 65,536, no leading zeros.
std::optional<uint32_t> index_after(std::string_view entry, std::string_view prefix) {
  if (entry.size() <= prefix.size() || entry.substr(0, prefix.size()) != prefix) return std::nullopt;
  const std::string_view digits = entry.substr(prefix.size());
  if (digits.size() > 5 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  uint32_t n = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc{} || end != digits.data() + digits.size() || n >= 65536) return std::nullopt;
  return n;
}

Error bad_entry(std::string_view list, std::string_view entry, std::string_view why) {
  return Error{ErrorCode::InvalidAttribute, "engine list '" + std::string{list} + "': entry '" + std::string{entry} +
                                                "' " + std::string{why}};
}

// A copy between two CPU engines' host memories: a memcpy on one core.
constexpr RouteCost kHostCopyCost{1000, 10e9};

}  // namespace

Result<std::vector<EngineSpec>> parse_engine_list(std::string_view list) {
  std::vector<EngineSpec> out;
  std::set<std::string, std::less<>> seen;
  size_t begin = 0;
  while (true) {
    const size_t comma = list.find(',', begin);
    const std::string_view entry = list.substr(begin, comma == std::string_view::npos ? list.npos : comma - begin);
    if (entry.empty()) return bad_entry(list, entry, "is empty");
    EngineSpec spec;
    if (entry == "cpu" || index_after(entry, "cpu:")) {
      spec.kind = EngineSpec::Kind::Cpu;
    } else if (index_after(entry, "sim:")) {
      spec.kind = EngineSpec::Kind::Sim;
    } else if (index_after(entry, "cuda:")) {
      spec.kind = EngineSpec::Kind::Cuda;
    } else {
      return bad_entry(list, entry, "is not cpu, cpu:N, sim:N or cuda:N (N a number below 65536, no leading zeros)");
    }
    spec.id = std::string{entry};
    if (!seen.insert(spec.id).second) return bad_entry(list, entry, "is listed twice");
    out.push_back(std::move(spec));
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return out;
}

Result<RegisteredEngines> make_engines(std::span<const EngineSpec> engines, const EngineSetupOptions& options) {
  if (engines.empty()) return Error{ErrorCode::InvalidAttribute, "no engines to register"};
  for (const EngineSpec& e : engines)
    if (e.kind == EngineSpec::Kind::Cuda) return cuda_engine_unavailable(e.id, *index_after(e.id, "cuda:"));
  RegisteredEngines made;
  std::optional<uint32_t> highest_sim;
  for (const EngineSpec& e : engines)
    if (e.kind == EngineSpec::Kind::Sim) highest_sim = std::max(highest_sim.value_or(0), *index_after(e.id, "sim:"));
  if (highest_sim) {
    sim::SimPlatform platform;
    if (options.platform) {
      platform = *options.platform;
    } else {
      TENACT_ASSIGN_OR_RETURN(platform, sim::default_platform(*highest_sim + 1));
    }
    if (options.faults) platform.faults = *options.faults;
    TENACT_ASSIGN_OR_RETURN(made.world, sim::SimWorld::create(std::move(platform)));
  }
  for (const EngineSpec& e : engines) {
    if (e.kind == EngineSpec::Kind::Cpu) {
      cpu::CpuEngineOptions o;
      o.id = e.id;
      o.threads = options.cpu_threads;
      TENACT_ASSIGN_OR_RETURN(auto created, cpu::CpuEngine::create(std::move(o)));
      made.cpus[e.id] = created;
      made.engines.push_back(std::move(created));
    } else if (e.kind == EngineSpec::Kind::Sim) {
      if (made.world->device_index(e.id) < 0)
        return Error{ErrorCode::InvalidAttribute,
                     "platform '" + made.world->platform().name + "' has no device '" + e.id + "'"};
      TENACT_ASSIGN_OR_RETURN(auto created, sim::SimEngine::create({made.world, e.id}));
      made.sims[e.id] = created;
      made.engines.push_back(std::move(created));
    }
  }
  std::vector<Endpoint> hosts;
  for (const auto& [id, engine] : made.cpus) hosts.push_back(Endpoint{id, cpu::CpuEngine::kHostStorage});
  for (const Endpoint& from : hosts)
    for (const Endpoint& to : hosts)
      if (from != to) made.routes.push_back(TransferRoute{from, to, "host_copy", kHostCopyCost});
  if (!made.world) return made;
  hosts.push_back(Endpoint::unowned_host());
  const auto listed = [&](const Endpoint& at) {
    return at.engine.empty() || made.cpus.count(at.engine) != 0 || made.sims.count(at.engine) != 0;
  };
  for (TransferRoute& route : sim::sim_routes(*made.world, hosts))
    if (listed(route.source) && listed(route.destination)) made.routes.push_back(std::move(route));
  return made;
}

Result<RegisteredEngines> register_engines(Runtime& runtime, std::span<const EngineSpec> engines,
                                           const EngineSetupOptions& options) {
  TENACT_ASSIGN_OR_RETURN(RegisteredEngines made, make_engines(engines, options));
  for (size_t i = 0; i < made.engines.size(); ++i)
    TENACT_TRY(runtime.register_engine(made.engines[i], static_cast<uint32_t>(i)));
  if (made.world)
    TENACT_TRY(runtime.add_transfer_provider(sim::kSimLinkProvider, sim::sim_link_provider(made.world)));
  for (const TransferRoute& route : made.routes) TENACT_TRY(runtime.add_route(route));
  return made;
}

}  // namespace tenact::setup
