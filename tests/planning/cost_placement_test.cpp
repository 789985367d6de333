// Cost-aware placement through the preparation context, over scripted
// engines with hand-set cost models: every expected engine, queue, start
// and finish below is computed by hand from the rules of
// planning/cost_placement.hpp (not read back from the code).
//
// The models: launch 0, memory bandwidth so high that the arithmetic term
// wins, f32 at 1e8 ops/s (10 ns an element) on the fast engines. An
// elementwise op over f32[1000] is 1000 ops (the larger of elements read,
// 1000 for tanh, 2000 for an add of two: so an add costs 20,000 ns, a tanh
// 10,000 ns). A route moves f32[1000] (4,000 bytes) in 500 ns latency +
// 4,000 / 4e9 s = 1,500 ns.
#include <catch2/catch.hpp>

#include "planning/preparation_context.hpp"
#include "planning_world.hpp"

using namespace tenact;
using namespace tenact::testing;

namespace {

EngineCostModel cost_model_at(double f32_rate, uint32_t lanes = 1, uint64_t memory = 0) {
  EngineCostModel m;
  m.rates.f32 = f32_rate;
  m.memory_bandwidth = 1e18;
  m.launch_latency_ns = 0;
  m.lanes = lanes;
  m.memory_bytes = memory;
  return m;
}

std::shared_ptr<ScriptedEngine> costed(World& w, const std::string& id, EngineCostModel m, uint32_t queues = 0,
                                       uint32_t preference = 0) {
  auto e = std::make_shared<ScriptedEngine>(id, std::vector<std::string>{"mem"},
                                            std::vector<OpFamily>{OpFamily::Elementwise, OpFamily::Layout});
  e->capabilities_.cost = std::move(m);
  e->capabilities_.queues = queues;
  return w.add(e, preference);
}

void route_with_cost(World& w, const std::string& from, const std::string& to) {
  auto next = w.config->with_route(TransferRoute{{from, "mem"}, {to, "mem"}, "copy", RouteCost{500, 4e9}});
  REQUIRE(next.ok());
  w.config = *next;
}

// p = tanh(x), q = negate(x), r = p + q over f32[1000].
const char* kCostFork = R"({"format": "tenact.program/1", "name": "fork",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [1000]}],
  "ops": [{"op": "tanh", "in": ["x"], "out": "p"},
          {"op": "negate", "in": ["x"], "out": "q"},
          {"op": "add", "in": ["p", "q"], "out": "r"}],
  "outputs": ["r"]})";

// p = tanh(x), q = negate(p) over f32[1000].
const char* kCostChain = R"({"format": "tenact.program/1", "name": "chain2",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [1000]}],
  "ops": [{"op": "tanh", "in": ["x"], "out": "p"},
          {"op": "negate", "in": ["p"], "out": "q"}],
  "outputs": ["q"]})";

Result<PreparationContext> resolve_costed(const World& w, const char* json, Endpoint x = {},
                                          PlacementPolicy policy = PlacementPolicy::Auto) {
  PrepareOptions o;
  o.policy = policy;
  const std::vector<InputDescriptor> inputs{input(DType::F32, {1000}, std::move(x))};
  return resolve_preparation_context(w.config, program_of(json), inputs, o);
}

std::string placed_engine(const PreparationContext& c, size_t i) { return c.dispatch[i].binding.endpoint.engine; }

}  // namespace

TEST_CASE("earliest finish: a fork runs on two engines where its copies pay off", "[planning][placement]") {
  World w;
  costed(w, "a", cost_model_at(1e8));
  costed(w, "b", cost_model_at(1e8));
  route_with_cost(w, "a", "b");
  route_with_cost(w, "b", "a");
  auto c = resolve_costed(w, kCostFork);
  REQUIRE(c.ok());
  // Ranks: p and q 10,000 + 20,000, r 20,000: p, q, r.
  // p: a and b both [0, 10,000]; tie, candidate order: a (x enters at a).
  // q: a [10,000, 20,000]; b needs x copied a -> b: [1,500, 11,500]: b.
  // r: on a, q arrives 11,500 + 1,500 = 13,000: [13,000, 33,000];
  //    on b, p arrives 10,000 + 1,500 = 11,500: [11,500, 31,500]: b.
  const ScheduledGraph& g = *c->schedule;
  REQUIRE(g.placement.size() == 3);
  CHECK(g.placed_by == "earliest_finish");
  CHECK(placed_engine(*c, 0) == "a");
  CHECK(placed_engine(*c, 1) == "b");
  CHECK(placed_engine(*c, 2) == "b");
  CHECK(g.placement[0] == OpPlacement{BatchWork::kAnyQueue, 0, 10000, 0});
  CHECK(g.placement[1] == OpPlacement{BatchWork::kAnyQueue, 1500, 11500, 4000});
  CHECK(g.placement[2] == OpPlacement{BatchWork::kAnyQueue, 11500, 31500, 4000});
  CHECK(c->input_endpoints == std::vector<Endpoint>{{"a", "mem"}});
  CHECK(g.transfer_count() == 2);  // x and p, each a -> b
}

