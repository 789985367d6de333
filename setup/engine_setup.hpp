// Builds the engines a command line or a test names ("cpu", "cpu:N",
// "sim:N", "cuda:N") and registers them with a Runtime, in that preference order,
// with the transfer providers and routes that join them: what `tenact run
// --engines LIST [--platform FILE]` does. Above actors/ and the engines
// (it is the one place that knows both); nothing below it includes it.
//
// Thread-safety: call from a thread of your own (it waits for the runtime's
// registry), not from a runtime callback.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "actors/runtime.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "engines/sim/sim_engine.hpp"
#include "engines/sim/sim_platform.hpp"

namespace tenact::setup {

/// One entry of an engine list.
struct EngineSpec {
  enum class Kind : uint8_t { Cpu, Sim, Cuda };
  Kind kind = Kind::Cpu;
  /// "cpu", "cpu:1", "sim:0", "cuda:0".
  std::string id;
  friend bool operator==(const EngineSpec&, const EngineSpec&) = default;
};

/// Parses "cpu,sim:0,sim:1" (entries separated by commas, no spaces):
/// "cpu", "cpu:N", "sim:N" and "cuda:N" with N a decimal number below
/// 65,536 without leading zeros. Errors: InvalidAttribute naming the entry that is empty,
/// of an unknown kind, malformed or repeated.
Result<std::vector<EngineSpec>> parse_engine_list(std::string_view list);

struct EngineSetupOptions {
  /// Threads of each CPU engine (0: the machine's).
  size_t cpu_threads = 0;
  /// The simulated machine; none: default_platform(the highest sim index
  /// listed + 1).
  std::optional<sim::SimPlatform> platform;
  /// Replaces the platform's faults (engines/sim/sim_faults.hpp) when set.
  std::optional<sim::SimFaultSpec> faults;
};

/// What register_engines made (the runtime holds them too).
struct RegisteredEngines {
  /// In the order listed.
  std::vector<std::shared_ptr<Engine>> engines;
  std::map<std::string, std::shared_ptr<cpu::CpuEngine>, std::less<>> cpus;
  std::map<std::string, std::shared_ptr<sim::SimEngine>, std::less<>> sims;
  /// The platform's shared state (null without sim engines).
  std::shared_ptr<sim::SimWorld> world;
  /// The routes that join them (host_copy between CPU engines, sim_link for
  /// the simulated devices' links).
  std::vector<TransferRoute> routes;
};

/// The listed engines and the routes between them (what register_engines
/// registers), for callers that build a configuration themselves (`tenact
/// inspect`). Errors: as register_engines', but the runtime's.
Result<RegisteredEngines> make_engines(std::span<const EngineSpec> engines, const EngineSetupOptions& options = {});

/// Registers the listed engines with `runtime` (preference 0, 1, ... in
/// list order), then the routes between them: host_copy between every two
/// CPU engines' host memories, both ways; with sim engines, the platform's
/// sim_link provider and its routes between the host (each listed CPU
/// engine's host memory, and unowned host memory) and the listed devices,
/// and between listed devices, wherever the platform has a link. Errors:
/// InvalidAttribute for an empty list or a sim id the platform lacks
/// (naming both); for a cuda:N entry, cuda_engine_unavailable's
/// (cuda_engine_setup.hpp: the CUDA engine runs no programs yet); the
/// engines' and the runtime's errors.
Result<RegisteredEngines> register_engines(Runtime& runtime, std::span<const EngineSpec> engines,
                                           const EngineSetupOptions& options = {});

}  // namespace tenact::setup
