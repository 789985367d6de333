// The runtime over simulated GPUs (engines/sim through setup/): programs
// split across cpu, sim:0 and sim:1 with inputs placed on different
// devices, results against hand-derived values; a device out of memory
// fails that run with LimitExceeded naming it and the runtime keeps
// serving; a missing route fails preparation before anything runs; the
// same program and seed give the same virtual times in 20 runs while the
// host is loaded; a run's virtual makespan in its stats; the actor-level
// guarantees (in-flight dedupe under many threads, outcomes, an
// engine actor killed mid-run, shutdown with 1,000 requests in flight)
// with simulated devices; every device's memory back to zero.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "tests/actors/affine_programs.hpp"
#include "tests/util/host_load.hpp"

#include "actors/runtime.hpp"
#include "actors/runtime_impl.hpp"
#include "core/program_json.hpp"
#include "setup/engine_setup.hpp"

using namespace tenact;
using namespace std::chrono_literals;
using tenact::testing::affine;
using tenact::testing::iota8;

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
  std::unique_ptr<Runtime> owned;
  Runtime& runtime;
  setup::RegisteredEngines engines;
  /// Off when the test itself still holds device values at the end.
  bool check_memory_at_exit = true;
  SimRuntime(const std::string& list, std::optional<sim::SimPlatform> platform = std::nullopt,
             RuntimeOptions runtime_options = {})
      : owned(std::make_unique<Runtime>(std::move(runtime_options))), runtime(*owned) {
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
    if (check_memory_at_exit)
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

// Runs affine(k) on x, reads the result back to host memory and counts a
// failure or each element that is not x * (k + 1) + k.
void run_affine_and_check(SimRuntime& rt, const std::shared_ptr<const SemanticProgram>& program, int k,
                          const Tensor& x, std::atomic<int>& wrong, std::atomic<int>& failed) {
  auto out = rt.runtime.run(program, {x}).get();
  if (!out.ok()) {
    ++failed;
    return;
  }
  auto y = rt.runtime.copy((*out)[0], Endpoint::unowned_host()).get();
  if (!y.ok()) {
    ++failed;
    return;
  }
  for (int i = 0; i < 8; ++i)
    if (y->data_as<float>()[i] != static_cast<float>(i * (k + 1) + k)) ++wrong;
}

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

TEST_CASE("engine lists: cpu, cpu:N, sim:N and cuda:N, each once", "[sim][setup]") {
  auto ok = setup::parse_engine_list("cpu,sim:0,cpu:2,sim:13,cuda:1");
  REQUIRE(ok.ok());
  REQUIRE(ok->size() == 5);
  CHECK((*ok)[1] == setup::EngineSpec{setup::EngineSpec::Kind::Sim, "sim:0"});
  CHECK((*ok)[2] == setup::EngineSpec{setup::EngineSpec::Kind::Cpu, "cpu:2"});
  CHECK((*ok)[4] == setup::EngineSpec{setup::EngineSpec::Kind::Cuda, "cuda:1"});
  for (const char* bad : {"", "cpu,", "gpu:0", "sim:", "sim:01", "sim:x", "sim:65536", "cpu,cpu", " sim:0", "cuda",
                          "cuda:", "cuda:00", "cuda:-1", "cuda:0,cuda:0"}) {
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

TEST_CASE("a listed cuda:N engine is refused before any engine is made, naming it and why", "[setup]") {
  // The CUDA engine runs no programs yet: whatever the build and machine,
  // the list is refused with the reason (no CUDA engine in this build, no
  // CUDA device, an ordinal past the devices, or the engine not there yet).
  auto made = setup::make_engines(setup::parse_engine_list("cpu,cuda:7").value());
  REQUIRE_FALSE(made.ok());
  CHECK((made.error().code() == ErrorCode::Unsupported || made.error().code() == ErrorCode::InvalidAttribute));
  CHECK_THAT(made.error().message(), Catch::StartsWith("engine 'cuda:7'"));
  const std::string& why = made.error().message();
  const bool named_reason = why.find("this build has no CUDA engine") != std::string::npos ||
                            why.find("no CUDA device (") != std::string::npos ||
                            why.find("this machine has ") != std::string::npos;
  CHECK(named_reason);
  Runtime runtime;
  auto registered = setup::register_engines(runtime, setup::parse_engine_list("cpu,cuda:0").value());
  REQUIRE_FALSE(registered.ok());
  CHECK_THAT(registered.error().message(), Catch::StartsWith("engine 'cuda:0'"));
}

namespace {

// Round figures, so that virtual times can be derived by hand: one stream,
// 1 op and 1 byte per ns, 1 us per launch; host links 1 byte per ns after
// 500 ns.
sim::SimPlatform round_platform() {
  sim::SimPlatform p;
  p.name = "round";
  sim::SimDeviceSpec d;
  d.id = "sim:0";
  d.memory_bytes = uint64_t{1} << 30;
  d.streams = 1;
  d.rates.f32 = 1e9;
  d.memory_bandwidth = 1e9;
  d.launch_latency_ns = 1000;
  p.devices.push_back(d);
  p.links.push_back({"host", "sim:0", 1e9, 500});
  p.links.push_back({"sim:0", "host", 1e9, 500});
  return p;
}

std::shared_ptr<const SemanticProgram> add_of(int64_t n) {
  const std::string shape = "[" + std::to_string(n) + "]";
  return program_of(R"({"format": "tenact.program/1", "name": "add",
    "inputs": [{"name": "x", "dtype": "f32", "shape": )" + shape + R"(},
               {"name": "w", "dtype": "f32", "shape": )" + shape + R"(}],
    "ops": [{"op": "add", "in": ["x", "w"], "out": "y"}], "outputs": ["y"]})");
}

}  // namespace

TEST_CASE("a run's virtual makespan is in its execution stats", "[sim][runtime][stats]") {
  for (bool direct : {true, false}) {
    INFO("direct single batch: " << direct);
    RuntimeOptions o;
    o.direct_single_batch = direct;
    SimRuntime rt{"sim:0", round_platform(), o};
    // x and w (4,000 bytes each) are uploaded from 0 and arrive at 500 +
    // 4,000; the add reads 2,000 and writes 1,000 elements (12,000 bytes):
    // 1,000 + 12,000 ns. The run spans [0, 17,500].
    ExecutionStats first;
    auto out = rt.runtime.run(add_of(1000), {ramp(1000, 1), ramp(1000, 2)}, {}, &first).get();
    REQUIRE(out.ok());
    CHECK(first.virtual_time);
    CHECK(first.virtual_begin_ns == 0);
    CHECK(first.virtual_end_ns == 17500);
    CHECK(first.virtual_makespan_ns() == 17500);
    // The next run's uploads overlap the first run (host memory is there
    // from 0); its add waits for the stream: [0, 17,500 + 13,000].
    ExecutionStats second;
    REQUIRE(rt.runtime.run(add_of(1000), {ramp(1000, 1), ramp(1000, 2)}, {}, &second).get().ok());
    CHECK(second.virtual_begin_ns == 0);
    CHECK(second.virtual_end_ns == 30500);
    CHECK(second.virtual_makespan_ns() == 30500);
    Tensor y = rt.to_host((*out)[0]);
    CHECK(y.data_as<float>()[999] == 3.0f * 999.0f);
  }
  // A run on the CPU engine has no virtual time.
  SimRuntime cpu{"cpu"};
  ExecutionStats stats;
  REQUIRE(cpu.runtime.run(add_of(8), {ramp(8, 1), ramp(8, 1)}, {}, &stats).get().ok());
  CHECK_FALSE(stats.virtual_time);
  CHECK(stats.virtual_makespan_ns() == 0);
}

TEST_CASE("with simulated devices, 16 threads x 60 requests over 6 programs produce each program once",
          "[sim][runtime][concurrency]") {
  // Job balancing would prepare a program once per device order it picks.
  RuntimeOptions o;
  o.balance_jobs = false;
  SimRuntime rt{"sim:0,sim:1", std::nullopt, o};
  std::vector<std::shared_ptr<const SemanticProgram>> programs;
  for (int k = 0; k < 6; ++k) programs.push_back(affine(k));
  const Tensor x = iota8();
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 16; ++t)
    clients.emplace_back([&, t] {
      for (int r = 0; r < 60; ++r) run_affine_and_check(rt, programs[(t + r) % 6], (t + r) % 6, x, wrong, failed);
    });
  for (auto& c : clients) c.join();
  CHECK(failed == 0);
  CHECK(wrong == 0);
  const CacheStats stats = rt.runtime.cache_stats();
  CHECK(stats.productions == 6);
  CHECK(stats.misses == 6);
  CHECK(stats.hits + stats.misses + stats.in_flight_joins == 16u * 60u);
}

TEST_CASE("with simulated devices an op goes to a device that has it, and fails to prepare where none has it",
          "[sim][runtime][outcomes]") {
  // sim:0 lacks dot_general; sim:1 has it.
  auto platform = sim::default_platform(2).value();
  platform.devices[0].lacks = {OpKind::DotGeneral};
  const auto dot = program_of(R"({"format": "tenact.program/1", "name": "dot",
    "inputs": [{"name": "a", "dtype": "f32", "shape": [2, 3]}, {"name": "b", "dtype": "f32", "shape": [3, 2]}],
    "ops": [{"op": "dot_general", "in": ["a", "b"], "out": "c",
             "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]}], "outputs": ["c"]})");
  Tensor a = Tensor::zeros(DType::F32, {2, 3}).value(), b = Tensor::zeros(DType::F32, {3, 2}).value();
  for (int i = 0; i < 6; ++i) a.data_as<float>()[i] = b.data_as<float>()[i] = static_cast<float>(i);
  {
    SimRuntime rt{"sim:0,sim:1", platform};
    auto out = rt.runtime.run(dot, {a, b}).get();
    if (!out.ok()) FAIL(out.error().to_string());
    CHECK((*out)[0].endpoint() == Endpoint{"sim:1", "device"});
    // [[0 1 2] [3 4 5]] x [[0 1] [2 3] [4 5]] = [[10 13] [28 40]]
    Tensor c = rt.to_host((*out)[0]);
    CHECK(std::vector<float>(c.data_as<float>(), c.data_as<float>() + 4) == std::vector<float>{10, 13, 28, 40});
  }
  // With sim:0 alone nothing can run it: preparation says so, the same
  // every time, and nothing runs.
  SimRuntime rt{"sim:0", platform};
  auto first = rt.runtime.run(dot, {a, b}).get();
  REQUIRE_FALSE(first.ok());
  INFO(first.error().to_string());
  CHECK(first.error().code() == ErrorCode::NoEligibleEngine);
  CHECK_THAT(first.error().message(), Catch::EndsWith(": none runs op #0 (dot_general -> 'c')"));
  auto second = rt.runtime.run(dot, {a, b}).get();
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().code() == first.error().code());
  CHECK(second.error().message() == first.error().message());
  CHECK(rt.engines.sims.at("sim:0")->stats().ops == 0);
  // Ops it has still run there.
  auto served = rt.runtime.run(add_of(8), {ramp(8, 1), ramp(8, 1)}).get();
  REQUIRE(served.ok());
  CHECK(rt.to_host((*served)[0]).data_as<float>()[7] == 14.0f);
}

TEST_CASE("a simulated device's engine actor killed mid-run fails that run within a second", "[sim][runtime]") {
  // A product of two f32[2000, 2000] takes the host well over 100 ms.
  const auto matmul = program_of(R"({"format": "tenact.program/1", "name": "matmul",
    "inputs": [{"name": "a", "dtype": "f32", "shape": [2000, 2000]},
               {"name": "b", "dtype": "f32", "shape": [2000, 2000]}],
    "ops": [{"op": "dot_general", "in": ["a", "b"], "out": "c",
             "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]}],
    "outputs": ["c"]})");
  const Tensor a = ramp(2000 * 2000, 1e-6f);
  Tensor square_a = Tensor::zeros(DType::F32, {2000, 2000}).value();
  std::copy_n(a.data_as<float>(), 2000 * 2000, square_a.data_as<float>());
  for (bool direct : {true, false}) {
    INFO("direct single batch: " << direct);
    RuntimeOptions o;
    o.direct_single_batch = direct;
    SimRuntime rt{"sim:0,sim:1", std::nullopt, o};
    PrepareOptions on_sim0;
    on_sim0.placement.engines = {"sim:0"};
    auto running = std::async(std::launch::async, [&] {
      return rt.runtime.run(matmul, {square_a, square_a}, on_sim0).get();
    });
    std::this_thread::sleep_for(50ms);
    caf::anon_send_exit(rt.runtime.impl().engine_actor("sim:0"), caf::exit_reason::kill);
    const auto killed_at = std::chrono::steady_clock::now();
    REQUIRE(running.wait_for(1s) == std::future_status::ready);
    CHECK(std::chrono::steady_clock::now() - killed_at < 1s);
    auto r = running.get();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code() == ErrorCode::EngineDown);
    CHECK_THAT(r.error().message(), Catch::Contains("engine 'sim:0'"));
    // The other device still serves.
    PrepareOptions on_sim1;
    on_sim1.placement.engines = {"sim:1"};
    auto later = rt.runtime.run(affine(3), {iota8()}, on_sim1).get();
    REQUIRE(later.ok());
    CHECK(rt.to_host((*later)[0]).data_as<float>()[7] == 7.0f * 4 + 3);
  }
}

TEST_CASE("destroying a runtime over simulated devices with 1,000 requests in flight fails them and does not hang",
          "[sim][runtime]") {
  std::vector<std::future<Result<std::vector<Tensor>>>> futures;
  std::map<std::string, std::shared_ptr<sim::SimEngine>, std::less<>> devices;
  {
    SimRuntime rt{"sim:0,sim:1"};
    rt.check_memory_at_exit = false;  // the answered runs' outputs are still held below
    devices = rt.engines.sims;
    std::vector<std::shared_ptr<const SemanticProgram>> programs;
    for (int k = 0; k < 10; ++k) programs.push_back(affine(k));
    for (int i = 0; i < 1000; ++i) futures.push_back(rt.runtime.run(programs[i % 10], {iota8()}));
  }
  REQUIRE(futures.size() == 1000);
  testing::check_answered_or_shut_down(futures);
  futures.clear();  // the outputs go: every device's memory is back to zero
  for (const auto& [id, device] : devices) CHECK(device->memory_stats("device")->allocated_bytes == 0);
}

/// affine(k) over f32[n]: y = x * (k + 1) + k.
std::shared_ptr<const SemanticProgram> wide_affine(int k, int64_t n) {
  const std::string shape = "[" + std::to_string(n) + "]";
  auto p = load_program(R"({"format": "tenact.program/1", "name": "wide_affine",
    "inputs": [{"name": "x", "dtype": "f32", "shape": )" + shape + R"(}],
    "ops": [{"op": "constant", "out": "a", "dtype": "f32", "shape": )" + shape + R"(, "value": )" + std::to_string(k + 1) + R"(},
            {"op": "constant", "out": "b", "dtype": "f32", "shape": )" + shape + R"(, "value": )" + std::to_string(k) + R"(},
            {"op": "multiply", "in": ["x", "a"], "out": "m"},
            {"op": "add", "in": ["m", "b"], "out": "y"}],
    "outputs": ["y"]})");
  REQUIRE(p.ok());
  return std::make_shared<const SemanticProgram>(std::move(*p));
}

TEST_CASE("jobs from 8 threads spread over 4 simulated devices, at most 2 runs in flight on each",
          "[sim][runtime][jobs]") {
  RuntimeOptions o;
  o.max_runs_in_flight_per_engine = 2;
  SimRuntime rt{"sim:0,sim:1,sim:2,sim:3", std::nullopt, o};
  // Runs of 256K elements: long next to a client's own work between runs,
  // so that runs overlap and a busy device sends the next job elsewhere
  // (on f32[8] a run is over before the next client arrives, however
  // fast the runtime gets, and the spread measures the machine's timing).
  constexpr int64_t kN = 256 * 1024;
  const auto program = wide_affine(3, kN);
  Tensor x = Tensor::zeros(DType::F32, {kN}).value();
  for (int64_t i = 0; i < kN; ++i) x.data_as<float>()[i] = static_cast<float>(i % 1024);
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 8; ++t)
    clients.emplace_back([&] {
      for (int r = 0; r < 40; ++r) run_affine_and_check(rt, program, 3, x, wrong, failed);
    });
  for (auto& c : clients) c.join();
  CHECK(failed == 0);
  CHECK(wrong == 0);
  const auto queues = rt.runtime.queue_stats();
  uint64_t runs = 0;
  for (const char* id : {"sim:0", "sim:1", "sim:2", "sim:3"}) {
    INFO(id);
    REQUIRE(queues.count(id) == 1);
    const EngineQueueStats& q = queues.at(id);
    CHECK(q.max_in_flight <= 2);
    CHECK(q.in_flight == 0);
    // Seen: 37 to 116 runs a device in 6 trials; idle ones would have 0.
    CHECK(q.runs >= 20);
    runs += q.runs;
  }
  // Every run uses one device (the program has no reason to split); with 8
  // clients and room for 2 on a device, the first device alone cannot hold
  // them: each job goes to the least loaded one.
  CHECK(runs == 8u * 40u);
}

