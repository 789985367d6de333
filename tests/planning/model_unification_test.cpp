// Tensor contracts against tensors (planning/model/tensor_unification.hpp):
// the two domains of symbols, ambiguous outputs, and every contract error a
// node's compilation reports, its text checked.
#include <catch2/catch.hpp>

#include "planning/model/tensor_unification.hpp"
#include "tests/planning/model_test_support.hpp"

using namespace tenact;
using namespace tenact::model_test;

namespace {

/// A program with inputs a f32[2, 3] and b f32[3, 3], y = add(a, a).
std::shared_ptr<const SemanticProgram> add_program() {
  return program_of(R"({"format": "tenact.program/1", "name": "m",
    "inputs": [{"name": "a", "dtype": "f32", "shape": [2, 3]}, {"name": "b", "dtype": "f32", "shape": [3, 3]}],
    "states": [{"name": "s", "dtype": "f32", "shape": [1]}],
    "ops": [{"op": "add", "in": ["a", "a"], "out": "y"}, {"op": "add", "in": ["b", "b"], "out": "z"}],
    "outputs": ["y", "z"]})");
}

ModelCompileOptions add_options() {
  ModelCompileOptions o;
  o.tensors["a"] = dense(DType::F32, {2, 3});
  o.tensors["b"] = dense(DType::F32, {3, 3});
  return o;
}

/// A catalog whose one provider gives node y `y_contract` and node z the mirror.
ProviderCatalog y_catalog(std::function<OpContract()> y_contract) {
  return catalog_of(
      {{"e0", "mem", list({provider("p", [y_contract](const ContractQuery& q) -> std::optional<OpContract> {
          if (q.operands[0].shape[0].expr.constant_value() == 2) return y_contract();
          return mirror(q);
        })})}});
}

TensorContract f32_dims(std::vector<DimensionConstraint> dims,
                        std::vector<LayoutConstraint> layouts = {LayoutConstraint::contiguous()}) {
  return contract(std::move(dims), {DType::F32}, std::move(layouts));
}

std::vector<DimensionConstraint> exact23() { return {DimensionConstraint::exact(2), DimensionConstraint::exact(3)}; }

}  // namespace

TEST_CASE("dimension and stride symbols of one name are independent domains", "[model][unification]") {
  const TensorContract c = contract({DimensionConstraint::named("shared")}, {DType::F32},
                                    {LayoutConstraint::strided({StrideConstraint::named("shared")})});
  const ResolvedTensorSpec t = ResolvedTensorSpec::make({4}, DType::F32, ResolvedTensorLayout::strided({16})).value();
  TensorSymbols symbols;
  REQUIRE(unify_tensor(c, t, symbols, "node.symbol-domains", "input", 0, "value.symbol-domains").ok());
  CHECK(symbols.dimensions.at("shared") == 4);
  CHECK(symbols.strides.at("shared") == 16);
}

TEST_CASE("an ambiguous output range or layout requires an explicit tensor", "[model][unification]") {
  TensorSymbols symbols;
  auto range = infer_tensor(contract({DimensionConstraint::range(1, 8)}, {DType::F32}), symbols, "node.ambiguous");
  REQUIRE_FALSE(range.ok());
  CHECK(range.error().code() == ErrorCode::InvalidPlan);
  CHECK(range.error().message() == "node `node.ambiguous` output range is ambiguous; provide an explicit tensor");
  auto layouts = infer_tensor(
      contract({DimensionConstraint::exact(4)}, {DType::F32},
               {LayoutConstraint::contiguous(), LayoutConstraint::strided({StrideConstraint::exact_bytes(4)})}),
      symbols, "node.ambiguous");
  REQUIRE_FALSE(layouts.ok());
  CHECK(layouts.error().message() == "node `node.ambiguous` output layout is ambiguous; provide an explicit tensor");
  // A range of one extent is that extent.
  auto one = infer_tensor(contract({DimensionConstraint::range(3, 3)}, {DType::F32}), symbols, "n");
  REQUIRE(one.ok());
  CHECK(one->dims == std::vector<uint64_t>{3});
}

