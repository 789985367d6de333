// The CPU kernels' providers (cpu_providers.hpp): contracts of a few op
// instances written out by hand, the packed-panel provider's limits, and
// CpuEngine::prepare with a provider choice (refused when the engine lacks
// the provider or its contract does not list a layout; echoed otherwise),
// then run through the engine with the kernel variant it maps to.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core/tensor_layout.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "engines/cpu/cpu_providers.hpp"
#include "engines/cpu/kernels/dot_packed_panels.hpp"
#include "tests/engines/cpu/batch_launch.hpp"
#include "tests/engines/cpu/test_engine.hpp"

using namespace tenact;
using namespace tenact::cpu;

namespace cpu_providers_test {

const OpProvider& provider_named(const OpProviderList& list, std::string_view id) {
  auto it = std::find_if(list->begin(), list->end(), [&](const OpProvider& p) { return p.id == id; });
  REQUIRE(it != list->end());
  return *it;
}

ValueType f32(std::initializer_list<int64_t> dims) { return ValueType{DType::F32, exact_shape(dims)}; }

std::optional<OpContract> contract_of(std::string_view provider, OpKind kind, const OpAttrs& attrs,
                                      std::vector<ValueType> operands, std::vector<ValueType> results,
                                      const SymbolBindings& symbols = {}) {
  const OpProviderList list = cpu_op_providers(64);
  const ContractQuery q{kind, &attrs, operands, results, &symbols};
  return provider_named(list, provider).contract(q);
}

DimensionConstraint sym(const char* s) { return DimensionConstraint::named(s); }

std::vector<DType> all_but_bool() {
  std::vector<DType> v(std::begin(kAllDTypes) + 1, std::end(kAllDTypes));
  return v;
}

DotGeneralAttrs matmul() {
  DotGeneralAttrs d;
  d.lhs_contracting_dimensions = {1};
  d.rhs_contracting_dimensions = {0};
  return d;
}

OpPrepareRequest request_for(OpKind kind, OpAttrs attrs, std::vector<ValueType> operands,
                             std::vector<ValueType> results, std::shared_ptr<const ProviderChoice> choice) {
  OpPrepareRequest r;
  r.kind = kind;
  r.attrs = std::move(attrs);
  r.operands = std::move(operands);
  r.results = std::move(results);
  r.binding.endpoint = {"cpu", "host"};
  r.binding.engine.id = "cpu";
  r.provider = std::move(choice);
  return r;
}

std::shared_ptr<const ProviderChoice> choice(std::string id, std::vector<ResolvedTensorLayout> layouts = {}) {
  return std::make_shared<const ProviderChoice>(ProviderChoice{std::move(id), std::move(layouts)});
}


TEST_CASE("the CPU providers: ids, sorted capabilities, the engine's alignment", "[cpu_providers]") {
  auto engine = test_engine(CpuEngineOptions{.threads = 1});
  const OpProviderList& list = engine->capabilities().providers;
  REQUIRE(list);
  std::vector<std::string> ids;
  for (const OpProvider& p : *list) {
    ids.push_back(p.id);
    CHECK(std::is_sorted(p.capabilities.begin(), p.capabilities.end()));
    CHECK(p.alignment_for({}) == 64);
  }
  CHECK(ids == std::vector<std::string>{"elementwise", "reduction", "dot_general.packed_panels", "dot_general.blas",
                                        "dynamic_update_slice.in_place", "scatter.in_place", "indexing", "layout",
                                        "extension"});
  CHECK(provider_named(list, "dot_general.packed_panels").capabilities ==
        std::vector<std::string>{"blocked_weights", "dot_general"});
  CHECK(provider_named(list, "scatter.in_place").capabilities == std::vector<std::string>{"in_place", "indexing"});
}

TEST_CASE("elementwise add of [4, 8]: one symbol per axis on both operands and the result", "[cpu_providers]") {
  auto c = contract_of("elementwise", OpKind::Add, NoAttrs{}, {f32({4, 8}), f32({4, 8})}, {f32({4, 8})});
  REQUIRE(c);
  REQUIRE(c->operands.size() == 2);
  REQUIRE(c->results.size() == 1);
  const std::vector<DimensionConstraint> d{sym("d0"), sym("d1")};
  for (size_t i = 0; i < 2; ++i) {
    const TensorContract& t = c->operands[i];
    CHECK(t.dimensions == d);
    CHECK(t.element_types == std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes)));  // add takes all
    REQUIRE(t.layouts.size() == 2);
    CHECK(t.layouts[0] == LayoutConstraint::contiguous());
    const std::string o = std::to_string(i);
    CHECK(t.layouts[1] == LayoutConstraint::strided({StrideConstraint::named("s" + o + ".0"),
                                                     StrideConstraint::named("s" + o + ".1")}));
    CHECK(t.access == TensorAccess::Read);
    CHECK(t.alias == AliasPolicy::none());
  }
  const TensorContract& r = c->results[0];
  CHECK(r.dimensions == d);
  CHECK(r.element_types == std::vector<DType>{DType::F32});
  CHECK(r.layouts == std::vector<LayoutConstraint>{LayoutConstraint::contiguous()});
  CHECK(r.access == TensorAccess::Write);
  CHECK(r.alias == AliasPolicy::none());

  // Kernel type rules: subtract rejects bool, tanh takes floats and complex.
  auto sub = contract_of("elementwise", OpKind::Subtract, NoAttrs{}, {f32({3}), f32({3})}, {f32({3})});
  CHECK(sub->operands[0].element_types == all_but_bool());
  auto tanh = contract_of("elementwise", OpKind::Tanh, NoAttrs{}, {f32({3})}, {f32({3})});
  CHECK(tanh->operands[0].element_types ==
        std::vector<DType>{DType::F16, DType::BF16, DType::F32, DType::F64, DType::C64, DType::C128});
  // select(scalar pred, x, y): the predicate is a rank-0 bool.
  auto select = contract_of("elementwise", OpKind::Select, NoAttrs{},
                            {ValueType{DType::Bool, {}}, f32({2, 3}), f32({2, 3})}, {f32({2, 3})});
  REQUIRE(select);
  CHECK(select->operands[0].dimensions.empty());
  CHECK(select->operands[0].element_types == std::vector<DType>{DType::Bool});
  CHECK(select->operands[1].dimensions == std::vector<DimensionConstraint>{sym("d0"), sym("d1")});
  CHECK(select->operands[1].element_types.size() == 15);
}

