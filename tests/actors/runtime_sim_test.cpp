// The runtime over simulated GPUs (engines/sim through setup/): programs
// split across cpu, sim:0 and sim:1 with inputs placed on different
// devices, results against hand-derived values; a device out of memory
// fails that run with LimitExceeded naming it and the runtime keeps
// serving; a missing route fails preparation before anything runs; the
// same program and seed give the same virtual times in 20 runs while the
// host is loaded; every device's memory back to zero.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "tests/util/host_load.hpp"

#include "actors/runtime.hpp"
#include "core/program_json.hpp"
#include "setup/engine_setup.hpp"

using namespace tenact;

namespace {

std::shared_ptr<const SemanticProgram> program_of(const std::string& json) {
  auto p = load_program(json);
  REQUIRE(p.ok());
  return std::make_shared<const SemanticProgram>(std::move(*p));
}

// y = (x + x) * w, over f32[n]: on one engine or split by placement.
std::shared_ptr<const SemanticProgram> double_then_scale(int64_t n) {
  const std::string shape = "[" + std::to_string(n) + "]";
  return program_of(R"({"format": "tenact.program/1", "name": "double_then_scale",
    "inputs": [{"name": "x", "dtype": "f32", "shape": )" + shape + R"(},
               {"name": "w", "dtype": "f32", "shape": )" + shape + R"(}],
    "ops": [{"op": "add", "in": ["x", "x"], "out": "d"},
            {"op": "multiply", "in": ["d", "w"], "out": "y"}],
    "outputs": ["y"]})");
}

Tensor ramp(int64_t n, float scale, float offset = 0) {
  auto t = Tensor::zeros(DType::F32, {n}).value();
  for (int64_t i = 0; i < n; ++i) t.data_as<float>()[i] = scale * static_cast<float>(i) + offset;
  return t;
}

struct SimRuntime {
  std::unique_ptr<Runtime> owned = std::make_unique<Runtime>();
  Runtime& runtime = *owned;
  setup::RegisteredEngines engines;
  SimRuntime(const std::string& list, std::optional<sim::SimPlatform> platform = std::nullopt) {
    auto specs = setup::parse_engine_list(list);
    REQUIRE(specs.ok());
    setup::EngineSetupOptions options;
    options.cpu_threads = 2;
    options.platform = std::move(platform);
    auto made = setup::register_engines(runtime, *specs, options);
    REQUIRE(made.ok());
    engines = std::move(*made);
  }
  ~SimRuntime() {
    // Every device's memory is back once the runtime has shut down (it
    // waits for the work in flight and drops what its actors held).
    owned.reset();
    for (const auto& [id, sim] : engines.sims) CHECK(sim->memory_stats("device")->allocated_bytes == 0);
  }
  Tensor to_host(const Tensor& value) {
    if (value.is_host()) return value;
    auto copied = runtime.copy(value, Endpoint::unowned_host()).get();
    REQUIRE(copied.ok());
    REQUIRE(copied->is_host());
    return *copied;
  }
};

}  // namespace

TEST_CASE("a program runs on a simulated device and its result is read back along the link", "[sim][runtime]") {
  SimRuntime rt{"sim:0"};
  auto out = rt.runtime.run(double_then_scale(100), {ramp(100, 1), ramp(100, 0, 3)}).get();
  REQUIRE(out.ok());
  REQUIRE(out->size() == 1);
  CHECK((*out)[0].endpoint() == Endpoint{"sim:0", "device"});  // stays where it was produced
  Tensor y = rt.to_host((*out)[0]);
  for (int i = 0; i < 100; ++i) CHECK(y.data_as<float>()[i] == 6.0f * static_cast<float>(i));  // (i + i) * 3
  const sim::SimEngineStats s = rt.engines.sims.at("sim:0")->stats();
  CHECK(s.ops == 2);
  CHECK(s.bytes_in == 800);   // x and w uploaded
  CHECK(s.bytes_out == 400);  // y read back
  CHECK(s.busy_ns > 0);
}

TEST_CASE("a program split over cpu, sim:0 and sim:1 with inputs placed on different devices", "[sim][runtime]") {
  SimRuntime rt{"sim:0,sim:1,cpu"};
  // x on sim:0, w on sim:1: the add runs where x is, the product needs w
  // and d on one device, moved along a peer link.
  Tensor x = rt.runtime.copy(ramp(64, 1), Endpoint{"sim:0", "device"}).get().value();
  Tensor w = rt.runtime.copy(ramp(64, 0, 0.5f), Endpoint{"sim:1", "device"}).get().value();
  CHECK(x.endpoint() == Endpoint{"sim:0", "device"});
  CHECK(w.endpoint() == Endpoint{"sim:1", "device"});
  auto out = rt.runtime.run(double_then_scale(64), {x, w}).get();
  REQUIRE(out.ok());
  Tensor y = rt.to_host((*out)[0]);
  for (int i = 0; i < 64; ++i) CHECK(y.data_as<float>()[i] == static_cast<float>(i));  // (i + i) * 0.5
  const auto s0 = rt.engines.sims.at("sim:0")->stats(), s1 = rt.engines.sims.at("sim:1")->stats();
  CHECK(s0.ops + s1.ops == 2);
  CHECK(s0.bytes_out + s1.bytes_out >= 256);  // one operand crossed between the devices
  // A CPU-resident input joins through the host links.
  Tensor on_cpu = rt.runtime.copy(ramp(64, 2), Endpoint{"cpu", "host"}).get().value();
  auto mixed = rt.runtime.run(double_then_scale(64), {on_cpu, w}).get();
  REQUIRE(mixed.ok());
  Tensor m = rt.to_host((*mixed)[0]);
  for (int i = 0; i < 64; ++i) CHECK(m.data_as<float>()[i] == 2.0f * static_cast<float>(i));  // (2i + 2i) * 0.5
}

