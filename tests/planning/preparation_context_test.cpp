// The preparation context over
// scripted engines: candidates and the executable filter, dispatch per
// storage class, the preference search then the Cartesian search under its
// budget, input ingress, transfers only along registered routes, the
// cross-storage fallback, and which error wins. Expected placements are
// derived by hand from the rules in preparation_context.hpp.
#include <catch2/catch.hpp>

#include "planning/preparation_context.hpp"
#include "planning_world.hpp"

using namespace tenact;
using namespace tenact::testing;

namespace {

const char* kChain = R"({"format": "tenact.program/1", "name": "chain",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}, {"name": "y", "dtype": "f32", "shape": [4]}],
  "ops": [{"op": "add", "in": ["x", "y"], "out": "z"},
          {"op": "tanh", "in": ["z"], "out": "w"}],
  "outputs": ["w"]})";

// A layout op feeding a dot: each can be served by a different engine.
const char* kTransposeDot = R"({"format": "tenact.program/1", "name": "tdot",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [4, 4]}],
  "ops": [{"op": "transpose", "in": ["x"], "out": "t", "permutation": [1, 0]},
          {"op": "dot_general", "in": ["t", "x"], "out": "d",
           "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]}],
  "outputs": ["d"]})";

std::vector<InputDescriptor> two_vectors(Endpoint x = {}, Endpoint y = {}) {
  return {input(DType::F32, {4}, std::move(x)), input(DType::F32, {4}, std::move(y))};
}

Result<PreparationContext> resolve(const World& w, const char* json, std::vector<InputDescriptor> inputs,
                                   PrepareOptions options = {}, uint64_t budget = kDispatchSearchBudget) {
  return resolve_preparation_context(w.config, program_of(json), inputs, options, budget);
}

std::vector<std::string> op_engines(const PreparationContext& c) {
  std::vector<std::string> out;
  for (const OpDispatch& d : c.dispatch) out.push_back(d.binding.endpoint.to_string());
  return out;
}

}  // namespace

TEST_CASE("every op goes to the most preferred engine that serves it", "[preparation]") {
  World w;
  w.add("b", {"host"}, {OpFamily::Elementwise}, 1);
  w.add("a", {"host"}, {OpFamily::Elementwise}, 0);
  auto c = resolve(w, kChain, two_vectors());
  REQUIRE(c.ok());
  CHECK(op_engines(*c) == std::vector<std::string>{"a/host", "a/host"});
  CHECK(c->root_placement == Endpoint{"a", "host"});
  CHECK(c->input_endpoints == std::vector<Endpoint>{{"a", "host"}, {"a", "host"}});
  CHECK(c->schedule->transfer_count() == 0);
  CHECK(c->search_attempts == 1);
  // The binding carries the registered identity, runtime and epoch.
  const OpBinding& b = c->dispatch[0].binding;
  CHECK(b.runtime_id == 11);
  CHECK(b.epoch == w.config->epoch());
  CHECK(b.engine.registration == 1);
  CHECK(b.engine.hardware_class == "fake-hw");
  REQUIRE(c->root_identity);
  CHECK(c->root_identity->op_bindings == std::vector<Endpoint>{{"a", "host"}, {"a", "host"}});
}

TEST_CASE("the placement constraint restricts the candidates", "[preparation]") {
  World w;
  w.add("a", {"host"});
  w.add("b", {"host"}, {OpFamily::Elementwise}, 1);
  PrepareOptions only_b;
  only_b.placement.engines = {"b"};
  auto c = resolve(w, kChain, two_vectors(), only_b);
  REQUIRE(c.ok());
  CHECK(op_engines(*c) == std::vector<std::string>{"b/host", "b/host"});
  CHECK(c->root_identity->prepare_options == "engines=1:b");

  PrepareOptions nobody;
  nobody.placement.engines = {"gpu9"};
  auto none = resolve(w, kChain, two_vectors(), nobody);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().code() == ErrorCode::NoEligibleEngine);
  CHECK(mentions(none.error(), "engines [gpu9]"));
}