TEST_CASE("runs that fail transiently on a faulty device are tried again, the same way for the same seed",
          "[sim][runtime][faults]") {
  auto total_retries = [](const std::string& spec, uint32_t retries, int& failed) {
    RuntimeOptions o;
    o.transient_retries = retries;
    auto platform = sim::default_platform(1).value();
    platform.faults = sim::parse_fault_spec(spec).value();
    SimRuntime rt{"sim:0", platform, o};
    uint64_t total = 0;
    failed = 0;
    for (int i = 0; i < 40; ++i) {
      ExecutionStats stats;
      auto out = rt.runtime.run(affine(2), {iota8()}, {}, &stats).get();
      total += stats.retries;
      if (!out.ok()) {
        CHECK(out.error().code() == ErrorCode::TransientFailure);
        ++failed;
        continue;
      }
      const Tensor y = rt.to_host((*out)[0]);
      for (int k = 0; k < 8; ++k) CHECK(y.data_as<float>()[k] == static_cast<float>(3 * k + 2));
    }
    return total;
  };
  int failed = 0;
  // 20% of tries fail; 6 retries leave a run failing with 0.2^7 = 1.3e-5.
  const uint64_t first = total_retries("seed=11,transient=0.2", 6, failed);
  CHECK(failed == 0);
  CHECK(first > 0);
  int failed_again = 0;
  CHECK(total_retries("seed=11,transient=0.2", 6, failed_again) == first);
  CHECK(failed_again == 0);
  // Without retries the same faults fail the runs they hit.
  int failed_without = 0;
  CHECK(total_retries("seed=11,transient=0.2", 0, failed_without) == 0);
  CHECK(failed_without > 0);
}

