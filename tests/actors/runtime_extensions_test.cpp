// Extension families through the Runtime: a family registered with
// register_extension runs in programs on the CPU engine and on simulated
// devices (their slots added by the runtime), its slot's planning
// configuration reaches the kernel's prepare, registration is a new epoch
// and safe from many threads, errors name what is wrong, and the eager
// single-op path (run_op) runs pinned to one engine without the program
// cache, falling back to the compiled path where the engine refuses.
// Expected values are derived by hand from the test family's definition.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "actors/runtime.hpp"
#include "core/program_json.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "setup/engine_setup.hpp"

using namespace tenact;

namespace {

// "test.scale": y = x * factor * m over f32, where `factor` is the op's
// attribute and m the slot's planning configuration read as a number (1
// when empty). prepare_host counts its calls; it refuses (Unsupported) the
// engines whose id starts with `refuse_prefix`.
struct ScaleFamily {
  std::shared_ptr<std::atomic<int>> prepares = std::make_shared<std::atomic<int>>(0);
  std::string refuse_prefix = "\x01";

  ExtensionFamily family(std::string name = "test.scale") const {
    ExtensionFamily f;
    f.name = std::move(name);
    f.infer = [](std::span<const ValueType> operands, const std::string& attrs) -> Result<std::vector<ValueType>> {
      if (operands.size() != 1) return Error{ErrorCode::InvalidAttribute, "takes one operand"};
      if (operands[0].dtype != DType::F32) return Error{ErrorCode::TypeMismatch, "takes f32 only"};
      if (attrs.find("\"factor\":") == std::string::npos || attrs.find("\"factor\":\"") != std::string::npos)
        return Error{ErrorCode::InvalidAttribute, "attribute 'factor' must be a number"};
      return std::vector<ValueType>{operands[0]};
    };
    f.prepare_host = [prepares = prepares, refuse = refuse_prefix](const ExtensionPrepareCall& call)
        -> Result<HostExtensionKernel> {
      prepares->fetch_add(1);
      if (call.engine.substr(0, refuse.size()) == refuse)
        return Error{ErrorCode::Unsupported, "not on engine '" + std::string{call.engine} + "'"};
      const std::string& a = call.op.attributes_json;
      const float factor = std::strtof(a.c_str() + a.find(':') + 1, nullptr);
      const float m = call.planning_config.empty() ? 1.0f : std::strtof(std::string{call.planning_config}.c_str(), nullptr);
      return HostExtensionKernel{[factor, m](const HostKernelArgs& args) -> Result<std::vector<HostTensor>> {
        auto x = args.inputs[0].contiguous();
        if (!x.ok()) return x.error();
        auto y = Tensor::zeros(DType::F32, x->shape());
        if (!y.ok()) return y.error();
        for (int64_t i = 0; i < x->element_count(); ++i) y->data_as<float>()[i] = x->data_as<float>()[i] * factor * m;
        return std::vector<HostTensor>{*y};
      }};
    };
    return f;
  }
};

const char* kScaleThenAdd = R"({"format": "tenact.program/1", "name": "scale_then_add",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
  "ops": [{"op": "extension", "family": "test.scale", "in": ["x"], "out": "s", "attributes": {"factor": 2}},
          {"op": "add", "in": ["s", "x"], "out": "y"}],
  "outputs": ["y"]})";

Tensor f32_of(std::vector<float> v) {
  auto t = Tensor::zeros(DType::F32, {static_cast<int64_t>(v.size())}).value();
  std::memcpy(t.data(), v.data(), v.size() * sizeof(float));
  return t;
}

std::vector<float> values(Runtime& rt, const Tensor& t) {
  Tensor host = t;
  if (!t.is_host()) host = rt.copy(t, Endpoint::unowned_host()).get().value();
  std::vector<float> v(static_cast<size_t>(host.element_count()));
  std::memcpy(v.data(), host.contiguous().value().data(), v.size() * sizeof(float));
  return v;
}

setup::RegisteredEngines engines(Runtime& rt, const std::string& list) {
  setup::EngineSetupOptions options;
  options.cpu_threads = 1;
  auto made = setup::register_engines(rt, setup::parse_engine_list(list).value(), options);
  REQUIRE(made.ok());
  return *made;
}

std::shared_ptr<const SemanticProgram> load(Runtime& rt, const char* json) {
  auto p = load_program(json, rt.extensions());
  REQUIRE(p.ok());
  return std::make_shared<const SemanticProgram>(std::move(*p));
}

}  // namespace

TEST_CASE("a registered family runs in programs on the CPU engine and on a simulated device", "[extensions]") {
  for (const char* list : {"cpu", "sim:0"}) {
    INFO("engines " << list);
    Runtime rt;
    ScaleFamily scale;
    REQUIRE(rt.register_extension(scale.family()).ok());
    engines(rt, list);
    // Both engines run host kernels: the runtime gave each a slot.
    const std::string id = std::string{list};
    REQUIRE(rt.config()->find_engine(id)->extension_slot("test.scale") != nullptr);
    auto out = rt.run(load(rt, kScaleThenAdd), {f32_of({1, 2, 3, -4})}).get();
    REQUIRE(out.ok());
    CHECK((*out)[0].endpoint().engine == id);
    CHECK(values(rt, (*out)[0]) == std::vector<float>{3, 6, 9, -12});  // x * 2 + x
    CHECK(scale.prepares->load() == 1);
  }
}