TEST_CASE("a device out of memory fails that run with LimitExceeded naming it, and the runtime keeps serving",
          "[sim][runtime][memory]") {
  auto platform = sim::default_platform(1).value();
  platform.devices[0].memory_bytes = 10000;
  SimRuntime rt{"sim:0", platform};
  // 2 x 4,000 bytes of inputs and a 4,000-byte intermediate do not fit in 10,000.
  auto refused = rt.runtime.run(double_then_scale(1000), {ramp(1000, 1), ramp(1000, 1)}).get();
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code() == ErrorCode::LimitExceeded);
  CHECK_THAT(refused.error().message(), Catch::Contains("sim:0/device"));
  auto served = rt.runtime.run(double_then_scale(100), {ramp(100, 1), ramp(100, 1)}).get();
  REQUIRE(served.ok());
  Tensor y = rt.to_host((*served)[0]);
  CHECK(y.data_as<float>()[10] == 20.0f * 10.0f);
}

TEST_CASE("a value on a device with no route to where it is needed fails preparation before anything runs",
          "[sim][runtime][routes]") {
  // Two devices without a peer link: w on sim:1 cannot reach sim:0's add.
  auto platform = sim::default_platform(2).value();
  platform.links.erase(std::remove_if(platform.links.begin(), platform.links.end(),
                                      [](const sim::SimLinkSpec& l) { return l.from != "host" && l.to != "host"; }),
                       platform.links.end());
  SimRuntime rt{"sim:0,sim:1", platform};
  Tensor x = rt.runtime.copy(ramp(16, 1), Endpoint{"sim:0", "device"}).get().value();
  Tensor w = rt.runtime.copy(ramp(16, 1), Endpoint{"sim:1", "device"}).get().value();
  const uint64_t before = rt.engines.sims.at("sim:0")->stats().ops + rt.engines.sims.at("sim:1")->stats().ops;
  auto r = rt.runtime.run(double_then_scale(16), {x, w}).get();
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() != ErrorCode::LimitExceeded);
  CHECK_THAT(r.error().message(), Catch::Contains("route") || Catch::Contains("reach"));
  CHECK(rt.engines.sims.at("sim:0")->stats().ops + rt.engines.sims.at("sim:1")->stats().ops == before);
}

TEST_CASE("the same program, platform and seed give the same virtual times in 20 runs while the host is loaded",
          "[sim][runtime][determinism]") {
  auto platform = sim::default_platform(2).value();
  platform.jitter = 0.2;
  platform.seed = 42;
  const auto virtual_times = [&] {
    SimRuntime rt{"sim:0,sim:1", platform};
    Tensor x = rt.runtime.copy(ramp(4096, 1), Endpoint{"sim:0", "device"}).get().value();
    Tensor w = rt.runtime.copy(ramp(4096, 1), Endpoint{"sim:1", "device"}).get().value();
    for (int k = 0; k < 3; ++k) REQUIRE(rt.runtime.run(double_then_scale(4096), {x, w}).get().ok());
    std::vector<uint64_t> clocks;
    for (const auto& [id, sim] : rt.engines.sims)
      for (uint64_t c : sim->stats().stream_clock_ns) clocks.push_back(c);
    clocks.push_back(rt.engines.world->now());
    return clocks;
  };
  const auto reference = virtual_times();
  CHECK(reference.back() > 0);
  {
    testing::HostLoad load{2};
    for (int i = 0; i < 20; ++i) CHECK(virtual_times() == reference);
  }
}

TEST_CASE("engine lists: cpu, cpu:N and sim:N, each once", "[sim][setup]") {
  auto ok = setup::parse_engine_list("cpu,sim:0,cpu:2,sim:13");
  REQUIRE(ok.ok());
  REQUIRE(ok->size() == 4);
  CHECK((*ok)[1] == setup::EngineSpec{setup::EngineSpec::Kind::Sim, "sim:0"});
  CHECK((*ok)[2] == setup::EngineSpec{setup::EngineSpec::Kind::Cpu, "cpu:2"});
  for (const char* bad : {"", "cpu,", "gpu:0", "sim:", "sim:01", "sim:x", "sim:65536", "cpu,cpu", " sim:0"}) {
    auto r = setup::parse_engine_list(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code() == ErrorCode::InvalidAttribute);
    CHECK_THAT(r.error().message(), Catch::Contains("engine list"));
  }
  Runtime runtime;
  auto listed = setup::parse_engine_list("sim:3").value();
  auto platform = sim::default_platform(2).value();
  setup::EngineSetupOptions options;
  options.platform = platform;
  auto missing = setup::register_engines(runtime, listed, options);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message(), Catch::Contains("has no device 'sim:3'"));
}
