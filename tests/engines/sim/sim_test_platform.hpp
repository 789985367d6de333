// Simulated platforms for the sim engine's tests: round figures, and a
// platform's devices created together.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engines/sim/sim_engine.hpp"

namespace tenact::sim {

// Round figures, so that costs can be derived by hand: 1 op per ns, 1 byte
// per ns, 1 us per launch; links 1 byte per ns after 500 ns.
inline SimPlatform round_platform(uint32_t devices, uint64_t memory = uint64_t{1} << 30, double jitter = 0,
                           uint64_t seed = 0) {
  SimPlatform p;
  p.name = "round";
  p.seed = seed;
  p.jitter = jitter;
  for (uint32_t i = 0; i < devices; ++i) {
    SimDeviceSpec d;
    d.id = "sim:" + std::to_string(i);
    d.memory_bytes = memory;
    d.streams = 2;
    d.rates.f32 = 1e9;
    d.memory_bandwidth = 1e9;
    d.launch_latency_ns = 1000;
    p.devices.push_back(d);
    p.links.push_back({"host", d.id, 1e9, 500});
    p.links.push_back({d.id, "host", 1e9, 500});
  }
  for (uint32_t i = 0; i < devices; ++i)
    for (uint32_t j = 0; j < devices; ++j)
      if (i != j) p.links.push_back({"sim:" + std::to_string(i), "sim:" + std::to_string(j), 2e9, 100});
  return p;
}

struct Sim {
  std::shared_ptr<SimWorld> world;
  std::vector<std::shared_ptr<SimEngine>> devices;
  explicit Sim(SimPlatform platform) : world(SimWorld::create(std::move(platform)).value()) {
    for (const SimDeviceSpec& d : world->platform().devices)
      devices.push_back(SimEngine::create({world, d.id}).value());
  }
};

}  // namespace tenact::sim
