// The Runtime with real threads: in-flight dedupe under 64 client threads,
// outcome caching (transient, deterministic), redirects with one shared
// root, eviction, epochs, an engine actor killed mid-run, shutdown with
// requests in flight. Expected values are derived by hand.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "actors/runtime.hpp"
#include "actors/runtime_caf.hpp"
#include "actors/runtime_impl.hpp"
#include "core/program_json.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "tests/actors/affine_programs.hpp"
#include "tests/engines/cpu/test_engine.hpp"
#include "../planning/scripted_engine.hpp"

using namespace tenact;
using tenact::testing::affine;
using tenact::testing::iota8;
using tenact::testing::small_runtime;
using namespace std::chrono_literals;

namespace {

// A batched program over x: f32[B, 4] (B symbolic).
std::shared_ptr<const SemanticProgram> batched() {
  auto p = load_program(R"({"format": "tenact.program/1", "name": "batched",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 4]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "y"}], "outputs": ["y"]})");
  REQUIRE(p.ok());
  return std::make_shared<const SemanticProgram>(std::move(*p));
}

// A row-major f32 input; alignment fixed at 2^6 (a fresh buffer's own
// address alignment varies between allocations).
InputDescriptor f32_input(std::vector<int64_t> shape) {
  auto t = HostTensor::zeros(DType::F32, shape);
  REQUIRE(t.ok());
  InputDescriptor d = describe_input(*t, Endpoint{});
  d.alignment_log2 = 6;
  return d;
}

std::shared_ptr<cpu::CpuEngine> cpu_engine(std::string id = "cpu") {
  cpu::CpuEngineOptions o;
  o.id = std::move(id);
  o.threads = 2;
  return cpu::test_engine(o);
}

// Polls until `pred` holds (true) or `limit` passes (false).
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = 5000ms) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return pred();
}

}  // namespace

TEST_CASE("a program runs through the runtime and gives the hand-derived result", "[runtime]") {
  Runtime rt{small_runtime()};
  REQUIRE(rt.register_engine(cpu_engine()).ok());
  auto out = rt.run(affine(2), {iota8()}).get();
  REQUIRE(out.ok());
  REQUIRE(out->size() == 1);
  for (int i = 0; i < 8; ++i) CHECK((*out)[0].data_as<float>()[i] == static_cast<float>(i * 3 + 2));
}

TEST_CASE("64 threads x 500 requests over 10 programs produce each program once", "[runtime][concurrency]") {
  Runtime rt{small_runtime()};
  REQUIRE(rt.register_engine(cpu_engine()).ok());
  std::vector<std::shared_ptr<const SemanticProgram>> programs;
  for (int k = 0; k < 10; ++k) programs.push_back(affine(k));
  const HostTensor x = iota8();
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 64; ++t)
    clients.emplace_back([&, t] {
      for (int r = 0; r < 500; ++r) {
        const int k = (t + r) % 10;
        auto out = rt.run(programs[k], {x}).get();
        if (!out.ok()) {
          ++failed;
          continue;
        }
        const float* y = (*out)[0].data_as<float>();
        for (int i = 0; i < 8; ++i)
          if (y[i] != static_cast<float>(i * (k + 1) + k)) ++wrong;
      }
    });
  for (auto& c : clients) c.join();
  CHECK(failed == 0);
  CHECK(wrong == 0);
  const CacheStats stats = rt.cache_stats();
  CHECK(stats.productions == 10);
  CHECK(stats.entries == 10);
  CHECK(stats.misses == 10);
  CHECK(stats.hits + stats.misses + stats.in_flight_joins == 64u * 500u);
}

TEST_CASE("a transient failure is not cached, every waiter gets it, and the next request produces again",
          "[runtime]") {
  Runtime rt{small_runtime()};
  auto engine = std::make_shared<testing::ScriptedEngine>("flaky", std::vector<std::string>{"host"});
  std::promise<void> open;
  std::shared_future<void> gate = open.get_future().share();
  engine->answer = [gate](const OpPrepareRequest&) -> PrepareAnswer {
    gate.wait();
    return Error{ErrorCode::LimitExceeded, "workspace busy"};
  };
  REQUIRE(rt.register_engine(engine).ok());
  auto program = batched();
  std::vector<std::future<Result<PreparedProgramPtr>>> waiting;
  for (int i = 0; i < 8; ++i) waiting.push_back(rt.prepare(program, {f32_input({2, 4})}));
  REQUIRE(eventually([&] { return rt.cache_stats().in_flight_joins == 7; }));
  open.set_value();
  for (auto& f : waiting) {
    auto r = f.get();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code() == ErrorCode::LimitExceeded);
    CHECK(r.error().message().find("workspace busy") != std::string::npos);
  }
  CHECK(engine->calls == 1);
  auto again = rt.prepare(program, {f32_input({2, 4})}).get();
  REQUIRE_FALSE(again.ok());
  CHECK(engine->calls == 2);  // produced again: not cached
  const CacheStats stats = rt.cache_stats();
  CHECK(stats.productions == 2);
  CHECK(stats.transient_failures == 2);
  CHECK(stats.entries == 0);
}

