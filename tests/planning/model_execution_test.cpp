// derive_model_execution: the plain program a model's plan runs as, its
// pins and where each packed result is written.
#include "planning/model/model_execution.hpp"

#include <catch2/catch.hpp>

#include "tests/planning/model_test_support.hpp"

using namespace tenact;
using namespace tenact::model_test;

namespace {

/// Inputs a, b f32[2, 3]; weight w f32[3, 2] read on e0 (ya) and e1 (yb);
/// state s f32[2, 2] read by r, then updated in place by s_next.
std::shared_ptr<const SemanticProgram> two_device_model(const char* extra_input = "") {
  return program_of(std::string{R"({"format": "tenact.program/1", "name": "two",
    "inputs": [{"name": "a", "dtype": "f32", "shape": [2, 3]}, {"name": "b", "dtype": "f32", "shape": [2, 3]})"} +
                    extra_input + R"(],
    "weights": [{"name": "w", "dtype": "f32", "shape": [3, 2]}],
    "states": [{"name": "s", "dtype": "f32", "shape": [2, 2]}],
    "ops": [
      {"op": "dot_general", "in": ["a", "w"], "out": "ya", "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
      {"op": "dot_general", "in": ["b", "w"], "out": "yb", "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
      {"op": "negate", "in": ["ya"], "out": "h"},
      {"op": "negate", "in": ["h"], "out": "z"},
      {"op": "negate", "in": ["s"], "out": "r"},
      {"op": "add", "in": ["s", "ya"], "out": "s_next"}],
    "state_updates": [{"state": "s", "value": "s_next"}],
    "outputs": ["yb", "z", "r"]})");
}

ProviderCatalog in_place_catalog() {
  const ContractFn in_place = aliasing(mirror, 0, AliasPolicy::must(0));
  return catalog_of(
      {{"e0", "mem", list({provider("m", mirror), provider("in_place", serving({OpKind::Add}, in_place))})},
       {"e1", "mem", list({provider("m", mirror)})}});
}

ModelCompileOptions two_device_options() {
  ModelCompileOptions o;
  o.tensors["a"] = dense(DType::F32, {2, 3});
  o.tensors["b"] = dense(DType::F32, {2, 3});
  o.preferred_providers["yb"] = "e1/m";
  o.retain = {"ya"};
  return o;
}

std::shared_ptr<const ModelExecution> derived(const std::shared_ptr<const ModelPlan>& plan) {
  auto e = derive_model_execution(plan);
  INFO((e.ok() ? std::string{} : e.error().to_string()));
  REQUIRE(e.ok());
  return *e;
}

std::vector<std::string> names_of(const SemanticProgram& p, const std::vector<ValueId>& ids) {
  std::vector<std::string> out;
  for (ValueId id : ids) out.push_back(p.value(id).name);
  return out;
}

}  // namespace

TEST_CASE("a model's execution program reads each weight copy on its device, states as inputs", "[model][execution]") {
  const auto plan = compiled(two_device_model(), in_place_catalog(), two_device_options());
  const auto e = derived(plan);
  const SemanticProgram& p = *e->program;
  CHECK_FALSE(p.is_model());
  CHECK(names_of(p, p.inputs()) == std::vector<std::string>{"a", "b", "w", "w@e1/mem", "s"});
  REQUIRE(e->inputs.size() == 5);
  CHECK(e->inputs[0].kind == ExecutionInput::Kind::Input);
  CHECK(e->inputs[1].index == 1);
  CHECK(e->inputs[2].kind == ExecutionInput::Kind::Weight);
  CHECK(e->inputs[2].index == 0);
  CHECK(e->inputs[3].kind == ExecutionInput::Kind::Weight);
  CHECK(e->inputs[3].index == 1);
  CHECK(plan->weight_components[e->inputs[3].index].endpoint == Endpoint{"e1", "mem"});
  CHECK(e->inputs[4].kind == ExecutionInput::Kind::State);
  CHECK(e->inputs[4].index == 0);
  CHECK(names_of(p, p.ops()[0].inputs) == std::vector<std::string>{"a", "w"});
  CHECK(names_of(p, p.ops()[1].inputs) == std::vector<std::string>{"b", "w@e1/mem"});
  CHECK(names_of(p, p.ops()[5].inputs) == std::vector<std::string>{"s", "ya"});
  // The model's outputs, the state update's value, the retained value.
  CHECK(names_of(p, p.outputs()) == std::vector<std::string>{"yb", "z", "r", "s_next", "ya"});
  CHECK(e->model_outputs == 3);
  CHECK(e->state_update_outputs == 1);
  CHECK(e->retained_outputs == 1);
}

TEST_CASE("a model's execution pins every op to its node and orders in-place updates", "[model][execution]") {
  const auto plan = compiled(two_device_model(), in_place_catalog(), two_device_options());
  const auto e = derived(plan);
  REQUIRE(e->pins);
  REQUIRE(e->pins->ops.size() == 6);
  const std::vector<std::string> engines{"e0", "e1", "e0", "e0", "e0", "e0"};
  const std::vector<std::string> providers{"m", "m", "m", "m", "m", "in_place"};
  for (size_t i = 0; i < 6; ++i) {
    INFO("op " << i);
    const OpPin& pin = e->pins->ops[i];
    CHECK(pin.engine == engines[i]);
    CHECK(pin.storage_class == "mem");
    CHECK(pin.queue == 0);
    REQUIRE(pin.provider);
    CHECK(pin.provider->id == providers[i]);
    CHECK(pin.provider->operand_layouts.size() == e->program->ops()[i].inputs.size());
  }
  CHECK(e->pins->order == std::vector<std::pair<uint32_t, uint32_t>>{{4, 5}});
  CHECK(e->pins->digest == plan->digest);
  CHECK(plan->digest.size() == 64);
}

TEST_CASE("packed results are written into their device's activation arena", "[model][execution]") {
  const auto plan = compiled(two_device_model(), in_place_catalog(), two_device_options());
  const auto e = derived(plan);
  // Only h is packed: ya is retained, yb, z and r are outputs, s_next updates s.
  REQUIRE(e->arenas.size() == 1);
  CHECK(e->arenas[0].endpoint == Endpoint{"e0", "mem"});
  CHECK(e->arenas[0].bytes == 16);
  CHECK(e->arenas[0].alignment == 64);
  REQUIRE(e->destinations.size() == 6);
  for (size_t op = 0; op < 6; ++op) {
    INFO("op " << op);
    REQUIRE(e->destinations[op].size() == 1);
    CHECK(e->destinations[op][0].has_value() == (op == 2));
  }
  const ArenaSlot& h = *e->destinations[2][0];
  CHECK(h.arena == 0);
  CHECK(h.offset_bytes == 0);
  CHECK(h.bytes == 16);
  CHECK(h.dtype == DType::F32);
  CHECK(h.shape == std::vector<int64_t>{2, 2});
  CHECK(e->arenas[0].resource == plan->storage[value_named(*plan->program, "h")].places[0].resource);
}

TEST_CASE("a weight copy's name is made unique against the model's names", "[model][execution]") {
  const auto program = two_device_model(R"(, {"name": "w@e1/mem", "dtype": "f32", "shape": [1]})");
  auto o = two_device_options();
  o.tensors["w@e1/mem"] = dense(DType::F32, {1});
  const auto e = derived(compiled(program, in_place_catalog(), o));
  CHECK(names_of(*e->program, e->program->inputs()) ==
        std::vector<std::string>{"a", "b", "w@e1/mem", "w", "w@e1/mem#2", "s"});
  CHECK(names_of(*e->program, e->program->ops()[1].inputs) == std::vector<std::string>{"b", "w@e1/mem#2"});
}

TEST_CASE("an extension op's result has a resource of its own and the derived program re-infers it",
          "[model][execution]") {
  ExtensionRegistry extensions;
  extensions.add("test.pair",
                 [](std::span<const ValueType> operands, const std::string&) -> Result<std::vector<ValueType>> {
                   return std::vector<ValueType>{operands[0], operands[0]};
                 });
  auto loaded = load_program(R"({"format": "tenact.program/1", "name": "ext",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["N"]}],
    "weights": [{"name": "w", "dtype": "f32", "shape": [3]}],
    "ops": [{"op": "extension", "family": "test.pair", "in": ["x", "w"], "out": ["p", "q"], "attributes": {"k": 1}},
            {"op": "negate", "in": ["p"], "out": "y"}, {"op": "negate", "in": ["q"], "out": "z"}],
    "outputs": ["y", "z"]})",
                             extensions);
  INFO((loaded.ok() ? std::string{} : loaded.error().to_string()));
  REQUIRE(loaded.ok());
  const auto program = std::make_shared<const SemanticProgram>(std::move(*loaded));
  ModelCompileOptions o;
  o.tensors["x"] = dense(DType::F32, {3});
  const auto plan = compiled(program, mirror_catalog(), o);
  for (const char* name : {"p", "q"}) {
    const ValueStorage& s = plan->storage[value_named(*program, name)];
    CHECK_FALSE(s.packed);
    CHECK(s.unpacked_because == "an extension op's result");
  }
  const auto e = derived(plan);
  CHECK(e->program->value(e->program->ops()[0].outputs[1]).type.to_string() == "f32[N]");
  CHECK(names_of(*e->program, e->program->ops()[0].inputs) == std::vector<std::string>{"x", "w"});
}
