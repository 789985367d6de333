// The fused elementwise executor: a region gives bit for bit what its ops
// give one by one through run_kernel (docs/program-format.md, "Rounding"),
// counts what it ran, broadcasts scalar inputs, returns several outputs,
// reuses tile buffers, and rejects malformed regions and inputs.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tests/engines/cpu/test_engine.hpp"
#include "core/half.hpp"
#include "engines/cpu/kernels/fused_elementwise.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "util/worker_pool.hpp"

namespace tenact::cpu {
namespace {

template <class T>
HostTensor make(DType dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
  auto t = HostTensor::zeros(dtype, std::move(shape));
  REQUIRE(t.ok());
  REQUIRE(static_cast<size_t>(t->element_count()) == values.size());
  if (!values.empty()) std::memcpy(t->data(), values.data(), values.size() * sizeof(T));
  return *t;
}

std::vector<float> wave(int64_t n, float scale, float phase) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = scale * std::sin(0.001f * static_cast<float>(i) + phase);
  return v;
}

/// One op through the single-op kernel path.
HostTensor op(OpKind kind, std::vector<HostTensor> inputs, OpAttrs attrs = NoAttrs{}) {
  static const SymbolBindings symbols;
  const std::vector<ValueType> types;
  KernelCall call{kind, attrs, inputs, types, symbols, nullptr};
  auto r = run_kernel(call);
  INFO((r.ok() ? std::string{} : r.error().to_string()));
  REQUIRE(r.ok());
  return r->front();
}

FusedOp fop(OpKind kind, std::vector<FusedOperand> operands, DType result,
            OpAttrs attrs = NoAttrs{}) {
  FusedOp o;
  o.kind = kind;
  o.attrs = std::move(attrs);
  o.operands = std::move(operands);
  o.result_dtype = result;
  return o;
}

using In = FusedOperand;
using Ts = std::vector<HostTensor>;

/// y = tanh(a*b + c) * h + a, the benchmark chain; inputs a, b, c, h.
FusedRegion benchmark_chain() {
  FusedRegion r;
  r.input_dtypes = {DType::F32, DType::F32, DType::F32, DType::F32};
  r.ops = {fop(OpKind::Multiply, {In::input(0), In::input(1)}, DType::F32),
           fop(OpKind::Add, {In::op(0), In::input(2)}, DType::F32),
           fop(OpKind::Tanh, {In::op(1)}, DType::F32),
           fop(OpKind::Multiply, {In::op(2), In::input(3)}, DType::F32),
           fop(OpKind::Add, {In::op(3), In::input(0)}, DType::F32)};
  r.outputs = {4};
  return r;
}

HostTensor run_chain_op_by_op(const HostTensor& a, const HostTensor& b, const HostTensor& c,
                              const HostTensor& h) {
  auto t0 = op(OpKind::Multiply, {a, b});
  auto t1 = op(OpKind::Add, {t0, c});
  auto t2 = op(OpKind::Tanh, {t1});
  auto t3 = op(OpKind::Multiply, {t2, h});
  return op(OpKind::Add, {t3, a});
}

std::vector<HostTensor> run_region(const FusedRegion& region, std::vector<HostTensor> inputs,
                                   WorkerPool* pool = nullptr, FusedCounters* counters = nullptr) {
  auto r = run_fused_region(region, inputs, pool, counters);
  INFO((r.ok() ? std::string{} : r.error().to_string()));
  REQUIRE(r.ok());
  return *r;
}

TEST_CASE("a fused region gives the bits of its ops run one by one", "[fused]") {
  const int64_t n = 100'003;  // many tiles and grains, a partial last tile
  auto a = make<float>(DType::F32, {n}, wave(n, 3.0f, 0.0f));
  auto b = make<float>(DType::F32, {n}, wave(n, 2.0f, 1.0f));
  auto c = make<float>(DType::F32, {n}, wave(n, 1.5f, 2.0f));
  auto h = make<float>(DType::F32, {n}, std::vector<float>(static_cast<size_t>(n), 0.5f));
  const HostTensor want = run_chain_op_by_op(a, b, c, h);
  auto got = run_region(benchmark_chain(), {a, b, c, h});
  REQUIRE(got.size() == 1);
  CHECK(got[0].shape() == std::vector<int64_t>{n});
  CHECK(got[0].bitwise_equal(want));
  auto pool_holder = test_pool(3);
  WorkerPool& pool = *pool_holder;
  CHECK(run_region(benchmark_chain(), {a, b, c, h}, &pool)[0].bitwise_equal(want));
}

TEST_CASE("fused counters count regions, ops and tiles", "[fused]") {
  const int64_t n = 5000;
  auto a = make<float>(DType::F32, {n}, wave(n, 1.0f, 0.0f));
  auto h = make<float>(DType::F32, {}, {0.5f});
  FusedCounters counters;
  auto kernel = FusedKernel::compile(benchmark_chain());
  REQUIRE(kernel.ok());
  REQUIRE(kernel->run(Ts{a, a, a, h}, nullptr, &counters).ok());
  CHECK(counters.regions_run.load() == 1);
  CHECK(counters.ops_fused.load() == 5);
  CHECK(counters.tiles.load() == static_cast<uint64_t>((n + kFusedTileElements - 1) / kFusedTileElements));
  auto pool_holder = test_pool(2);
  WorkerPool& pool = *pool_holder;
  REQUIRE(kernel->run(Ts{a, a, a, h}, &pool, &counters).ok());
  CHECK(counters.regions_run.load() == 2);
  CHECK(counters.ops_fused.load() == 10);
  // a failed run counts nothing
  CHECK_FALSE(kernel->run(Ts{a, a, a}, nullptr, &counters).ok());
  CHECK(counters.regions_run.load() == 2);
}

TEST_CASE("a rank-0 or stride-0 region input is broadcast to the region's shape", "[fused]") {
  const int64_t n = 7000;
  auto a = make<float>(DType::F32, {n}, wave(n, 3.0f, 0.3f));
  auto b = make<float>(DType::F32, {n}, wave(n, 2.0f, 1.3f));
  auto c = make<float>(DType::F32, {n}, wave(n, 1.0f, 2.3f));
  auto full_h = make<float>(DType::F32, {n}, std::vector<float>(static_cast<size_t>(n), 0.25f));
  const HostTensor want = run_chain_op_by_op(a, b, c, full_h);
  auto scalar_h = make<float>(DType::F32, {}, {0.25f});
  CHECK(run_region(benchmark_chain(), {a, b, c, scalar_h})[0].bitwise_equal(want));
  auto view_h = scalar_h.broadcast_view({n}, std::vector<int64_t>{});
  CHECK(run_region(benchmark_chain(), {a, b, c, view_h})[0].bitwise_equal(want));
}

TEST_CASE("a region returns several outputs, intermediate ones included", "[fused]") {
  const int64_t n = 4099;
  auto a = make<float>(DType::F32, {n}, wave(n, 3.0f, 0.0f));
  auto b = make<float>(DType::F32, {n}, wave(n, 2.0f, 1.0f));
  auto c = make<float>(DType::F32, {n}, wave(n, 1.5f, 2.0f));
  auto h = make<float>(DType::F32, {}, {0.5f});
  FusedRegion region = benchmark_chain();
  region.outputs = {2, 4, 2};  // tanh(...), y, tanh(...) again
  auto got = run_region(region, {a, b, c, h});
  REQUIRE(got.size() == 3);
  auto t0 = op(OpKind::Multiply, {a, b});
  auto t2 = op(OpKind::Tanh, {op(OpKind::Add, {t0, c})});
  CHECK(got[0].bitwise_equal(t2));
  auto full_h = make<float>(DType::F32, {n}, std::vector<float>(static_cast<size_t>(n), 0.5f));
  CHECK(got[1].bitwise_equal(run_chain_op_by_op(a, b, c, full_h)));
  CHECK(got[2].data() == got[0].data());  // one op listed twice: one tensor
}

TEST_CASE("a region mixing dtypes rounds each op to its own dtype", "[fused]") {
  // x: i32 -> f16, y = x*x - 3 in f16, compare y > x, select(y > x, y, x),
  // and a diamond: exp(y') + log(y') on f32.
  const int64_t n = 3000;
  std::vector<int32_t> xi(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) xi[static_cast<size_t>(i)] = static_cast<int32_t>(i % 97) - 40;
  auto x = make<int32_t>(DType::I32, {n}, xi);
  auto three = make<uint16_t>(DType::F16, {}, std::vector<uint16_t>{f16(3.0f).bits});
  FusedRegion r;
  r.input_dtypes = {DType::I32, DType::F16};
  r.ops = {fop(OpKind::Convert, {In::input(0)}, DType::F16, ConvertAttrs{DType::F16}),  // 0
           fop(OpKind::Multiply, {In::op(0), In::op(0)}, DType::F16),                   // 1
           fop(OpKind::Subtract, {In::op(1), In::input(1)}, DType::F16),                // 2
           fop(OpKind::Compare, {In::op(2), In::op(0)}, DType::Bool,
               CompareAttrs{CompareDirection::GT}),                                     // 3
           fop(OpKind::Select, {In::op(3), In::op(2), In::op(0)}, DType::F16),          // 4
           fop(OpKind::Convert, {In::op(4)}, DType::F32, ConvertAttrs{DType::F32}),     // 5
           fop(OpKind::Abs, {In::op(5)}, DType::F32),                                   // 6
           fop(OpKind::Exponential, {In::op(6)}, DType::F32),                           // 7
           fop(OpKind::Log, {In::op(6)}, DType::F32),                                   // 8
           fop(OpKind::Add, {In::op(7), In::op(8)}, DType::F32)};                       // 9
  r.outputs = {9, 3};
  auto full_three = three.broadcast_view({n}, std::vector<int64_t>{});
  auto v0 = op(OpKind::Convert, {x}, ConvertAttrs{DType::F16});
  auto v2 = op(OpKind::Subtract, {op(OpKind::Multiply, {v0, v0}), full_three});
  auto v3 = op(OpKind::Compare, {v2, v0}, CompareAttrs{CompareDirection::GT});
  auto v6 = op(OpKind::Abs, {op(OpKind::Convert, {op(OpKind::Select, {v3, v2, v0})},
                                ConvertAttrs{DType::F32})});
  auto v9 = op(OpKind::Add, {op(OpKind::Exponential, {v6}), op(OpKind::Log, {v6})});
  auto pool_holder = test_pool(2);
  WorkerPool& pool = *pool_holder;
  for (WorkerPool* p : {static_cast<WorkerPool*>(nullptr), &pool}) {
    auto got = run_region(r, {x, three}, p);
    REQUIRE(got.size() == 2);
    CHECK(got[0].dtype() == DType::F32);
    CHECK(got[0].bitwise_equal(v9));
    CHECK(got[1].dtype() == DType::Bool);
    CHECK(got[1].bitwise_equal(v3));
  }
}

TEST_CASE("a region reads strided inputs through their strides", "[fused]") {
  std::vector<float> m(300 * 200);
  for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<float>(i % 1000) * 0.01f - 5.0f;
  auto a = make<float>(DType::F32, {300, 200}, m);
  const std::vector<int64_t> perm{1, 0};
  auto at = a.transposed(perm);  // [200, 300], not contiguous
  auto b = make<float>(DType::F32, {200, 300}, std::vector<float>(m.begin(), m.end()));
  FusedRegion r;
  r.input_dtypes = {DType::F32, DType::F32};
  r.ops = {fop(OpKind::Logistic, {In::input(0)}, DType::F32),
           fop(OpKind::Multiply, {In::op(0), In::input(1)}, DType::F32)};
  r.outputs = {1};
  auto want = op(OpKind::Multiply, {op(OpKind::Logistic, {at}), b});
  auto got = run_region(r, {at, b});
  CHECK(got[0].shape() == std::vector<int64_t>{200, 300});
  CHECK(got[0].bitwise_equal(want));
}

TEST_CASE("tile buffers are reused once their last reader has run", "[fused]") {
  FusedRegion r;
  r.input_dtypes = {DType::F64};
  r.ops.push_back(fop(OpKind::Negate, {In::input(0)}, DType::F64));
  for (uint32_t i = 1; i < 10; ++i) r.ops.push_back(fop(OpKind::Negate, {In::op(i - 1)}, DType::F64));
  r.outputs = {9};
  auto k = FusedKernel::compile(r);
  REQUIRE(k.ok());
  CHECK(k->scratch_slots() == 2);  // ping-pong: a chain needs two
  auto x = make<double>(DType::F64, {3}, {1.0, -2.0, 0.0});
  auto y = k->run(Ts{x}, nullptr);
  REQUIRE(y.ok());
  std::vector<double> out(3);
  std::memcpy(out.data(), y->front().data(), 24);
  CHECK(out == std::vector<double>{1.0, -2.0, 0.0});  // ten negations
}

TEST_CASE("rank-0 and empty regions run", "[fused]") {
  FusedRegion r;
  r.input_dtypes = {DType::I64, DType::I64};
  r.ops = {fop(OpKind::Add, {In::input(0), In::input(1)}, DType::I64)};
  r.outputs = {0};
  auto a = make<int64_t>(DType::I64, {}, {40});
  auto b = make<int64_t>(DType::I64, {}, {2});
  auto got = run_region(r, {a, b});
  CHECK(got[0].rank() == 0);
  CHECK(*got[0].data_as<int64_t>() == 42);
  auto e = make<int64_t>(DType::I64, {2, 0}, {});
  auto empty = run_region(r, {e, e});
  CHECK(empty[0].shape() == std::vector<int64_t>{2, 0});
}

TEST_CASE("malformed regions and mismatched inputs are errors", "[fused]") {
  FusedRegion later;
  later.input_dtypes = {DType::F32};
  later.ops = {fop(OpKind::Negate, {In::op(0)}, DType::F32)};
  later.outputs = {0};
  auto e1 = FusedKernel::compile(later);
  REQUIRE_FALSE(e1.ok());
  CHECK(e1.error().code() == ErrorCode::InvalidAttribute);
  CHECK_THAT(e1.error().message(), Catch::Contains("fused op #0"));

  FusedRegion wrong_type;
  wrong_type.input_dtypes = {DType::C64};
  wrong_type.ops = {fop(OpKind::Abs, {In::input(0)}, DType::C64)};  // abs(c64) is f32
  wrong_type.outputs = {0};
  auto e2 = FusedKernel::compile(wrong_type);
  REQUIRE_FALSE(e2.ok());
  CHECK(e2.error().code() == ErrorCode::TypeMismatch);

  FusedRegion rejected;
  rejected.input_dtypes = {DType::U8};
  rejected.ops = {fop(OpKind::Sign, {In::input(0)}, DType::U8)};
  rejected.outputs = {0};
  auto e3 = FusedKernel::compile(rejected);
  REQUIRE_FALSE(e3.ok());
  CHECK(e3.error().code() == ErrorCode::TypeMismatch);
  CHECK_THAT(e3.error().message(), Catch::Contains("fused op #0 (sign)"));

  FusedRegion bad_output = benchmark_chain();
  bad_output.outputs = {5};
  CHECK(FusedKernel::compile(bad_output).error().code() == ErrorCode::InvalidAttribute);
  FusedRegion bad_input = benchmark_chain();
  bad_input.ops[0].operands[1] = In::input(9);
  CHECK(FusedKernel::compile(bad_input).error().code() == ErrorCode::InvalidAttribute);

  auto k = FusedKernel::compile(benchmark_chain());
  REQUIRE(k.ok());
  auto f3 = make<float>(DType::F32, {3}, {1, 2, 3});
  auto f4 = make<float>(DType::F32, {4}, {1, 2, 3, 4});
  auto d3 = make<double>(DType::F64, {3}, {1, 2, 3});
  auto r1 = k->run(Ts{f3, f3, f4, f3}, nullptr);
  REQUIRE_FALSE(r1.ok());
  CHECK(r1.error().code() == ErrorCode::InputMismatch);
  CHECK_THAT(r1.error().message(), Catch::Contains("input #2"));
  CHECK(k->run(Ts{f3, d3, f3, f3}, nullptr).error().code() == ErrorCode::InputMismatch);
  CHECK(k->run(Ts{f3, f3}, nullptr).error().code() == ErrorCode::InputMismatch);
}

TEST_CASE("region_from_chain maps a straight chain's values to a region", "[fused]") {
  // v10 = a*b; v11 = v10 + c; v12 = tanh(v11); v13 = v12 * h; v14 = v13 + a
  const DType f = DType::F32;
  std::vector<ChainOp> chain = {
      {OpKind::Multiply, NoAttrs{}, {{1, f}, {2, f}}, {10, f}},
      {OpKind::Add, NoAttrs{}, {{10, f}, {3, f}}, {11, f}},
      {OpKind::Tanh, NoAttrs{}, {{11, f}}, {12, f}},
      {OpKind::Multiply, NoAttrs{}, {{12, f}, {4, f}}, {13, f}},
      {OpKind::Add, NoAttrs{}, {{13, f}, {1, f}}, {14, f}}};
  const std::vector<uint32_t> live_out = {14, 11};
  auto built = region_from_chain(chain, live_out);
  REQUIRE(built.ok());
  CHECK(built->input_values == std::vector<uint32_t>{1, 2, 3, 4});
  CHECK(built->output_values == std::vector<uint32_t>{14, 11});
  CHECK(built->region.outputs == std::vector<uint32_t>{4, 1});
  CHECK(built->region.ops[4].operands == std::vector<FusedOperand>{In::op(3), In::input(0)});
  // and it runs like the hand-built region
  const int64_t n = 2500;
  auto a = make<float>(DType::F32, {n}, wave(n, 3.0f, 0.0f));
  auto h = make<float>(DType::F32, {}, {0.5f});
  auto got = run_region(built->region, {a, a, a, h});
  auto want = run_region(benchmark_chain(), {a, a, a, h});
  CHECK(got[0].bitwise_equal(want[0]));

  std::vector<ChainOp> not_elementwise = {
      {OpKind::ReduceSum, ReduceAttrs{{0}}, {{1, f}}, {2, f}}};
  CHECK(region_from_chain(not_elementwise, std::vector<uint32_t>{2}).error().code() ==
        ErrorCode::InvalidAttribute);
  CHECK(region_from_chain(chain, std::vector<uint32_t>{3}).error().code() ==
        ErrorCode::InvalidAttribute);  // an input, not produced by the chain
  std::vector<ChainOp> twice = {chain[0], chain[0]};
  CHECK(region_from_chain(twice, std::vector<uint32_t>{10}).error().code() ==
        ErrorCode::InvalidAttribute);
  std::vector<ChainOp> clash = {{OpKind::Add, NoAttrs{}, {{1, f}, {1, DType::F64}}, {5, f}}};
  CHECK(region_from_chain(clash, std::vector<uint32_t>{5}).error().code() ==
        ErrorCode::InputMismatch);
}

TEST_CASE("ChainBuilder adds a chain one op at a time as region_from_chain maps it", "[fused]") {
  const DType f = DType::F32;
  const std::vector<ChainOp> chain = {
      {OpKind::Multiply, NoAttrs{}, {{1, f}, {2, f}}, {10, f}},
      {OpKind::Add, NoAttrs{}, {{10, f}, {1, f}}, {11, f}},
      {OpKind::Compare, CompareAttrs{CompareDirection::LT}, {{11, f}, {2, f}}, {12, DType::Bool}}};
  const std::vector<uint32_t> live_out = {12, 10};
  auto whole = region_from_chain(chain, live_out);
  REQUIRE(whole.ok());
  ChainBuilder builder{chain.size()};
  for (const ChainOp& op : chain) REQUIRE(builder.add(op.kind, op.attrs, op.operands, op.result).ok());
  auto built = std::move(builder).finish(live_out);
  REQUIRE(built.ok());
  CHECK(built->input_values == whole->input_values);
  CHECK(built->output_values == whole->output_values);
  CHECK(built->region.input_dtypes == whole->region.input_dtypes);
  CHECK(built->region.outputs == whole->region.outputs);
  REQUIRE(built->region.ops.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(built->region.ops[i].operands == whole->region.ops[i].operands);
    CHECK(built->region.ops[i].attrs == whole->region.ops[i].attrs);
    CHECK(built->region.ops[i].result_dtype == whole->region.ops[i].result_dtype);
  }
  ChainBuilder twice{2};
  REQUIRE(twice.add(OpKind::Negate, NoAttrs{}, std::vector<ChainValue>{{1, f}}, {2, f}).ok());
  CHECK(twice.add(OpKind::Negate, NoAttrs{}, std::vector<ChainValue>{{1, f}}, {2, f}).error().code() ==
        ErrorCode::InvalidAttribute);
}

TEST_CASE("a fused op with more operands than a tile function takes is refused", "[fused]") {
  using O = FusedOperand;
  FusedRegion r{{DType::F32}, {FusedOp{OpKind::Select, NoAttrs{}, {O::input(0), O::input(0), O::input(0), O::input(0)},
                                       DType::F32}},
                {0}};
  auto k = FusedKernel::compile(r);
  REQUIRE_FALSE(k.ok());
  CHECK(k.error().code() == ErrorCode::InvalidAttribute);
  CHECK_THAT(k.error().message(), Catch::Contains("at most 3"));
}

}  // namespace
}  // namespace tenact::cpu