TEST_CASE("a deterministic failure is cached and served without work", "[runtime]") {
  Runtime rt{small_runtime()};
  auto engine = std::make_shared<testing::ScriptedEngine>("picky", std::vector<std::string>{"host"});
  engine->answer = [](const OpPrepareRequest&) -> PrepareAnswer { return Unsupported{"no negate here"}; };
  REQUIRE(rt.register_engine(engine).ok());
  auto program = batched();
  auto first = rt.prepare(program, {f32_input({2, 4})}).get();
  REQUIRE_FALSE(first.ok());
  CHECK(first.error().code() == ErrorCode::Unsupported);
  auto second = rt.prepare(program, {f32_input({2, 4})}).get();
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().code() == ErrorCode::Unsupported);
  CHECK(engine->calls == 1);
  const CacheStats stats = rt.cache_stats();
  CHECK(stats.deterministic_failures == 1);
  CHECK(stats.deterministic_failures_served == 1);
  CHECK(stats.entries == 1);
}

TEST_CASE("redirects share one root and keep one entry per concrete shape", "[runtime]") {
  Runtime rt{small_runtime()};
  auto engine = std::make_shared<testing::ScriptedEngine>("shapes", std::vector<std::string>{"host"});
  engine->answer = [](const OpPrepareRequest& r) -> PrepareAnswer {
    if (!r.specialization.inputs.empty() && !r.specialization.inputs[0].concrete_dims.empty())
      return PreparedOp::answering(r);
    InputRequirement x;
    x.concrete_dims = {0};
    return NeedsSpecialization{SpecializationRequirements{{x}}, "needs the batch"};
  };
  REQUIRE(rt.register_engine(engine).ok());
  auto program = batched();
  auto p2 = rt.prepare(program, {f32_input({2, 4})}).get();
  auto p3 = rt.prepare(program, {f32_input({3, 4})}).get();
  auto p2b = rt.prepare(program, {f32_input({2, 4})}).get();
  REQUIRE(p2.ok());
  REQUIRE(p3.ok());
  REQUIRE(p2b.ok());
  CHECK((*p2)->root == (*p3)->root);  // one shared root
  CHECK(*p2b == *p2);
  CHECK((*p2)->projection.inputs[0].concrete_dims == std::vector<ConcreteDim>{{0, 2}});
  CHECK((*p3)->projection.inputs[0].concrete_dims == std::vector<ConcreteDim>{{0, 3}});
  const CacheStats stats = rt.cache_stats();
  CHECK(stats.entries == 3);  // the polymorphic redirect and two concrete entries
  CHECK(stats.roots == 1);
  CHECK(stats.redirects == 1);
  CHECK(stats.redirects_served == 1);  // the batch-3 request met the stored redirect
  CHECK(stats.productions == 3);       // the redirect and two entries; the repeat was a hit
}

TEST_CASE("retry-limit and non-widening errors reach the caller", "[runtime]") {
  Runtime rt{small_runtime()};
  auto engine = std::make_shared<testing::ScriptedEngine>("greedy", std::vector<std::string>{"host"});
  engine->answer = [](const OpPrepareRequest&) -> PrepareAnswer {
    return NeedsSpecialization{SpecializationRequirements{}, "nothing new"};
  };
  REQUIRE(rt.register_engine(engine).ok());
  auto r = rt.prepare(batched(), {f32_input({2, 4})}).get();
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::NonWideningSpecialization);

  engine->answer = [](const OpPrepareRequest& req) -> PrepareAnswer {
    SpecializationRequirements next = req.specialization;
    InputRequirement& x = next.inputs.edit()[0];
    x.alignment_log2 = x.alignment_log2 ? *x.alignment_log2 + 1 : 0;  // widens forever
    return NeedsSpecialization{next, "more alignment"};
  };
  Runtime rt2{small_runtime()};
  REQUIRE(rt2.register_engine(engine).ok());
  auto input = f32_input({2, 4});
  input.alignment_log2.reset();  // unknown alignment: no alignment edges in the bound
  auto limited = rt2.prepare(batched(), {input}).get();
  REQUIRE_FALSE(limited.ok());
  CHECK(limited.error().code() == ErrorCode::SpecializationRetryLimitExceeded);
}

