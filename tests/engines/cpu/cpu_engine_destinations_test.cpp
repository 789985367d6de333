// A CPU engine batch whose ops carry destinations (BatchOp::destinations):
// a single op and a fused region of three ops with two live outputs write
// into the engine's own buffers, so the engine's allocated bytes do not
// grow; destinations the engine does not own are ignored.
#include <catch2/catch.hpp>

#include "engines/cpu/cpu_engine.hpp"
#include "tests/engines/cpu/batch_launch.hpp"
#include "tests/engines/cpu/test_engine.hpp"

using namespace tenact;
using namespace tenact::cpu;

namespace cpu_destinations_test {

std::shared_ptr<const PreparedOp> op_at(OpKind kind, int64_t n, const Endpoint& at) {
  auto op = std::make_shared<PreparedOp>();
  op->kind = kind;
  op->results = {ValueType{DType::F32, exact_shape({n})}};
  op->binding.endpoint = at;
  return op;
}

constexpr auto launch = &tenact::testing::launch_and_wait;

/// y1 = a * b + c, y2 = tanh(y1) as one region; z = y2 - a as a single op.
BatchWork chain(std::vector<Tensor> inputs, const Endpoint& at, bool region) {
  const int64_t n = inputs[0].element_count();
  BatchWork w;
  w.inputs = std::move(inputs);
  w.ops.push_back({op_at(OpKind::Multiply, n, at), {BatchRef::input(0), BatchRef::input(1)}});
  w.ops.push_back({op_at(OpKind::Add, n, at), {BatchRef::op(0), BatchRef::input(2)}});
  w.ops.push_back({op_at(OpKind::Tanh, n, at), {BatchRef::op(1)}});
  w.ops.push_back({op_at(OpKind::Subtract, n, at), {BatchRef::op(2), BatchRef::input(0)}});
  if (region) w.regions.push_back({0, 3, {BatchRef::op(1), BatchRef::op(2)}});
  w.outputs = {BatchRef::op(1), BatchRef::op(2), BatchRef::op(3)};
  return w;
}

std::vector<Tensor> ramps(int64_t n) {
  std::vector<Tensor> in;
  for (float scale : {0.01f, -0.03f, 0.2f}) {
    Tensor t = Tensor::zeros(DType::F32, {n}).value();
    for (int64_t i = 0; i < n; ++i) t.data_as<float>()[i] = scale * static_cast<float>(i % 101) - 0.5f;
    in.push_back(t);
  }
  return in;
}


TEST_CASE("a CPU engine batch writes results into destinations without allocating", "[cpu_engine][destinations]") {
  auto engine = test_engine(CpuEngineOptions{.threads = 2});
  const Endpoint host{"cpu", "host"};
  const int64_t n = 5000;
  for (bool region : {true, false}) {
    CAPTURE(region);
    const std::vector<Tensor> expected = launch(*engine, chain(ramps(n), host, region)).value();
    std::vector<Tensor> dests;
    for (int i = 0; i < 3; ++i) dests.push_back(engine->allocate("host", DType::F32, {n}).value());
    BatchWork work = chain(ramps(n), host, region);
    for (int i = 0; i < 3; ++i) work.ops[static_cast<size_t>(i) + 1].destinations = {dests[static_cast<size_t>(i)]};
    const MemoryStats before = engine->memory_stats("host").value();
    const std::vector<Tensor> out = launch(*engine, std::move(work)).value();
    CHECK(engine->memory_stats("host").value().allocated_bytes == before.allocated_bytes);
    REQUIRE(out.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
      CHECK(out[i].buffer() == dests[i].buffer());
      CHECK(out[i].data() == dests[i].data());
      CHECK(out[i].bitwise_equal(expected[i]));
    }
  }
}

TEST_CASE("a CPU engine ignores destinations it does not own", "[cpu_engine][destinations]") {
  auto engine = test_engine(CpuEngineOptions{.threads = 2});
  auto other = test_engine(CpuEngineOptions{.threads = 1, .id = "cpu:1"});
  const Endpoint host{"cpu", "host"};
  const int64_t n = 64;
  const std::vector<Tensor> expected = launch(*engine, chain(ramps(n), host, true)).value();
  const Tensor unowned = Tensor::zeros(DType::F32, {n}).value();  // the process's heap
  const Tensor elsewhere = other->allocate("host", DType::F32, {n}).value();
  BatchWork work = chain(ramps(n), host, true);
  work.ops[1].destinations = {unowned};
  work.ops[2].destinations = {elsewhere};
  work.ops[3].destinations = {Tensor{}};
  const std::vector<Tensor> out = launch(*engine, std::move(work)).value();
  CHECK(out[0].buffer() != unowned.buffer());
  CHECK(out[1].buffer() != elsewhere.buffer());
  CHECK(out[0].endpoint() == host);
  for (size_t i = 0; i < 3; ++i) CHECK(out[i].bitwise_equal(expected[i]));
}

}  // namespace cpu_destinations_test