TEST_CASE("an explicit engine list is the preference order, as the caller wrote it", "[preparation]") {
  World w;
  w.add("a", {"host"}, {OpFamily::Elementwise}, 0);  // registered as the most preferred
  w.add("b", {"host"}, {OpFamily::Elementwise}, 1);
  auto any = resolve(w, kChain, two_vectors());
  REQUIRE(any.ok());
  CHECK(op_engines(*any) == std::vector<std::string>{"a/host", "a/host"});

  PrepareOptions b_first;
  b_first.placement.engines = {"b", "a"};
  auto c = resolve(w, kChain, two_vectors(), b_first);
  REQUIRE(c.ok());
  CHECK(op_engines(*c) == std::vector<std::string>{"b/host", "b/host"});
  CHECK(c->root_placement == Endpoint{"b", "host"});
  CHECK(c->root_identity->prepare_options == "engines=1:b1:a");

  PrepareOptions a_first;
  a_first.placement.engines = {"a", "b", "a"};
  auto d = resolve(w, kChain, two_vectors(), a_first);
  REQUIRE(d.ok());
  CHECK(op_engines(*d) == std::vector<std::string>{"a/host", "a/host"});
  CHECK(d->root_identity->prepare_options == "engines=1:a1:b");
}

TEST_CASE("a preparation-only engine that could serve is named by NoExecutableEngine", "[preparation]") {
  World w;
  auto planner = std::make_shared<ScriptedEngine>("planner", std::vector<std::string>{"host"});
  planner->capabilities_.executable = false;
  w.add(planner);
  auto c = resolve(w, kChain, two_vectors());
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().code() == ErrorCode::NoExecutableEngine);
  CHECK(mentions(c.error(), "engine 'planner'"));
  CHECK(mentions(c.error(), "op #0 (add -> 'z')"));

  // An executable engine next to it is used instead.
  w.add("cpu", {"host"}, {OpFamily::Elementwise}, 5);
  auto ok = resolve(w, kChain, two_vectors());
  REQUIRE(ok.ok());
  CHECK(op_engines(*ok) == std::vector<std::string>{"cpu/host", "cpu/host"});
}

TEST_CASE("no engine at all is NoEligibleEngine", "[preparation]") {
  World w;
  auto c = resolve(w, kChain, two_vectors());
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().code() == ErrorCode::NoEligibleEngine);
  CHECK(mentions(c.error(), "any engine"));
}

TEST_CASE("ops split over engines by family, with a transfer along the route", "[preparation]") {
  World w;
  w.add("lay", {"host"}, {OpFamily::Layout}, 0);
  w.add("dot", {"host"}, {OpFamily::Dot}, 1);
  w.route({"lay", "host"}, {"dot", "host"}, "host_copy");
  auto c = resolve(w, kTransposeDot, {input(DType::F32, {4, 4})});
  REQUIRE(c.ok());
  CHECK(op_engines(*c) == std::vector<std::string>{"lay/host", "dot/host"});
  // Two distinct dispatches, in order of first use.
  REQUIRE(c->dispatch.distinct().size() == 2);
  CHECK(c->dispatch.distinct()[0].binding.endpoint == Endpoint{"lay", "host"});
  CHECK(std::vector<uint32_t>(c->dispatch.of_op().begin(), c->dispatch.of_op().end()) ==
        std::vector<uint32_t>{0, 1});
  // x enters at lay (the first engine that accepts it and reaches both
  // readers: lay directly, dot through the route).
  CHECK(c->input_endpoints == std::vector<Endpoint>{{"lay", "host"}});
  // Transfers: x to dot (read by the dot) and t to dot.
  const ScheduledGraph& g = *c->schedule;
  CHECK(g.transfer_count() == 2);
  for (const ScheduledNode& n : g.nodes)
    if (n.is_transfer()) {
      CHECK(n.provider == "host_copy");
      CHECK(g.endpoint(n.source) == Endpoint{"lay", "host"});
      CHECK(g.endpoint(n.location) == Endpoint{"dot", "host"});
    }
}

