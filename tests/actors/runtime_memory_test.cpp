// Values in engine memory through the runtime: a run's results are buffers
// of the engine that made them, a transfer's copy is allocated by the
// destination engine, every byte goes back once nothing holds it, an input
// already in an engine's memory is taken where it lives (a chain of runs
// never passes through the host), and an input living where the plan does
// not take it is refused.
#include <catch2/catch.hpp>

#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "actors/runtime.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "tests/actors/affine_programs.hpp"
#include "tests/engines/cpu/test_engine.hpp"
#include "util/worker_pool.hpp"

using namespace tenact;
using tenact::testing::affine;
using tenact::testing::iota8;
using tenact::testing::small_runtime;

namespace {

std::shared_ptr<cpu::CpuEngine> engine_with(std::string id, std::vector<std::string> storage) {
  cpu::CpuEngineOptions o;
  o.id = std::move(id);
  o.threads = 2;
  o.storage_classes = std::move(storage);
  return cpu::test_engine(o);
}

/// 0..7 in a buffer of `engine`'s `storage`.
Tensor iota8_on(Engine& engine, const std::string& storage) {
  auto t = engine.allocate(storage, DType::F32, {8});
  REQUIRE(t.ok());
  for (int i = 0; i < 8; ++i) t->data_as<float>()[i] = static_cast<float>(i);
  return *t;
}

Result<std::vector<Tensor>> run_with_stats(Runtime& rt, std::shared_ptr<const SemanticProgram> p,
                                           std::vector<Tensor> inputs, ExecutionStats& stats) {
  auto prepared = rt.prepare(p, {describe_input(inputs[0], inputs[0].endpoint())}, testing::by_preference()).get();
  if (!prepared.ok()) return prepared.error();
  std::promise<Result<std::vector<Tensor>>> done;
  rt.execute(*prepared, std::move(inputs),
             [&](Result<std::vector<Tensor>> r) { done.set_value(std::move(r)); }, &stats);
  return done.get_future().get();
}

void check_all_returned(Engine& engine, const std::string& storage) {
  CAPTURE(engine.identity().id, storage);
  MemoryStats s = engine.memory_stats(storage).value();
  CHECK(s.allocated_bytes == 0);
  CHECK(s.allocations == s.releases);
}

/// cpu (preferred) and cpu:1, with the copy route from cpu:1's pinned
/// memory to cpu's host memory.
void register_cpu_preferred(Runtime& rt, const std::shared_ptr<cpu::CpuEngine>& cpu,
                            const std::shared_ptr<cpu::CpuEngine>& pinned) {
  REQUIRE(rt.register_engine(cpu, 0).ok());
  REQUIRE(rt.register_engine(pinned, 1).ok());
  REQUIRE(rt.add_route(TransferRoute{{"cpu:1", "pinned"}, {"cpu", "host"}, "host_copy"}).ok());
}

/// Two engines, cpu/host and cpu:1/pinned (preferred), registered on a
/// runtime of the test's; their memory is checked after the runtime is gone.
struct PinnedPair {
  std::shared_ptr<cpu::CpuEngine> cpu = engine_with("cpu", {"host"});
  std::shared_ptr<cpu::CpuEngine> pinned = engine_with("cpu:1", {"pinned"});
  const Endpoint host{"cpu", "host"}, pin{"cpu:1", "pinned"};
  void register_on(Runtime& rt) const {
    REQUIRE(rt.register_engine(cpu, 1).ok());
    REQUIRE(rt.register_engine(pinned, 0).ok());
  }
  void check_all_returned() const {
    ::check_all_returned(*cpu, "host");
    ::check_all_returned(*pinned, "pinned");
  }
};

}  // namespace

TEST_CASE("a transfer's copy and a run's results are engine memory, all of it returned",
          "[runtime][memory]") {
  auto cpu = engine_with("cpu", {"host"});
  auto pinned = engine_with("cpu:1", {"pinned"});
  {
    Runtime rt{small_runtime()};
    register_cpu_preferred(rt, cpu, pinned);
    ExecutionStats stats;
    {
      // x lives in cpu:1's pinned memory; the ops run on cpu (preferred).
      auto out = rt.run(affine(2), {iota8_on(*pinned, "pinned")}, testing::by_preference()).get();
      REQUIRE(out.ok());
      const Tensor& y = (*out)[0];
      CHECK(y.endpoint() == Endpoint{"cpu", "host"});
      for (int i = 0; i < 8; ++i) CHECK(y.data_as<float>()[i] == static_cast<float>(i * 3 + 2));
      // The copy of x and y at least were allocated by cpu.
      CHECK(cpu->memory_stats("host").value().allocations >= 2);
      CHECK(cpu->memory_stats("host").value().allocated_bytes >= 32);
      auto again = run_with_stats(rt, affine(2), {iota8_on(*pinned, "pinned")}, stats);
      REQUIRE(again.ok());
      CHECK(stats.transfers == 1);
    }
    check_all_returned(*cpu, "host");
    check_all_returned(*pinned, "pinned");
  }
  check_all_returned(*cpu, "host");
  check_all_returned(*pinned, "pinned");
}