TEST_CASE("a small byte budget evicts least recently used entries", "[runtime]") {
  RuntimeOptions o = small_runtime();
  const uint64_t one = tenact::testing::affine_entry_bytes(o, cpu_engine());  // one entry with its root
  o.cache_byte_budget = one + one / 2;  // room for one such entry, not two
  Runtime rt{o};
  REQUIRE(rt.register_engine(cpu_engine()).ok());
  for (int k = 0; k < 3; ++k) REQUIRE(rt.run(affine(k), {iota8()}).get().ok());
  CacheStats stats = rt.cache_stats();
  CHECK(stats.entries == 1);
  CHECK(stats.evictions == 2);
  CHECK(stats.bytes <= o.cache_byte_budget);
  CHECK(stats.productions == 3);
  // The evicted program is produced again; the kept one is a hit.
  REQUIRE(rt.run(affine(2), {iota8()}).get().ok());
  REQUIRE(rt.run(affine(0), {iota8()}).get().ok());
  stats = rt.cache_stats();
  CHECK(stats.productions == 4);
  CHECK(stats.evictions == 3);
}

TEST_CASE("registering an engine bumps the epoch and the next request produces anew", "[runtime]") {
  Runtime rt{small_runtime()};
  REQUIRE(rt.register_engine(cpu_engine()).ok());
  const uint64_t epoch = rt.config()->epoch();
  REQUIRE(rt.run(affine(1), {iota8()}).get().ok());
  REQUIRE(rt.run(affine(1), {iota8()}).get().ok());
  CHECK(rt.cache_stats().productions == 1);
  REQUIRE(rt.register_engine(cpu_engine("cpu:1"), 5).ok());
  CHECK(rt.config()->epoch() == epoch + 1);
  REQUIRE(rt.run(affine(1), {iota8()}).get().ok());
  const CacheStats stats = rt.cache_stats();
  CHECK(stats.productions == 2);
  CHECK(stats.entries == 1);  // the old epoch's entry was reclaimed
}

namespace {

// An engine whose kernels take `delay` on a thread of its own.
class SlowEngine final : public Engine {
 public:
  explicit SlowEngine(std::chrono::milliseconds delay) : delay_(delay), inner_(cpu_engine("slow")) {}
  ~SlowEngine() override {
    for (auto& t : threads_) t.join();
  }
  const EngineIdentity& identity() const override { return inner_->identity(); }
  const EngineCapabilities& capabilities() const override { return inner_->capabilities(); }
  PrepareAnswer prepare(const OpPrepareRequest& r) override { return inner_->prepare(r); }
  Result<HostTensor> allocate(std::string_view s, DType d, std::vector<int64_t> shape) override {
    return inner_->allocate(s, d, std::move(shape));
  }
  void launch(std::shared_ptr<const PreparedOp> op, std::vector<HostTensor> in, SymbolBindings sym,
              LaunchCompletion done) override {
    std::lock_guard lock(mutex_);
    threads_.emplace_back([this, op, in = std::move(in), sym = std::move(sym), done = std::move(done)]() mutable {
      std::this_thread::sleep_for(delay_);
      inner_->launch(op, std::move(in), std::move(sym), std::move(done));
    });
  }

 private:
  std::chrono::milliseconds delay_;
  std::shared_ptr<cpu::CpuEngine> inner_;
  std::mutex mutex_;
  std::vector<std::thread> threads_;
};

}  // namespace