TEST_CASE("each distinct dispatch is stored once, ops refer to it", "[preparation]") {
  // A long chain on one engine: one binding, an index per op.
  std::string ops;
  for (int i = 0; i < 1000; ++i)
    ops += std::string{i ? ", " : ""} + R"({"op": "add", "in": [")" + (i ? "v" + std::to_string(i) : "x") +
           R"(", "x"], "out": "v)" + std::to_string(i + 1) + "\"}";
  const std::string chain = R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
    "ops": [)" + ops + R"(], "outputs": ["v1000"]})";
  World w;
  w.add("a", {"host"});
  auto c = resolve(w, chain.c_str(), {input(DType::F32, {4})});
  REQUIRE(c.ok());
  REQUIRE(c->dispatch.size() == 1000);
  CHECK(c->dispatch.distinct().size() == 1);
  for (uint32_t d : c->dispatch.of_op()) CHECK(d == 0);
  CHECK(c->dispatch[999].binding.endpoint == Endpoint{"a", "host"});

}

TEST_CASE("a missing route between engines is found before anything runs", "[preparation]") {
  World w;
  w.add("lay", {"host"}, {OpFamily::Layout}, 0);
  w.add("dot", {"host"}, {OpFamily::Dot}, 1);
  // x may enter at dot directly, but t is produced on lay and cannot reach dot.
  w.route({"dot", "host"}, {"lay", "host"});
  auto c = resolve(w, kTransposeDot, {input(DType::F32, {4, 4}, {"dot", "host"})});
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().code() == ErrorCode::MissingTransferProvider);
  CHECK(mentions(c.error(), "instruction #1 (dot_general)"));
  CHECK(mentions(c.error(), "slot 1 ('t')"));
  CHECK(mentions(c.error(), "at dot/host"));
  CHECK(mentions(c.error(), "the endpoints holding it: lay/host"));
}

TEST_CASE("an input that cannot reach its readers has no ingress", "[preparation]") {
  World w;
  w.add("a", {"host"}, {OpFamily::Elementwise}, 0);
  w.add("b", {"host"}, {OpFamily::Elementwise}, 1);
  // x lives on b, but every op runs on a (the only selection without
  // moving y, which lives on a) and there is no route b -> a.
  auto c = resolve(w, kChain, two_vectors({"b", "host"}, {"a", "host"}));
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().code() == ErrorCode::NoInputIngress);
  CHECK((mentions(c.error(), "input 0 ('x'), placed at b/host") ||
         mentions(c.error(), "input 1 ('y'), placed at a/host")));
  // With a route the input moves.
  w.route({"b", "host"}, {"a", "host"});
  auto ok = resolve(w, kChain, two_vectors({"b", "host"}, {"a", "host"}));
  REQUIRE(ok.ok());
  CHECK(ok->input_endpoints == std::vector<Endpoint>{{"b", "host"}, {"a", "host"}});
  CHECK(ok->schedule->transfer_count() == 1);
}

TEST_CASE("an input placed on an engine that does not accept it has no ingress", "[preparation]") {
  World w;
  auto a = std::make_shared<ScriptedEngine>("a", std::vector<std::string>{"host", "pinned"});
  a->capabilities_.accepted_input_storage = {"pinned"};
  w.add(a);
  auto c = resolve(w, kChain, two_vectors({"a", "host"}, {}));
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().code() == ErrorCode::NoInputIngress);
  CHECK(mentions(c.error(), "input 0 ('x'), placed at a/host"));
  // Without a route pinned -> host, the ops run in the pinned class.
  auto ok = resolve(w, kChain, two_vectors({"a", "pinned"}, {}));
  REQUIRE(ok.ok());
  CHECK(op_engines(*ok) == std::vector<std::string>{"a/pinned", "a/pinned"});
  // With it, the default class (host) comes first.
  w.route({"a", "pinned"}, {"a", "host"});
  auto moved = resolve(w, kChain, two_vectors({"a", "pinned"}, {}));
  REQUIRE(moved.ok());
  CHECK(moved->input_endpoints == std::vector<Endpoint>{{"a", "pinned"}, {"a", "pinned"}});
  CHECK(op_engines(*moved) == std::vector<std::string>{"a/host", "a/host"});
}