TEST_CASE("a symbol binds a non-zero extent once and a failed layout binds no stride symbol", "[model][unification]") {
  std::map<std::string, uint64_t, std::less<>> symbols;
  CHECK_FALSE(bind_symbol(symbols, "k", 0));
  CHECK(symbols.empty());
  CHECK(bind_symbol(symbols, "k", 5));
  CHECK(bind_symbol(symbols, "k", 5));
  CHECK_FALSE(bind_symbol(symbols, "k", 6));
  // The first layout binds s0 then fails on its exact stride; the second matches with s0 = 8.
  const TensorContract c =
      contract({DimensionConstraint::exact(2), DimensionConstraint::exact(2)}, {DType::F32},
               {LayoutConstraint::strided({StrideConstraint::named("s0"), StrideConstraint::exact_bytes(8)}),
                LayoutConstraint::strided({StrideConstraint::exact_bytes(8), StrideConstraint::named("s0")})});
  TensorSymbols ts;
  REQUIRE(unify_tensor(c, ResolvedTensorSpec::make({2, 2}, DType::F32, ResolvedTensorLayout::strided({8, 4})).value(),
                       ts, "n", "input", 0, "v")
              .ok());
  CHECK(ts.strides.at("s0") == 4);
  // A blocked tensor fits a blocked constraint of equal block and axis order, padding aside.
  const BlockedLayout panels{{1, 16}, {1, 0}};
  auto blocked = ResolvedTensorSpec::make(
      {3, 20}, DType::F32, ResolvedTensorLayout::blocked_for(panels, std::vector<uint64_t>{3, 20}).value());
  REQUIRE(blocked.ok());
  TensorSymbols bs;
  CHECK(unify_tensor(contract({DimensionConstraint::named("k"), DimensionConstraint::named("n")}, {DType::F32},
                              {LayoutConstraint::blocked_as(panels)}),
                     *blocked, bs, "n", "input", 1, "w")
            .ok());
}

