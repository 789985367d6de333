// Storage of a model plan: weight arenas laid out by hand, the alignment
// fixed point, states and the in-place updates that alias them.
#include <catch2/catch.hpp>

#include "planning/model/resource_ids.hpp"
#include "tests/planning/model_test_support.hpp"

using namespace tenact;
using namespace tenact::model_test;

namespace {

/// Weights a f32[3, 5] (60 bytes), h f16[7] (14), b i8[10] (10), c f32[2]
/// (8), g f16[3] (6), each negated on e0; c negated on e1 too (node c1).
std::shared_ptr<const SemanticProgram> weights_model() {
  return program_of(R"({"format": "tenact.program/1", "name": "weights", "inputs": [],
    "weights": [{"name": "a", "dtype": "f32", "shape": [3, 5]}, {"name": "h", "dtype": "f16", "shape": [7]},
                {"name": "b", "dtype": "i8", "shape": [10]}, {"name": "c", "dtype": "f32", "shape": [2]},
                {"name": "g", "dtype": "f16", "shape": [3]}],
    "ops": [{"op": "negate", "in": ["a"], "out": "na"}, {"op": "negate", "in": ["h"], "out": "nh"},
            {"op": "negate", "in": ["b"], "out": "nb"}, {"op": "negate", "in": ["c"], "out": "c1"},
            {"op": "negate", "in": ["c"], "out": "nc"}, {"op": "negate", "in": ["g"], "out": "ng"}],
    "outputs": ["na", "nh", "nb", "c1", "nc", "ng"]})");
}

ModelCompileOptions c1_on_e1() {
  ModelCompileOptions o;
  o.preferred_providers["c1"] = "e1/mirror";
  return o;
}

struct Expected {
  std::string component;
  std::string arena_identity;  // "<engine>/<storage class>:<dtype>"
  uint64_t offset = 0;
  uint64_t length = 0;
};

void check_arenas(const ModelPlan& plan, const std::vector<Expected>& components,
                  const std::vector<std::pair<std::string, uint64_t>>& arenas) {
  REQUIRE(plan.weight_components.size() == components.size());
  for (size_t i = 0; i < components.size(); ++i) {
    const WeightComponent& c = plan.weight_components[i];
    INFO(components[i].component);
    CHECK(c.id == components[i].component);
    CHECK(c.offset_bytes == components[i].offset);
    CHECK(c.length_bytes == components[i].length);
    CHECK(c.resource ==
          hashed_resource_id("weight-arena", plan.execution_weight_fingerprint, components[i].arena_identity));
  }
  std::vector<std::pair<std::string, uint64_t>> got;
  for (const StorageResource& r : plan.resources)
    if (r.kind == ResourceKind::WeightArena) got.emplace_back(r.id, r.bytes);
  REQUIRE(got.size() == arenas.size());
  for (size_t i = 0; i < arenas.size(); ++i) {
    INFO(arenas[i].first);
    CHECK(got[i].first == hashed_resource_id("weight-arena", plan.execution_weight_fingerprint, arenas[i].first));
    CHECK(got[i].second == arenas[i].second);
  }
}

}  // namespace

