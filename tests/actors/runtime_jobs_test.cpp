// Backpressure through the Runtime: with a bound of runs in flight per
// engine, runs past it wait in the runtime and start as runs finish; one
// that waits past the run deadline fails with Timeout naming the full
// engine; a full waiting room refuses at once; shutdown fails who waits.
// An engine whose completions a test holds back keeps the slots taken.
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "actors/runtime.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "engines/forwarding_engine.hpp"
#include "tests/actors/affine_programs.hpp"

using namespace tenact;
using tenact::testing::affine;
using tenact::testing::iota8;
using namespace std::chrono_literals;

namespace {

// A CPU engine whose batch completions wait until release(): the run
// stays in flight as long as the test wants.
class HeldEngine final : public ForwardingEngine {
 public:
  HeldEngine() : ForwardingEngine(cpu::CpuEngine::create(cpu::CpuEngineOptions{1}).value()) {}

  void launch_batch(BatchWork work, LaunchCompletion done) override {
    work.caller_may_run = false;
    ForwardingEngine::launch_batch(std::move(work), [this, done = std::move(done)](Result<std::vector<Tensor>> r) mutable {
      std::unique_lock lock(mutex_);
      if (open_) {
        lock.unlock();
        return done(std::move(r));
      }
      held_.emplace_back(std::move(done), std::move(r));
    });
  }
  size_t held() {
    std::lock_guard lock(mutex_);
    return held_.size();
  }
  void release() {
    std::vector<std::pair<LaunchCompletion, Result<std::vector<Tensor>>>> now;
    {
      std::lock_guard lock(mutex_);
      open_ = true;
      now.swap(held_);
    }
    for (auto& [done, r] : now) done(std::move(r));
  }

 private:
  std::mutex mutex_;
  bool open_ = false;
  std::vector<std::pair<LaunchCompletion, Result<std::vector<Tensor>>>> held_;
};

bool wait_until(const std::function<bool()>& condition) {
  for (int i = 0; i < 500 && !condition(); ++i) std::this_thread::sleep_for(10ms);
  return condition();
}

}  // namespace

TEST_CASE("past the bound runs wait in the runtime and start as runs finish", "[runtime][jobs]") {
  RuntimeOptions o = testing::small_runtime();
  o.max_runs_in_flight_per_engine = 2;
  Runtime rt{o};
  auto engine = std::make_shared<HeldEngine>();
  REQUIRE(rt.register_engine(engine).ok());
  std::vector<std::future<Result<std::vector<Tensor>>>> runs;
  for (int i = 0; i < 6; ++i) runs.push_back(rt.run(affine(2), {iota8()}));
  REQUIRE(wait_until([&] { return engine->held() == 2; }));
  std::this_thread::sleep_for(50ms);
  CHECK(engine->held() == 2);  // the other four wait in the runtime, not on the engine
  CHECK(rt.queue_stats().at("cpu").in_flight == 2);
  engine->release();
  for (auto& f : runs) {
    auto r = f.get();
    REQUIRE(r.ok());
    for (int i = 0; i < 8; ++i) CHECK((*r)[0].data_as<float>()[i] == static_cast<float>(i * 3 + 2));
  }
  const EngineQueueStats q = rt.queue_stats().at("cpu");
  CHECK(q.max_in_flight == 2);
  CHECK(q.runs == 6);
  CHECK(q.waited == 4);
  CHECK(q.in_flight == 0);
}

TEST_CASE("a run that waits for room past the deadline fails naming the engine, and the runtime keeps serving",
          "[runtime][jobs]") {
  RuntimeOptions o = testing::small_runtime();
  o.max_runs_in_flight_per_engine = 1;
  o.run_deadline = 300ms;
  Runtime rt{o};
  auto engine = std::make_shared<HeldEngine>();
  REQUIRE(rt.register_engine(engine).ok());
  auto first = rt.run(affine(1), {iota8()});
  REQUIRE(wait_until([&] { return engine->held() == 1; }));
  auto second = rt.run(affine(1), {iota8()});
  auto r = second.get();
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::Timeout);
  CHECK(r.error().message() ==
        "the run waited past its deadline for room on engines 'cpu' (1 runs in flight), each at its bound of 1 runs "
        "in flight");
  auto held = first.get();  // the held run's own deadline passed too
  CHECK_FALSE(held.ok());
  engine->release();
  auto after = rt.run(affine(1), {iota8()}).get();
  REQUIRE(after.ok());
  CHECK(after->at(0).data_as<float>()[7] == 15.0f);
}

TEST_CASE("a run answered Timeout by its deadline never writes the caller's stats afterwards", "[runtime][jobs]") {
  // The caller may free its stats once it has the Timeout; the run's own
  // end, later, must leave them alone.
  RuntimeOptions o = testing::small_runtime();
  o.run_deadline = 200ms;
  Runtime rt{o};
  auto engine = std::make_shared<HeldEngine>();
  REQUIRE(rt.register_engine(engine).ok());
  ExecutionStats stats;
  auto late = rt.run(affine(1), {iota8()}, {}, &stats);
  auto r = late.get();
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::Timeout);
  const ExecutionStats at_timeout = stats;
  engine->release();  // the run ends now, after its answer
  REQUIRE(wait_until([&] { return rt.queue_stats().at("cpu").in_flight == 0; }));
  std::this_thread::sleep_for(50ms);
  CHECK(stats.batches == at_timeout.batches);
  CHECK(stats.units == at_timeout.units);
  CHECK(stats.batches == 0);
  // A run that answers itself adds its counts.
  ExecutionStats answered;
  REQUIRE(rt.run(affine(1), {iota8()}, {}, &answered).get().ok());
  CHECK(answered.batches == 1);
  CHECK(answered.units >= 1);
}

TEST_CASE("a full waiting room refuses at once, and shutdown fails the runs that wait", "[runtime][jobs]") {
  RuntimeOptions o = testing::small_runtime();
  o.max_runs_in_flight_per_engine = 1;
  o.max_waiting_runs = 2;
  auto engine = std::make_shared<HeldEngine>();
  std::vector<std::future<Result<std::vector<Tensor>>>> runs;
  std::thread releaser;
  {
    Runtime rt{o};
    REQUIRE(rt.register_engine(engine).ok());
    runs.push_back(rt.run(affine(1), {iota8()}));
    REQUIRE(wait_until([&] { return engine->held() == 1; }));
    runs.push_back(rt.run(affine(1), {iota8()}));
    runs.push_back(rt.run(affine(1), {iota8()}));
    auto refused = rt.run(affine(1), {iota8()}).get();
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().code() == ErrorCode::LimitExceeded);
    CHECK_THAT(refused.error().message(), Catch::StartsWith("the runtime is full: 2 runs wait for room already"));
    // Shutdown waits for the held run's completion, which comes later.
    releaser = std::thread([&] {
      std::this_thread::sleep_for(200ms);
      engine->release();
    });
  }
  releaser.join();
  for (auto& f : runs) {
    REQUIRE(f.wait_for(10s) == std::future_status::ready);
    auto r = f.get();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code() == ErrorCode::Shutdown);
  }
}
