// Prepared-entry keys: equal programs from JSON and from the builder give
// equal keys; every identity field changes the digest and the exact
// equality; extension payloads are compared by bytes; exact equality
// settles digest collisions.
#include <catch2/catch.hpp>

#include <functional>
#include <unordered_set>

#include "core/builder.hpp"
#include "core/program_json.hpp"
#include "planning/prepared_key.hpp"
#include "planning/retained_bytes.hpp"

using namespace tenact;

namespace {

ExtensionRegistry extensions() {
  ExtensionRegistry reg;
  reg.add("t.id", [](std::span<const ValueType> in, const std::string&) -> Result<std::vector<ValueType>> {
    return std::vector<ValueType>{in[0]};
  });
  return reg;
}

// x: f32[B, 8]; h = dot(x, w); y = t.id(h); outputs y.
const char* kJson = R"({"format": "tenact.program/1", "name": "from_json",
  "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 8]},
             {"name": "w", "dtype": "f32", "shape": [8, 3]}],
  "ops": [{"op": "dot_general", "in": ["x", "w"], "out": "hidden",
           "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
          {"op": "extension", "family": "t.id", "in": ["hidden"], "out": "y"}],
  "outputs": ["y"]})";

std::shared_ptr<const SemanticProgram> from_json() {
  auto p = load_program(kJson, extensions());
  REQUIRE(p.ok());
  return std::make_shared<const SemanticProgram>(std::move(*p));
}

std::shared_ptr<const SemanticProgram> from_builder() {
  ProgramBuilder b{"from_builder"};
  auto x = b.input("x", DType::F32, {"B", 8});
  auto w = b.input("w", DType::F32, {8, 3});
  DotGeneralAttrs dims;
  dims.lhs_contracting_dimensions = {1};
  dims.rhs_contracting_dimensions = {0};
  auto h = b.dot_general(x, w, dims);  // automatic name, unlike the JSON's "hidden"
  auto y = b.extension("t.id", {h}, "{}", 1, {"y"});
  b.output(y[0]);
  auto p = b.build(extensions());
  REQUIRE(p.ok());
  return std::make_shared<const SemanticProgram>(std::move(*p));
}

RuntimeConfigPtr config(const std::string& payload) {
  EngineRegistration r;
  r.identity = EngineIdentity{"cpu", "x86_64", 0, 11};
  r.capabilities.storage_classes = {"host"};
  r.capabilities.default_storage_class = "host";
  r.capabilities.extension_families = {"t.id"};
  r.extension_payloads = {{"t.id", payload}};
  auto c = RuntimeConfig::initial(5, ExecutionPolicy{1 << 20, 3})->with_engine(r);
  REQUIRE(c.ok());
  return *c;
}

RootIdentity root_of(std::shared_ptr<const SemanticProgram> program, const RuntimeConfig& c) {
  const EngineEntry& cpu = *c.find_engine("cpu");
  RootIdentity r;
  r.program = std::move(program);
  r.runtime_id = c.runtime_id();
  r.epoch = c.epoch();
  r.root_placement = {"cpu", "host"};
  r.engines = {cpu.identity};
  r.compiler_options = "";
  r.planning = planning_key(cpu, c.policy());
  r.prepare_options = "";
  r.op_bindings = {{"cpu", "host"}, {"cpu", "host"}};
  r.input_endpoints = {{"cpu", "host"}, {"cpu", "host"}};
  r.extension_planning = {ExtensionPlanningIdentity::of(cpu, *cpu.extension_slot("t.id"))};
  return r;
}

SpecializationProjection polymorphic_projection() {
  return SpecializationProjection{std::vector<InputProjection>(2)};
}

PreparedEntryKey key_of(RootIdentity root, const SpecializationRequirements& req = {},
                        SpecializationProjection proj = polymorphic_projection()) {
  auto k = PreparedEntryKey::make(std::make_shared<const RootIdentity>(std::move(root)), req,
                                  std::move(proj));
  REQUIRE(k.ok());
  return std::move(*k);
}

}  // namespace

TEST_CASE("equal programs from JSON and from the builder give equal keys", "[prepared_key]") {
  auto c = config("{}");
  const auto a = key_of(root_of(from_json(), *c));
  const auto b = key_of(root_of(from_builder(), *c));
  CHECK(a.compact_digest() == b.compact_digest());
  CHECK(a.exact_equal(b));
  CHECK(a == b);
  CHECK(root_identity_exact_equal(a.root(), b.root()));
}

TEST_CASE("programs that differ only in an extension config payload get different keys",
          "[prepared_key]") {
  const auto program = from_json();
  const auto a = key_of(root_of(program, *config(R"({"tile":64})")));
  const auto b = key_of(root_of(program, *config(R"({"tile":128})")));
  CHECK(a.root().epoch == b.root().epoch);
  CHECK_FALSE(a.compact_digest() == b.compact_digest());
  CHECK_FALSE(a.exact_equal(b));
  CHECK(a.exact_equal(key_of(root_of(program, *config(R"({"tile":64})")))));
}

