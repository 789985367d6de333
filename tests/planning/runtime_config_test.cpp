// The runtime configuration snapshot: immutable, every change yields a new
// snapshot with the next epoch, re-registration bumps the registration,
// routes and extension slots are looked up by value.
#include <catch2/catch.hpp>

#include "planning/key_encoding.hpp"
#include "planning/runtime_config.hpp"

using namespace tenact;

namespace {

EngineRegistration engine(std::string id, std::vector<std::string> storage = {"host"},
                          uint32_t preference = 0) {
  EngineRegistration r;
  r.identity.id = std::move(id);
  r.identity.hardware_class = "x86_64";
  r.identity.context = 7;
  r.capabilities.storage_classes = storage;
  r.capabilities.default_storage_class = storage.front();
  r.capabilities.op_families = {OpFamily::Elementwise};
  r.preference = preference;
  return r;
}

RuntimeConfigPtr ok(Result<RuntimeConfigPtr> r) {
  REQUIRE(r.ok());
  return std::move(*r);
}

Error fails(Result<RuntimeConfigPtr> r) {
  REQUIRE_FALSE(r.ok());
  return r.error();
}

std::vector<std::string> ids(const RuntimeConfig& c) {
  std::vector<std::string> out;
  for (const EngineEntry& e : c.engines()) out.push_back(e.id());
  return out;
}

const Endpoint kHost{"cpu", "host"};
const Endpoint kDev{"sim:0", "device"};

}  // namespace

TEST_CASE("the initial snapshot is empty at epoch 0", "[runtime_config]") {
  auto c = RuntimeConfig::initial(42, ExecutionPolicy{1024, 9});
  CHECK(c->runtime_id() == 42);
  CHECK(c->epoch() == 0);
  CHECK(c->engines().empty());
  CHECK(c->routes().empty());
  CHECK(c->policy() == ExecutionPolicy{1024, 9});
  CHECK(RuntimeConfig::initial(1)->policy().workspace_limit_bytes == kUnlimitedWorkspace);
}

TEST_CASE("every change yields a new snapshot with the next epoch", "[runtime_config]") {
  auto c0 = RuntimeConfig::initial(1);
  auto c1 = ok(c0->with_engine(engine("cpu")));
  auto c2 = ok(c1->with_engine(engine("sim:0", {"device", "host"})));
  auto c3 = ok(c2->with_route({kHost, kDev, "sim_link"}));
  auto c4 = ok(c3->with_policy(ExecutionPolicy{4096, 3}));
  auto c5 = ok(c4->without_route(kHost, kDev));
  auto c6 = ok(c5->without_engine("sim:0"));
  const RuntimeConfigPtr all[] = {c0, c1, c2, c3, c4, c5, c6};
  for (uint64_t i = 0; i < 7; ++i) CHECK(all[i]->epoch() == i);
  CHECK(c6->runtime_id() == 1);
  // An unchanged policy is still a change request: the epoch moves.
  CHECK(ok(c6->with_policy(c6->policy()))->epoch() == 7);
}

TEST_CASE("a snapshot never changes after it is taken", "[runtime_config]") {
  auto c0 = RuntimeConfig::initial(1);
  auto c1 = ok(c0->with_engine(engine("cpu")));
  auto c2 = ok(c1->with_route({kHost, kDev, "sim_link"}));
  auto c3 = ok(c2->without_engine("cpu"));
  auto c4 = ok(c3->with_policy(ExecutionPolicy{1, 2}));
  CHECK(c0->engines().empty());
  CHECK(ids(*c1) == std::vector<std::string>{"cpu"});
  CHECK(c1->routes().empty());
  CHECK(ids(*c2) == std::vector<std::string>{"cpu"});
  CHECK(c2->has_route(kHost, kDev));
  CHECK(c3->engines().empty());
  CHECK(c3->policy() == ExecutionPolicy{});
  CHECK(c4->policy() == ExecutionPolicy{1, 2});
  CHECK(c1->epoch() == 1);
}

