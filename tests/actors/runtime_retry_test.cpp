// How the runtime answers injected faults of simulated devices: transient
// failures are tried again after a backoff in virtual time that doubles;
// a run that keeps failing on one device is placed on another. The fault
// seeds are found here from the fault functions themselves (the same pure
// draws the devices make), so each case knows exactly which tries fail.
#include <catch2/catch.hpp>

#include "core/program_json.hpp"
#include "engines/sim/sim_faults.hpp"
#include "setup/engine_setup.hpp"

using namespace tenact;

namespace {

constexpr const char* kDouble = R"({"format": "tenact.program/1",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [2]}],
  "ops": [{"op": "add", "in": ["x", "x"], "out": "y"}], "outputs": ["y"]})";

// Whether the `op`-th op tried on a stream of device `device` passes on
// every stream / fails on every stream.
bool passes(double p, uint64_t seed, uint64_t device, uint32_t streams, uint64_t op) {
  for (uint32_t s = 0; s < streams; ++s)
    if (sim::fault_happens(p, seed, sim::FaultDraw::Transient, device, s, op)) return false;
  return true;
}
bool fails_on_every_stream(double p, uint64_t seed, uint64_t device, uint32_t streams, uint64_t op) {
  for (uint32_t s = 0; s < streams; ++s)
    if (!sim::fault_happens(p, seed, sim::FaultDraw::Transient, device, s, op)) return false;
  return true;
}

struct Faulty {
  Runtime runtime;
  setup::RegisteredEngines engines;
  Faulty(const std::string& list, const std::string& faults) {
    setup::EngineSetupOptions options;
    options.faults = sim::parse_fault_spec(faults).value();
    auto made = setup::register_engines(runtime, setup::parse_engine_list(list).value(), options);
    REQUIRE(made.ok());
    engines = std::move(*made);
  }
  uint32_t streams() { return engines.sims.begin()->second->capabilities().queues; }
  Result<std::vector<Tensor>> run(ExecutionStats& stats) {
    auto program = std::make_shared<const SemanticProgram>(load_program(kDouble).value());
    HostTensor x = Tensor::zeros(DType::F32, {2}).value();
    x.data_as<float>()[0] = 1.5f;
    x.data_as<float>()[1] = -2.0f;
    return runtime.run(program, {x}, {}, &stats).get();
  }
  std::vector<float> host_values(const Tensor& t) {
    Tensor h = t.is_host() ? t : runtime.copy(t, Endpoint::unowned_host()).get().value();
    return {h.data_as<float>()[0], h.data_as<float>()[1]};
  }
};

}  // namespace

TEST_CASE("a transient failure is tried again after a backoff in virtual time that doubles", "[retry]") {
  uint32_t streams = 0;
  { Faulty probe("sim:0", "seed=0"); streams = probe.streams(); }
  // A seed whose first two tries of the one op fail on whatever stream it
  // lands, and whose third passes.
  const double p = 0.5;
  uint64_t seed = 0;
  while (!(fails_on_every_stream(p, seed, 0, streams, 0) && fails_on_every_stream(p, seed, 0, streams, 1) &&
           passes(p, seed, 0, streams, 2)))
    ++seed;
  Faulty f("sim:0", "seed=" + std::to_string(seed) + ",transient=0.5");
  ExecutionStats stats;
  auto r = f.run(stats);
  REQUIRE(r.ok());
  CHECK(f.host_values(r->at(0)) == std::vector<float>{3.0f, -4.0f});
  CHECK(stats.retries == 2);
  // 20 µs, then 40 µs (RuntimeOptions::retry_backoff_ns, doubling).
  CHECK(stats.backoff_ns == 60000);
  // Each failed try took its launch (5 µs); the last try started no earlier
  // than the second failure's end plus 40 µs, itself no earlier than the
  // first's end plus 20 µs.
  REQUIRE(stats.virtual_time);
  CHECK(stats.virtual_makespan_ns() > 5000 + 20000 + 5000 + 40000);
  CHECK(stats.replacements == 0);

  // The same run without faults takes a few µs of virtual time.
  Faulty clean("sim:0", "seed=0");
  ExecutionStats clean_stats;
  REQUIRE(clean.run(clean_stats).ok());
  CHECK(clean_stats.retries == 0);
  CHECK(clean_stats.backoff_ns == 0);
  CHECK(clean_stats.virtual_makespan_ns() < 20000);
}

TEST_CASE("a run whose tries keep failing on one device is placed on another", "[retry]") {
  uint32_t streams = 0;
  { Faulty probe("sim:0,sim:1", "seed=0"); streams = probe.streams(); }
  // sim:0 (device 0) fails the op on its first four tries (1 + 3 retries)
  // on every stream; sim:1 (device 1) passes its first.
  const double p = 0.7;
  uint64_t seed = 0;
  for (;; ++seed) {
    bool ok = passes(p, seed, 1, streams, 0);
    for (uint64_t op = 0; ok && op < 4; ++op) ok = fails_on_every_stream(p, seed, 0, streams, op);
    if (ok) break;
  }
  Faulty f("sim:0,sim:1", "seed=" + std::to_string(seed) + ",transient=0.7");
  ExecutionStats stats;
  auto r = f.run(stats);
  REQUIRE(r.ok());
  CHECK(r->at(0).endpoint().engine == "sim:1");
  CHECK(f.host_values(r->at(0)) == std::vector<float>{3.0f, -4.0f});
  CHECK(stats.retries == 3);
  CHECK(stats.replacements == 1);
}
