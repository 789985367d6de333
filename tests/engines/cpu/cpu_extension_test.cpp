// Extension ops on the CPU engine (engines/host_extension.hpp): what it
// answers when asked to prepare one (Unsupported without a host kernel or
// when the family refuses, the family's other errors with the engine and
// family named, a plan carrying the kernel otherwise), the planning
// configuration the family's prepare sees, the kernel run through the
// engine with its threads as HostParallel, and a kernel that breaks its
// contract caught with ProviderContract.
#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <mutex>
#include <set>

#include "engines/host_extension.hpp"
#include "tests/engines/cpu/test_engine.hpp"

using namespace tenact;

namespace {

OpPrepareRequest extension_request(ExtensionFamilyPtr family, std::string config = "") {
  OpPrepareRequest r;
  r.kind = OpKind::Extension;
  r.attrs = ExtensionAttrs{"t.neg", R"({"k":1})"};
  r.operands = {ValueType{DType::F32, exact_shape({1000})}};
  r.results = r.operands;
  r.binding.endpoint = {"cpu", "host"};
  r.extension = std::move(family);
  r.planning_config = std::make_shared<const std::string>(std::move(config));
  return r;
}

// y = -x, over f32, split over the engine's threads in chunks of 100.
HostExtensionKernel negate_kernel(std::shared_ptr<std::vector<std::atomic<int>>> visits) {
  return [visits](const HostKernelArgs& args) -> Result<std::vector<HostTensor>> {
    auto x = args.inputs[0].contiguous();
    if (!x.ok()) return x.error();
    auto y = Tensor::zeros(DType::F32, x->shape());
    if (!y.ok()) return y.error();
    const float* in = x->data_as<float>();
    float* out = y->data_as<float>();
    REQUIRE(args.parallel != nullptr);
    args.parallel->for_range(x->element_count(), 100, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        out[i] = -in[i];
        (*visits)[static_cast<size_t>(i)].fetch_add(1);
      }
    });
    return std::vector<HostTensor>{*y};
  };
}

Result<std::vector<Tensor>> launch(cpu::CpuEngine& engine, std::shared_ptr<const PreparedOp> op, Tensor x) {
  std::promise<Result<std::vector<Tensor>>> promise;
  auto future = promise.get_future();
  engine.launch(std::move(op), {std::move(x)}, {}, [&](Result<std::vector<Tensor>> r) { promise.set_value(std::move(r)); });
  return future.get();
}

Tensor ramp(int64_t n) {
  auto t = Tensor::zeros(DType::F32, {n}).value();
  for (int64_t i = 0; i < n; ++i) t.data_as<float>()[i] = static_cast<float>(i);
  return t;
}

}  // namespace

TEST_CASE("the CPU engine prepares an extension op through its family's host kernel", "[cpu][extensions]") {
  auto engine = cpu::test_engine({2});
  CHECK(engine->capabilities().host_extension_kernels);
  auto visits = std::make_shared<std::vector<std::atomic<int>>>(1000);
  std::string seen_config, seen_engine;
  auto family = std::make_shared<ExtensionFamily>();
  family->name = "t.neg";
  family->prepare_host = [&, visits](const ExtensionPrepareCall& call) -> Result<HostExtensionKernel> {
    seen_config = std::string{call.planning_config};
    seen_engine = std::string{call.engine};
    CHECK(call.op.attributes_json == R"({"k":1})");
    CHECK(call.operands.size() == 1);
    return negate_kernel(visits);
  };
  PrepareAnswer answer = engine->prepare(extension_request(family, "cfg"));
  auto* plan = std::get_if<std::shared_ptr<const PreparedOp>>(&answer);
  REQUIRE(plan);
  CHECK(seen_config == "cfg");
  CHECK(seen_engine == "cpu");
  REQUIRE(host_extension_plan(**plan) != nullptr);
  CHECK(host_extension_plan(**plan)->family == family);
  auto out = launch(*engine, *plan, ramp(1000));
  REQUIRE(out.ok());
  for (int64_t i = 0; i < 1000; ++i) CHECK((*out)[0].data_as<float>()[i] == -static_cast<float>(i));
  // Every index ran exactly once, whatever the split.
  for (const auto& v : *visits) CHECK(v.load() == 1);
  CHECK((*out)[0].endpoint() == Endpoint{"cpu", "host"});  // the engine's memory
}