TEST_CASE("an engine actor killed mid-run fails that run within a second", "[runtime]") {
  // Both paths: the single batch sent to the engine directly (its watch
  // fails the run) and the pipeline actor (it monitors the engine actor).
  for (bool direct : {true, false}) {
    INFO("direct single batch: " << direct);
    auto slow = std::make_shared<SlowEngine>(1500ms);
    RuntimeOptions o = small_runtime();
    o.direct_single_batch = direct;
    Runtime rt{o};
    REQUIRE(rt.register_engine(slow).ok());
    auto running = rt.run(affine(3), {iota8()});
    std::this_thread::sleep_for(100ms);
    caf::anon_send_exit(rt.impl().engine_actor("slow"), caf::exit_reason::kill);
    const auto killed_at = std::chrono::steady_clock::now();
    REQUIRE(running.wait_for(1s) == std::future_status::ready);
    CHECK(std::chrono::steady_clock::now() - killed_at < 1s);
    auto r = running.get();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code() == ErrorCode::EngineDown);
    CHECK(r.error().message().find("engine 'slow'") != std::string::npos);
    // Later runs on another engine succeed.
    REQUIRE(rt.register_engine(cpu_engine(), 0).ok());
    PrepareOptions on_cpu;
    on_cpu.placement.engines = {"cpu"};
    auto later = rt.run(affine(3), {iota8()}, on_cpu).get();
    REQUIRE(later.ok());
    CHECK((*later)[0].data_as<float>()[7] == 7.0f * 4 + 3);
  }
}

TEST_CASE("a run past its deadline fails with Timeout on both paths", "[runtime]") {
  for (bool direct : {true, false}) {
    INFO("direct single batch: " << direct);
    auto slow = std::make_shared<SlowEngine>(1200ms);
    RuntimeOptions o = small_runtime();
    o.direct_single_batch = direct;
    o.run_deadline = 200ms;
    Runtime rt{o};
    REQUIRE(rt.register_engine(slow).ok());
    const auto start = std::chrono::steady_clock::now();
    auto r = rt.run(affine(1), {iota8()}).get();
    const auto took = std::chrono::steady_clock::now() - start;
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code() == ErrorCode::Timeout);
    CHECK(r.error().message() == "the run passed its deadline of 200 ms");
    CHECK(took < 1000ms);
  }
}

TEST_CASE("the pipeline actor path gives the hand-derived results", "[runtime]") {
  RuntimeOptions o = small_runtime();
  o.direct_single_batch = false;
  Runtime rt{o};
  auto engine = cpu_engine();
  REQUIRE(rt.register_engine(engine).ok());
  std::vector<std::future<Result<std::vector<HostTensor>>>> runs;
  for (int k = 0; k < 10; ++k) runs.push_back(rt.run(affine(k), {iota8()}));
  for (int k = 0; k < 10; ++k) {
    auto out = runs[k].get();
    REQUIRE(out.ok());
    for (int i = 0; i < 8; ++i) CHECK((*out)[0].data_as<float>()[i] == static_cast<float>(i * (k + 1) + k));
  }
  CHECK(engine->fused_counters().regions_run == 10);
}

TEST_CASE("destroying the runtime with 1,000 requests in flight fails them and does not hang", "[runtime]") {
  std::vector<std::future<Result<std::vector<HostTensor>>>> futures;
  {
    Runtime rt{small_runtime()};
    REQUIRE(rt.register_engine(cpu_engine()).ok());
    std::vector<std::shared_ptr<const SemanticProgram>> programs;
    for (int k = 0; k < 10; ++k) programs.push_back(affine(k));
    for (int i = 0; i < 1000; ++i) futures.push_back(rt.run(programs[i % 10], {iota8()}));
  }
  REQUIRE(futures.size() == 1000);
  testing::check_answered_or_shut_down(futures);
}

TEST_CASE("requests after shutdown began and bad requests get clear errors", "[runtime]") {
  Runtime rt{small_runtime()};
  auto none = rt.run(affine(0), {iota8()}).get();
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().code() == ErrorCode::NoEligibleEngine);
  REQUIRE(rt.register_engine(cpu_engine()).ok());
  auto wrong = HostTensor::zeros(DType::F64, {8});
  REQUIRE(wrong.ok());
  auto bad = rt.run(affine(0), {*wrong}).get();
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code() == ErrorCode::InputMismatch);
  auto missing = rt.execute(nullptr, {}).get();
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code() == ErrorCode::InvalidAttribute);
  CHECK(rt.add_route(TransferRoute{{"cpu", "host"}, {"x", "host"}, "warp_drive"}).error().code() ==
        ErrorCode::Unsupported);
}