TEST_CASE("registering an engine id again bumps its registration", "[runtime_config]") {
  auto c1 = ok(RuntimeConfig::initial(1)->with_engine(engine("cpu")));
  CHECK(c1->find_engine("cpu")->identity.registration == 1);
  auto reg = engine("cpu");
  reg.identity.registration = 99;  // ignored: the snapshot assigns it
  reg.identity.context = 8;
  auto c2 = ok(c1->with_engine(reg));
  REQUIRE(c2->engines().size() == 1);
  CHECK(c2->find_engine("cpu")->identity.registration == 2);
  CHECK(c2->find_engine("cpu")->identity.context == 8);
  CHECK(c1->find_engine("cpu")->identity.registration == 1);
  // Removal does not reset the count.
  auto c3 = ok(c2->without_engine("cpu"));
  CHECK(c3->find_engine("cpu") == nullptr);
  CHECK(c3->last_registration("cpu") == 2);
  auto c4 = ok(c3->with_engine(engine("cpu")));
  CHECK(c4->find_engine("cpu")->identity.registration == 3);
  // Other ids count on their own.
  auto c5 = ok(c4->with_engine(engine("sim:0")));
  CHECK(c5->find_engine("sim:0")->identity.registration == 1);
  CHECK(c5->last_registration("never") == 0);
}

TEST_CASE("engines are listed by preference, then by first registration", "[runtime_config]") {
  auto c = RuntimeConfig::initial(1);
  c = ok(c->with_engine(engine("a", {"host"}, 5)));
  c = ok(c->with_engine(engine("b", {"host"}, 1)));
  c = ok(c->with_engine(engine("c", {"host"}, 5)));
  c = ok(c->with_engine(engine("d", {"host"}, 0)));
  CHECK(ids(*c) == std::vector<std::string>{"d", "b", "a", "c"});
  // Re-registering keeps an engine's place among equal preferences.
  c = ok(c->with_engine(engine("a", {"host"}, 5)));
  CHECK(ids(*c) == std::vector<std::string>{"d", "b", "a", "c"});
  // ...and a new preference moves it; c was first registered before d.
  c = ok(c->with_engine(engine("c", {"host"}, 0)));
  CHECK(ids(*c) == std::vector<std::string>{"c", "d", "b", "a"});
  // Removal forgets the place: registered again, c comes after d.
  c = ok(c->without_engine("c"));
  c = ok(c->with_engine(engine("c", {"host"}, 0)));
  CHECK(ids(*c) == std::vector<std::string>{"d", "c", "b", "a"});
}

TEST_CASE("extension slots carry their planning payload and its fingerprint", "[runtime_config]") {
  auto reg = engine("cpu");
  reg.capabilities.extension_families = {"t.softmax", "t.topk"};
  reg.extension_payloads = {{"t.softmax", R"({"tile":64})"}};
  auto c = ok(RuntimeConfig::initial(1)->with_engine(reg));
  const EngineEntry* e = c->find_engine("cpu");
  REQUIRE(e->extension_slots.size() == 2);
  const ExtensionSlot* soft = e->extension_slot("t.softmax");
  REQUIRE(soft != nullptr);
  CHECK(soft->payload_bytes() == R"({"tile":64})");
  CHECK(soft->payload_fingerprint == xxh3_128(R"({"tile":64})"));
  const ExtensionSlot* topk = e->extension_slot("t.topk");
  REQUIRE(topk != nullptr);
  CHECK(topk->payload_bytes().empty());
  CHECK(e->extension_slot("t.other") == nullptr);
  CHECK(c->has_extension_family("t.topk"));
  CHECK_FALSE(c->has_extension_family("t.other"));
  CHECK_FALSE(*soft == *topk);
}

TEST_CASE("routes are found by their endpoints and a second provider for one route is refused",
          "[runtime_config]") {
  const Endpoint pinned{"cpu", "pinned"};
  auto c = RuntimeConfig::initial(1);
  c = ok(c->with_route({kHost, kDev, "sim_link"}));
  c = ok(c->with_route({kDev, kHost, "sim_link"}));
  c = ok(c->with_route({kHost, pinned, "host_copy"}));
  CHECK(c->has_route(kHost, kDev));
  CHECK_FALSE(c->has_route(pinned, kHost));
  const auto from_host = c->routes_from(kHost);
  REQUIRE(from_host.size() == 2);
  CHECK(from_host[0]->destination == kDev);
  CHECK(from_host[1]->destination == pinned);
  CHECK(c->routes_from(pinned).empty());
  const uint64_t before = c->epoch();
  auto second = c->with_route({kHost, kDev, "dma"});
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().code() == ErrorCode::InvalidAttribute);
  CHECK(second.error().message() ==
        "transfer route cpu/host -> sim:0/device is served by provider 'sim_link' already; remove the route first");
  CHECK(c->find_route(kHost, kDev)->provider == "sim_link");
  CHECK(c->epoch() == before);
  // Removed first, the route takes the other provider (last in order now).
  c = ok(ok(c->without_route(kHost, kDev))->with_route({kHost, kDev, "dma"}));
  CHECK(c->routes().size() == 3);
  CHECK(c->find_route(kHost, kDev)->provider == "dma");
  CHECK(c->find_route(kDev, kHost)->provider == "sim_link");
  CHECK(c->epoch() == before + 2);
}

