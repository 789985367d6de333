// What a Runtime accepts beyond the happy path: a prepared program runs
// only where it is valid (runtime, engine registrations, routes), the
// prepare cache's recency sees the uses its memo answers, and a runtime
// whose threads cannot start refuses requests with the reason. Expected
// values are derived by hand.
#include <catch2/catch.hpp>

#include <atomic>

#include "actors/runtime.hpp"
#include "core/program_json.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "tests/actors/affine_programs.hpp"
#include "tests/engines/cpu/test_engine.hpp"

using namespace tenact;
using tenact::testing::affine;
using tenact::testing::iota8;
using tenact::testing::small_runtime;

namespace {

void check_affine(const Result<std::vector<HostTensor>>& out, int k) {
  REQUIRE(out.ok());
  for (int i = 0; i < 8; ++i) CHECK((*out)[0].data_as<float>()[i] == static_cast<float>(i * (k + 1) + k));
}

// A CPU engine of one worker thread (regions fused unless told otherwise).
std::shared_ptr<cpu::CpuEngine> one_thread_engine(std::string id = "cpu", bool fuse = true) {
  cpu::CpuEngineOptions o;
  o.id = std::move(id);
  o.threads = 1;
  o.fuse_regions = fuse;
  return cpu::test_engine(o);
}

PreparedProgramPtr prepare_on(Runtime& rt, int k, PrepareOptions options = {},
                              Endpoint placement = Endpoint{}) {
  auto prepared = rt.prepare(affine(k), {describe_input(iota8(), placement)}, options).get();
  REQUIRE(prepared.ok());
  return *prepared;
}

Error execute_error(Runtime& rt, const PreparedProgramPtr& prepared) {
  auto out = rt.execute(prepared, {iota8()}).get();
  REQUIRE_FALSE(out.ok());
  return out.error();
}

}  // namespace

TEST_CASE("a plan prepared by another runtime is refused, naming both", "[runtime][validity]") {
  RuntimeOptions o1 = small_runtime(), o2 = small_runtime();
  o1.runtime_id = 71;
  o2.runtime_id = 72;
  Runtime here{o1}, there{o2};
  REQUIRE(here.register_engine(one_thread_engine()).ok());
  REQUIRE(there.register_engine(one_thread_engine()).ok());
  const PreparedProgramPtr prepared = prepare_on(there, 1);
  const Error e = execute_error(here, prepared);
  CHECK(e.code() == ErrorCode::BindingMismatch);
  CHECK(e.message() ==
        "the plan of program 'affine1' was prepared by runtime 72, not by this one (runtime 71): prepare it here");
  check_affine(there.execute(prepared, {iota8()}).get(), 1);
}

TEST_CASE("a plan runs as prepared when only what it does not use moved", "[runtime][validity]") {
  Runtime rt{small_runtime()};
  REQUIRE(rt.register_engine(one_thread_engine("cpu"), 1).ok());
  const PreparedProgramPtr prepared = prepare_on(rt, 2);
  const uint64_t epoch = rt.config()->epoch();
  // A more preferred engine, a route and its removal: three new epochs, none
  // touching the engine or routes the plan uses.
  REQUIRE(rt.register_engine(one_thread_engine("cpu:1"), 0).ok());
  REQUIRE(rt.add_route(TransferRoute{{"cpu:1", "host"}, {"cpu", "host"}, "host_copy"}).ok());
  REQUIRE(rt.remove_route({"cpu:1", "host"}, {"cpu", "host"}).ok());
  REQUIRE(rt.config()->epoch() == epoch + 3);
  check_affine(rt.execute(prepared, {iota8()}).get(), 2);
  CHECK((*rt.prepare(affine(2), {describe_input(iota8(), Endpoint{})}).get())->root->identity->root_placement ==
        Endpoint{"cpu:1", "host"});  // a new preparation takes the new engine
}