TEST_CASE("planned regions run fused through the pipeline", "[runtime]") {
  Runtime rt{small_runtime()};
  auto engine = cpu_engine();
  REQUIRE(rt.register_engine(engine).ok());
  ExecutionStats stats;
  auto prepared = rt.prepare(affine(4), {describe_input(iota8(), Endpoint{})}).get();
  REQUIRE(prepared.ok());
  REQUIRE((*prepared)->root->regions.size() == 1);  // multiply and add, with both splats
  std::promise<Result<std::vector<HostTensor>>> done;
  rt.execute(*prepared, {iota8()}, [&](Result<std::vector<HostTensor>> r) { done.set_value(std::move(r)); }, &stats);
  auto out = done.get_future().get();
  REQUIRE(out.ok());
  for (int i = 0; i < 8; ++i) CHECK((*out)[0].data_as<float>()[i] == static_cast<float>(i * 5 + 4));
  CHECK(engine->fused_counters().regions_run == 1);
  CHECK(engine->fused_counters().ops_fused == 2);
  CHECK(stats.batches == 1);  // one engine, one batch
  CHECK(stats.units == 1);    // the region is the program's only unit
}

TEST_CASE("run() counts the prepares the memo did not answer, and a planned region compiles once over runs",
          "[runtime]") {
  Runtime rt{small_runtime()};
  auto engine = cpu_engine();
  REQUIRE(rt.register_engine(engine).ok());
  for (int k = 0; k < 3; ++k) {
    CAPTURE(k);
    ExecutionStats stats;
    auto out = rt.run(affine(4), {iota8()}, PrepareOptions{}, &stats).get();
    REQUIRE(out.ok());
    for (int i = 0; i < 8; ++i) CHECK((*out)[0].data_as<float>()[i] == static_cast<float>(i * 5 + 4));
    CHECK(stats.prepare_requests == (k == 0 ? 1u : 0u));  // later runs: memo hits, no message
  }
  CHECK(engine->fused_counters().regions_run == 3);
  CHECK(engine->fused_counters().regions_compiled == 1);  // kept in the prepared plan's region memo
}

TEST_CASE("an input placed on a second engine moves along its route, traced", "[runtime]") {
  RuntimeOptions o = small_runtime();
  o.trace = std::make_shared<TraceRecorder>();
  Runtime rt{o};
  REQUIRE(rt.register_engine(cpu_engine("cpu"), 0).ok());
  REQUIRE(rt.register_engine(cpu_engine("cpu:1"), 1).ok());
  REQUIRE(rt.add_route(TransferRoute{{"cpu:1", "host"}, {"cpu", "host"}, "host_copy"}).ok());
  const HostTensor x = iota8();
  auto prepared = rt.prepare(affine(2), {describe_input(x, Endpoint{"cpu:1", "host"})}, testing::by_preference()).get();
  REQUIRE(prepared.ok());
  CHECK((*prepared)->root->schedule->transfer_count() == 1);
  ExecutionStats stats;
  std::promise<Result<std::vector<HostTensor>>> done;
  rt.execute(*prepared, {x}, [&](Result<std::vector<HostTensor>> r) { done.set_value(std::move(r)); }, &stats);
  auto out = done.get_future().get();
  REQUIRE(out.ok());
  for (int i = 0; i < 8; ++i) CHECK((*out)[0].data_as<float>()[i] == static_cast<float>(i * 3 + 2));
  CHECK(stats.transfers == 1);
  CHECK((*out)[0].data() != x.data());
  const std::string trace = o.trace->to_json();
  CHECK(trace.find("\"name\": \"transfer cpu:1/host -> cpu/host\"") != std::string::npos);
  CHECK(trace.find("\"name\": \"transfer 'x'\"") != std::string::npos);
  CHECK(trace.find("engine cpu / thread") != std::string::npos);
  CHECK(trace.find("miss 'affine2'") != std::string::npos);
}

TEST_CASE("an op that fails at run time names the op and engine and frees the run", "[runtime]") {
  Runtime rt{small_runtime()};
  auto engine = std::make_shared<testing::ScriptedEngine>("broken", std::vector<std::string>{"host"});
  REQUIRE(rt.register_engine(engine).ok());  // prepares everything, runs nothing
  auto out = rt.run(affine(1), {iota8()}).get();
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().message().find("scripted engine runs nothing") != std::string::npos);
  CHECK(out.error().message().find("at broken/host") != std::string::npos);
}

namespace {

void gateway_client(caf::event_based_actor* self, runtime_gateway gw, RunRequestPtr request,
                    std::shared_ptr<std::promise<RunResultPtr>> got,
                    std::shared_ptr<std::promise<CacheStatsReply>> stats) {
  self->request(gw, std::chrono::seconds(10), msg::run_atom::value, request).then([=](const RunResultPtr& r) {
    got->set_value(r);
    self->request(gw, std::chrono::seconds(10), msg::cache_stats_atom::value)
        .then([=](const CacheStatsReply& s) { stats->set_value(s); });
  });
}

}  // namespace