TEST_CASE("weights get one arena per device and dtype at aligned offsets", "[model][storage]") {
  const auto program = weights_model();
  SECTION("alignment 64 and 256") {
    // The second component of an arena at the alignment; arenas end there
    // plus its length: f32 c (8 bytes), f16 g (6 bytes).
    struct Row {
      uint64_t alignment, f32_bytes, f16_bytes;
    };
    const Row row = GENERATE(values({Row{64, 72, 70}, Row{256, 264, 262}}));
    const uint64_t a = row.alignment;
    const auto plan = compiled(program, two_engine_catalog(a), c1_on_e1());
    CHECK(plan->value_alignment_bytes == a);
    CHECK(plan->alignment_passes == 1);
    // Declaration order a, h, b, c, g; c on e0 then e1 (catalog order, though e1 reads it first).
    check_arenas(*plan,
                 {{"a@e0/mem", "e0/mem:f32", 0, 60},
                  {"h@e0/mem", "e0/mem:f16", 0, 14},
                  {"b@e0/mem", "e0/mem:i8", 0, 10},
                  {"c@e0/mem", "e0/mem:f32", a, 8},
                  {"c@e1/mem", "e1/mem:f32", 0, 8},
                  {"g@e0/mem", "e0/mem:f16", a, 6}},
                 {{"e0/mem:f32", row.f32_bytes}, {"e0/mem:f16", row.f16_bytes}, {"e0/mem:i8", 10}, {"e1/mem:f32", 8}});
    const ValueStorage& c = plan->storage[value_named(*program, "c")];
    CHECK(c.kind == ValueStorage::Kind::Weight);
    REQUIRE(c.places.size() == 2);
    CHECK(c.places[0].endpoint == Endpoint{"e0", "mem"});
    CHECK(c.places[0].offset_bytes == a);
    CHECK(c.places[1].endpoint == Endpoint{"e1", "mem"});
    CHECK(c.places[1].offset_bytes == 0);
    CHECK(component(*plan, "c@e1/mem").tensor == dense(DType::F32, {2}));
    const StorageResource* f16 = plan->resource(plan->weight_components[1].resource);
    REQUIRE(f16 != nullptr);
    CHECK(f16->dtype == DType::F16);
    CHECK(f16->endpoint == Endpoint{"e0", "mem"});
    CHECK(f16->alignment == a);
    CHECK(f16->holds == "weights h, g");
  }
  SECTION("alignment 1: the element size still aligns each component") {
    const auto odd = program_of(R"({"format": "tenact.program/1", "name": "odd", "inputs": [],
      "weights": [{"name": "p", "dtype": "f32", "shape": [3]}, {"name": "q", "dtype": "i8", "shape": [3]},
                  {"name": "r", "dtype": "f32", "shape": [1]}, {"name": "t", "dtype": "i8", "shape": [2]}],
      "ops": [{"op": "negate", "in": ["p"], "out": "np"}, {"op": "negate", "in": ["q"], "out": "nq"},
              {"op": "negate", "in": ["r"], "out": "nr"}, {"op": "negate", "in": ["t"], "out": "nt"}],
      "outputs": ["np", "nq", "nr", "nt"]})");
    const auto plan = compiled(odd, mirror_catalog(1));
    check_arenas(*plan,
                 {{"p@e0/mem", "e0/mem:f32", 0, 12},
                  {"q@e0/mem", "e0/mem:i8", 0, 3},
                  {"r@e0/mem", "e0/mem:f32", 12, 4},
                  {"t@e0/mem", "e0/mem:i8", 3, 2}},
                 {{"e0/mem:f32", 16}, {"e0/mem:i8", 5}});
  }
}

TEST_CASE("the value alignment grows to the providers' fixed point", "[model][storage]") {
  // 64 while every operand sits at a multiple of 256, else 256: the probe
  // (all at 0) says 64, the arena at 64 puts q at 64 (256 asked), the arena
  // at 256 satisfies it.
  auto picky = provider("picky", mirror);
  picky.alignment = [](const AlignmentQuery& q) -> uint64_t {
    for (uint64_t offset : q.operand_offsets)
      if (offset % 256 != 0) return 256;
    return 64;
  };
  const auto program = program_of(R"({"format": "tenact.program/1", "name": "fix", "inputs": [],
    "weights": [{"name": "p", "dtype": "f32", "shape": [4]}, {"name": "q", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "negate", "in": ["p"], "out": "np"}, {"op": "negate", "in": ["q"], "out": "nq"}],
    "outputs": ["np", "nq"]})");
  const auto plan = compiled(program, catalog_of({{"e0", "mem", list({picky})}}));
  CHECK(plan->value_alignment_bytes == 256);
  CHECK(plan->alignment_passes == 2);
  CHECK(component(*plan, "q@e0/mem").offset_bytes == 256);
  CHECK(plan->resource(component(*plan, "q@e0/mem").resource)->bytes == 272);
  CHECK(plan->node(0).value_alignment_bytes == 64);
  CHECK(plan->node(1).value_alignment_bytes == 64);
}