TEST_CASE("every field of the root identity changes the digest and the exact equality",
          "[prepared_key]") {
  auto c = config("{}");
  const RootIdentity base = root_of(from_json(), *c);
  const PreparedEntryKey base_key = key_of(base);
  auto other_program = [] {
    auto p = load_program(R"({"format": "tenact.program/1",
      "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 8]},
                 {"name": "w", "dtype": "f32", "shape": [8, 3]}],
      "ops": [], "outputs": ["x"]})");
    REQUIRE(p.ok());
    return std::make_shared<const SemanticProgram>(std::move(*p));
  }();
  const std::vector<std::pair<const char*, std::function<void(RootIdentity&)>>> changes = {
      {"program", [&](RootIdentity& r) { r.program = other_program; }},
      {"runtime id", [](RootIdentity& r) { r.runtime_id += 1; }},
      {"epoch", [](RootIdentity& r) { r.epoch += 1; }},
      {"root engine", [](RootIdentity& r) { r.root_placement.engine = "sim:0"; }},
      {"root storage", [](RootIdentity& r) { r.root_placement.storage_class = "pinned"; }},
      {"engine id", [](RootIdentity& r) { r.engines[0].id = "cpu2"; }},
      {"hardware class", [](RootIdentity& r) { r.engines[0].hardware_class = "arm64"; }},
      {"registration", [](RootIdentity& r) { r.engines[0].registration += 1; }},
      {"context", [](RootIdentity& r) { r.engines[0].context += 1; }},
      {"another engine", [](RootIdentity& r) { r.engines.push_back({"sim:0", "sim-gpu", 1, 0}); }},
      {"compiler options", [](RootIdentity& r) { r.compiler_options = "fuse=0"; }},
      {"planning hardware", [](RootIdentity& r) { r.planning.hardware_class = "arm64"; }},
      {"workspace", [](RootIdentity& r) { r.planning.workspace_limit_bytes -= 1; }},
      {"planning seed", [](RootIdentity& r) { r.planning.planning_seed += 1; }},
      {"prepare options", [](RootIdentity& r) { r.prepare_options = "engines=cpu"; }},
      {"op binding engine", [](RootIdentity& r) { r.op_bindings[1].engine = "sim:0"; }},
      {"op binding storage", [](RootIdentity& r) { r.op_bindings[0].storage_class = "pinned"; }},
      {"input endpoint", [](RootIdentity& r) { r.input_endpoints[1] = {"sim:0", "device"}; }},
      {"extension family", [](RootIdentity& r) { r.extension_planning[0].family = "t.other"; }},
      {"extension engine", [](RootIdentity& r) { r.extension_planning[0].engine = "sim:0"; }},
      {"extension payload", [](RootIdentity& r) {
         r.extension_planning[0].payload = std::make_shared<const std::string>("{\"a\":1}");
         r.extension_planning[0].payload_fingerprint = xxh3_128("{\"a\":1}");
       }},
      {"no extension", [](RootIdentity& r) { r.extension_planning.clear(); }},
  };
  std::vector<Fingerprint> seen{base_key.compact_digest()};
  for (const auto& [name, change] : changes) {
    INFO("field: " << name);
    RootIdentity changed = base;
    change(changed);
    const PreparedEntryKey k = key_of(changed);
    CHECK_FALSE(k.compact_digest() == base_key.compact_digest());
    CHECK_FALSE(k.exact_equal(base_key));
    CHECK_FALSE(root_identity_exact_equal(changed, base));
    for (const Fingerprint& f : seen) CHECK_FALSE(f == k.compact_digest());
    seen.push_back(k.compact_digest());
  }
}

TEST_CASE("requirements and projection are part of the key", "[prepared_key]") {
  auto c = config("{}");
  const RootIdentity root = root_of(from_json(), *c);
  const auto base = key_of(root);
  // An empty list and an explicit polymorphic list are the same requirements.
  CHECK(key_of(root, polymorphic_requirements(2)) == base);
  CHECK(key_of(root, polymorphic_requirements(2)).compact_digest() == base.compact_digest());
  InputRequirement batch;
  batch.concrete_dims = {0};
  SpecializationProjection b4 = polymorphic_projection();
  b4.inputs.edit()[0].concrete_dims = {{0, 4}};
  SpecializationProjection b5 = polymorphic_projection();
  b5.inputs.edit()[0].concrete_dims = {{0, 5}};
  const auto k4 = key_of(root, {{batch, {}}}, b4);
  const auto k5 = key_of(root, {{batch, {}}}, b5);
  CHECK_FALSE(k4 == base);
  CHECK_FALSE(k4.compact_digest() == base.compact_digest());
  CHECK_FALSE(k4 == k5);
  CHECK_FALSE(k4.compact_digest() == k5.compact_digest());
  CHECK_FALSE(key_of(root, {{batch, {}}}) == base);  // requirements alone
}