TEST_CASE("a CAF actor runs programs through the typed gateway", "[runtime][caf]") {
  Runtime rt{small_runtime()};
  REQUIRE(rt.register_engine(cpu_engine()).ok());
  auto request = std::make_shared<const RunRequest>(RunRequest{affine(6), {iota8()}, {}});
  auto got = std::make_shared<std::promise<RunResultPtr>>();
  auto stats = std::make_shared<std::promise<CacheStatsReply>>();
  auto future = got->get_future();
  auto stats_future = stats->get_future();
  // A client that is itself an event-based actor: request, then, no
  // blocking. (Spawned from a function with arguments: CAF 0.17's
  // argument-less spawn binds a null tuple pointer, which UBSan reports.)
  actor_system_of(rt).spawn(gateway_client, gateway_of(rt), request, got, stats);
  REQUIRE(future.wait_for(10s) == std::future_status::ready);
  RunResultPtr result = future.get();
  REQUIRE(result);
  REQUIRE(result->ok());
  for (int i = 0; i < 8; ++i) CHECK((**result)[0].data_as<float>()[i] == static_cast<float>(i * 7 + 6));
  REQUIRE(stats_future.wait_for(10s) == std::future_status::ready);
  CHECK(stats_future.get()->productions == 1);
}

TEST_CASE("cache_in_flight off retains nothing and clear empties the cache", "[runtime]") {
  Runtime rt{small_runtime()};
  REQUIRE(rt.register_engine(cpu_engine()).ok());
  PrepareOptions transient;
  transient.cache_in_flight = false;
  REQUIRE(rt.run(affine(1), {iota8()}, transient).get().ok());
  REQUIRE(rt.run(affine(1), {iota8()}, transient).get().ok());
  CacheStats stats = rt.cache_stats();
  CHECK(stats.productions == 2);  // nothing kept between them
  CHECK(stats.entries == 0);
  CHECK(stats.bytes == 0);
  REQUIRE(rt.run(affine(1), {iota8()}).get().ok());
  REQUIRE(rt.run(affine(1), {iota8()}).get().ok());
  stats = rt.cache_stats();
  CHECK(stats.productions == 3);
  CHECK(stats.entries == 1);
  rt.clear_cache();
  stats = rt.cache_stats();
  CHECK(stats.entries == 0);
  CHECK(stats.bytes == 0);
  REQUIRE(rt.run(affine(1), {iota8()}).get().ok());
  CHECK(rt.cache_stats().productions == 4);  // produced again after clear
}

namespace {

// A runtime on CAF's deterministic test coordinator (nothing runs until the
// test drives it) with one scripted engine "det".
RuntimeOptions deterministic_runtime() {
  RuntimeOptions o = small_runtime();
  o.deterministic_scheduler = true;
  return o;
}

std::shared_ptr<testing::ScriptedEngine> det_engine(Runtime& rt) {
  auto engine = std::make_shared<testing::ScriptedEngine>("det", std::vector<std::string>{"host"});
  REQUIRE(rt.register_engine(engine).ok());
  return engine;
}

}  // namespace

TEST_CASE("requests for one key meet in the cache actor's mailbox, in message order", "[runtime][caf]") {
  // CAF's deterministic test coordinator: nothing runs until the test
  // drives it, so the order of the messages is exactly the order sent.
  Runtime rt{deterministic_runtime()};
  auto engine = det_engine(rt);
  auto program = batched();
  std::vector<std::future<Result<PreparedProgramPtr>>> waiting;
  for (int i = 0; i < 3; ++i) waiting.push_back(rt.prepare(program, {f32_input({2, 4})}));
  for (auto& f : waiting) CHECK(f.wait_for(0s) == std::future_status::timeout);
  CHECK(engine->calls == 0);
  // Turn 1: the first request misses and schedules its production as a
  // later message; requests 2 and 3 join it; the production answers all.
  CHECK(drive_scheduler(actor_system_of(rt)) > 0);
  std::vector<PreparedProgramPtr> got;
  for (auto& f : waiting) {
    REQUIRE(f.wait_for(0s) == std::future_status::ready);
    auto r = f.get();
    REQUIRE(r.ok());
    got.push_back(*r);
  }
  CHECK(got[0] == got[1]);
  CHECK(got[1] == got[2]);
  CHECK(engine->calls == 1);  // one op, prepared once
  // A repeat is answered by the facade at once, without the actor.
  auto again = rt.prepare(program, {f32_input({2, 4})});
  REQUIRE(again.wait_for(0s) == std::future_status::ready);
  CHECK(again.get().value() == got[0]);
  CHECK(engine->calls == 1);
}

