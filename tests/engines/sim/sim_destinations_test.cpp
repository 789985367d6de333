// A simulated device with the CPU kernels' providers (256-byte alignment)
// and batch destinations: results written into device buffers the batch
// names are views of those very buffers, the device's allocated bytes do
// not grow, destinations in other memory are ignored; prepare honours a
// provider choice as the CPU engine does.
#include <catch2/catch.hpp>

#include "engines/sim/sim_engine.hpp"
#include "engines/sim/sim_memory.hpp"
#include "tests/engines/cpu/batch_launch.hpp"
#include "tests/engines/sim/sim_test_platform.hpp"

using namespace tenact;
using namespace tenact::sim;

namespace sim_destinations_test {

std::shared_ptr<const PreparedOp> device_op(OpKind kind, int64_t n) {
  auto op = std::make_shared<PreparedOp>();
  op->kind = kind;
  op->results = {ValueType{DType::F32, exact_shape({n})}};
  op->binding.endpoint = {"sim:0", SimEngine::kDeviceStorage};
  return op;
}

/// A device tensor holding scale * i - 1.
Tensor on_device(SimEngine& device, int64_t n, float scale) {
  Tensor t = device.allocate(SimEngine::kDeviceStorage, DType::F32, {n}).value();
  Tensor h = host_view(t).value();
  for (int64_t i = 0; i < n; ++i) h.data_as<float>()[i] = scale * static_cast<float>(i) - 1.0f;
  return t;
}

/// y1 = a * b + a, y2 = exp(y1) as a region; z = y2 + b alone.
BatchWork chain(const Tensor& a, const Tensor& b) {
  const int64_t n = a.element_count();
  BatchWork w;
  w.inputs = {a, b};
  w.ops.push_back({device_op(OpKind::Multiply, n), {BatchRef::input(0), BatchRef::input(1)}});
  w.ops.push_back({device_op(OpKind::Add, n), {BatchRef::op(0), BatchRef::input(0)}});
  w.ops.push_back({device_op(OpKind::Exponential, n), {BatchRef::op(1)}});
  w.ops.push_back({device_op(OpKind::Add, n), {BatchRef::op(2), BatchRef::input(1)}});
  w.regions.push_back({0, 3, {BatchRef::op(1), BatchRef::op(2)}});
  w.outputs = {BatchRef::op(1), BatchRef::op(2), BatchRef::op(3)};
  return w;
}

constexpr auto launch = &tenact::testing::launch_and_wait;


TEST_CASE("a simulated device writes results into device destinations without allocating", "[sim][destinations]") {
  Sim sim{round_platform(1)};
  SimEngine* device = sim.devices[0].get();
  const int64_t n = 3000;
  const Tensor a = on_device(*device, n, 0.001f);
  const Tensor b = on_device(*device, n, -0.002f);
  const std::vector<Tensor> expected = launch(*device, chain(a, b)).value();
  std::vector<Tensor> dests;
  for (int i = 0; i < 3; ++i) dests.push_back(device->allocate(SimEngine::kDeviceStorage, DType::F32, {n}).value());
  BatchWork work = chain(a, b);
  for (size_t i = 0; i < 3; ++i) work.ops[i + 1].destinations = {dests[i]};
  const uint64_t before = device->memory_stats(SimEngine::kDeviceStorage).value().allocated_bytes;
  const std::vector<Tensor> out = launch(*device, std::move(work)).value();
  CHECK(device->memory_stats(SimEngine::kDeviceStorage).value().allocated_bytes == before);
  REQUIRE(out.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(out[i].buffer() == dests[i].buffer());
    CHECK_FALSE(out[i].is_host());
    CHECK(out[i].endpoint() == Endpoint{"sim:0", SimEngine::kDeviceStorage});
    CHECK(host_view(out[i]).value().bitwise_equal(host_view(expected[i]).value()));
  }
}

TEST_CASE("a simulated device ignores destinations outside its memory", "[sim][destinations]") {
  Sim sim{round_platform(1)};
  SimEngine* device = sim.devices[0].get();
  const int64_t n = 100;
  const Tensor a = on_device(*device, n, 0.01f);
  const Tensor b = on_device(*device, n, 0.02f);
  const std::vector<Tensor> expected = launch(*device, chain(a, b)).value();
  const Tensor host = Tensor::zeros(DType::F32, {n}).value();
  BatchWork work = chain(a, b);
  work.ops[3].destinations = {host};
  const std::vector<Tensor> out = launch(*device, std::move(work)).value();
  CHECK(out[2].buffer() != host.buffer());
  CHECK(out[2].endpoint() == Endpoint{"sim:0", SimEngine::kDeviceStorage});
  CHECK(host_view(out[2]).value().bitwise_equal(host_view(expected[2]).value()));
}

TEST_CASE("a simulated device declares the CPU providers at 256 bytes and honours a choice", "[sim][providers]") {
  SimPlatform platform = round_platform(1);
  platform.devices[0].lacks = {OpKind::Tanh};
  Sim sim{platform};
  SimEngine* device = sim.devices[0].get();
  const OpProviderList& providers = device->capabilities().providers;
  REQUIRE(providers);
  REQUIRE_FALSE(providers->empty());
  for (const OpProvider& p : *providers) CHECK(p.alignment_for({}) == 256);
  // The lacked op has no contract.
  const ValueType v{DType::F32, exact_shape({4})};
  const std::vector<ValueType> one{v};
  const OpAttrs none = NoAttrs{};
  const ContractQuery tanh{OpKind::Tanh, &none, one, one, nullptr};
  const ContractQuery exp{OpKind::Exponential, &none, one, one, nullptr};
  CHECK_FALSE(providers->front().contract(tanh));
  CHECK(providers->front().contract(exp));

  OpPrepareRequest r;
  r.kind = OpKind::Exponential;
  r.attrs = NoAttrs{};
  r.operands = one;
  r.results = one;
  r.binding.endpoint = {"sim:0", SimEngine::kDeviceStorage};
  r.binding.engine.id = "sim:0";
  r.provider = std::make_shared<const ProviderChoice>(ProviderChoice{"elementwise", {}});
  auto answer = device->prepare(r);
  REQUIRE(std::holds_alternative<std::shared_ptr<const PreparedOp>>(answer));
  CHECK(*std::get<std::shared_ptr<const PreparedOp>>(answer)->provider == *r.provider);
  r.provider = std::make_shared<const ProviderChoice>(ProviderChoice{"warp_shuffle", {}});
  auto refused = device->prepare(r);
  REQUIRE(std::holds_alternative<Unsupported>(refused));
  CHECK(std::get<Unsupported>(refused).reason.find("warp_shuffle") != std::string::npos);
  CHECK(std::get<Unsupported>(refused).reason.find("sim:0") != std::string::npos);
}

}  // namespace sim_destinations_test
