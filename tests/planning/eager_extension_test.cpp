// The eager single-op extension path: pinned to one exact engine, Unsupported
// for engines that cannot serve, NoInputIngress, and the same plan
// validation as the compiled path.
#include <catch2/catch.hpp>

#include "planning/eager_extension.hpp"
#include "planning_world.hpp"

using namespace tenact;
using namespace tenact::testing;

namespace {

const ExtensionAttrs kSoftmax{"t.softmax", R"({"dimension": 0})"};

std::vector<ValueType> f32_result() {
  auto shape = exact_shape({4});
  return {ValueType{DType::F32, shape}};
}

std::shared_ptr<ScriptedEngine> ext_engine(std::string id) {
  auto e = std::make_shared<ScriptedEngine>(std::move(id), std::vector<std::string>{"device", "host"});
  e->capabilities_.extension_families = {"t.softmax"};
  return e;
}

const std::string* unsupported_reason(const Result<PrepareAnswer>& r) {
  if (!r.ok()) return nullptr;
  if (auto* u = std::get_if<Unsupported>(&*r)) return &u->reason;
  return nullptr;
}

}  // namespace

TEST_CASE("the eager path prepares on exactly the engine named", "[eager_extension]") {
  World w;
  auto first = w.add(ext_engine("first"), 0, {{"t.softmax", "{}"}});
  auto pinned = w.add(ext_engine("pinned"), 1, {{"t.softmax", "{}"}});
  const std::vector<InputDescriptor> in{input(DType::F32, {4})};
  auto r = prepare_extension_immediate(*w.config, w.lookup(), "pinned", kSoftmax, f32_result(), in);
  REQUIRE(r.ok());
  auto* plan = std::get_if<std::shared_ptr<const PreparedOp>>(&*r);
  REQUIRE(plan);
  CHECK(first->calls == 0);
  CHECK(pinned->calls == 1);
  CHECK((*plan)->binding.endpoint == Endpoint{"pinned", "device"});  // the default storage class
  CHECK((*plan)->binding.epoch == w.config->epoch());
  CHECK((*plan)->binding.engine.registration == 1);
  CHECK((*plan)->projection.inputs == std::vector<InputProjection>(1));
  CHECK(std::get<ExtensionAttrs>((*plan)->attrs) == kSoftmax);
}

TEST_CASE("engines that cannot serve answer Unsupported without a request", "[eager_extension]") {
  World w;
  auto planner = ext_engine("planner");
  planner->capabilities_.executable = false;
  w.add(planner, 0, {{"t.softmax", "{}"}});
  auto plain = w.add("plain", {"host"});
  const std::vector<InputDescriptor> in{input(DType::F32, {4})};
  auto missing = prepare_extension_immediate(*w.config, w.lookup(), "nobody", kSoftmax, f32_result(), in);
  REQUIRE(unsupported_reason(missing));
  CHECK(*unsupported_reason(missing) == "engine 'nobody' is not registered (extension family 't.softmax')");
  auto prep_only = prepare_extension_immediate(*w.config, w.lookup(), "planner", kSoftmax, f32_result(), in);
  REQUIRE(unsupported_reason(prep_only));
  CHECK(unsupported_reason(prep_only)->find("preparation-only") != std::string::npos);
  auto no_slot = prepare_extension_immediate(*w.config, w.lookup(), "plain", kSoftmax, f32_result(), in);
  REQUIRE(unsupported_reason(no_slot));
  CHECK(*unsupported_reason(no_slot) == "engine 'plain' has no slot for extension family 't.softmax'");
  CHECK(planner->calls == 0);
  CHECK(plain->calls == 0);
}

TEST_CASE("an input the engine cannot take is NoInputIngress", "[eager_extension]") {
  World w;
  auto e = w.add(ext_engine("gpu"), 0, {{"t.softmax", "{}"}});
  const std::vector<InputDescriptor> elsewhere{input(DType::F32, {4}, {"cpu", "host"})};
  auto r = prepare_extension_immediate(*w.config, w.lookup(), "gpu", kSoftmax, f32_result(), elsewhere);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::NoInputIngress);
  CHECK(r.error().message().find("input 0, placed at cpu/host") != std::string::npos);
  CHECK(e->calls == 0);
}

TEST_CASE("eager plans are validated like compiled ones", "[eager_extension]") {
  World w;
  auto e = w.add(ext_engine("gpu"), 0, {{"t.softmax", "{}"}});
  const std::vector<InputDescriptor> in{input(DType::F32, {4})};
  e->answer = [](const OpPrepareRequest& r) -> PrepareAnswer {
    auto op = std::const_pointer_cast<PreparedOp>(ScriptedEngine::echo(r));
    op->binding.endpoint.storage_class = "host";
    return std::shared_ptr<const PreparedOp>(op);
  };
  auto bound = prepare_extension_immediate(*w.config, w.lookup(), "gpu", kSoftmax, f32_result(), in);
  REQUIRE_FALSE(bound.ok());
  CHECK(bound.error().code() == ErrorCode::BindingMismatch);
  e->answer = [](const OpPrepareRequest& r) -> PrepareAnswer {
    auto op = std::const_pointer_cast<PreparedOp>(ScriptedEngine::echo(r));
    op->attrs = ExtensionAttrs{"t.other", "{}"};
    return std::shared_ptr<const PreparedOp>(op);
  };
  auto family = prepare_extension_immediate(*w.config, w.lookup(), "gpu", kSoftmax, f32_result(), in);
  REQUIRE_FALSE(family.ok());
  CHECK(family.error().code() == ErrorCode::WrongOperationFamily);
  CHECK(family.error().message().find("extension family 't.softmax'") != std::string::npos);
  e->answer = [](const OpPrepareRequest& r) -> PrepareAnswer {
    auto op = std::const_pointer_cast<PreparedOp>(ScriptedEngine::echo(r));
    op->projection.inputs.edit()[0].rank = 1;
    return std::shared_ptr<const PreparedOp>(op);
  };
  auto projected = prepare_extension_immediate(*w.config, w.lookup(), "gpu", kSoftmax, f32_result(), in);
  REQUIRE_FALSE(projected.ok());
  CHECK(projected.error().code() == ErrorCode::ProjectionMismatch);
  // A redirect is passed back for the caller to fall back on.
  e->answer = [](const OpPrepareRequest&) -> PrepareAnswer {
    InputRequirement r;
    r.rank = true;
    return NeedsSpecialization{SpecializationRequirements{{r}}, "rank"};
  };
  auto needs = prepare_extension_immediate(*w.config, w.lookup(), "gpu", kSoftmax, f32_result(), in);
  REQUIRE(needs.ok());
  CHECK(std::holds_alternative<NeedsSpecialization>(*needs));
}