TEST_CASE("a transfer provider registered at run time is a new epoch, once per name", "[runtime_config]") {
  auto c = RuntimeConfig::initial(1);
  CHECK(c->transfer_providers().empty());
  auto with = ok(c->with_transfer_provider("dma"));
  CHECK(with->epoch() == c->epoch() + 1);
  CHECK(with->transfer_providers() == std::vector<std::string>{"dma"});
  CHECK(c->transfer_providers().empty());  // snapshots are immutable
  CHECK(fails(with->with_transfer_provider("dma")).message() == "transfer provider 'dma' is registered already");
  CHECK(fails(with->with_transfer_provider("")).message() == "a transfer provider needs a name");
}

TEST_CASE("invalid changes are refused with a message naming what is wrong", "[runtime_config]") {
  auto c = RuntimeConfig::initial(1);
  Error e = fails(c->with_engine(engine("")));
  CHECK(e.code() == ErrorCode::InvalidAttribute);
  CHECK(e.message() == "an engine needs a non-empty id");

  auto none = engine("cpu");
  none.capabilities.storage_classes.clear();
  CHECK(fails(c->with_engine(none)).message() == "engine 'cpu' declares no storage class");

  auto bad_default = engine("cpu", {"host", "pinned"});
  bad_default.capabilities.default_storage_class = "device";
  CHECK(fails(c->with_engine(bad_default)).message() ==
        "engine 'cpu': default storage class 'device' is not one of its storage classes [host, pinned]");

  auto bad_input = engine("cpu");
  bad_input.capabilities.accepted_input_storage = {"pinned"};
  CHECK(fails(c->with_engine(bad_input)).message() ==
        "engine 'cpu': accepted input storage class 'pinned' is not one of its storage classes [host]");

  auto bad_payload = engine("cpu");
  bad_payload.capabilities.extension_families = {"t.a"};
  bad_payload.extension_payloads = {{"t.b", "{}"}};
  CHECK(fails(c->with_engine(bad_payload)).message() ==
        "engine 'cpu' has no slot for extension family 't.b' but a planning payload was given for "
        "it; its families are [t.a]");

  CHECK(fails(c->without_engine("gpu")).message() == "no engine 'gpu' is registered");
  CHECK(fails(c->without_route(kHost, kDev)).message() ==
        "no transfer route cpu/host -> sim:0/device is registered");
  CHECK(fails(c->with_route({kHost, kHost, "copy"})).message() ==
        "transfer route cpu/host -> cpu/host has equal endpoints");
  CHECK(fails(c->with_route({kHost, kDev, ""})).message() ==
        "transfer route cpu/host -> sim:0/device needs a provider");
  CHECK(fails(c->with_route({{"cpu", ""}, kDev, "x"})).message() ==
        "transfer route source 'cpu/' needs an engine and a storage class");
  CHECK(fails(c->with_route({kHost, {"", "device"}, "x"})).message() ==
        "transfer route destination '/device' needs an engine and a storage class");
  // A refused change leaves no new snapshot behind.
  CHECK(c->epoch() == 0);
}

TEST_CASE("input storage classes default to the engine's default storage class", "[runtime_config]") {
  auto reg = engine("sim:0", {"device", "host"});
  auto c = ok(RuntimeConfig::initial(1)->with_engine(reg));
  CHECK(c->find_engine("sim:0")->input_storage_classes() == std::vector<std::string>{"device"});
  reg.capabilities.accepted_input_storage = {"host", "device"};
  c = ok(c->with_engine(reg));
  CHECK(c->find_engine("sim:0")->input_storage_classes() ==
        std::vector<std::string>{"host", "device"});
}

TEST_CASE("the epoch does not wrap", "[runtime_config]") {
  auto c = RuntimeConfig::initial(1, {}, UINT64_MAX - 1);
  auto last = ok(c->with_policy({}));
  CHECK(last->epoch() == UINT64_MAX);
  Error e = fails(last->with_policy({}));
  CHECK(e.code() == ErrorCode::Overflow);
  CHECK(e.message() == "runtime configuration epoch 18446744073709551615 cannot advance");
  CHECK(fails(last->with_engine(engine("cpu"))).code() == ErrorCode::Overflow);
}
