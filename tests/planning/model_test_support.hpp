// What the model plan tests share: programs from JSON, synthetic providers
// (the planning layer never depends on an engine) and catalogs of them.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/program_json.hpp"
#include "planning/model/model_plan.hpp"

namespace tenact::model_test {

using ContractFn = std::function<std::optional<OpContract>(const ContractQuery&)>;

inline std::shared_ptr<const SemanticProgram> program_of(const std::string& json) {
  auto p = load_program(json);
  INFO((p.ok() ? std::string{} : p.error().to_string()));
  REQUIRE(p.ok());
  return std::make_shared<const SemanticProgram>(std::move(*p));
}

inline ResolvedTensorSpec dense(DType dtype, std::vector<uint64_t> dims) {
  return ResolvedTensorSpec::make(std::move(dims), dtype, ResolvedTensorLayout::contiguous()).value();
}

inline TensorContract contract(std::vector<DimensionConstraint> dims, std::vector<DType> dtypes,
                               std::vector<LayoutConstraint> layouts = {LayoutConstraint::contiguous()},
                               AliasPolicy alias = AliasPolicy::none(), TensorAccess access = TensorAccess::Read) {
  auto made = TensorContract::make(std::move(dims), std::move(dtypes), std::move(layouts), access, alias);
  REQUIRE(made.ok());
  return *made;
}

/// Exact(extent) per axis of `type` at the query's symbols.
inline std::vector<DimensionConstraint> exact_dims(const ValueType& type, const ContractQuery& q) {
  std::vector<DimensionConstraint> dims;
  for (const ShapeExtent& e : type.shape)
    dims.push_back(DimensionConstraint::exact(static_cast<uint64_t>(e.expr.evaluate(*q.symbols).value())));
  return dims;
}

/// Every operand and result as the program types it: its dtype, its exact
/// extents, contiguous; results alias nothing.
inline std::optional<OpContract> mirror(const ContractQuery& q) {
  OpContract c;
  for (const ValueType& t : q.operands) c.operands.push_back(contract(exact_dims(t, q), {t.dtype}));
  for (const ValueType& t : q.results) c.results.push_back(contract(exact_dims(t, q), {t.dtype}));
  return c;
}

/// `fn` for ops of `kinds` only.
inline ContractFn serving(std::vector<OpKind> kinds, ContractFn fn = mirror) {
  return [kinds, fn](const ContractQuery& q) -> std::optional<OpContract> {
    if (std::find(kinds.begin(), kinds.end(), q.kind) == kinds.end()) return std::nullopt;
    return fn(q);
  };
}

/// `fn` with result `result` given `alias`.
inline ContractFn aliasing(ContractFn fn, size_t result, AliasPolicy alias) {
  return [fn, result, alias](const ContractQuery& q) -> std::optional<OpContract> {
    auto c = fn(q);
    if (c && result < c->results.size()) c->results[result].alias = alias;
    return c;
  };
}

inline OpProvider provider(std::string id, ContractFn contract_fn, uint64_t alignment = 64,
                           std::vector<std::string> capabilities = {"elementwise"}) {
  OpProvider p;
  p.id = std::move(id);
  p.capabilities = std::move(capabilities);
  p.contract = std::move(contract_fn);
  p.value_alignment_bytes = alignment;
  return p;
}

inline OpProviderList list(std::vector<OpProvider> providers) {
  return std::make_shared<const std::vector<OpProvider>>(std::move(providers));
}

inline ProviderCatalog catalog_of(std::vector<ProviderCatalog::Engine> engines) {
  auto made = ProviderCatalog::make(std::move(engines));
  INFO((made.ok() ? std::string{} : made.error().to_string()));
  REQUIRE(made.ok());
  return *made;
}

/// One engine "e0" (storage class "mem") whose one provider "mirror" serves every op.
inline ProviderCatalog mirror_catalog(uint64_t alignment = 64) {
  return catalog_of({{"e0", "mem", list({provider("mirror", mirror, alignment)})}});
}

/// Two engines "e0" and "e1" ("mem"), each with the provider "mirror".
inline ProviderCatalog two_engine_catalog(uint64_t alignment = 64) {
  return catalog_of({{"e0", "mem", list({provider("mirror", mirror, alignment)})},
                     {"e1", "mem", list({provider("mirror", mirror, alignment)})}});
}

inline std::shared_ptr<const ModelPlan> compiled(const std::shared_ptr<const SemanticProgram>& program,
                                                 const ProviderCatalog& catalog,
                                                 const ModelCompileOptions& options = {}) {
  auto plan = compile_model_plan(program, catalog, options);
  INFO((plan.ok() ? std::string{} : plan.error().to_string()));
  REQUIRE(plan.ok());
  return *plan;
}

/// The InvalidPlan message of compiling `program`.
inline std::string compile_error(const std::shared_ptr<const SemanticProgram>& program, const ProviderCatalog& catalog,
                                 const ModelCompileOptions& options = {}) {
  auto plan = compile_model_plan(program, catalog, options);
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.error().code() == ErrorCode::InvalidPlan);
  return plan.error().message();
}

inline ValueId value_named(const SemanticProgram& program, std::string_view name) {
  for (ValueId v = 0; v < program.values().size(); ++v)
    if (program.value(v).name == name) return v;
  FAIL("no value named " << name);
  return 0;
}

inline const WeightComponent& component(const ModelPlan& plan, std::string_view id) {
  for (const WeightComponent& c : plan.weight_components)
    if (c.id == id) return c;
  FAIL("no weight component " << id);
  return plan.weight_components.front();
}

}  // namespace tenact::model_test
