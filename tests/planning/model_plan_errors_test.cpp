// Every error compile_model_plan reports for options, node resolution, the
// weight materializer and the value alignment, its text checked.
#include <catch2/catch.hpp>

#include "planning/model/plan_stages.hpp"
#include "tests/planning/model_test_support.hpp"

using namespace tenact;
using namespace tenact::model_test;

namespace {

/// x f32[B, 3] (B <= 8), weight w f32[3]; y = add(x, x), z = negate(y).
std::shared_ptr<const SemanticProgram> small_model() {
  return program_of(R"({"format": "tenact.program/1", "name": "m",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 3]}],
    "weights": [{"name": "w", "dtype": "f32", "shape": [3]}],
    "guards": ["B <= 8"],
    "ops": [{"op": "add", "in": ["x", "x"], "out": "y"}, {"op": "negate", "in": ["y"], "out": "z"},
            {"op": "negate", "in": ["w"], "out": "v"}],
    "outputs": ["z", "v"]})");
}

ModelCompileOptions small_options(uint64_t b = 2) {
  ModelCompileOptions o;
  o.tensors["x"] = dense(DType::F32, {b, 3});
  return o;
}

/// A state s f32[4] updated by s_next = add(s, u) after r = negate(s) reads it.
std::shared_ptr<const SemanticProgram> updating_model() {
  return program_of(R"({"format": "tenact.program/1", "name": "upd",
    "inputs": [{"name": "u", "dtype": "f32", "shape": [4]}],
    "states": [{"name": "s", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "negate", "in": ["s"], "out": "r"}, {"op": "add", "in": ["s", "u"], "out": "s_next"}],
    "state_updates": [{"state": "s", "value": "s_next"}],
    "outputs": ["r"]})");
}

}  // namespace

TEST_CASE("options that name what the program lacks are refused", "[model][errors]") {
  const auto program = small_model();
  const auto catalog = mirror_catalog();
  auto o = small_options();
  o.required_capabilities["nope"] = {"x"};
  CHECK(compile_error(program, catalog, o) == "program compile options reference an unknown node `nope`");
  o = small_options();
  o.preferred_providers["x"] = "e0/mirror";  // a value, but no node
  CHECK(compile_error(program, catalog, o) == "program compile options reference an unknown node `x`");
  o = small_options();
  o.tensors["nope"] = dense(DType::F32, {1});
  CHECK(compile_error(program, catalog, o) == "program compile options contain an unknown semantic value `nope`");
  o = small_options();
  o.retain = {"x"};
  CHECK(compile_error(program, catalog, o) == "completion retention must reference a semantic node output: `x`");
  o = small_options();
  o.retain = {"w"};
  CHECK(compile_error(program, catalog, o) == "completion retention must reference a semantic node output: `w`");
  CHECK(compile_error(program, catalog, {}) ==
        "every program input requires an explicit canonical tensor capacity: `x`");
}

TEST_CASE("input tensors inconsistent with the declaration are refused", "[model][errors]") {
  const auto program = small_model();
  const auto catalog = mirror_catalog();
  auto o = small_options();
  o.tensors["x"] = dense(DType::I32, {2, 3});
  CHECK(compile_error(program, catalog, o) ==
        "explicit tensor `x` i32[2, 3] contiguous differs from the program input `x` f32[B, 3]");
  o.tensors["x"] = dense(DType::F32, {2, 4});
  CHECK(compile_error(program, catalog, o) ==
        "the explicit input tensors do not fit the program: input 'x' axis 1 is 4, expected 3: the program "
        "declares f32[B, 3], got f32[2, 4]");
  o.tensors["x"] = dense(DType::F32, {9, 3});
  CHECK(compile_error(program, catalog, o) ==
        "the explicit input tensors do not fit the program: guard 'B <= 8' does not hold: B <= 8 evaluates to 9 <= 8");
  o.tensors["x"] = ResolvedTensorSpec{{2, 3}, DType::F32, ResolvedTensorLayout::strided({4})};
  CHECK(compile_error(program, catalog, o) ==
        "explicit tensor `x`: strided layout has 1 strides for a tensor of rank 2");
  o = small_options();
  o.tensors["w"] = dense(DType::F32, {4});
  CHECK(compile_error(program, catalog, o) == "explicit weight tensor `w` differs from model semantics");
  const auto updating = updating_model();
  ModelCompileOptions u;
  u.tensors["u"] = dense(DType::F32, {4});
  u.tensors["s"] = dense(DType::F32, {2, 2});
  CHECK(compile_error(updating, mirror_catalog(), u) == "explicit state tensor `s` differs from model semantics");
}

TEST_CASE("an unknown weight materializer is named with the registered ones", "[model][errors]") {
  auto o = small_options();
  o.weight_materializer = "nope";
  CHECK(compile_error(small_model(), mirror_catalog(), o) ==
        "unknown weight materializer `nope` (registered: identity, tenact.pack_panels)");
}