TEST_CASE("when a run is answered the runtime holds none of its inputs", "[runtime][memory]") {
  // x lives in cpu:1's pinned memory and the ops run on cpu: from the
  // callback on, the only pinned buffer left is none (the caller gave x
  // away). Plain and retryable runs (which keep their inputs to run again).
  for (const bool retryable : {false, true}) {
    CAPTURE(retryable);
    auto cpu = engine_with("cpu", {"host"});
    auto pinned = engine_with("cpu:1", {"pinned"});
    Runtime rt{small_runtime()};
    register_cpu_preferred(rt, cpu, pinned);
    PrepareOptions options = testing::by_preference();
    options.retryable = retryable;
    for (int k = 0; k < 20; ++k) {
      std::promise<std::pair<bool, uint64_t>> seen;
      // Built before the call: a braced list's elements would outlive the
      // call (they are copied into the vector) and hold x past the answer.
      std::vector<Tensor> inputs;
      inputs.push_back(iota8_on(*pinned, "pinned"));
      rt.run(affine(k % 3), std::move(inputs), options, [&](Result<std::vector<Tensor>> r) {
        seen.set_value({r.ok(), pinned->memory_stats("pinned").value().allocated_bytes});
      });
      auto [ok, pinned_bytes] = seen.get_future().get();
      REQUIRE(ok);
      CAPTURE(k);
      CHECK(pinned_bytes == 0);
    }
  }
}

TEST_CASE("when a run on one engine is answered only its result is left", "[runtime][memory]") {
  // x and y in cpu:1's pinned memory, one batch (the direct path, and the
  // pipeline actor's): at the answer the engine holds y's 32 bytes, not x's.
  for (const bool direct : {true, false}) {
    CAPTURE(direct);
    auto pinned = engine_with("cpu:1", {"pinned"});
    RuntimeOptions ro = small_runtime();
    ro.direct_single_batch = direct;
    Runtime rt{ro};
    REQUIRE(rt.register_engine(pinned).ok());
    for (int k = 0; k < 20; ++k) {
      std::promise<std::pair<bool, uint64_t>> seen;
      std::vector<Tensor> inputs;
      inputs.push_back(iota8_on(*pinned, "pinned"));
      rt.run(affine(k % 3), std::move(inputs), testing::by_preference(), [&](Result<std::vector<Tensor>> r) {
        const uint64_t bytes = pinned->memory_stats("pinned").value().allocated_bytes;
        const bool ok = r.ok();
        { auto spent = std::move(r); }  // y goes before the next try allocates
        seen.set_value({ok, bytes});
      });
      auto [ok, pinned_bytes] = seen.get_future().get();
      REQUIRE(ok);
      CAPTURE(k);
      CHECK(pinned_bytes == 32);
    }
  }
}

TEST_CASE("results fed to the next run stay in the engine's memory: no transfer, no host",
          "[runtime][memory]") {
  auto pinned = engine_with("cpu:1", {"pinned"});
  Runtime rt{small_runtime()};
  REQUIRE(rt.register_engine(pinned).ok());
  {
    Tensor v = iota8_on(*pinned, "pinned");
    // y = 2x + 1, five times: 32x + 31.
    for (int step = 0; step < 5; ++step) {
      ExecutionStats stats;
      auto out = run_with_stats(rt, affine(1), {v}, stats);
      REQUIRE(out.ok());
      CHECK(stats.transfers == 0);
      v = (*out)[0];
      CHECK(v.endpoint() == Endpoint{"cpu:1", "pinned"});
    }
    for (int i = 0; i < 8; ++i) CHECK(v.data_as<float>()[i] == static_cast<float>(32 * i + 31));
  }
  check_all_returned(*pinned, "pinned");
}