TEST_CASE("dot_general [2, 3] x [3, 5]: free, contracting and batching symbols", "[cpu_providers]") {
  auto c = contract_of("dot_general.blas", OpKind::DotGeneral, matmul(), {f32({2, 3}), f32({3, 5})}, {f32({2, 5})});
  REQUIRE(c);
  CHECK(c->operands[0].dimensions == std::vector<DimensionConstraint>{sym("m0"), sym("k0")});
  CHECK(c->operands[1].dimensions == std::vector<DimensionConstraint>{sym("k0"), sym("n0")});
  CHECK(c->results[0].dimensions == std::vector<DimensionConstraint>{sym("m0"), sym("n0")});
  CHECK(c->operands[0].element_types == all_but_bool());
  CHECK(c->results[0].element_types == std::vector<DType>{DType::F32});
  // Batched, contracting the lhs's first axis: [b, k, m] x [b, n, k].
  DotGeneralAttrs batched;
  batched.lhs_batching_dimensions = {0};
  batched.rhs_batching_dimensions = {0};
  batched.lhs_contracting_dimensions = {1};
  batched.rhs_contracting_dimensions = {2};
  auto b = contract_of("dot_general.blas", OpKind::DotGeneral, batched, {f32({4, 3, 2}), f32({4, 5, 3})},
                       {f32({4, 2, 5})});
  REQUIRE(b);
  CHECK(b->operands[0].dimensions == std::vector<DimensionConstraint>{sym("b0"), sym("k0"), sym("m0")});
  CHECK(b->operands[1].dimensions == std::vector<DimensionConstraint>{sym("b0"), sym("n0"), sym("k0")});
  CHECK(b->results[0].dimensions == std::vector<DimensionConstraint>{sym("b0"), sym("m0"), sym("n0")});
}

TEST_CASE("reduce over axis 1 keeps the other axes' symbols", "[cpu_providers]") {
  auto c = contract_of("reduction", OpKind::ReduceSum, ReduceAttrs{{1}}, {f32({4, 8, 2})}, {f32({4, 2})});
  REQUIRE(c);
  CHECK(c->operands[0].dimensions == std::vector<DimensionConstraint>{sym("d0"), sym("d1"), sym("d2")});
  CHECK(c->results[0].dimensions == std::vector<DimensionConstraint>{sym("d0"), sym("d2")});
  CHECK(c->operands[0].element_types.size() == 15);
  auto squares = contract_of("reduction", OpKind::ReduceSumSquares, ReduceAttrs{{0}}, {f32({4})}, {f32({})});
  CHECK(squares->operands[0].element_types == all_but_bool());
  CHECK(squares->results[0].dimensions.empty());
}

