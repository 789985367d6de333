// Extension families in the configuration snapshot and the plan: slots the
// snapshot gives engines that run host kernels (with_extension), which
// payload a slot gets, the definition and payload every prepare request
// carries, keys that differ when only a payload differs, a family's work
// estimate in cost placement, and the compiler options (fusion, region
// size, placement policy) in the key and the plan. Expected figures are
// derived by hand.
#include <catch2/catch.hpp>

#include "planning/preparation_context.hpp"
#include "planning_world.hpp"

using namespace tenact;
using namespace tenact::testing;

namespace {

ExtensionFamilyPtr family_named(std::string name, bool host_kernel = true) {
  auto f = std::make_shared<ExtensionFamily>();
  f->name = std::move(name);
  f->infer = [](std::span<const ValueType> operands, const std::string&) -> Result<std::vector<ValueType>> {
    return std::vector<ValueType>{operands[0]};
  };
  if (host_kernel)
    f->prepare_host = [](const ExtensionPrepareCall&) -> Result<HostExtensionKernel> {
      return Error{ErrorCode::Unsupported, "planning tests run nothing"};
    };
  return f;
}

std::shared_ptr<ScriptedEngine> host_runner(std::string id) {
  auto e = std::make_shared<ScriptedEngine>(std::move(id), std::vector<std::string>{"host"},
                                            std::vector<OpFamily>{OpFamily::Elementwise, OpFamily::Extension});
  e->capabilities_.host_extension_kernels = true;
  return e;
}

void register_family(World& w, ExtensionFamilyPtr f, std::map<std::string, std::string> configs = {}) {
  auto next = w.config->with_extension(std::move(f), std::move(configs));
  REQUIRE(next.ok());
  w.config = *next;
}

const char* kOneExtension = R"({"format": "tenact.program/1", "name": "one_ext",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [1000]}],
  "ops": [{"op": "extension", "family": "t.f", "in": ["x"], "out": "y", "attributes": {"k": 1}}],
  "outputs": ["y"]})";

ExtensionRegistry registry_of(const World& w) {
  ExtensionRegistry r;
  for (const RegisteredExtension& e : w.config->extensions()) r.add(e.family->name, e.family->infer);
  return r;
}

Result<PreparationContext> resolve(const World& w, const char* json, PrepareOptions options = {}) {
  const std::vector<InputDescriptor> inputs{input(DType::F32, {1000})};
  return resolve_preparation_context(w.config, program_of(json, registry_of(w)), inputs, options);
}

}  // namespace

TEST_CASE("a registered family gives a slot to every engine that runs host kernels", "[planning][extensions]") {
  World w;
  auto runner = w.add(host_runner("runner"));
  auto other = w.add("other", {"host"});  // runs no host extension kernels
  register_family(w, family_named("t.f"));
  register_family(w, family_named("t.device_only", false));
  const EngineEntry* r = w.config->find_engine("runner");
  CHECK(r->extension_slot("t.f") != nullptr);
  CHECK(r->extension_slot("t.f")->definition == w.config->find_extension("t.f"));
  CHECK(r->capabilities.has_extension("t.f"));
  CHECK(r->extension_slot("t.device_only") == nullptr);  // no host kernel
  CHECK(w.config->find_engine("other")->extension_slot("t.f") == nullptr);
  // An engine registered later gets the slots of the families known then.
  w.add(host_runner("late"));
  CHECK(w.config->find_engine("late")->extension_slot("t.f") != nullptr);
  // A slot the engine declared itself keeps it, with the definition attached.
  auto native = std::make_shared<ScriptedEngine>("native", std::vector<std::string>{"host"},
                                                 std::vector<OpFamily>{OpFamily::Extension});
  native->capabilities_.extension_families = {"t.g"};
  w.add(native, 0, {{"t.g", "own"}});
  register_family(w, family_named("t.g"));
  const ExtensionSlot* g = w.config->find_engine("native")->extension_slot("t.g");
  REQUIRE(g != nullptr);
  CHECK(g->payload_bytes() == "own");
  CHECK(g->definition == w.config->find_extension("t.g"));
  CHECK(w.config->find_engine("native")->extension_slots.size() == 1);
  auto again = w.config->with_extension(family_named("t.f"));
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().message() == "extension family 't.f' is registered already");
  auto none = w.config->with_extension(nullptr);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().code() == ErrorCode::InvalidAttribute);
}

