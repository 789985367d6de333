// The provider catalog: qualified ids in engine preference order, what it
// refuses, and the catalog of a runtime configuration under a placement.
#include <catch2/catch.hpp>

#include "planning/model/provider_catalog.hpp"
#include "tests/planning/model_test_support.hpp"

using namespace tenact;
using namespace tenact::model_test;

namespace {

std::string catalog_error(std::vector<ProviderCatalog::Engine> engines) {
  auto made = ProviderCatalog::make(std::move(engines));
  REQUIRE_FALSE(made.ok());
  CHECK(made.error().code() == ErrorCode::InvalidPlan);
  return made.error().message();
}

EngineRegistration engine(std::string id, OpProviderList providers, uint32_t preference, bool executable = true) {
  EngineRegistration r;
  r.identity.id = std::move(id);
  r.identity.hardware_class = "test";
  r.capabilities.storage_classes = {"host", "pinned"};
  r.capabilities.default_storage_class = "host";
  r.capabilities.executable = executable;
  r.capabilities.providers = std::move(providers);
  r.preference = preference;
  return r;
}

}  // namespace

TEST_CASE("a catalog qualifies providers by engine, in engine then declaration order", "[model][catalog]") {
  const auto a = list({provider("x", mirror), provider("y", mirror, 256)});
  const auto catalog = catalog_of({{"e1", "mem", a}, {"e0", "dev", list({provider("x", mirror)})}});
  REQUIRE(catalog.entries().size() == 3);
  CHECK(catalog.entries()[0].qualified_id == "e1/x");
  CHECK(catalog.entries()[1].qualified_id == "e1/y");
  CHECK(catalog.entries()[1].engine_rank == 0);
  CHECK(catalog.entries()[1].provider->value_alignment_bytes == 256);
  CHECK(catalog.entries()[2].qualified_id == "e0/x");
  CHECK(catalog.entries()[2].endpoint == Endpoint{"e0", "dev"});
  CHECK(catalog.entries()[2].engine_rank == 1);
  CHECK(catalog.engines() == std::vector<std::string>{"e1", "e0"});
  CHECK(catalog.find("e0/x") == &catalog.entries()[2]);
  CHECK(catalog.find("e0/y") == nullptr);
  // Entries keep their provider list alive, copies included.
  const ProviderCatalog copy = catalog;
  CHECK(copy.find("e1/y")->provider->id == "y");
}

TEST_CASE("a catalog refuses malformed engines and providers", "[model][catalog]") {
  CHECK(catalog_error({{"", "mem", list({})}}) == "provider catalog: an engine without an id");
  CHECK(catalog_error({{"e0", "mem", list({})}, {"e0", "mem", list({})}}) ==
        "provider catalog: engine 'e0' is listed twice");
  CHECK(catalog_error({{"e0", "", list({})}}) == "provider catalog: engine 'e0' has no storage class");
  CHECK(catalog_error({{"e0", "mem", list({provider("", mirror)})}}) ==
        "provider catalog: engine 'e0' has a provider without an id");
  CHECK(catalog_error({{"e0", "mem", list({provider("x", mirror), provider("x", mirror)})}}) ==
        "provider catalog: engine 'e0' provider 'x' is declared twice");
  CHECK(catalog_error({{"e0", "mem", list({provider("x", nullptr)})}}) ==
        "provider catalog: engine 'e0' provider 'x' has no contract function");
  CHECK(catalog_error({{"e0", "mem", list({provider("x", mirror, 48)})}}) ==
        "provider catalog: engine 'e0' provider 'x' has a value alignment of 48 bytes, not a power of two");
}

TEST_CASE("the catalog of a configuration follows the placement", "[model][catalog]") {
  auto config = RuntimeConfig::initial(1);
  config = *config->with_engine(engine("a", list({provider("p", mirror)}), 2));
  config = *config->with_engine(engine("b", list({provider("p", mirror)}), 1));
  config = *config->with_engine(engine("idle", nullptr, 0));
  config = *config->with_engine(engine("plan_only", list({provider("p", mirror)}), 0, false));
  auto any = ProviderCatalog::from_config(*config, PlacementConstraint{});
  REQUIRE(any.ok());
  CHECK(any->engines() == std::vector<std::string>{"b", "a"});
  CHECK(any->entries()[0].endpoint == Endpoint{"b", "host"});
  auto listed = ProviderCatalog::from_config(*config, PlacementConstraint{{"a", "nope", "b", "a"}, "pinned"});
  REQUIRE(listed.ok());
  CHECK(listed->engines() == std::vector<std::string>{"a", "b"});
  CHECK(listed->entries()[0].endpoint == Endpoint{"a", "pinned"});
  auto other_class = ProviderCatalog::from_config(*config, PlacementConstraint{{"a"}, "device"});
  REQUIRE(other_class.ok());
  CHECK(other_class->entries()[0].endpoint == Endpoint{"a", "host"});
  auto none = ProviderCatalog::from_config(*config, PlacementConstraint{{"idle", "plan_only"}, std::nullopt});
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().code() == ErrorCode::NoEligibleEngine);
  CHECK(none.error().message() ==
        "no executable engine allowed by the placement (engines [idle, plan_only]) declares op providers");
}