TEST_CASE("a plan whose engine was removed or registered again is refused", "[runtime][validity]") {
  Runtime rt{small_runtime()};
  REQUIRE(rt.register_engine(one_thread_engine("cpu"), 0).ok());
  REQUIRE(rt.register_engine(one_thread_engine("cpu:1"), 1).ok());
  PrepareOptions on_second;
  on_second.placement.engines = {"cpu:1"};

  SECTION("removed") {
    const PreparedProgramPtr prepared = prepare_on(rt, 3, on_second);
    const uint64_t epoch = rt.config()->epoch();
    REQUIRE(rt.remove_engine("cpu:1").ok());
    const Error e = execute_error(rt, prepared);
    CHECK(e.code() == ErrorCode::BindingMismatch);
    CHECK(e.message() == "the plan of program 'affine3' uses engine 'cpu:1', which was removed since it was "
                         "prepared (epoch " + std::to_string(epoch) + ", now " + std::to_string(epoch + 1) +
                             "): prepare it again");
  }
  SECTION("registered again with other capabilities") {
    const PreparedProgramPtr prepared = prepare_on(rt, 3, on_second);
    const uint64_t registration = rt.config()->find_engine("cpu:1")->identity.registration;
    REQUIRE(rt.register_engine(one_thread_engine("cpu:1", /*fuse=*/false), 1).ok());
    const Error e = execute_error(rt, prepared);
    CHECK(e.code() == ErrorCode::BindingMismatch);
    CHECK_THAT(e.message(), Catch::StartsWith("the plan of program 'affine3' uses engine 'cpu:1' of registration " +
                                              std::to_string(registration) +
                                              ", which was registered again (registration " +
                                              std::to_string(registration + 1) + ") since it was prepared"));
    // Prepared again, it runs.
    check_affine(rt.execute(prepare_on(rt, 3, on_second), {iota8()}).get(), 3);
  }
  SECTION("registered again, same capabilities") {
    const PreparedProgramPtr prepared = prepare_on(rt, 3, on_second);
    REQUIRE(rt.register_engine(one_thread_engine("cpu:1"), 1).ok());
    CHECK(execute_error(rt, prepared).code() == ErrorCode::BindingMismatch);
  }
}

TEST_CASE("a plan whose transfer route was removed or given another provider is refused, and a provider added at run time serves the next plan",
          "[runtime][validity]") {
  Runtime rt{small_runtime()};
  REQUIRE(rt.register_engine(one_thread_engine("cpu"), 0).ok());
  REQUIRE(rt.register_engine(one_thread_engine("cpu:1"), 1).ok());
  REQUIRE(rt.add_route(TransferRoute{{"cpu:1", "host"}, {"cpu", "host"}, "host_copy"}).ok());
  const PreparedProgramPtr prepared = prepare_on(rt, 4, testing::by_preference(), Endpoint{"cpu:1", "host"});
  REQUIRE(prepared->root->schedule->transfer_count() == 1);
  check_affine(rt.execute(prepared, {iota8()}).get(), 4);
  REQUIRE(rt.remove_route({"cpu:1", "host"}, {"cpu", "host"}).ok());
  const Error e = execute_error(rt, prepared);
  CHECK(e.code() == ErrorCode::BindingMismatch);
  CHECK_THAT(e.message(), Catch::StartsWith("the plan of program 'affine4' moves values from cpu:1/host to cpu/host "
                                            "via host_copy, a route that was removed since it was prepared"));

  // A provider added at run time serves the route now: the next preparation
  // uses it; the earlier plan stays refused and never reaches it.
  auto copies = std::make_shared<std::atomic<int>>(0);
  TransferProvider counted{[copies](const TransferRequest& r) {
                             copies->fetch_add(1);
                             return host_copy(r);
                           },
                           {}};
  REQUIRE(rt.add_transfer_provider("counted_copy", counted).ok());
  REQUIRE(rt.add_route(TransferRoute{{"cpu:1", "host"}, {"cpu", "host"}, "counted_copy"}).ok());
  const Error still = execute_error(rt, prepared);
  CHECK(still.code() == ErrorCode::BindingMismatch);
  CHECK_THAT(still.message(), Catch::Contains("via host_copy"));
  CHECK(copies->load() == 0);
  const PreparedProgramPtr again = prepare_on(rt, 4, testing::by_preference(), Endpoint{"cpu:1", "host"});
  check_affine(rt.execute(again, {iota8()}).get(), 4);
  CHECK(copies->load() == 1);
}