TEST_CASE("the slot's planning configuration reaches the kernel's prepare", "[extensions]") {
  Runtime rt;
  ScaleFamily scale;
  // A payload per engine id at registration of the family; one given when
  // the engine registers wins over it.
  REQUIRE(rt.register_extension(scale.family(), {{"cpu", "10"}, {"cpu:1", "10"}}).ok());
  REQUIRE(rt.register_engine(cpu::CpuEngine::create({1}).value()).ok());
  cpu::CpuEngineOptions second{1};
  second.id = "cpu:1";
  REQUIRE(rt.register_engine(cpu::CpuEngine::create(second).value(), 1, {{"test.scale", "100"}}).ok());
  CHECK(rt.config()->find_engine("cpu")->extension_slot("test.scale")->payload_bytes() == "10");
  CHECK(rt.config()->find_engine("cpu:1")->extension_slot("test.scale")->payload_bytes() == "100");
  auto program = load(rt, kScaleThenAdd);
  auto on_cpu = rt.run(program, {f32_of({1, 2, 3, 4})}).get();
  REQUIRE(on_cpu.ok());
  CHECK(values(rt, (*on_cpu)[0]) == std::vector<float>{21, 42, 63, 84});  // x * 2 * 10 + x
  PrepareOptions on_second;
  on_second.placement.engines = {"cpu:1"};
  auto on_cpu1 = rt.run(program, {f32_of({1, 2, 3, 4})}, on_second).get();
  REQUIRE(on_cpu1.ok());
  CHECK(values(rt, (*on_cpu1)[0]) == std::vector<float>{201, 402, 603, 804});  // x * 2 * 100 + x
}

TEST_CASE("registering a family is a new epoch and plans made before keep running", "[extensions]") {
  Runtime rt;
  ScaleFamily scale;
  REQUIRE(rt.register_extension(scale.family()).ok());
  engines(rt, "cpu");
  auto program = load(rt, kScaleThenAdd);
  auto prepared = rt.prepare(program, describe_inputs(std::vector<Tensor>{f32_of({1, 2, 3, 4})}, Endpoint{})).get();
  REQUIRE(prepared.ok());
  const uint64_t epoch = rt.config()->epoch();
  const uint64_t productions = rt.cache_stats().productions;
  REQUIRE(rt.register_extension(scale.family("test.other")).ok());
  CHECK(rt.config()->epoch() == epoch + 1);
  // The old plan's engines are as they were: it still runs.
  auto old = rt.execute(*prepared, {f32_of({1, 1, 1, 1})}).get();
  REQUIRE(old.ok());
  CHECK(values(rt, (*old)[0]) == std::vector<float>{3, 3, 3, 3});
  // A new request is prepared again under the new epoch.
  REQUIRE(rt.run(program, {f32_of({1, 2, 3, 4})}).get().ok());
  CHECK(rt.cache_stats().productions == productions + 1);
}

TEST_CASE("registration is safe from many threads and gives each name once", "[extensions]") {
  Runtime rt;
  engines(rt, "cpu");
  ScaleFamily scale;
  const uint64_t epoch = rt.config()->epoch();
  // Catch2 assertions are not thread-safe: the threads count, the main thread checks.
  std::atomic<int> shared_won{0};
  std::atomic<int> own_registered{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int j = 0; j < 10; ++j)
        if (rt.register_extension(scale.family("t.f" + std::to_string(t) + "_" + std::to_string(j))).ok())
          own_registered.fetch_add(1);
      if (rt.register_extension(scale.family("t.shared")).ok()) shared_won.fetch_add(1);
    });
  for (auto& th : threads) th.join();
  CHECK(own_registered.load() == 80);
  CHECK(shared_won.load() == 1);
  CHECK(rt.extensions().families().size() == 81);
  CHECK(rt.config()->epoch() == epoch + 81);
  CHECK(rt.config()->find_engine("cpu")->extension_slots.size() == 81);
}

TEST_CASE("register_extension names what is wrong with a family", "[extensions]") {
  Runtime rt;
  ScaleFamily scale;
  REQUIRE(rt.register_extension(scale.family()).ok());
  auto twice = rt.register_extension(scale.family());
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.error().code() == ErrorCode::InvalidAttribute);
  CHECK(twice.error().message() == "extension family 'test.scale' is registered already");
  auto unnamed = rt.register_extension(scale.family(""));
  REQUIRE_FALSE(unnamed.ok());
  CHECK(unnamed.error().message() == "an extension family needs a name");
  ExtensionFamily no_infer = scale.family("test.blind");
  no_infer.infer = nullptr;
  auto blind = rt.register_extension(no_infer);
  REQUIRE_FALSE(blind.ok());
  CHECK(blind.error().message() == "extension family 'test.blind' has no result inference (infer)");
  auto control = rt.register_extension(scale.family("bad\x07name"));
  REQUIRE_FALSE(control.ok());
  CHECK(control.error().message().find("holds a control character") != std::string::npos);
}