TEST_CASE("a state update through a must-alias provider shares the state's storage", "[model][storage]") {
  const auto program = program_of(R"({"format": "tenact.program/1", "name": "upd",
    "inputs": [{"name": "u", "dtype": "f32", "shape": [4]}],
    "states": [{"name": "s", "dtype": "f32", "shape": [4], "capacity": {"bytes": 30}}],
    "ops": [{"op": "negate", "in": ["s"], "out": "r"}, {"op": "add", "in": ["u", "u"], "out": "uu"},
            {"op": "add", "in": ["s", "uu"], "out": "s_next"}, {"op": "negate", "in": ["s_next"], "out": "after"}],
    "state_updates": [{"state": "s", "value": "s_next"}],
    "outputs": ["r", "after"]})");
  const auto catalog =
      catalog_of({{"e0", "mem",
                   list({provider("m", mirror, 64),
                         provider("in_place", aliasing(mirror, 0, AliasPolicy::must(0)), 64, {"in_place"})})}});
  ModelCompileOptions o;
  o.tensors["u"] = dense(DType::F32, {4});
  const auto plan = compiled(program, catalog, o);
  const ValueId s = value_named(*program, "s"), next = value_named(*program, "s_next");
  CHECK(plan->node(1).provider == "e0/m");  // an add that updates no state
  CHECK(plan->node(2).provider == "e0/in_place");
  CHECK(plan->node(2).result_aliases == std::vector{AliasPolicy::must(0)});
  const ValueStorage& state = plan->storage[s];
  CHECK(state.kind == ValueStorage::Kind::State);
  REQUIRE(state.places.size() == 1);
  // Capacity 30 bytes is 32 once rounded to whole f32 elements.
  CHECK(state.places[0].length_bytes == 32);
  CHECK(state.places[0].resource == hashed_resource_id("state", program->fingerprint().to_hex(), "s"));
  const StorageResource* resource = plan->resource(state.places[0].resource);
  REQUIRE(resource != nullptr);
  CHECK(resource->kind == ResourceKind::State);
  CHECK(resource->bytes == 32);
  CHECK(resource->alignment == 64);
  const ValueStorage& updated = plan->storage[next];
  CHECK(updated.kind == ValueStorage::Kind::Aliased);
  CHECK(updated.aliases == std::optional<ValueId>{s});
  REQUIRE(updated.places.size() == 1);
  CHECK(updated.places[0].resource == state.places[0].resource);
  CHECK(updated.places[0].offset_bytes == 0);
  CHECK_FALSE(updated.packed);
  // r reads s before its update: r runs first.
  CHECK(plan->order == std::vector<std::pair<size_t, size_t>>{{0, 2}});
  // The request keeps the caller's buffer.
  CHECK(plan->storage[value_named(*program, "u")].kind == ValueStorage::Kind::Request);
  CHECK(plan->storage[value_named(*program, "u")].places.empty());
}