TEST_CASE("an input in an engine's memory where the plan does not take it is refused",
          "[runtime][memory]") {
  auto cpu = engine_with("cpu", {"host"});
  auto pinned = engine_with("cpu:1", {"pinned"});
  Runtime rt{small_runtime()};
  REQUIRE(rt.register_engine(cpu, 0).ok());
  REQUIRE(rt.register_engine(pinned, 1).ok());
  Tensor x = iota8_on(*pinned, "pinned");
  auto prepared = rt.prepare(affine(0), {describe_input(x, Endpoint{"cpu", "host"})}).get();
  REQUIRE(prepared.ok());
  auto out = rt.execute(*prepared, {x}).get();
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().code() == ErrorCode::InputMismatch);
  CHECK(out.error().message() == "input 0 ('x') lives at cpu:1/pinned; the plan takes it at cpu/host");
}

TEST_CASE("a result left in an engine's memory is read back by an explicit copy, and copies go between every pair",
          "[runtime][memory][copy]") {
  const PinnedPair engines;
  const Endpoint& host = engines.host;
  const Endpoint& pin = engines.pin;
  {
    Runtime rt{small_runtime()};
    engines.register_on(rt);
    REQUIRE(rt.add_route(TransferRoute{pin, host, "host_copy"}).ok());
    REQUIRE(rt.add_route(TransferRoute{host, pin, "host_copy"}).ok());
    // y = 2x + 1 stays where it was produced: cpu:1's pinned memory.
    auto out = rt.run(affine(1), {iota8_on(*engines.pinned, "pinned")}).get();
    REQUIRE(out.ok());
    const Tensor y = (*out)[0];
    REQUIRE(y.endpoint() == pin);
    // Read back: a copy in cpu's host memory, the same values, another buffer.
    auto back = rt.copy(y, host).get();
    REQUIRE(back.ok());
    CHECK(back->endpoint() == host);
    CHECK(back->data() != y.data());
    for (int i = 0; i < 8; ++i) CHECK(back->data_as<float>()[i] == static_cast<float>(2 * i + 1));
    // And on to the pinned memory again, and from unowned host memory to both.
    auto there = rt.copy(*back, pin).get();
    REQUIRE(there.ok());
    CHECK(there->endpoint() == pin);
    for (int i = 0; i < 8; ++i) CHECK(there->data_as<float>()[i] == static_cast<float>(2 * i + 1));
    const HostTensor plain = HostTensor::zeros(DType::F32, {8}).value();
    for (const Endpoint& to : {host, pin}) {
      auto placed = rt.copy(plain, to).get();
      REQUIRE(placed.ok());
      CHECK(placed->endpoint() == to);
      CHECK(placed->element_count() == 8);
    }
    // The registry answers route changes by message: a runtime callback
    // (here the copy's, on a copy thread) may not wait for it.
    std::promise<Status> from_callback;
    rt.copy(y, host, [&](Result<Tensor>) {
      from_callback.set_value(rt.add_route(TransferRoute{Endpoint{"cpu", "host"}, Endpoint{"cpu:1", "pinned"}, "host_copy"}));
    });
    const Status refused = from_callback.get_future().get();
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().code() == ErrorCode::InvalidAttribute);
    CHECK(refused.error().message() ==
          "add_route waits for the transfer registry: call it from a thread of your own, not from a runtime callback");
    // No route, no copy: the error names both ends.
    auto nowhere = rt.copy(y, Endpoint{"cpu", "pinned"}).get();
    REQUIRE_FALSE(nowhere.ok());
    CHECK(nowhere.error().code() == ErrorCode::Unsupported);
    CHECK(nowhere.error().message() == "no route from cpu:1/pinned to cpu/pinned to copy the value along");
  }
  engines.check_all_returned();
}