TEST_CASE("the CPU engine refuses what it cannot run and names the engine and family", "[cpu][extensions]") {
  auto engine = cpu::test_engine({1});
  auto unsupported_reason = [&](const OpPrepareRequest& r) -> std::string {
    PrepareAnswer a = engine->prepare(r);
    auto* u = std::get_if<Unsupported>(&a);
    return u ? u->reason : "<not unsupported>";
  };
  CHECK(unsupported_reason(extension_request(nullptr)) == "engine 'cpu', extension family 't.neg': no host kernel");
  auto refusing = std::make_shared<ExtensionFamily>();
  refusing->name = "t.neg";
  refusing->prepare_host = [](const ExtensionPrepareCall&) -> Result<HostExtensionKernel> {
    return Error{ErrorCode::Unsupported, "f32 only on Tuesdays"};
  };
  CHECK(unsupported_reason(extension_request(refusing)) == "engine 'cpu', extension family 't.neg': f32 only on Tuesdays");
  auto failing = std::make_shared<ExtensionFamily>();
  failing->name = "t.neg";
  failing->prepare_host = [](const ExtensionPrepareCall&) -> Result<HostExtensionKernel> {
    return Error{ErrorCode::InvalidAttribute, "config 'x' is malformed"};
  };
  PrepareAnswer failed = engine->prepare(extension_request(failing));
  REQUIRE(std::holds_alternative<Error>(failed));
  CHECK(std::get<Error>(failed).code() == ErrorCode::InvalidAttribute);
  CHECK(std::get<Error>(failed).message() == "engine 'cpu', extension family 't.neg': config 'x' is malformed");
  auto empty = std::make_shared<ExtensionFamily>();
  empty->name = "t.neg";
  empty->prepare_host = [](const ExtensionPrepareCall&) -> Result<HostExtensionKernel> { return HostExtensionKernel{}; };
  PrepareAnswer none = engine->prepare(extension_request(empty));
  REQUIRE(std::holds_alternative<Error>(none));
  CHECK(std::get<Error>(none).code() == ErrorCode::ProviderContract);
  OpPrepareRequest elsewhere = extension_request(refusing);
  elsewhere.binding.endpoint = {"gpu", "device"};
  CHECK(unsupported_reason(elsewhere) == "engine 'cpu' cannot run at gpu/device");
}

TEST_CASE("a host kernel that returns the wrong results fails with ProviderContract", "[cpu][extensions]") {
  auto engine = cpu::test_engine({1});
  auto family = std::make_shared<ExtensionFamily>();
  family->name = "t.neg";
  int returned = 0;  // 0: an i32 result, 1: two results
  family->prepare_host = [&returned](const ExtensionPrepareCall&) -> Result<HostExtensionKernel> {
    return HostExtensionKernel{[&returned](const HostKernelArgs&) -> Result<std::vector<HostTensor>> {
      auto t = Tensor::zeros(returned == 0 ? DType::I32 : DType::F32, {1000}).value();
      if (returned == 0) return std::vector<HostTensor>{t};
      return std::vector<HostTensor>{t, t};
    }};
  };
  auto plan = std::get<std::shared_ptr<const PreparedOp>>(engine->prepare(extension_request(family)));
  auto wrong_dtype = launch(*engine, plan, ramp(1000));
  REQUIRE_FALSE(wrong_dtype.ok());
  CHECK(wrong_dtype.error().code() == ErrorCode::ProviderContract);
  CHECK(wrong_dtype.error().message() ==
        "extension family 't.neg' returned result 0 as i32 where f32 host memory was inferred");
  returned = 1;
  auto two = launch(*engine, plan, ramp(1000));
  REQUIRE_FALSE(two.ok());
  CHECK(two.error().message() == "extension family 't.neg' returned 2 results for 1");
}
