// How the runtime answers injected faults of simulated devices: transient
// failures are tried again after a backoff in virtual time that doubles;
// a run that keeps failing on one device is placed on another. The fault
// seeds are found here from the fault functions themselves (the same pure
// draws the devices make), so each case knows exactly which tries fail.
#include <catch2/catch.hpp>

#include <chrono>
#include <mutex>
#include <thread>

#include "core/program_json.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "engines/forwarding_engine.hpp"
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

// A CPU engine whose first `failures` batches fail with TransientFailure
// (a device hiccup) without running; it notes when each batch came.
class HiccupEngine final : public ForwardingEngine {
 public:
  explicit HiccupEngine(uint32_t failures)
      : ForwardingEngine(cpu::CpuEngine::create(cpu::CpuEngineOptions{1}).value()), failures_(failures) {}

  void launch_batch(BatchWork work, LaunchCompletion done) override {
    bool fail = false;
    {
      std::lock_guard lock(mutex_);
      arrivals_.push_back(std::chrono::steady_clock::now());
      fail = arrivals_.size() <= failures_;
    }
    if (!fail) return ForwardingEngine::launch_batch(std::move(work), std::move(done));
    { BatchWork spent = std::move(work); }  // the inputs go before the caller hears
    done(Error{ErrorCode::TransientFailure, "a hiccup of 'cpu'"});
  }
  std::vector<std::chrono::steady_clock::time_point> arrivals() {
    std::lock_guard lock(mutex_);
    return arrivals_;
  }

 private:
  const uint32_t failures_;
  std::mutex mutex_;
  std::vector<std::chrono::steady_clock::time_point> arrivals_;
};

HostTensor pair(float a, float b) {
  HostTensor x = Tensor::zeros(DType::F32, {2}).value();
  x.data_as<float>()[0] = a;
  x.data_as<float>()[1] = b;
  return x;
}

}  // namespace

TEST_CASE("on an engine without a virtual clock a transient failure is tried again after a wall-clock backoff",
          "[retry]") {
  // Two failed tries, then one that runs: the second try comes at least
  // 20 ms after the first, the third at least 40 ms after the second.
  RuntimeOptions o;
  o.retry_backoff_ns = 20'000'000;
  Runtime rt{o};
  auto engine = std::make_shared<HiccupEngine>(2);
  REQUIRE(rt.register_engine(engine).ok());
  auto program = std::make_shared<const SemanticProgram>(load_program(kDouble).value());
  ExecutionStats stats;
  auto r = rt.run(program, {pair(1.5f, -2.0f)}, {}, &stats).get();
  REQUIRE(r.ok());
  const Tensor& y = r->at(0);
  CHECK(y.data_as<float>()[0] == 3.0f);
  CHECK(y.data_as<float>()[1] == -4.0f);
  CHECK(stats.retries == 2);
  CHECK(stats.backoff_ns == 60'000'000);
  const auto at = engine->arrivals();
  REQUIRE(at.size() == 3);
  CHECK(at[1] - at[0] >= std::chrono::milliseconds{20});
  CHECK(at[2] - at[1] >= std::chrono::milliseconds{40});
}

TEST_CASE("a shutdown while a retry waits for its backoff answers the run Shutdown, at once", "[retry]") {
  RuntimeOptions o;
  o.retry_backoff_ns = 600'000'000'000;  // ten minutes
  auto rt = std::make_unique<Runtime>(o);
  auto engine = std::make_shared<HiccupEngine>(1000);
  REQUIRE(rt->register_engine(engine).ok());
  auto program = std::make_shared<const SemanticProgram>(load_program(kDouble).value());
  auto answer = rt->run(program, {pair(1.0f, 2.0f)});
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds{30};
  while (engine->arrivals().empty() && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds{1});
  REQUIRE(engine->arrivals().size() == 1);
  CHECK(answer.wait_for(std::chrono::milliseconds{50}) == std::future_status::timeout);  // waiting to try again
  const auto before = std::chrono::steady_clock::now();
  rt.reset();
  CHECK(std::chrono::steady_clock::now() - before < std::chrono::seconds{30});
  REQUIRE(answer.wait_for(std::chrono::seconds{0}) == std::future_status::ready);
  auto r = answer.get();
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::Shutdown);
  CHECK(engine->arrivals().size() == 1);
}

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