TEST_CASE("earliest finish: a chain stays where its input lives unless another engine finishes first",
          "[planning][placement]") {
  World w;
  costed(w, "a", cost_model_at(1e8));
  costed(w, "b", cost_model_at(1e8));
  route_with_cost(w, "a", "b");
  route_with_cost(w, "b", "a");
  SECTION("x on b: both ops run on b, nothing moves") {
    // p on a would wait 1,500 for x: [1,500, 11,500] against b's [0, 10,000].
    auto c = resolve_costed(w, kCostChain, Endpoint{"b", "mem"});
    REQUIRE(c.ok());
    CHECK(placed_engine(*c, 0) == "b");
    CHECK(placed_engine(*c, 1) == "b");
    CHECK(c->schedule->transfer_count() == 0);
    CHECK(c->schedule->placement[1] == OpPlacement{BatchWork::kAnyQueue, 10000, 20000, 0});
  }
  SECTION("preference, asked for, moves x to the preferred engine") {
    auto c = resolve_costed(w, kCostChain, Endpoint{"b", "mem"}, PlacementPolicy::Preference);
    REQUIRE(c.ok());
    CHECK(placed_engine(*c, 0) == "a");
    CHECK(c->schedule->placement.empty());
    CHECK(c->schedule->placed_by == "preference");
    CHECK(c->schedule->transfer_count() == 1);
  }
}

TEST_CASE("earliest finish: work spreads to a second engine only where the copies back still pay off",
          "[planning][placement]") {
  // p = tanh(x), q = negate(x), r = p + q, s = reduce_sum(r) (10,000 ns:
  // 1,000 elements read); only a runs reductions, so r comes back to a.
  // All on a: p [0, 10,000], q [10,000, 20,000], r [20,000, 40,000],
  // s [40,000, 50,000]. Greedy over both, with a copy of f32[1000] taking
  // C: q on b [C, C + 10,000] (before a frees at 20,000 when C < 10,000),
  // r on b [C + 10,000, C + 30,000] (p arrives at 10,000 + C; on a, q
  // would arrive at 2C + 10,000), s on a [2C + 30,000, 2C + 40,000]. So
  // spreading pays off for C < 5,000 and costs for C > 5,000.
  const char* program = R"({"format": "tenact.program/1", "name": "fork_back",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [1000]}],
    "ops": [{"op": "tanh", "in": ["x"], "out": "p"},
            {"op": "negate", "in": ["x"], "out": "q"},
            {"op": "add", "in": ["p", "q"], "out": "r"},
            {"op": "reduce_sum", "in": ["r"], "out": "s", "dimensions": [0]}],
    "outputs": ["s"]})";
  for (const uint64_t latency : {uint64_t{500}, uint64_t{6000}}) {
    // C = latency + 4,000 bytes / 4e9 B/s = latency + 1,000.
    INFO("copy latency " << latency);
    World w;
    auto a = std::make_shared<ScriptedEngine>(
        "a", std::vector<std::string>{"mem"},
        std::vector<OpFamily>{OpFamily::Elementwise, OpFamily::Layout, OpFamily::Reduction});
    a->capabilities_.cost = cost_model_at(1e8);
    w.add(a);
    costed(w, "b", cost_model_at(1e8));
    for (const auto& [from, to] : {std::pair{"a", "b"}, std::pair{"b", "a"}}) {
      auto next = w.config->with_route(TransferRoute{{from, "mem"}, {to, "mem"}, "copy", RouteCost{latency, 4e9}});
      REQUIRE(next.ok());
      w.config = *next;
    }
    auto c = resolve_costed(w, program);
    REQUIRE(c.ok());
    const ScheduledGraph& g = *c->schedule;
    REQUIRE(g.placement.size() == 4);
    const uint64_t copy = latency + 1000;
    if (latency == 500) {  // C = 1,500: spread, s ends at 43,000 < 50,000
      CHECK(placed_engine(*c, 1) == "b");
      CHECK(placed_engine(*c, 2) == "b");
      CHECK(placed_engine(*c, 3) == "a");
      CHECK(g.placement[3] == OpPlacement{BatchWork::kAnyQueue, 2 * copy + 30000, 2 * copy + 40000, 4000});
    } else {  // C = 7,000: spreading would end at 54,000; all on a ends at 50,000
      for (size_t i = 0; i < 4; ++i) CHECK(placed_engine(*c, i) == "a");
      CHECK(g.placement[1] == OpPlacement{BatchWork::kAnyQueue, 10000, 20000, 0});
      CHECK(g.placement[3] == OpPlacement{BatchWork::kAnyQueue, 40000, 50000, 0});
      CHECK(g.transfer_count() == 0);
    }
  }
}