TEST_CASE("an answer to a request made before clear_cache is not remembered by the memo", "[runtime][caf]") {
  // The cache actor alone writes the memo: it remembers a Ready answer only
  // when the request was made under the newest generation it was told of.
  Runtime rt{deterministic_runtime()};
  det_engine(rt);
  auto program = batched();
  auto before = rt.prepare(program, {f32_input({2, 4})});
  rt.clear_cache();  // reaches the actor after the prepare, before its production
  CHECK(drive_scheduler(actor_system_of(rt)) > 0);
  REQUIRE(before.wait_for(0s) == std::future_status::ready);
  REQUIRE(before.get().ok());
  // Not answered by the facade at once: the memo did not keep the answer.
  auto after = rt.prepare(program, {f32_input({2, 4})});
  CHECK(after.wait_for(0s) == std::future_status::timeout);
  CHECK(drive_scheduler(actor_system_of(rt)) > 0);
  REQUIRE(after.wait_for(0s) == std::future_status::ready);
  auto kept = after.get();
  REQUIRE(kept.ok());
  CHECK(rt.impl().memo().hits() == 0);
  // Made and answered in the new generation: remembered, so a repeat is
  // answered at once.
  auto repeat = rt.prepare(program, {f32_input({2, 4})});
  REQUIRE(repeat.wait_for(0s) == std::future_status::ready);
  CHECK(repeat.get().value() == *kept);
  CHECK(rt.impl().memo().hits() == 1);
}

TEST_CASE("a pipeline plan is built with its entry, dropped with the cache and rebuilt by a run", "[runtime]") {
  Runtime rt{small_runtime()};
  REQUIRE(rt.register_engine(cpu_engine()).ok());
  auto prepared = rt.prepare(affine(1), {describe_input(iota8(), Endpoint{})}).get();
  REQUIRE(prepared.ok());
  // Built on the planning thread that produced the entry, before any run.
  CHECK(rt.impl().plans().find(**prepared) != nullptr);
  rt.clear_cache();
  (void)rt.cache_stats();  // answered after the cache actor handled the clear
  CHECK(rt.impl().plans().find(**prepared) == nullptr);
  // A run of the program still held builds its plan, and the cache actor keeps it.
  auto r = rt.execute(*prepared, {iota8()}).get();
  REQUIRE(r.ok());
  CHECK((*r)[0].data_as<float>()[7] == 7.0f * 2 + 1);  // affine(1): y = 2 x + 1
  (void)rt.cache_stats();
  CHECK(rt.impl().plans().find(**prepared) != nullptr);
  // A new epoch drops every plan and memo entry.
  REQUIRE(rt.register_engine(cpu_engine("cpu:2")).ok());
  (void)rt.cache_stats();
  CHECK(rt.impl().plans().find(**prepared) == nullptr);
}

namespace {

// Set by a thread around its own call into the runtime: a callback that
// sees it set ran on that thread, inside that call.
thread_local bool t_inside_call = false;

// affine(2) on iota8(): y = 3 i + 2. A plain predicate: callbacks run on
// other threads, where Catch's assertions must not be used.
bool is_affine2(const Result<std::vector<HostTensor>>& r) {
  if (!r.ok() || r->size() != 1) return false;
  for (int i = 0; i < 8; ++i)
    if ((*r)[0].data_as<float>()[i] != static_cast<float>(i * 3 + 2)) return false;
  return true;
}

void check_affine2(const Result<std::vector<HostTensor>>& r) {
  REQUIRE(r.ok());
  for (int i = 0; i < 8; ++i) CHECK((*r)[0].data_as<float>()[i] == static_cast<float>(i * 3 + 2));
}

// What a callback saw: a correct result, and whether it ran inside the
// call that issued its run.
struct Observed {
  bool correct = false;
  bool inside = false;
};
using ObservedPromise = std::shared_ptr<std::promise<Observed>>;

ExecuteCallback observe(ObservedPromise into) {
  return [into](Result<std::vector<HostTensor>> r) { into->set_value(Observed{is_affine2(r), t_inside_call}); };
}

Observed wait_for_observed(const ObservedPromise& p) {
  auto f = p->get_future();
  REQUIRE(f.wait_for(10s) == std::future_status::ready);
  return f.get();
}

// An actor that issues one run from its CAF scheduler thread and reports
// whether the callback ran inside that call.
void run_from_actor(caf::event_based_actor* self, Runtime* rt, std::shared_ptr<const SemanticProgram> program,
                    ObservedPromise observed) {
  t_inside_call = true;
  rt->run(program, {iota8()}, {}, observe(std::move(observed)));
  t_inside_call = false;
  self->quit();
}

}  // namespace