TEST_CASE("contract violations of a node are reported with their values and constraints", "[model][unification]") {
  const auto program = add_program();
  const auto options = add_options();
  auto error_with = [&](std::function<OpContract()> y) {
    return compile_error(program, y_catalog(std::move(y)), options);
  };
  CHECK(error_with([] {
          return OpContract{
              {contract({DimensionConstraint::exact(2), DimensionConstraint::exact(3)}, {DType::F16, DType::BF16}),
               f32_dims(exact23())},
              {f32_dims(exact23())}};
        }) ==
        "node `y` input[0] `a` rank or dtype differs from its operation contract: actual rank=2 dtype=f32, "
        "expected rank=2 dtypes=[f16, bf16]");
  CHECK(error_with([] {
          return OpContract{{f32_dims({DimensionConstraint::exact(2)}), f32_dims(exact23())}, {f32_dims(exact23())}};
        }) ==
        "node `y` input[0] `a` rank or dtype differs from its operation contract: actual rank=2 dtype=f32, "
        "expected rank=1 dtypes=[f32]");
  CHECK(error_with([] {
          return OpContract{
              {f32_dims({DimensionConstraint::exact(2), DimensionConstraint::exact(4)}), f32_dims(exact23())},
              {f32_dims(exact23())}};
        }) == "node `y` input[0] `a` dimension[1]=3 violates `Exact(4)`");
  CHECK(error_with([] {
          return OpContract{
              {f32_dims(exact23()), f32_dims({DimensionConstraint::exact(2), DimensionConstraint::range(1, 2)})},
              {f32_dims(exact23())}};
        }) == "node `y` input[1] `a` dimension[1]=3 violates `Range{minimum: 1, maximum: 2}`");
  CHECK(error_with([] {
          auto k = std::vector{DimensionConstraint::named("k"), DimensionConstraint::named("k")};
          return OpContract{{f32_dims(k), f32_dims(exact23())}, {f32_dims(exact23())}};
        }) == "node `y` input[0] `a` dimension[1]=3 violates `Symbol(k)`");
  CHECK(error_with([] {
          return OpContract{
              {f32_dims(exact23(),
                        {LayoutConstraint::strided({StrideConstraint::exact_bytes(12), StrideConstraint::named("s")})}),
               f32_dims(exact23())},
              {f32_dims(exact23())}};
        }) ==
        "node `y` input[0] `a` layout contiguous differs from its operation contract "
        "[Strided[ExactBytes(12), Symbol(s)]]");
  CHECK(
      error_with([] {
        return OpContract{{f32_dims(exact23()), f32_dims(exact23())}, {contract(exact23(), {DType::F16, DType::F32})}};
      }) == "node `y` output dtype is ambiguous; provide an explicit tensor");
  CHECK(error_with([] {
          return OpContract{{f32_dims(exact23()), f32_dims(exact23())},
                            {f32_dims({DimensionConstraint::exact(2), DimensionConstraint::range(1, 8)})}};
        }) == "node `y` output range is ambiguous; provide an explicit tensor");
  CHECK(error_with([] {
          return OpContract{{f32_dims(exact23()), f32_dims(exact23())},
                            {f32_dims(exact23(), {LayoutConstraint::contiguous(), LayoutConstraint::contiguous()})}};
        }) == "node `y` output layout is ambiguous; provide an explicit tensor");
  CHECK(error_with([] {
          return OpContract{{f32_dims(exact23()), f32_dims(exact23())},
                            {f32_dims({DimensionConstraint::exact(2), DimensionConstraint::named("m")})}};
        }) == "node `y` output symbol `m` is unresolved; provide an explicit tensor");
  CHECK(error_with([] {
          return OpContract{{f32_dims(exact23()), f32_dims(exact23())},
                            {f32_dims(exact23(), {LayoutConstraint::strided({StrideConstraint::named("row"),
                                                                             StrideConstraint::exact_bytes(4)})})}};
        }) == "node `y` stride symbol `row` is unresolved");
  // A dimension symbol named like the stride symbol does not resolve it.
  CHECK(error_with([] {
          auto row = std::vector{DimensionConstraint::named("row"), DimensionConstraint::exact(3)};
          return OpContract{{f32_dims(row), f32_dims(exact23())},
                            {f32_dims(exact23(), {LayoutConstraint::strided({StrideConstraint::named("row"),
                                                                             StrideConstraint::exact_bytes(4)})})}};
        }) == "node `y` stride symbol `row` is unresolved");
}

TEST_CASE("an explicit result tensor settles what its contract leaves open", "[model][unification]") {
  const auto program = add_program();
  auto options = add_options();
  const auto catalog = y_catalog([] {
    return OpContract{
        {f32_dims(exact23()), f32_dims(exact23())},
        {f32_dims({DimensionConstraint::exact(2), DimensionConstraint::range(1, 8)},
                  {LayoutConstraint::contiguous(),
                   LayoutConstraint::strided({StrideConstraint::named("r"), StrideConstraint::named("c")})})}};
  });
  options.tensors["y"] = ResolvedTensorSpec::make({2, 3}, DType::F32, ResolvedTensorLayout::strided({16, 4})).value();
  const auto plan = compiled(program, catalog, options);
  CHECK(plan->tensors[value_named(*program, "y")].layout == ResolvedTensorLayout::strided({16, 4}));
  // Explicit, it is unified like an operand: a range it leaves is an error naming it as an output.
  options.tensors["y"] = dense(DType::F32, {2, 9});
  CHECK(compile_error(program, catalog, options) ==
        "node `y` output[0] `y` dimension[1]=9 violates `Range{minimum: 1, maximum: 8}`");
}
