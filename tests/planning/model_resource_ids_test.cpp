// Content-addressed resource ids against SHA-256 computed by Python's
// hashlib (tests/fixtures/gen_model_resource_ids.py), and the ids of a
// plan's resources from the inputs resource_ids.hpp names.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "planning/model/resource_ids.hpp"
#include "tests/planning/model_test_support.hpp"

using namespace tenact;
using namespace tenact::model_test;

TEST_CASE("sha256_hex gives the standard digests", "[model][resource_ids]") {
  // FIPS 180-2 test vectors.
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_CASE("hashed resource ids equal hashlib's", "[model][resource_ids]") {
  std::ifstream in(std::string(TENACT_TEST_DATA_DIR) + "/model_resource_ids/ids.json");
  REQUIRE(in.good());
  const nlohmann::json entries = nlohmann::json::parse(in);
  REQUIRE(entries.size() == 10);
  bool empty_identity = false, non_ascii = false;
  for (const auto& e : entries) {
    const std::string kind = e.at("kind"), fingerprint = e.at("fingerprint"), identity = e.at("identity");
    INFO(kind << " / " << fingerprint << " / " << identity);
    CHECK(hashed_resource_id(kind, fingerprint, identity) == e.at("id").get<std::string>());
    empty_identity = empty_identity || identity.empty();
    non_ascii = non_ascii || std::any_of(identity.begin(), identity.end(), [](char c) { return (c & 0x80) != 0; });
  }
  CHECK(empty_identity);
  CHECK(non_ascii);
  // The separators keep the parts apart: moving a byte across one changes the id.
  CHECK(hashed_resource_id("state", "ab", "c") != hashed_resource_id("state", "a", "bc"));
  CHECK(hashed_resource_id("state", "ab", "c").rfind("resource/state/sha256/", 0) == 0);
}

TEST_CASE("a plan's resource ids are hashed from its fingerprints and identities", "[model][resource_ids]") {
  const auto program = program_of(R"({"format": "tenact.program/1", "name": "ids",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [2]}],
    "weights": [{"name": "w", "dtype": "f32", "shape": [2]}, {"name": "b", "dtype": "i32", "shape": [2]}],
    "states": [{"name": "cache", "dtype": "f32", "shape": [2]}],
    "ops": [{"op": "add", "in": ["x", "w"], "out": "t"}, {"op": "add", "in": ["t", "cache"], "out": "u"},
            {"op": "add", "in": ["u", "w"], "out": "y"}, {"op": "negate", "in": ["b"], "out": "nb"}],
    "outputs": ["y", "nb"]})");
  ModelCompileOptions o;
  o.tensors["x"] = dense(DType::F32, {2});
  o.preferred_providers["y"] = "e1/mirror";
  const auto plan = compiled(program, two_engine_catalog(), o);
  const std::string family = program->fingerprint().to_hex();
  CHECK(plan->family_fingerprint == family);
  REQUIRE(family.size() == 32);
  const std::string weights = plan->execution_weight_fingerprint;
  REQUIRE(weights.size() == 64);
  std::vector<std::pair<std::string, ResourceKind>> expected = {
      {hashed_resource_id("weight-arena", weights, "e0/mem:f32"), ResourceKind::WeightArena},
      {hashed_resource_id("weight-arena", weights, "e1/mem:f32"), ResourceKind::WeightArena},
      {hashed_resource_id("weight-arena", weights, "e0/mem:i32"), ResourceKind::WeightArena},
      {hashed_resource_id("state", family, "cache"), ResourceKind::State},
      {hashed_resource_id("activation-arena", family, "e0/mem"), ResourceKind::ActivationArena},
      {hashed_resource_id("activation", family, "u"), ResourceKind::Activation},
      {hashed_resource_id("activation", family, "y"), ResourceKind::Activation},
      {hashed_resource_id("activation", family, "nb"), ResourceKind::Activation},
  };
  REQUIRE(plan->resources.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("resource " << i << ": " << plan->resources[i].holds);
    CHECK(plan->resources[i].id == expected[i].first);
    CHECK(plan->resources[i].kind == expected[i].second);
  }
  CHECK(plan->storage[value_named(*program, "u")].unpacked_because == "read on another device");
  CHECK(plan->storage[value_named(*program, "t")].packed);
  // The probe's ids never reach the plan.
  for (const WeightComponent& c : plan->weight_components)
    CHECK(c.resource != hashed_resource_id("weight-probe", weights, c.id));
  // The execution weights' fingerprint follows the materializer.
  o.weight_materializer = "tenact.pack_panels";
  CHECK(compiled(program, two_engine_catalog(), o)->execution_weight_fingerprint != weights);
}