TEST_CASE("the cross-storage fallback places ops in different storage classes", "[preparation]") {
  World w;
  w.add("cpu", {"host"}, {OpFamily::Layout}, 0);
  w.add("gpu", {"device"}, {OpFamily::Dot}, 1);
  w.route({"cpu", "host"}, {"gpu", "device"}, "h2d");
  // Neither storage class alone serves both ops.
  auto c = resolve(w, kTransposeDot, {input(DType::F32, {4, 4})});
  REQUIRE(c.ok());
  CHECK(op_engines(*c) == std::vector<std::string>{"cpu/host", "gpu/device"});
  CHECK(c->schedule->transfer_count() == 2);
  // A storage-class constraint disables the fallback.
  PrepareOptions host_only;
  host_only.placement.storage_class = "host";
  auto none = resolve(w, kTransposeDot, {input(DType::F32, {4, 4})}, host_only);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().code() == ErrorCode::NoEligibleEngine);
  CHECK(mentions(none.error(), "storage class 'host'"));
}

TEST_CASE("the route error wins over no eligible engine", "[preparation]") {
  World w;
  w.add("cpu", {"host"}, {OpFamily::Layout}, 0);
  w.add("gpu", {"device"}, {OpFamily::Dot}, 1);
  // No route: every storage class lacks a server for some op (skipped),
  // the cross-storage search fails on transfers; that error is reported.
  auto c = resolve(w, kTransposeDot, {input(DType::F32, {4, 4})});
  REQUIRE_FALSE(c.ok());
  CHECK((c.error().code() == ErrorCode::MissingTransferProvider ||
         c.error().code() == ErrorCode::NoInputIngress));
}

TEST_CASE("the Cartesian search finds a selection the preference pass misses", "[preparation]") {
  // x arrives in a's pinned memory and reaches only a/host; u lives on b.
  // Routes: a/pinned -> a/host -> b/host. All-on-a fails (u cannot reach
  // a), all-on-b fails (x cannot reach b directly); negate on a and add on
  // b works: the Cartesian product's second selection.
  const char* json = R"({"format": "tenact.program/1", "name": "mixed",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}, {"name": "u", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "z"},
            {"op": "add", "in": ["z", "u"], "out": "w"}],
    "outputs": ["w"]})";
  World w;
  auto a = std::make_shared<ScriptedEngine>("a", std::vector<std::string>{"host", "pinned"},
                                            std::vector<OpFamily>{OpFamily::Elementwise});
  a->capabilities_.accepted_input_storage = {"pinned"};
  w.add(a, 0);
  w.add("b", {"host"}, {OpFamily::Elementwise}, 1);
  w.route({"a", "pinned"}, {"a", "host"});
  w.route({"a", "host"}, {"b", "host"});
  auto c = resolve(w, json, two_vectors({"a", "pinned"}, {"b", "host"}));
  REQUIRE(c.ok());
  CHECK(op_engines(*c) == std::vector<std::string>{"a/host", "b/host"});
  CHECK(c->search_attempts == 3);  // all-a, all-b, then (a, b)
  CHECK(c->input_endpoints == std::vector<Endpoint>{{"a", "pinned"}, {"b", "host"}});
  CHECK(c->schedule->transfer_count() == 2);  // x pinned -> host, z a -> b
}