TEST_CASE("node resolution errors name the node, the providers and why", "[model][errors]") {
  const auto program = small_model();
  const auto o = small_options();
  const auto adds = serving({OpKind::Add, OpKind::Negate});
  CHECK(compile_error(program, catalog_of({{"e0", "mem", list({provider("a", serving({OpKind::Negate}))})}}), o) ==
        "no provider in the catalog serves node `y` (op #0 (add -> 'y'))");

  const auto two = catalog_of(
      {{"e0", "mem",
        list({provider("a", adds, 64, {"elementwise"}), provider("b", adds, 64, {"elementwise", "strided"})})}});
  auto r = o;
  r.required_capabilities["y"] = {"fast"};
  CHECK(
      compile_error(program, two, r) ==
      "node `y` requires capabilities [fast], which no candidate has: e0/a [elementwise]; e0/b [elementwise, strided]");
  r.required_capabilities["y"] = {"strided"};
  CHECK(compiled(program, two, r)->node(0).provider == "e0/b");

  auto p = o;
  p.preferred_providers["y"] = "e9/a";
  CHECK(compile_error(program, two, p) == "node `y` prefers provider `e9/a`, which is not in the catalog");
  const auto negates =
      catalog_of({{"e0", "mem", list({provider("a", adds), provider("n", serving({OpKind::Negate}))})}});
  p.preferred_providers["y"] = "e0/n";
  CHECK(compile_error(program, negates, p) ==
        "node `y` prefers provider `e0/n`, which does not serve op #0 (add -> 'y')");
  p.preferred_providers["y"] = "e0/a";
  p.required_capabilities["y"] = {"strided", "elementwise", "fast"};
  CHECK(compile_error(program, two, p) ==
        "node `y` prefers provider `e0/a`, which lacks the required capabilities [strided, fast]");
  p.required_capabilities.clear();
  CHECK(compiled(program, two, p)->node(0).why == "preferred by the options");

  // Unfit: the one candidate's reason verbatim; several: each one's; preferred: why it does not fit.
  const ContractFn f16_only = [](const ContractQuery& q) -> std::optional<OpContract> {
    auto c = mirror(q);
    for (TensorContract& t : c->operands) t.element_types = {DType::F16};
    return c;
  };
  const auto unfit =
      catalog_of({{"e0", "mem",
                   list({provider("h", serving({OpKind::Add}, f16_only)), provider("n", serving({OpKind::Negate}))})}});
  const std::string reason =
      "node `y` input[0] `x` rank or dtype differs from its operation contract: actual rank=2 dtype=f32, expected "
      "rank=2 "
      "dtypes=[f16]";
  CHECK(compile_error(program, unfit, o) == reason);
  const auto unfit2 = catalog_of(
      {{"e0", "mem",
        list({provider("h", serving({OpKind::Add}, f16_only)), provider("h2", serving({OpKind::Add}, f16_only)),
              provider("n", serving({OpKind::Negate}))})}});
  CHECK(compile_error(program, unfit2, o) == "no provider fits node `y`: e0/h: " + reason + "; e0/h2: " + reason);
  p.preferred_providers["y"] = "e0/h";
  CHECK(compile_error(program, unfit, p) == "node `y` prefers provider `e0/h`, which does not fit: " + reason);
}

TEST_CASE("the first fitting provider wins and the others are recorded", "[model][errors]") {
  const auto program = small_model();
  const ContractFn f16_only = [](const ContractQuery& q) -> std::optional<OpContract> {
    auto c = mirror(q);
    for (TensorContract& t : c->operands) t.element_types = {DType::F16};
    return c;
  };
  const auto catalog =
      catalog_of({{"e0", "mem", list({provider("h", serving({OpKind::Add}, f16_only)), provider("m", mirror)})},
                  {"e1", "mem", list({provider("m", mirror)})}});
  const auto plan = compiled(program, catalog, small_options());
  CHECK(plan->node(0).provider == "e0/m");
  CHECK(plan->node(0).engine == "e0");
  CHECK(plan->node(0).endpoint == Endpoint{"e0", "mem"});
  CHECK(
      plan->node(0).why ==
      "the first provider in catalog order whose contract fits (also fitting: e1/m); rejected: e0/h (node `y` input[0] "
      "`x` rank or dtype differs from its operation contract: actual rank=2 dtype=f32, expected rank=2 dtypes=[f16])");
  CHECK(plan->node(1).why == "the first provider in catalog order whose contract fits (also fitting: e1/m)");
}