TEST_CASE("one provider per name and per route, and a provider that cannot copy a route is refused",
          "[runtime][transfer]") {
  Runtime rt{small_runtime()};
  const uint64_t epoch = rt.config()->epoch();
  auto refused = rt.add_transfer_provider("host_copy", TransferProvider{host_copy, {}});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message() == "transfer provider 'host_copy' is registered already");
  CHECK(rt.add_transfer_provider("nothing", TransferProvider{}).error().message() ==
        "transfer provider 'nothing' has no copy function");
  CHECK(rt.config()->epoch() == epoch);
  // A provider that only serves routes into cpu:1.
  TransferProvider into_cpu1{host_copy, [](const Endpoint&, const Endpoint& to) { return to.engine == "cpu:1"; }};
  REQUIRE(rt.add_transfer_provider("into_cpu1", into_cpu1).ok());
  CHECK(rt.config()->epoch() == epoch + 1);
  CHECK(rt.add_transfer_provider("into_cpu1", into_cpu1).error().message() ==
        "transfer provider 'into_cpu1' is registered already");
  CHECK(rt.add_route(TransferRoute{{"cpu", "host"}, {"cpu:2", "host"}, "into_cpu1"}).error().message() ==
        "transfer provider 'into_cpu1' cannot copy cpu/host -> cpu:2/host");
  REQUIRE(rt.add_route(TransferRoute{{"cpu", "host"}, {"cpu:1", "host"}, "into_cpu1"}).ok());
  auto second = rt.add_route(TransferRoute{{"cpu", "host"}, {"cpu:1", "host"}, "host_copy"});
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().message() ==
        "transfer route cpu/host -> cpu:1/host is served by provider 'into_cpu1' already; remove the route first");
  CHECK(rt.config()->find_route({"cpu", "host"}, {"cpu:1", "host"})->provider == "into_cpu1");
}

TEST_CASE("the prepare cache's recency counts memo hits: A, B, A x1000, C evicts B", "[runtime][cache]") {
  RuntimeOptions o = small_runtime();
  const uint64_t one = tenact::testing::affine_entry_bytes(o, one_thread_engine());  // one entry with its root
  o.cache_byte_budget = 2 * one + one / 2;  // room for two such entries, not three
  Runtime rt{o};
  REQUIRE(rt.register_engine(one_thread_engine()).ok());
  const auto a = affine(0), b = affine(1), c = affine(2);
  check_affine(rt.run(a, {iota8()}).get(), 0);
  check_affine(rt.run(b, {iota8()}).get(), 1);
  for (int i = 0; i < 1000; ++i) REQUIRE(rt.run(a, {iota8()}).get().ok());
  CacheStats s = rt.cache_stats();
  REQUIRE(s.productions == 2);
  REQUIRE(s.hits == 1000);  // all answered by the memo, none by the store
  check_affine(rt.run(c, {iota8()}).get(), 2);
  s = rt.cache_stats();
  CHECK(s.productions == 3);
  CHECK(s.evictions == 1);
  CHECK(s.entries == 2);
  // A, the hot one, is still cached; B was evicted and is produced again.
  REQUIRE(rt.run(a, {iota8()}).get().ok());
  CHECK(rt.cache_stats().productions == 3);
  REQUIRE(rt.run(b, {iota8()}).get().ok());
  CHECK(rt.cache_stats().productions == 4);
}

TEST_CASE("a runtime whose threads cannot start refuses every request with the reason", "[runtime][resources]") {
  RuntimeOptions o = small_runtime();
  o.planning_threads = WorkerPool::kMaxThreads + 1;
  Runtime rt{o};
  REQUIRE_FALSE(rt.status().ok());
  const Error why = rt.status().error();
  CHECK(why.code() == ErrorCode::LimitExceeded);
  CHECK(why.message() == "the runtime's planning threads: a worker pool of 1025 threads is over the limit of 1024");
  CHECK(rt.register_engine(one_thread_engine()).error() == why);
  auto out = rt.run(affine(0), {iota8()}).get();
  REQUIRE_FALSE(out.ok());
  CHECK(out.error() == why);
}