TEST_CASE("a slot's payload: the engine's own, else the family's for the engine, else none", "[planning][extensions]") {
  World w;
  w.add(host_runner("a"), 0, {{"t.f", "from engine"}});  // a payload for a family not registered yet
  w.add(host_runner("b"));
  w.add(host_runner("c"));
  register_family(w, family_named("t.f"), {{"a", "from family"}, {"b", "for b"}});
  CHECK(w.config->find_engine("a")->extension_slot("t.f")->payload_bytes() == "from engine");
  CHECK(w.config->find_engine("b")->extension_slot("t.f")->payload_bytes() == "for b");
  CHECK(w.config->find_engine("c")->extension_slot("t.f")->payload_bytes().empty());
  // An engine that runs no host kernels and has no such slot may not take a payload for it.
  auto plain = std::make_shared<ScriptedEngine>("plain", std::vector<std::string>{"host"});
  auto refused = w.config->with_engine(plain->registration(0, {{"t.f", "x"}}));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message().find("has no slot for extension family 't.f'") != std::string::npos);
}

TEST_CASE("every prepare request of an extension op carries the family and the slot's payload", "[planning][extensions]") {
  World w;
  auto runner = w.add(host_runner("runner"), 0, {{"t.f", "cfg-1"}});
  register_family(w, family_named("t.f"));
  ExtensionFamilyPtr seen_family;
  std::string seen_config;
  runner->answer = [&](const OpPrepareRequest& r) -> PrepareAnswer {
    seen_family = r.extension;
    seen_config = r.planning_config ? *r.planning_config : "<none>";
    return ScriptedEngine::echo(r);
  };
  const std::vector<InputDescriptor> inputs{input(DType::F32, {1000})};
  auto prepared = prepare_program(w.config, program_of(kOneExtension, registry_of(w)), inputs, {}, w.lookup());
  REQUIRE(prepared.ok());
  CHECK(seen_family == w.config->find_extension("t.f"));
  CHECK(seen_config == "cfg-1");
}

TEST_CASE("programs that differ only in an extension slot's payload get different keys", "[planning][extensions]") {
  auto key_under = [](const std::string& payload) {
    World w;
    w.add(host_runner("runner"), 0, {{"t.f", payload}});
    register_family(w, family_named("t.f"));
    auto c = resolve(w, kOneExtension);
    REQUIRE(c.ok());
    return c->root_identity;
  };
  auto a = key_under("alpha"), a_again = key_under("alpha"), b = key_under("beta");
  CHECK(root_identity_exact_equal(*a, *a_again));
  CHECK_FALSE(root_identity_exact_equal(*a, *b));
  auto digest = [](const std::shared_ptr<const RootIdentity>& r) {
    return PreparedEntryKey::make(r, SpecializationRequirements{{InputRequirement{}}},
                                  SpecializationProjection{{InputProjection{}}})
        .value()
        .compact_digest();
  };
  CHECK(digest(a) == digest(a_again));
  CHECK_FALSE(digest(a) == digest(b));
}