TEST_CASE("earliest finish: memory a device lacks sends work to a slower one", "[planning][placement]") {
  World w;
  // a: fast, 5,000 bytes; b: half as fast (20,000 ns a tanh), unbounded.
  costed(w, "a", cost_model_at(1e8, 1, 5000));
  costed(w, "b", cost_model_at(0.5e8));
  route_with_cost(w, "a", "b");
  route_with_cost(w, "b", "a");
  // p: a [0, 10,000] holds 4,000 bytes. q on a: [10,000, 20,000] but
  // 8,000 bytes > 5,000; on b: p copied [11,500, 31,500]: b, though later.
  auto c = resolve_costed(w, kCostChain);
  REQUIRE(c.ok());
  CHECK(placed_engine(*c, 0) == "a");
  CHECK(placed_engine(*c, 1) == "b");
  CHECK(c->schedule->placement[1] == OpPlacement{BatchWork::kAnyQueue, 11500, 31500, 4000});
  SECTION("with room on a, q stays there") {
    World roomy;
    costed(roomy, "a", cost_model_at(1e8, 1, 8000));
    costed(roomy, "b", cost_model_at(0.5e8));
    route_with_cost(roomy, "a", "b");
    auto d = resolve_costed(roomy, kCostChain);
    REQUIRE(d.ok());
    CHECK(placed_engine(*d, 1) == "a");
    CHECK(d->schedule->placement[1] == OpPlacement{BatchWork::kAnyQueue, 10000, 20000, 0});
  }
}

TEST_CASE("earliest finish: a device's lanes are its queues, and the queues are in the key",
          "[planning][placement]") {
  World w;
  costed(w, "gpu", cost_model_at(1e8, 2), /*queues=*/2);
  // p and q both start at 0 on lanes 0 and 1; r waits for both:
  // [10,000, 30,000]; both lanes are free at 10,000, so the first, lane 0.
  auto c = resolve_costed(w, kCostFork);
  REQUIRE(c.ok());
  const auto& p = c->schedule->placement;
  CHECK(p[0] == OpPlacement{0, 0, 10000, 0});
  CHECK(p[1] == OpPlacement{1, 0, 10000, 0});
  CHECK(p[2] == OpPlacement{0, 10000, 30000, 0});
  CHECK(c->root_identity->op_queues == std::vector<uint32_t>{0, 1, 0});
  auto pref = resolve_costed(w, kCostFork, {}, PlacementPolicy::Preference);
  REQUIRE(pref.ok());
  CHECK(pref->root_identity->op_queues.empty());
  CHECK(pref->root_identity->compiler_options == "policy=preference");
  CHECK(pref->root_identity->prepare_options.empty());
  CHECK(c->root_identity->prepare_options.empty());
}

TEST_CASE("auto places by preference when an engine gives no estimates, and round robin deals ops in turn",
          "[planning][placement]") {
  World w;
  costed(w, "a", cost_model_at(1e8));
  w.add("plain", {"mem"});  // no cost model
  route_with_cost(w, "a", "plain");
  route_with_cost(w, "plain", "a");
  auto c = resolve_costed(w, kCostFork);
  REQUIRE(c.ok());
  CHECK(c->schedule->placed_by == "preference");
  CHECK(c->schedule->placement.empty());
  auto rr = resolve_costed(w, kCostFork, {}, PlacementPolicy::RoundRobin);
  REQUIRE(rr.ok());
  CHECK(rr->schedule->placed_by == "round_robin");
  CHECK(placed_engine(*rr, 0) == "a");
  CHECK(placed_engine(*rr, 1) == "plain");
  CHECK(placed_engine(*rr, 2) == "a");
  CHECK(rr->root_identity->compiler_options == "policy=round_robin");
  CHECK(rr->root_identity->prepare_options.empty());
}

TEST_CASE("placement policies have names, and an unknown name is none", "[planning][placement]") {
  for (PlacementPolicy p : {PlacementPolicy::Auto, PlacementPolicy::EarliestFinish, PlacementPolicy::Preference,
                            PlacementPolicy::RoundRobin})
    CHECK(parse_placement_policy(to_string(p)) == p);
  CHECK(to_string(PlacementPolicy::EarliestFinish) == "earliest_finish");
  CHECK_FALSE(parse_placement_policy("fastest").has_value());
  CHECK_FALSE(parse_placement_policy("").has_value());
}