TEST_CASE("a device that dies leaves the configuration, and retryable runs are placed again on the devices left",
          "[sim][runtime][faults]") {
  auto platform = sim::default_platform(2).value();
  platform.faults = sim::parse_fault_spec("die=sim:0@6ops").value();
  RuntimeOptions o;
  o.balance_jobs = false;  // every run starts on sim:0 while it lives
  SimRuntime rt{"sim:0,sim:1", platform, o};
  PrepareOptions retryable;
  retryable.retryable = true;
  const uint64_t epoch = rt.runtime.config()->epoch();
  uint64_t replaced = 0;
  for (int i = 0; i < 10; ++i) {
    ExecutionStats stats;
    auto out = rt.runtime.run(affine(1), {iota8()}, retryable, &stats).get();
    REQUIRE(out.ok());
    replaced += stats.replacements;
    const Tensor y = rt.to_host((*out)[0]);
    for (int k = 0; k < 8; ++k) CHECK(y.data_as<float>()[k] == static_cast<float>(2 * k + 1));
    CHECK(y.endpoint().engine.empty());
  }
  // affine runs its region as one op: sim:0 ran 6, the 7th run found it
  // dead, was placed again on sim:1, and so were the runs after it.
  CHECK(replaced == 1);
  CHECK(rt.runtime.config()->find_engine("sim:0") == nullptr);
  CHECK(rt.runtime.config()->find_engine("sim:1") != nullptr);
  CHECK(rt.runtime.config()->epoch() > epoch);
  rt.check_memory_at_exit = false;  // a dead device's memory is not checked
}