TEST_CASE("a may-alias result keeps its operand live and outputs, retained values stay unpacked", "[model][storage]") {
  // t1 = negate(x) on e0; t2 = negate(t1) may alias t1; t3 = negate(t2); y = negate(t3).
  const auto program = program_of(R"({"format": "tenact.program/1", "name": "may",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "t1"}, {"op": "exponential", "in": ["t1"], "out": "t2"},
            {"op": "negate", "in": ["t2"], "out": "t3"}, {"op": "negate", "in": ["t3"], "out": "t4"},
            {"op": "negate", "in": ["t4"], "out": "y"}],
    "outputs": ["y"]})");
  const auto catalog =
      catalog_of({{"e0", "mem",
                   list({provider("may", serving({OpKind::Exponential}, aliasing(mirror, 0, AliasPolicy::may(0)))),
                         provider("m", mirror)})}});
  ModelCompileOptions o;
  o.tensors["x"] = dense(DType::F32, {4});
  o.retain = {"t4"};
  const auto plan = compiled(program, catalog, o);
  auto storage = [&](const char* name) -> const ValueStorage& { return plan->storage[value_named(*program, name)]; };
  // t1 lives until t2's last reader (op 2), so t1 and t3 (born at op 2) may not share bytes.
  CHECK(storage("t1").first_op == 0);
  CHECK(storage("t1").last_op == 2);
  CHECK(storage("t2").last_op == 2);
  CHECK(storage("t3").first_op == 2);
  REQUIRE(storage("t1").packed);
  REQUIRE(storage("t3").packed);
  CHECK(storage("t1").places[0].offset_bytes != storage("t3").places[0].offset_bytes);
  CHECK_FALSE(storage("y").packed);
  CHECK(storage("y").unpacked_because == "a program output");
  CHECK(storage("y").places[0].resource == hashed_resource_id("activation", program->fingerprint().to_hex(), "y"));
  CHECK_FALSE(storage("t4").packed);
  CHECK(storage("t4").unpacked_because == "retained");
  CHECK(plan->retained == std::vector<ValueId>{value_named(*program, "t4")});
  // t1, t2, t3 of 16 bytes at offsets 0, 64, 128: t1 [0, 2], t2 [1, 2], t3 [2, 3] all meet at op 2.
  const StorageResource* arena = plan->resource(storage("t1").places[0].resource);
  REQUIRE(arena != nullptr);
  CHECK(arena->kind == ResourceKind::ActivationArena);
  CHECK(arena->id == hashed_resource_id("activation-arena", program->fingerprint().to_hex(), "e0/mem"));
  CHECK(arena->bytes == 144);
  CHECK(plan->total_activation_bytes == 5 * 16);
  CHECK(plan->planned_activation_bytes == 144 + 2 * 16);
  CHECK(plan->peak_live_activation_bytes == 3 * 16);  // t1, t2, t3 at op 2
  // Packing off: every activation has a resource of its own.
  o.pack_activations = false;
  const auto unpacked = compiled(program, catalog, o);
  for (const char* name : {"t1", "t2", "t3"}) {
    CHECK_FALSE(unpacked->storage[value_named(*program, name)].packed);
    CHECK(unpacked->storage[value_named(*program, name)].unpacked_because == "packing off");
  }
  CHECK(unpacked->planned_activation_bytes == 5 * 16);
  CHECK(unpacked->digest != plan->digest);
  // Equal plans, equal digests.
  CHECK(compiled(program, catalog, o)->digest == unpacked->digest);
}

TEST_CASE("a result of a non-contiguous layout is not packed", "[model][storage]") {
  const auto program = program_of(R"({"format": "tenact.program/1", "name": "strided",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [2, 2]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "t"}, {"op": "exponential", "in": ["t"], "out": "y"}],
    "outputs": ["y"]})");
  const ContractFn any_layout = [](const ContractQuery& q) -> std::optional<OpContract> {
    auto c = mirror(q);
    const std::vector<LayoutConstraint> layouts{
        LayoutConstraint::contiguous(),
        LayoutConstraint::strided({StrideConstraint::named("r"), StrideConstraint::named("c")})};
    c->operands[0].layouts = layouts;
    if (q.kind == OpKind::Negate) c->results[0].layouts = layouts;  // t: the explicit tensor decides
    return c;
  };
  ModelCompileOptions o;
  o.tensors["x"] = dense(DType::F32, {2, 2});
  o.tensors["t"] = ResolvedTensorSpec::make({2, 2}, DType::F32, ResolvedTensorLayout::strided({16, 4})).value();
  const auto plan = compiled(program, catalog_of({{"e0", "mem", list({provider("any", any_layout)})}}), o);
  const ValueStorage& t = plan->storage[value_named(*program, "t")];
  CHECK_FALSE(t.packed);
  CHECK(t.unpacked_because == "a non-contiguous layout");
  CHECK(t.places[0].length_bytes == 24);  // the last reachable byte: 16 + 4 + 4
  CHECK(plan->node(1).choice.operand_layouts == std::vector{ResolvedTensorLayout::strided({16, 4})});
}