TEST_CASE("dynamic_update_slice in place: range dims, contiguous read-write operand, must-alias result",
          "[cpu_providers]") {
  const ValueType i32{DType::I32, {}};
  auto c = contract_of("dynamic_update_slice.in_place", OpKind::DynamicUpdateSlice, NoAttrs{},
                       {f32({6, 8}), f32({1, 8}), i32, i32}, {f32({6, 8})});
  REQUIRE(c);
  const TensorContract& operand = c->operands[0];
  CHECK(operand.dimensions == std::vector<DimensionConstraint>{sym("d0"), sym("d1")});
  CHECK(operand.layouts == std::vector<LayoutConstraint>{LayoutConstraint::contiguous()});
  CHECK(operand.access == TensorAccess::ReadWrite);
  CHECK(c->operands[1].dimensions ==
        std::vector<DimensionConstraint>{DimensionConstraint::range(0, 6), DimensionConstraint::range(0, 8)});
  for (size_t i : {2u, 3u}) {
    CHECK(c->operands[i].dimensions.empty());
    CHECK(c->operands[i].element_types == std::vector<DType>{DType::I8, DType::I16, DType::I32, DType::I64,
                                                             DType::U8, DType::U16, DType::U32, DType::U64});
  }
  CHECK(c->results[0].dimensions == operand.dimensions);
  CHECK(c->results[0].alias == AliasPolicy::must(0));
  CHECK(c->results[0].access == TensorAccess::Write);
  // The generic indexing provider serves it out of place.
  auto generic = contract_of("indexing", OpKind::DynamicUpdateSlice, NoAttrs{}, {f32({6, 8}), f32({1, 8}), i32, i32},
                             {f32({6, 8})});
  REQUIRE(generic);
  CHECK(generic->operands[0].dimensions ==
        std::vector<DimensionConstraint>{DimensionConstraint::exact(6), DimensionConstraint::exact(8)});
  CHECK(generic->results[0].alias == AliasPolicy::none());
}

TEST_CASE("packed panels serve f32 matmuls of 1 to 64 rows only", "[cpu_providers]") {
  const ValueType lhs{DType::F32, {ShapeExtent::exact(DimExpr::symbol("B")), ShapeExtent::exact(DimExpr::constant(784))}};
  const ValueType out{DType::F32, {ShapeExtent::exact(DimExpr::symbol("B")), ShapeExtent::exact(DimExpr::constant(128))}};
  auto at = [&](int64_t b) {
    return contract_of("dot_general.packed_panels", OpKind::DotGeneral, matmul(), {lhs, f32({784, 128})}, {out},
                       SymbolBindings{{"B", b}});
  };
  auto served = at(64);
  REQUIRE(served);
  CHECK(served->operands[0].dimensions == std::vector<DimensionConstraint>{sym("m"), sym("k")});
  CHECK(served->operands[1].dimensions == std::vector<DimensionConstraint>{sym("k"), sym("n")});
  CHECK(served->operands[1].layouts == std::vector<LayoutConstraint>{LayoutConstraint::blocked_as(
                                           BlockedLayout{{1, 16}, {1, 0}})});
  CHECK(served->results[0].dimensions == std::vector<DimensionConstraint>{sym("m"), sym("n")});
  CHECK(at(1));
  CHECK_FALSE(at(65));
  CHECK_FALSE(at(0));
  // Without the symbol's value M is unknown: not served.
  CHECK_FALSE(contract_of("dot_general.packed_panels", OpKind::DotGeneral, matmul(), {lhs, f32({784, 128})}, {out}));
  const ValueType f64{DType::F64, exact_shape({4, 784})};
  CHECK_FALSE(contract_of("dot_general.packed_panels", OpKind::DotGeneral, matmul(),
                          {f64, ValueType{DType::F64, exact_shape({784, 128})}},
                          {ValueType{DType::F64, exact_shape({4, 128})}}));
}