TEST_CASE("each provider's copies run on a copy thread of its own, or where its run_on puts them",
          "[runtime][copy]") {
  // The copy engine of provider "c": a thread of the test's own.
  std::unique_ptr<WorkerPool> copy_engine = WorkerPool::create(1).value();
  std::promise<std::thread::id> engine_id;
  copy_engine->post([&] { engine_id.set_value(std::this_thread::get_id()); });
  const std::thread::id copy_engine_thread = engine_id.get_future().get();

  auto cpu = engine_with("cpu", {"host"});
  auto pinned = engine_with("cpu:1", {"pinned"});
  auto far = engine_with("cpu:2", {"host"});
  std::mutex mutex;
  std::map<std::string, std::set<std::thread::id>> threads;
  auto recording = [&](std::string name) {
    return TransferProvider{[&mutex, &threads, name](const TransferRequest& r) {
                              {
                                std::lock_guard lock(mutex);
                                threads[name].insert(std::this_thread::get_id());
                              }
                              return host_copy(r);
                            },
                            {}, {}};
  };
  {
    Runtime rt{small_runtime()};
    REQUIRE(rt.register_engine(cpu).ok());
    REQUIRE(rt.register_engine(pinned).ok());
    REQUIRE(rt.register_engine(far).ok());
    REQUIRE(rt.add_transfer_provider("a", recording("a")).ok());
    REQUIRE(rt.add_transfer_provider("b", recording("b")).ok());
    TransferProvider c = recording("c");
    c.run_on = [engine = copy_engine.get()](std::function<void()> task) { engine->post(std::move(task)); };
    REQUIRE(rt.add_transfer_provider("c", std::move(c)).ok());
    const Endpoint host{"cpu", "host"}, pin{"cpu:1", "pinned"}, away{"cpu:2", "host"};
    REQUIRE(rt.add_route(TransferRoute{host, pin, "a"}).ok());
    REQUIRE(rt.add_route(TransferRoute{pin, host, "b"}).ok());
    REQUIRE(rt.add_route(TransferRoute{host, away, "c"}).ok());
    const Tensor v = rt.copy(iota8(), host).get().value();
    for (int round = 0; round < 20; ++round) {
      auto x = rt.copy(v, pin);
      auto z = rt.copy(v, away);
      Tensor on_pin = x.get().value();
      Tensor back = rt.copy(on_pin, host).get().value();
      Tensor on_far = z.get().value();
      CHECK(on_pin.endpoint() == pin);
      CHECK(back.endpoint() == host);
      CHECK(on_far.endpoint() == away);
      for (int i = 0; i < 8; ++i) {
        CHECK(back.data_as<float>()[i] == static_cast<float>(i));
        CHECK(on_far.data_as<float>()[i] == static_cast<float>(i));
      }
    }
  }
  std::lock_guard lock(mutex);
  REQUIRE(threads["a"].size() == 1);
  REQUIRE(threads["b"].size() == 1);
  REQUIRE(threads["c"].size() == 1);
  CHECK(*threads["a"].begin() != *threads["b"].begin());
  CHECK(*threads["c"].begin() == copy_engine_thread);
  for (const char* name : {"a", "b"}) CHECK(*threads[name].begin() != copy_engine_thread);
  for (const char* name : {"a", "b", "c"}) CHECK(*threads[name].begin() != std::this_thread::get_id());
}

TEST_CASE("outputs stay where they were produced, or are delivered where the execute options say",
          "[runtime][memory][copy]") {
  const PinnedPair engines;
  const Endpoint& host = engines.host;
  const Endpoint& pin = engines.pin;
  {
    Runtime rt{small_runtime()};
    engines.register_on(rt);
    const Tensor x = iota8_on(*engines.pinned, "pinned");
    auto prepared = rt.prepare(affine(1), {describe_input(x, pin)}).get();
    REQUIRE(prepared.ok());
    // Default: y = 2x + 1 stays in cpu:1's pinned memory.
    auto stays = rt.execute(*prepared, {x}).get();
    REQUIRE(stays.ok());
    CHECK((*stays)[0].endpoint() == pin);
    // Delivered at cpu/host: without a route the run fails, naming the output.
    ExecuteOptions to_host;
    to_host.outputs_to = host;
    auto refused = rt.execute(*prepared, {x}, to_host).get();
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().code() == ErrorCode::Unsupported);
    CHECK(refused.error().message() ==
          "delivering output 0: no route from cpu:1/pinned to cpu/host to copy the value along");
    // With the route it comes back in cpu's memory, values derived by hand.
    REQUIRE(rt.add_route(TransferRoute{pin, host, "host_copy"}).ok());
    auto delivered = rt.execute(*prepared, {x}, to_host).get();
    REQUIRE(delivered.ok());
    REQUIRE(delivered->size() == 1);
    CHECK((*delivered)[0].endpoint() == host);
    for (int i = 0; i < 8; ++i) CHECK((*delivered)[0].data_as<float>()[i] == static_cast<float>(2 * i + 1));
    // An output already there is not copied: the default run's result, placed at cpu:1 again.
    ExecuteOptions to_pin;
    to_pin.outputs_to = pin;
    auto same = rt.execute(*prepared, {x}, to_pin).get();
    REQUIRE(same.ok());
    CHECK((*same)[0].endpoint() == pin);
  }
  engines.check_all_returned();
}