TEST_CASE("a family's inference errors name the op", "[extensions]") {
  Runtime rt;
  ScaleFamily scale;
  REQUIRE(rt.register_extension(scale.family()).ok());
  auto bad = load_program(R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "extension", "family": "test.scale", "in": ["x"], "out": "y", "attributes": {"factor": "two"}}],
    "outputs": ["y"]})",
                          rt.extensions());
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message().find("op #0 (extension -> 'y')") != std::string::npos);
  CHECK(bad.error().message().find("extension family 'test.scale': attribute 'factor' must be a number") !=
        std::string::npos);
  // Without the runtime's registry the family is unknown, and the error says so.
  auto unknown = load_program(kScaleThenAdd);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().code() == ErrorCode::MissingExtension);
  CHECK(unknown.error().message().find("extension family 'test.scale' is not registered") != std::string::npos);
}

TEST_CASE("run_op runs one op on the named engine without the program cache", "[extensions]") {
  Runtime rt;
  ScaleFamily scale;
  REQUIRE(rt.register_extension(scale.family()).ok());
  engines(rt, "cpu,sim:0");
  const CacheStats before = rt.cache_stats();
  for (const char* engine : {"cpu", "sim:0"}) {
    auto out = rt.run_op("test.scale", R"({"factor": 3})", {f32_of({1, -2, 0.5f})}, engine).get();
    REQUIRE(out.ok());
    REQUIRE(out->size() == 1);
    CHECK((*out)[0].endpoint().engine == engine);
    CHECK(values(rt, (*out)[0]) == std::vector<float>{3, -6, 1.5f});
  }
  const CacheStats after = rt.cache_stats();
  CHECK(after.misses == before.misses);
  CHECK(after.hits == before.hits);
  CHECK(after.productions == before.productions);
  CHECK(scale.prepares->load() == 2);  // once per call: no plan is kept
}

TEST_CASE("run_op falls back to the compiled path where the engine refuses the op", "[extensions]") {
  Runtime rt;
  ScaleFamily scale;
  scale.refuse_prefix = "sim";
  REQUIRE(rt.register_extension(scale.family()).ok());
  engines(rt, "sim:0,cpu");
  const uint64_t productions = rt.cache_stats().productions;
  auto out = rt.run_op("test.scale", R"({"factor": 2})", {f32_of({1, 2})}, "sim:0").get();
  REQUIRE(out.ok());
  // sim:0 refused it (eagerly and in placement): it ran on the CPU engine.
  CHECK((*out)[0].endpoint().engine == "cpu");
  CHECK(values(rt, (*out)[0]) == std::vector<float>{2, 4});
  CHECK(rt.cache_stats().productions == productions + 1);
}

TEST_CASE("run_op names what is wrong", "[extensions]") {
  Runtime rt;
  ScaleFamily scale;
  REQUIRE(rt.register_extension(scale.family()).ok());
  engines(rt, "cpu");
  auto code_and_text = [&](std::string family, std::string attrs, std::vector<Tensor> in, std::string engine) {
    auto r = rt.run_op(std::move(family), std::move(attrs), std::move(in), std::move(engine)).get();
    REQUIRE_FALSE(r.ok());
    return std::pair{r.error().code(), r.error().message()};
  };
  auto [missing, missing_text] = code_and_text("test.nope", "{}", {f32_of({1})}, "cpu");
  CHECK(missing == ErrorCode::MissingExtension);
  CHECK(missing_text == "extension family 'test.nope' is not registered with this runtime");
  auto [engine, engine_text] = code_and_text("test.scale", R"({"factor": 1})", {f32_of({1})}, "gpu:7");
  CHECK(engine == ErrorCode::NoEligibleEngine);
  CHECK(engine_text.find("engine 'gpu:7' is not registered") != std::string::npos);
  auto [parse, parse_text] = code_and_text("test.scale", R"({"factor": )", {f32_of({1})}, "cpu");
  CHECK(parse == ErrorCode::Parse);
  CHECK(parse_text.find("extension attributes") != std::string::npos);
  auto [schema, schema_text] = code_and_text("test.scale", "[1, 2]", {f32_of({1})}, "cpu");
  CHECK(schema == ErrorCode::Schema);
  CHECK(schema_text == "extension attributes: expected a JSON object, got an array");
  auto i32 = Tensor::zeros(DType::I32, {2}).value();
  auto [dtype, dtype_text] = code_and_text("test.scale", R"({"factor": 1})", {i32}, "cpu");
  CHECK(dtype == ErrorCode::TypeMismatch);
  CHECK(dtype_text == "extension family 'test.scale': takes f32 only");
}