TEST_CASE("cost placement counts an extension op by its family's estimate", "[planning][extensions]") {
  // One engine, launch 0, f32 at 1e8 ops/s, memory so fast the ops decide:
  // with no estimate the op counts as elementwise (1000 elements: 10,000 ns);
  // an estimate of 7 ops per element makes it 70,000 ns.
  auto finish_with = [](bool estimated) {
    World w;
    auto e = host_runner("runner");
    EngineCostModel m;
    m.rates.f32 = 1e8;
    m.memory_bandwidth = 1e18;
    m.launch_latency_ns = 0;
    e->capabilities_.cost = m;
    w.add(e);
    auto f = std::const_pointer_cast<ExtensionFamily>(family_named("t.f"));
    if (estimated)
      f->estimate = [](const ExtensionWorkCall& call) {
        uint64_t n = 1;
        for (int64_t d : call.operands[0].shape) n *= static_cast<uint64_t>(d);
        return ExtensionWork{7 * n, 8 * n};
      };
    register_family(w, f);
    PrepareOptions o;
    o.policy = PlacementPolicy::EarliestFinish;
    auto c = resolve(w, kOneExtension, o);
    REQUIRE(c.ok());
    return c->schedule->placement[0].est_finish_ns;
  };
  CHECK(finish_with(false) == 10000);
  CHECK(finish_with(true) == 70000);
}

namespace {

// a*b, +c, tanh, *b over f32[1000]: one chain of four elementwise ops.
const char* kChain4 = R"({"format": "tenact.program/1", "name": "chain4",
  "inputs": [{"name": "a", "dtype": "f32", "shape": [1000]}, {"name": "b", "dtype": "f32", "shape": [1000]},
             {"name": "c", "dtype": "f32", "shape": [1000]}],
  "ops": [{"op": "multiply", "in": ["a", "b"], "out": "p"},
          {"op": "add", "in": ["p", "c"], "out": "q"},
          {"op": "tanh", "in": ["q"], "out": "r"},
          {"op": "multiply", "in": ["r", "b"], "out": "y"}],
  "outputs": ["y"]})";

Result<std::shared_ptr<const PreparedProgram>> prepare_chain(const World& w, CompilerOptions compiler) {
  PrepareOptions o;
  o.compiler = compiler;
  o.policy = PlacementPolicy::Preference;
  const std::vector<InputDescriptor> inputs{input(DType::F32, {1000}), input(DType::F32, {1000}),
                                            input(DType::F32, {1000})};
  return prepare_program(w.config, program_of(kChain4), inputs, o, w.lookup());
}

}  // namespace

TEST_CASE("compiler options shape the plan and are the key's compiler options", "[planning][extensions]") {
  World w;
  auto fuser = std::make_shared<ScriptedEngine>("fuser", std::vector<std::string>{"host"});
  fuser->capabilities_.fused_elementwise_regions = true;
  w.add(fuser);
  auto fused = prepare_chain(w, {});
  REQUIRE(fused.ok());
  REQUIRE((*fused)->root->regions.size() == 1);
  CHECK((*fused)->root->regions[0].instructions == std::vector<uint32_t>{0, 1, 2, 3});
  CHECK((*fused)->root->identity->compiler_options == "policy=preference");

  auto unfused = prepare_chain(w, CompilerOptions{false, 0});
  REQUIRE(unfused.ok());
  CHECK((*unfused)->root->regions.empty());
  CHECK((*unfused)->root->identity->compiler_options == "fuse=0;policy=preference");

  auto pairs = prepare_chain(w, CompilerOptions{true, 2});
  REQUIRE(pairs.ok());
  REQUIRE((*pairs)->root->regions.size() == 2);
  CHECK((*pairs)->root->regions[0].instructions == std::vector<uint32_t>{0, 1});
  CHECK((*pairs)->root->regions[1].instructions == std::vector<uint32_t>{2, 3});
  CHECK((*pairs)->root->identity->compiler_options == "max_region_ops=2;policy=preference");

  CHECK_FALSE(root_identity_exact_equal(*(*fused)->root->identity, *(*unfused)->root->identity));
  CHECK_FALSE(root_identity_exact_equal(*(*fused)->root->identity, *(*pairs)->root->identity));
  // The options' text for the request memo holds both parts.
  PrepareOptions o;
  o.placement.engines = {"fuser"};
  o.compiler = CompilerOptions{false, 3};
  CHECK(o.placement_text() == "engines=5:fuser");
  CHECK(o.compiler_text() == "fuse=0;max_region_ops=3");
  CHECK(o.canonical_text() == "engines=5:fuser;fuse=0;max_region_ops=3");
  CHECK(PrepareOptions{}.canonical_text().empty());
}