TEST_CASE("a state update is written in place where a provider can, else into new storage", "[model][errors]") {
  const auto program = updating_model();
  ModelCompileOptions o;
  o.tensors["u"] = dense(DType::F32, {4});
  // No in-place provider: the update is computed into storage of its own
  // (it replaces the state after the run), and nothing needs ordering.
  const auto functional = compiled(program, mirror_catalog(), o);
  CHECK(functional->node(1).provider == "e0/mirror");
  const ValueId s_next = program->state_updates()[0].value;
  CHECK(functional->storage[s_next].kind == ValueStorage::Kind::Activation);
  CHECK_FALSE(functional->storage[s_next].packed);
  CHECK(functional->storage[s_next].unpacked_because == "a state's new contents (no provider updates it in place)");
  CHECK(functional->order.empty());
  // An in-place provider wins for the update even when declared later; the
  // other reader of the state is ordered before it.
  const auto both = catalog_of(
      {{"e0", "mem", list({provider("m", mirror), provider("i", aliasing(mirror, 0, AliasPolicy::must(0)))})}});
  const auto in_place = compiled(program, both, o);
  CHECK(in_place->node(0).provider == "e0/m");
  CHECK(in_place->node(1).provider == "e0/i");
  CHECK(in_place->storage[s_next].kind == ValueStorage::Kind::Aliased);
  CHECK(in_place->order == std::vector<std::pair<size_t, size_t>>{{0, 1}});
  // A result that must alias the other operand does not update the state.
  const auto wrong = catalog_of(
      {{"e0", "mem", list({provider("m", mirror), provider("w", aliasing(mirror, 0, AliasPolicy::must(1)))})}});
  CHECK(compiled(program, wrong, o)->node(1).provider == "e0/m");
  auto p = o;
  p.preferred_providers["s_next"] = "e0/w";
  CHECK(compile_error(program, wrong, p) ==
        "node `s_next` prefers provider `e0/w`, which it may not take: its result must alias another operand than "
        "state `s`");
  // A node that updates no state never takes a must-alias provider.
  const auto only_in_place =
      catalog_of({{"e0", "mem", list({provider("i", aliasing(mirror, 0, AliasPolicy::must(0)))})}});
  CHECK(compile_error(program, only_in_place, o) ==
        "node `r` updates no state, but every provider serving it has a result that must alias an operand (candidates: "
        "e0/i)");
  p.preferred_providers = {{"r", "e0/i"}};
  CHECK(compile_error(program, only_in_place, p) ==
        "node `r` prefers provider `e0/i`, which it may not take: its result 0 must alias an operand and updates no "
        "state");
}

TEST_CASE("a provider whose inferred result disagrees with the program violates its contract", "[model][errors]") {
  const auto program = small_model();
  const ContractFn liar = [](const ContractQuery& q) -> std::optional<OpContract> {
    auto c = mirror(q);
    c->results[0].dimensions[0] = DimensionConstraint::exact(5);
    return c;
  };
  const auto catalog =
      catalog_of({{"e0", "mem", list({provider("liar", serving({OpKind::Add}, liar)), provider("m", mirror)})}});
  CHECK(compile_error(program, catalog, small_options()) ==
        "provider `e0/liar` violates its contract at node `y`: it gives value `y` the tensor f32[5, 3] contiguous, the "
        "program infers f32[B, 3] = f32[2, 3]");
}

TEST_CASE("alignment evidence must be a power of two and reach a fixed point", "[model][errors]") {
  const auto program = small_model();
  auto odd = provider("odd", serving({OpKind::Add}));
  odd.alignment = [](const AlignmentQuery&) -> uint64_t { return 48; };
  const auto catalog = catalog_of({{"e0", "mem", list({odd, provider("m", mirror)})}});
  CHECK(compile_error(program, catalog, small_options()) ==
        "provider value-alignment evidence is not a power of two: provider `e0/odd` of node `y` gave 48");

  // Evidence that doubles at every pass never settles within the bound.
  uint32_t calls = 0;
  auto doubling = [&](uint64_t a) -> Result<uint64_t> {
    ++calls;
    return 2 * a;
  };
  auto settled = settle_value_alignment(64, doubling, 3);
  REQUIRE_FALSE(settled.ok());
  CHECK(settled.error().code() == ErrorCode::InvalidPlan);
  CHECK(settled.error().message() == "provider value alignment did not reach a bounded monotonic fixed point");
  CHECK(calls == 3);
  // With the bound the compiler uses (65 passes) evidence that grows to 2^63 still settles.
  auto grows =
      settle_value_alignment(1, [](uint64_t a) -> Result<uint64_t> { return a < (uint64_t{1} << 63) ? 2 * a : a; });
  REQUIRE(grows.ok());
  CHECK(grows->alignment == uint64_t{1} << 63);
  CHECK(grows->passes == 64);
  CHECK(kMaxAlignmentPasses == 65);
}

TEST_CASE("a program without ops has no alignment evidence", "[model][errors]") {
  const auto program = program_of(R"({"format": "tenact.program/1", "name": "idle",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [2]}], "states": [{"name": "s", "dtype": "f32", "shape": [1]}],
    "ops": [], "outputs": ["x"]})");
  ModelCompileOptions o;
  o.tensors["x"] = dense(DType::F32, {2});
  CHECK(compile_error(program, mirror_catalog(), o) == "program has no provider value-alignment evidence");
}
