// A planned region's memo (BatchRegion::memo): the CPU engine compiles a
// region once and later batches of the same region reuse it, also when
// the region's operands sit at other batch positions; a splat constant
// kept in the memo is not counted as the engine's memory; a broadcast
// member is read as a view and its operand checked; RegionMemo
// keeps the first object per owner.
#include <catch2/catch.hpp>

#include "engines/cpu/cpu_engine.hpp"
#include "tests/engines/cpu/batch_launch.hpp"
#include "tests/engines/cpu/test_engine.hpp"

using namespace tenact;
using namespace tenact::cpu;

namespace cpu_region_memo_test {

constexpr auto launch = &tenact::testing::launch_and_wait;
constexpr int64_t kN = 1000;

std::shared_ptr<const PreparedOp> op_of(OpKind kind, OpAttrs attrs = NoAttrs{}) {
  auto op = std::make_shared<PreparedOp>();
  op->kind = kind;
  op->attrs = std::move(attrs);
  op->results = {ValueType{DType::F32, exact_shape({kN})}};
  op->binding.endpoint = Endpoint{"cpu", "host"};
  return op;
}

/// y = (a * b + c) * 0.5 as one region of four ops (the 0.5 a splat
/// constant), its inputs a, b, c at batch positions `at` (a permutation).
BatchWork region_batch(const std::array<Tensor, 3>& abc, std::array<uint32_t, 3> at,
                       std::shared_ptr<RegionMemo> memo) {
  BatchWork w;
  w.inputs.resize(3);
  for (size_t k = 0; k < 3; ++k) w.inputs[at[k]] = abc[k];
  ConstantAttrs half;
  half.dtype = DType::F32;
  half.shape = {DimExpr::constant(kN)};
  half.splat = Scalar::of_float(0.5);
  w.ops.push_back({op_of(OpKind::Constant, half), {}});
  w.ops.push_back({op_of(OpKind::Multiply), {BatchRef::input(at[0]), BatchRef::input(at[1])}});
  w.ops.push_back({op_of(OpKind::Add), {BatchRef::op(1), BatchRef::input(at[2])}});
  w.ops.push_back({op_of(OpKind::Multiply), {BatchRef::op(2), BatchRef::op(0)}});
  w.regions.push_back(BatchRegion{0, 4, {BatchRef::op(3)}, std::move(memo)});
  w.outputs = {BatchRef::op(3)};
  return w;
}

std::array<Tensor, 3> operands() {
  std::array<Tensor, 3> abc;
  for (size_t k = 0; k < 3; ++k) {
    abc[k] = Tensor::zeros(DType::F32, {kN}).value();
    for (int64_t i = 0; i < kN; ++i)
      abc[k].data_as<float>()[i] = 0.37f * static_cast<float>(i % (17 + 2 * k)) - static_cast<float>(k);
  }
  return abc;
}

/// The same arithmetic by hand, one f32 rounding per op (no contraction
/// under the project's flags).
void check_values(const Tensor& y, const std::array<Tensor, 3>& abc) {
  REQUIRE(y.element_count() == kN);
  int64_t wrong = 0;
  for (int64_t i = 0; i < kN; ++i) {
    const float ab = abc[0].data_as<float>()[i] * abc[1].data_as<float>()[i];
    const float s = ab + abc[2].data_as<float>()[i];
    const float expected = s * 0.5f;
    if (y.data_as<float>()[i] != expected) ++wrong;
  }
  CHECK(wrong == 0);
}

TEST_CASE("a region with a memo is compiled once and reused at other batch positions",
          "[cpu_engine][regions]") {
  auto engine = test_engine(CpuEngineOptions{.threads = 2});
  const auto abc = operands();
  auto memo = std::make_shared<RegionMemo>();
  const MemoryStats before = engine->memory_stats("host").value();
  for (std::array<uint32_t, 3> at : {std::array<uint32_t, 3>{0, 1, 2}, {2, 0, 1}, {1, 2, 0}}) {
    CAPTURE(at[0], at[1], at[2]);
    auto out = launch(*engine, region_batch(abc, at, memo));
    REQUIRE(out.ok());
    check_values(out->at(0), abc);
  }
  CHECK(engine->fused_counters().regions_compiled.load() == 1);
  CHECK(engine->fused_counters().regions_run.load() == 3);
  // The splat kept in the memo is heap memory: the engine holds nothing.
  CHECK(engine->memory_stats("host").value().allocated_bytes == before.allocated_bytes);

  // Without a memo every batch compiles its region.
  for (int k = 0; k < 2; ++k) REQUIRE(launch(*engine, region_batch(abc, {0, 1, 2}, nullptr)).ok());
  CHECK(engine->fused_counters().regions_compiled.load() == 3);
}

TEST_CASE("a region's broadcast member is read as a view, also with a memo, and checks its operand",
          "[cpu_engine][regions]") {
  // y = a + broadcast(v) with v of shape [1] (stride 0) and then [kN]
  // (read in place); an operand of shape [7] cannot broadcast to [kN].
  BroadcastInDimAttrs to_n;
  to_n.shape = {DimExpr::constant(kN)};
  to_n.broadcast_dimensions = {0};
  auto batch = [&](Tensor a, Tensor v, std::shared_ptr<RegionMemo> memo) {
    BatchWork w;
    w.inputs = {std::move(a), std::move(v)};
    w.ops.push_back({op_of(OpKind::BroadcastInDim, to_n), {BatchRef::input(1)}});
    w.ops.push_back({op_of(OpKind::Add), {BatchRef::input(0), BatchRef::op(0)}});
    w.regions.push_back(BatchRegion{0, 2, {BatchRef::op(1)}, std::move(memo)});
    w.outputs = {BatchRef::op(1)};
    return w;
  };
  auto engine = test_engine(CpuEngineOptions{.threads = 2});
  const auto abc = operands();
  auto memo = std::make_shared<RegionMemo>();
  Tensor one = Tensor::zeros(DType::F32, {1}).value();
  one.data_as<float>()[0] = 2.5f;
  auto out = launch(*engine, batch(abc[0], one, memo));
  REQUIRE(out.ok());
  int64_t wrong = 0;
  for (int64_t i = 0; i < kN; ++i)
    if (out->at(0).data_as<float>()[i] != abc[0].data_as<float>()[i] + 2.5f) ++wrong;
  CHECK(wrong == 0);
  out = launch(*engine, batch(abc[0], abc[1], memo));
  REQUIRE(out.ok());
  for (int64_t i = 0; i < kN; ++i)
    if (out->at(0).data_as<float>()[i] != abc[0].data_as<float>()[i] + abc[1].data_as<float>()[i]) ++wrong;
  CHECK(wrong == 0);
  CHECK(engine->fused_counters().regions_compiled.load() == 1);

  auto bad = launch(*engine, batch(abc[0], Tensor::zeros(DType::F32, {7}).value(), memo));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code() == ErrorCode::InputMismatch);
  CHECK_THAT(bad.error().message(), Catch::Contains("broadcast_in_dim") &&
                                        Catch::Contains("operand axis 0 of extent 7 cannot broadcast to result axis 0 of extent 1000"));
}

TEST_CASE("a region memo keeps the first object per owner", "[cpu_engine][regions]") {
  RegionMemo memo;
  const char owner_a = 0, owner_b = 0;
  CHECK(memo.find(&owner_a) == nullptr);
  auto first = std::make_shared<int>(1);
  auto second = std::make_shared<int>(2);
  CHECK(memo.keep(&owner_a, first) == first);
  CHECK(memo.keep(&owner_a, second) == first);  // a later keeper gets the kept one
  CHECK(memo.find(&owner_a) == first);
  CHECK(memo.find(&owner_b) == nullptr);
  CHECK(memo.keep(&owner_b, second) == second);  // another owner replaces it
  CHECK(memo.find(&owner_a) == nullptr);
}

}  // namespace cpu_region_memo_test