TEST_CASE("exact equality settles digest collisions", "[prepared_key]") {
  auto c = config("{}");
  RootIdentity r = root_of(from_json(), *c);
  const auto a = key_of(r);
  r.epoch += 1;
  const auto b = key_of(r).with_digest_for_testing(a.compact_digest());
  CHECK(a.compact_digest() == b.compact_digest());
  CHECK_FALSE(a.exact_equal(b));
  std::unordered_set<PreparedEntryKey, PreparedEntryKeyHash> set{a, b};
  CHECK(set.size() == 2);
  CHECK(set.count(key_of(root_of(from_json(), *c))) == 1);
}

TEST_CASE("extension payloads are compared by bytes, not only by fingerprint", "[prepared_key]") {
  auto c = config("{}");
  const RootIdentity base = root_of(from_json(), *c);
  RootIdentity forged = base;
  // Same fingerprint (a staged collision), different bytes.
  forged.extension_planning[0].payload = std::make_shared<const std::string>("{\"other\":1}");
  const auto a = key_of(base);
  const auto b = key_of(forged);
  CHECK(a.compact_digest() == b.compact_digest());  // the digest hashes the fingerprint
  CHECK_FALSE(a.exact_equal(b));
  CHECK_FALSE(extension_planning_exact_equal(base.extension_planning, forged.extension_planning));
  CHECK(extension_planning_exact_equal(base.extension_planning, base.extension_planning));
}

TEST_CASE("a key that cannot fit its program is refused", "[prepared_key]") {
  auto c = config("{}");
  auto null_root = PreparedEntryKey::make(nullptr, {}, polymorphic_projection());
  REQUIRE_FALSE(null_root.ok());
  CHECK(null_root.error().code() == ErrorCode::Internal);
  CHECK(null_root.error().message() == "a prepared-entry key needs a root identity with a program");
  auto root = std::make_shared<const RootIdentity>(root_of(from_json(), *c));
  auto short_projection = PreparedEntryKey::make(root, {}, SpecializationProjection{{{}}});
  REQUIRE_FALSE(short_projection.ok());
  CHECK(short_projection.error().code() == ErrorCode::ProviderContract);
  CHECK(short_projection.error().message() ==
        "a specialization projection of 1 inputs does not fit a program of 2");
  auto short_requirements =
      PreparedEntryKey::make(root, SpecializationRequirements{{{}}}, polymorphic_projection());
  REQUIRE_FALSE(short_requirements.ok());
  CHECK(short_requirements.error().code() == ErrorCode::ProviderContract);
  CHECK(short_requirements.error().message() ==
        "specialization requirements list 1 inputs, but the program has 2");
}

TEST_CASE("a key counts its root identity unless a shared root does", "[prepared_key]") {
  auto c = config(R"({"tile":64})");
  auto root = std::make_shared<const RootIdentity>(root_of(from_json(), *c));
  auto owned = PreparedEntryKey::make(root, {}, polymorphic_projection());
  auto shared = PreparedEntryKey::make(root, {}, polymorphic_projection(),
                                       RootAccounting::CountedBySharedRoot);
  REQUIRE((owned.ok() && shared.ok()));
  CHECK(*owned == *shared);  // accounting is not identity
  auto owned_bytes = owned->retained_bytes();
  auto shared_bytes = shared->retained_bytes();
  auto root_bytes = root_identity_retained_bytes(*root);
  REQUIRE((owned_bytes.ok() && shared_bytes.ok() && root_bytes.ok()));
  CHECK(*owned_bytes == *shared_bytes + *root_bytes);
  auto req = requirements_retained_bytes(polymorphic_requirements(2));
  auto proj = projection_retained_bytes(polymorphic_projection());
  REQUIRE((req.ok() && proj.ok()));
  CHECK(*shared_bytes == sizeof(PreparedEntryKey) + *req + *proj);
  // The root identity's own bytes: struct, strings, lists, the payload.
  const uint64_t expected_root =
      sizeof(RootIdentity) + 3 + 4                                   // root placement
      + sizeof(EngineIdentity) + 3 + 6                               // engine cpu / x86_64
      + 6                                                            // planning hardware class
      + 2 * (sizeof(Endpoint) + 3 + 4)                               // op bindings
      + 2 * (sizeof(Endpoint) + 3 + 4)                               // input endpoints
      + sizeof(ExtensionPlanningIdentity) + 4 + 3 + 11;              // t.id, cpu, {"tile":64}
  CHECK(*root_bytes == expected_root);
}