TEST_CASE("a small run issued on a client thread runs there, and one issued on a runtime thread does not", "[runtime][inline]") {
  Runtime rt{small_runtime()};
  auto engine = cpu_engine();
  REQUIRE(rt.register_engine(engine).ok());
  auto program = affine(2);
  check_affine2(rt.run(program, {iota8()}).get());  // prepared: later runs hit the memo
  const uint64_t inline_before = engine->inline_batches();

  // From this client thread: the batch runs here, the callback before run() returns.
  auto here = std::make_shared<std::promise<Observed>>();
  t_inside_call = true;
  rt.run(program, {iota8()}, {}, observe(here));
  t_inside_call = false;
  const Observed direct = wait_for_observed(here);
  CHECK(direct.correct);
  CHECK(direct.inside);
  CHECK(engine->inline_batches() == inline_before + 1);

  // From a run's completion (a runtime thread even when the caller ran the
  // batch): the nested run goes to the engine's threads.
  auto outer = std::make_shared<std::promise<Observed>>();
  auto nested = std::make_shared<std::promise<Observed>>();
  rt.run(program, {iota8()}, {}, [&rt, program, outer, nested](Result<std::vector<HostTensor>> r) {
    t_inside_call = true;
    rt.run(program, {iota8()}, {}, observe(nested));
    t_inside_call = false;
    outer->set_value(Observed{is_affine2(r), false});
  });
  CHECK(wait_for_observed(outer).correct);
  const Observed from_completion = wait_for_observed(nested);
  CHECK(from_completion.correct);
  CHECK_FALSE(from_completion.inside);

  // From a CAF scheduler thread: never inline.
  auto from_actor = std::make_shared<std::promise<Observed>>();
  actor_system_of(rt).spawn(run_from_actor, &rt, program, from_actor);
  const Observed on_caf = wait_for_observed(from_actor);
  CHECK(on_caf.correct);
  CHECK_FALSE(on_caf.inside);
  CHECK(engine->inline_batches() == inline_before + 2);  // the outer run of the nested pair only
}

TEST_CASE("caller_runs_small_batches off sends every batch to the engine's threads", "[runtime][inline]") {
  RuntimeOptions o = small_runtime();
  o.caller_runs_small_batches = false;
  Runtime rt{o};
  auto engine = cpu_engine();
  REQUIRE(rt.register_engine(engine).ok());
  auto program = affine(2);
  check_affine2(rt.run(program, {iota8()}).get());
  for (int i = 0; i < 20; ++i) {
    auto done = std::make_shared<std::promise<Observed>>();
    t_inside_call = true;
    rt.run(program, {iota8()}, {}, observe(done));
    t_inside_call = false;
    const Observed seen = wait_for_observed(done);
    CHECK(seen.correct);
    CHECK_FALSE(seen.inside);
  }
  CHECK(engine->inline_batches() == 0);
}

TEST_CASE("under the deterministic scheduler a run answered while the test drives the actors is not inline",
          "[runtime][inline][caf]") {
  // The test thread runs the actors' handlers inside drive_scheduler: it is
  // a runtime thread for that time, so the run the cache actor's answer
  // starts goes to the engine's threads.
  RuntimeOptions o = small_runtime();
  o.deterministic_scheduler = true;
  Runtime rt{o};
  auto engine = cpu_engine();
  REQUIRE(rt.register_engine(engine).ok());
  auto answered = std::make_shared<std::promise<Observed>>();
  rt.run(affine(2), {iota8()}, {}, observe(answered));
  t_inside_call = true;
  const size_t jobs = drive_scheduler(actor_system_of(rt));
  t_inside_call = false;
  CHECK(jobs > 0);
  const Observed seen = wait_for_observed(answered);
  CHECK(seen.correct);
  CHECK_FALSE(seen.inside);
  CHECK(engine->inline_batches() == 0);
}
