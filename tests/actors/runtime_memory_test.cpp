// Values in engine memory through the runtime: a run's results are buffers
// of the engine that made them, a transfer's copy is allocated by the
// destination engine, every byte goes back once nothing holds it, an input
// already in an engine's memory is taken where it lives (a chain of runs
// never passes through the host), and an input living where the plan does
// not take it is refused.
#include <catch2/catch.hpp>

#include <future>

#include "actors/runtime.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "tests/actors/affine_programs.hpp"
#include "tests/engines/cpu/test_engine.hpp"

using namespace tenact;
using tenact::testing::affine;

namespace {

std::shared_ptr<cpu::CpuEngine> engine_with(std::string id, std::vector<std::string> storage) {
  cpu::CpuEngineOptions o;
  o.id = std::move(id);
  o.threads = 2;
  o.storage_classes = std::move(storage);
  return cpu::test_engine(o);
}

RuntimeOptions small_runtime() {
  RuntimeOptions o;
  o.scheduler_threads = 2;
  return o;
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
  auto prepared = rt.prepare(p, {describe_input(inputs[0], inputs[0].endpoint())}).get();
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

}  // namespace

TEST_CASE("a transfer's copy and a run's results are engine memory, all of it returned",
          "[runtime][memory]") {
  auto cpu = engine_with("cpu", {"host"});
  auto pinned = engine_with("cpu:1", {"pinned"});
  {
    Runtime rt{small_runtime()};
    REQUIRE(rt.register_engine(cpu, 0).ok());
    REQUIRE(rt.register_engine(pinned, 1).ok());
    REQUIRE(rt.add_route(TransferRoute{{"cpu:1", "pinned"}, {"cpu", "host"}, "host_copy"}).ok());
    ExecutionStats stats;
    {
      // x lives in cpu:1's pinned memory; the ops run on cpu (preferred).
      auto out = rt.run(affine(2), {iota8_on(*pinned, "pinned")}).get();
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

TEST_CASE("a result left in an engine's memory is read back by an explicit copy; copies between every pair",
          "[runtime][memory][copy]") {
  auto cpu = engine_with("cpu", {"host"});
  auto pinned = engine_with("cpu:1", {"pinned"});
  {
    Runtime rt{small_runtime()};
    REQUIRE(rt.register_engine(cpu, 1).ok());
    REQUIRE(rt.register_engine(pinned, 0).ok());
    const Endpoint host{"cpu", "host"}, pin{"cpu:1", "pinned"};
    REQUIRE(rt.add_route(TransferRoute{pin, host, "host_copy"}).ok());
    REQUIRE(rt.add_route(TransferRoute{host, pin, "host_copy"}).ok());
    // y = 2x + 1 stays where it was produced: cpu:1's pinned memory.
    auto out = rt.run(affine(1), {iota8_on(*pinned, "pinned")}).get();
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
    // (here the copy's, on a transfer thread) may not wait for it.
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
  check_all_returned(*cpu, "host");
  check_all_returned(*pinned, "pinned");
}