TEST_CASE("prepare with a provider the engine lacks, or a layout its contract does not list, is Unsupported",
          "[cpu_providers]") {
  auto engine = test_engine(CpuEngineOptions{.threads = 1});
  auto missing = engine->prepare(request_for(OpKind::DotGeneral, matmul(), {f32({4, 16}), f32({16, 32})},
                                             {f32({4, 32})}, choice("dot_general.tiles")));
  REQUIRE(std::holds_alternative<Unsupported>(missing));
  const std::string reason = std::get<Unsupported>(missing).reason;
  CHECK(reason.find("dot_general.tiles") != std::string::npos);
  CHECK(reason.find("'cpu'") != std::string::npos);
  // packed panels with a row-major rhs; in-place update of a strided operand.
  auto contiguous_rhs = engine->prepare(request_for(OpKind::DotGeneral, matmul(), {f32({4, 16}), f32({16, 32})},
                                                    {f32({4, 32})}, choice("dot_general.packed_panels")));
  CHECK(std::holds_alternative<Unsupported>(contiguous_rhs));
  const ValueType i32{DType::I32, {}};
  auto strided = engine->prepare(request_for(
      OpKind::DynamicUpdateSlice, NoAttrs{}, {f32({6, 8}), f32({1, 8}), i32, i32}, {f32({6, 8})},
      choice("dynamic_update_slice.in_place",
             {ResolvedTensorLayout::strided({64, 4}), ResolvedTensorLayout::contiguous(),
              ResolvedTensorLayout::contiguous(), ResolvedTensorLayout::contiguous()})));
  CHECK(std::holds_alternative<Unsupported>(strided));
  // The provider does not serve the op (M = 65).
  auto too_many = engine->prepare(request_for(OpKind::DotGeneral, matmul(), {f32({65, 16}), f32({16, 32})},
                                              {f32({65, 32})}, choice("dot_general.packed_panels")));
  CHECK(std::holds_alternative<Unsupported>(too_many));
}

TEST_CASE("prepare with packed panels echoes the choice and the engine runs the variant", "[cpu_providers]") {
  auto engine = test_engine(CpuEngineOptions{.threads = 2});
  const int64_t m = 3, k = 40, n = 20;
  const std::vector<uint64_t> rhs_dims{40, 20};
  auto packed_choice = choice("dot_general.packed_panels",
                              {ResolvedTensorLayout::contiguous(),
                               ResolvedTensorLayout::blocked_for(BlockedLayout{{1, 16}, {1, 0}}, rhs_dims).value()});
  auto answer = engine->prepare(
      request_for(OpKind::DotGeneral, matmul(), {f32({m, k}), f32({k, n})}, {f32({m, n})}, packed_choice));
  REQUIRE(std::holds_alternative<std::shared_ptr<const PreparedOp>>(answer));
  const auto op = std::get<std::shared_ptr<const PreparedOp>>(answer);
  REQUIRE(op->provider);
  CHECK(*op->provider == *packed_choice);
  CHECK(kernel_variant_of(*op) == KernelVariant::PackedPanels);

  // Run it: a = 1 everywhere, b(k, j) = j; every result (i, j) is k * j.
  Tensor a = Tensor::zeros(DType::F32, {m, k}).value();
  Tensor b = Tensor::zeros(DType::F32, {k, n}).value();
  for (int64_t i = 0; i < m * k; ++i) a.data_as<float>()[i] = 1.0f;
  for (int64_t i = 0; i < k * n; ++i) b.data_as<float>()[i] = static_cast<float>(i % n);
  const Tensor panels = pack_blocked(b, packed_panels_layout()).value();
  const Tensor rhs = Tensor::view(panels.buffer(), DType::F32, {k, n}, {n, 1}, 0).value();
  BatchWork work;
  work.inputs = {a, rhs};
  work.ops.push_back({op, {BatchRef::input(0), BatchRef::input(1)}});
  work.outputs = {BatchRef::op(0)};
  const std::vector<Tensor> out = testing::launch_and_wait(*engine, std::move(work)).value();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) CHECK(out[0].data_as<float>()[i * n + j] == static_cast<float>(k * j));

  // And a choice of the standard provider echoes too, running the standard kernel.
  auto blas = engine->prepare(request_for(OpKind::DotGeneral, matmul(), {f32({m, k}), f32({k, n})}, {f32({m, n})},
                                          choice("dot_general.blas")));
  REQUIRE(std::holds_alternative<std::shared_ptr<const PreparedOp>>(blas));
  CHECK(std::get<std::shared_ptr<const PreparedOp>>(blas)->provider->id == "dot_general.blas");
  CHECK(kernel_variant_of(*std::get<std::shared_ptr<const PreparedOp>>(blas)) == KernelVariant::Standard);
}

}  // namespace cpu_providers_test