TEST_CASE("a run that is not retryable fails with EngineDown when its device dies, within the bound",
          "[sim][runtime][faults]") {
  auto platform = sim::default_platform(1).value();
  platform.faults = sim::parse_fault_spec("die=sim:0@0ops").value();
  SimRuntime rt{"sim:0", platform};
  const auto t0 = std::chrono::steady_clock::now();
  auto out = rt.runtime.run(affine(1), {iota8()}).get();
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().code() == ErrorCode::EngineDown);
  CHECK_THAT(out.error().message(), Catch::Contains("'sim:0' is down: it died after 0 ops (injected fault"));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
  auto after = rt.runtime.run(affine(1), {iota8()}).get();  // no device left
  REQUIRE_FALSE(after.ok());
  CHECK(after.error().code() == ErrorCode::NoEligibleEngine);
  rt.check_memory_at_exit = false;
}

TEST_CASE("work on a device's other streams waits for the op it reads, not for the rest of that op's stream",
          "[sim][runtime]") {
  // Two diamonds of 8 dots of f32[128, 128] on one default device (4
  // streams, no jitter): each stage's 8 dots (n = dot(top, w)) run on the 4
  // streams in 2 rounds, then a region of 7 adds joins them and a dot
  // reads the sum. The second stage's dots wait for the first join dot
  // only, not for stage-two dots queued on the join's stream after it.
  // Costs (engines/cost_model.hpp): upload 10,000 + 65,536 / 25e9 s =
  // 12,622 ns; a dot 5,000 + 3 x 65,536 B / 3e12 B/s = 5,066 ns; the region
  // 5,000 + 9 x 65,536 / 3e12 = 5,197 ns. Makespan 12,622 + 2 x (2 x 5,066
  // + 5,197 + 5,066) = 53,412 ns. With every dot of stage two waiting for
  // the join's stream, it would take 2 x 5,066 ns more.
  std::string ops;
  auto dot = [&](const std::string& in, const std::string& out) {
    ops += R"({"op": "dot_general", "in": [")" + in + R"(", "w"], "out": ")" + out +
           R"(", "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},)";
  };
  std::string top = "x";
  for (int stage = 0; stage < 2; ++stage) {
    const std::string S = std::to_string(stage);
    for (int k = 0; k < 8; ++k) dot(top, "n" + S + "_" + std::to_string(k));
    std::string sum = "n" + S + "_0";
    for (int k = 1; k < 8; ++k) {
      const std::string next = "s" + S + "_" + std::to_string(k);
      ops += R"({"op": "add", "in": [")" + sum + R"(", "n)" + S + "_" + std::to_string(k) + R"("], "out": ")" +
             next + R"("},)";
      sum = next;
    }
    top = "j" + S;
    dot(sum, top);
  }
  ops.pop_back();
  auto program = program_of(R"({"format": "tenact.program/1", "name": "two_diamonds",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [128, 128]}, {"name": "w", "dtype": "f32", "shape": [128, 128]}],
    "ops": [)" + ops + R"(], "outputs": ["j1"]})");
  // x = 1, w = 1/128: every dot of ones is 1; a join of 8 is 8, then 64.
  auto x = Tensor::zeros(DType::F32, {128, 128}).value();
  auto w = Tensor::zeros(DType::F32, {128, 128}).value();
  for (int64_t i = 0; i < x.element_count(); ++i) {
    x.data_as<float>()[i] = 1.0f;
    w.data_as<float>()[i] = 1.0f / 128.0f;
  }
  SimRuntime rt{"sim:0", sim::default_platform(1).value()};
  ExecutionStats stats;
  auto out = rt.runtime.run(program, {x, w}, {}, &stats).get();
  REQUIRE(out.ok());
  CHECK(stats.virtual_makespan_ns() == 53412);
  Tensor y = rt.to_host((*out)[0]);
  for (int64_t i = 0; i < y.element_count(); ++i) REQUIRE(y.data_as<float>()[i] == 64.0f);
}