TEST_CASE("the dispatch search gives up at its budget", "[preparation]") {
  // 13 ops, each servable by a or b; x lives on a and y on b, with no
  // routes: every op reads both, so every selection fails on ingress, and
  // 2^13 selections exceed the budget of 4,096.
  // Every result is an output (an op nothing reads would be dropped).
  std::string ops, outputs;
  for (int i = 0; i < 13; ++i) {
    ops += std::string{i ? ", " : ""} + R"({"op": "add", "in": ["x", "y"], "out": "z)" +
           std::to_string(i) + R"("})";
    outputs += std::string{i ? ", " : ""} + "\"z" + std::to_string(i) + "\"";
  }
  const std::string json = R"({"format": "tenact.program/1", "name": "wide",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}, {"name": "y", "dtype": "f32", "shape": [4]}],
    "ops": [)" + ops + R"(], "outputs": [)" + outputs + "]}";
  World w;
  w.add("a", {"host"}, {OpFamily::Elementwise}, 0);
  w.add("b", {"host"}, {OpFamily::Elementwise}, 1);
  auto c = resolve_preparation_context(w.config, program_of(json),
                                       two_vectors({"a", "host"}, {"b", "host"}), {});
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().code() == ErrorCode::DispatchSearchBudgetExceeded);
  CHECK(mentions(c.error(), "after 4096 attempts (limit 4096)"));
  CHECK(mentions(c.error(), "last failure: input"));
  // A smaller budget is reached sooner; 12 ops (4,096 selections) exhaust
  // the product without exceeding it, so the route error is reported.
  auto small = resolve_preparation_context(w.config, program_of(json),
                                           two_vectors({"a", "host"}, {"b", "host"}), {}, 10);
  REQUIRE_FALSE(small.ok());
  CHECK(mentions(small.error(), "after 10 attempts (limit 10)"));
}

TEST_CASE("a program with an unserved extension family names it", "[preparation]") {
  ExtensionRegistry reg;
  reg.add("t.softmax", [](std::span<const ValueType> in, const std::string&) -> Result<std::vector<ValueType>> {
    return std::vector<ValueType>{in[0]};
  });
  const char* json = R"({"format": "tenact.program/1", "name": "ext",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "extension", "family": "t.softmax", "in": ["x"], "out": "y", "attributes": {}}],
    "outputs": ["y"]})";
  const std::vector<InputDescriptor> one{input(DType::F32, {4})};
  World w;
  w.add("cpu", {"host"});
  auto c = resolve_preparation_context(w.config, program_of(json, reg), one, {});
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().code() == ErrorCode::MissingExtension);
  CHECK(mentions(c.error(), "'t.softmax'"));

  auto ext = std::make_shared<ScriptedEngine>("ext", std::vector<std::string>{"host"});
  ext->capabilities_.extension_families = {"t.softmax"};
  w.add(ext, 3, {{"t.softmax", R"({"block": 128})"}});
  auto ok = resolve_preparation_context(w.config, program_of(json, reg), one, {});
  REQUIRE(ok.ok());
  CHECK(op_engines(*ok) == std::vector<std::string>{"ext/host"});
  REQUIRE(ok->dispatch[0].extension);
  CHECK(ok->dispatch[0].extension->family == "t.softmax");
  CHECK(ok->dispatch[0].extension->payload_bytes() == R"({"block": 128})");
  CHECK(ok->root_identity->extension_planning.size() == 1);
}

TEST_CASE("an op-less program is rooted on the first engine", "[preparation]") {
  World w;
  w.add("a", {"host"}, {}, 0);
  auto c = resolve(w, R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [2]}],
                           "ops": [], "outputs": ["x"]})",
                   {input(DType::F32, {2})});
  REQUIRE(c.ok());
  CHECK(c->root_placement == Endpoint{"a", "host"});
  CHECK(c->dispatch.empty());
  CHECK(c->schedule->outputs == std::vector<SlotCopy>{{0, c->schedule->input_locations[0]}});
}

TEST_CASE("placement constraint texts are canonical and keep the caller's order", "[preparation]") {
  PrepareOptions a, b;
  CHECK(a.canonical_text().empty());
  a.placement.engines = {"sim:1", "cpu", "cpu"};
  b.placement.engines = {"cpu", "sim:1"};
  // The order is the plan's preference order, so it is part of the text; a
  // repetition is not.
  CHECK(a.canonical_text() == "engines=5:sim:13:cpu");
  CHECK(b.canonical_text() == "engines=3:cpu5:sim:1");
  PrepareOptions a_again;
  a_again.placement.engines = {"sim:1", "cpu"};
  CHECK(a_again.canonical_text() == a.canonical_text());
  b.placement.storage_class = "device";
  CHECK(b.canonical_text() == "engines=3:cpu5:sim:1;storage=6:device");
  CHECK(b.placement.to_string() == "engines [cpu, sim:1], storage class 'device'");
}
