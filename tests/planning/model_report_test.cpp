// describe_model_plan and model_plan_json: the resources with their ids,
// offsets and bytes, as `tenact plan` prints them.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "planning/model/model_plan_report.hpp"
#include "planning/model/resource_ids.hpp"
#include "tests/planning/model_test_support.hpp"

using namespace tenact;
using namespace tenact::model_test;

namespace {

/// x f32[2]; weights w f32[2] and v f32[3]; t = add(x, w) (packed), y = negate(t), n = negate(v).
std::shared_ptr<const SemanticProgram> report_model() {
  return program_of(R"({"format": "tenact.program/1", "name": "rep",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [2]}],
    "weights": [{"name": "w", "dtype": "f32", "shape": [2]}, {"name": "v", "dtype": "f32", "shape": [3]}],
    "ops": [{"op": "add", "in": ["x", "w"], "out": "t"}, {"op": "negate", "in": ["t"], "out": "y"},
            {"op": "negate", "in": ["v"], "out": "n"}],
    "outputs": ["y", "n"]})");
}

std::shared_ptr<const ModelPlan> report_plan() {
  ModelCompileOptions o;
  o.tensors["x"] = dense(DType::F32, {2});
  return compiled(report_model(), mirror_catalog(), o);
}

}  // namespace

TEST_CASE("the text report lists resources, places and totals", "[model][report]") {
  const auto plan = report_plan();
  const std::string text = describe_model_plan(*plan);
  const std::string family = plan->family_fingerprint;
  const std::string arena = hashed_resource_id("weight-arena", plan->execution_weight_fingerprint, "e0/mem:f32");
  const std::string activations = hashed_resource_id("activation-arena", family, "e0/mem");
  const std::string y = hashed_resource_id("activation", family, "y");
  INFO(text);
  CHECK(text.find("model 'rep': family " + family + ", digest " + plan->digest + "\n") == 0);
  CHECK(text.find("value alignment: 64 bytes (1 pass(es) after the probe)\n") != std::string::npos);
  CHECK(text.find("  " + arena + " weight-arena at e0/mem, f32, 76 bytes, alignment 64: weights w, v\n") !=
        std::string::npos);
  CHECK(text.find("  " + activations + " activation-arena at e0/mem, u8, 8 bytes, alignment 64: 1 activations\n") !=
        std::string::npos);
  CHECK(text.find("  v (weight) f32[3] contiguous: weight; " + arena + " at e0/mem +64, 12 bytes\n") !=
        std::string::npos);
  CHECK(text.find("  t (result) f32[2] contiguous: activation; " + activations +
                  " at e0/mem +0, 8 bytes; ops [0, 1], packed\n") != std::string::npos);
  CHECK(text.find("  y (result) f32[2] contiguous: activation; " + y +
                  " at e0/mem +0, 8 bytes; ops [1, 1], own resource: a program output\n") != std::string::npos);
  CHECK(text.find("  v@e0/mem f32[3] contiguous in " + arena + " +64, 12 bytes\n") != std::string::npos);
  CHECK(text.find("  op #0 (add -> 't') -> e0/mirror at e0/mem (alignment 64): the first provider in catalog order "
                  "whose contract fits\n") != std::string::npos);
  CHECK(text.find("activations: peak live 16 bytes, planned 28 bytes (arenas and unpacked), total 28 bytes without "
                  "reuse\n") != std::string::npos);
}

TEST_CASE("the JSON report holds the same facts under documented keys", "[model][report]") {
  const auto plan = report_plan();
  const auto j = nlohmann::json::parse(model_plan_json(*plan));
  CHECK(j.at("model") == "rep");
  CHECK(j.at("digest") == plan->digest);
  CHECK(j.at("value_alignment_bytes") == 64);
  CHECK(j.at("alignment_passes") == 1);
  CHECK(j.at("weight_materializer") == "identity");
  const auto& resources = j.at("resources");
  REQUIRE(resources.size() == 4);
  CHECK(resources[0].at("id") == hashed_resource_id("weight-arena", plan->execution_weight_fingerprint, "e0/mem:f32"));
  CHECK(resources[0].at("kind") == "weight-arena");
  CHECK(resources[0].at("bytes") == 76);
  CHECK(resources[0].at("alignment") == 64);
  CHECK(resources[0].at("endpoint") == "e0/mem");
  CHECK(resources[1].at("kind") == "activation-arena");
  CHECK(resources[2].at("id") == hashed_resource_id("activation", plan->family_fingerprint, "y"));
  const auto& components = j.at("weight_components");
  REQUIRE(components.size() == 2);
  CHECK(components[1].at("id") == "v@e0/mem");
  CHECK(components[1].at("weight") == "v");
  CHECK(components[1].at("offset_bytes") == 64);
  CHECK(components[1].at("length_bytes") == 12);
  const auto& t = j.at("values").at(3);
  CHECK(t.at("name") == "t");
  CHECK(t.at("role") == "result");
  CHECK(t.at("storage").at("kind") == "activation");
  CHECK(t.at("storage").at("packed") == true);
  CHECK(t.at("storage").at("places").at(0).at("offset_bytes") == 0);
  CHECK(j.at("values").at(0).at("storage").at("kind") == "request");
  CHECK(j.at("nodes").at(0).at("provider") == "e0/mirror");
  CHECK(j.at("nodes").at(0).at("choice").at("operand_layouts") == nlohmann::json::array({"contiguous", "contiguous"}));
  CHECK(j.at("activations").at("peak_live_bytes") == 16);
  CHECK(j.at("activations").at("planned_bytes") == 28);
  CHECK(j.at("activations").at("total_bytes") == 28);
  CHECK(j.at("order").empty());
  CHECK(j.at("retained").empty());
}
