#include "engines/cpu/cpu_providers.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "engines/cpu/kernels/dot_packed_panels.hpp"
#include "engines/cpu/kernels/elementwise_kernels.hpp"
#include "engines/host_extension.hpp"

namespace tenact::cpu {

namespace {

using Dims = std::vector<DimensionConstraint>;
using DTypes = std::vector<DType>;

DTypes dtypes_where(bool (*admits)(DType)) {
  DTypes out;
  for (DType t : kAllDTypes)
    if (admits(t)) out.push_back(t);
  return out;
}
const DTypes& every_dtype() {
  static const DTypes all = dtypes_where([](DType) { return true; });
  return all;
}
const DTypes& numeric_dtypes() {
  static const DTypes numeric = dtypes_where([](DType t) { return is_numeric(t); });
  return numeric;
}
const DTypes& integer_dtypes() {
  static const DTypes integers = dtypes_where([](DType t) { return is_integer(t); });
  return integers;
}

/// An extent's value at `symbols`: an upper bound's bound; nullopt for an
/// unknown extent or one that does not evaluate to a size.
std::optional<uint64_t> extent_value(const ShapeExtent& extent, const SymbolBindings& symbols) {
  if (extent.kind == ExtentKind::Unknown) return std::nullopt;
  auto v = extent.expr.evaluate(symbols);
  if (!v.ok() || *v < 0) return std::nullopt;
  return static_cast<uint64_t>(*v);
}

std::optional<Dims> exact_dims(const ValueType& type, const SymbolBindings& symbols) {
  Dims dims;
  for (const ShapeExtent& e : type.shape) {
    std::optional<uint64_t> v = extent_value(e, symbols);
    if (!v) return std::nullopt;
    dims.push_back(DimensionConstraint::exact(*v));
  }
  return dims;
}

Dims named_dims(size_t rank) {
  Dims dims;
  for (size_t a = 0; a < rank; ++a) dims.push_back(DimensionConstraint::named("d" + std::to_string(a)));
  return dims;
}

std::vector<LayoutConstraint> contiguous_only() { return {LayoutConstraint::contiguous()}; }

/// Contiguous, or strided with a byte-stride symbol per axis unique to
/// operand `operand`.
std::vector<LayoutConstraint> any_strides(size_t operand, size_t rank) {
  std::vector<StrideConstraint> strides;
  for (size_t a = 0; a < rank; ++a)
    strides.push_back(StrideConstraint::named("s" + std::to_string(operand) + "." + std::to_string(a)));
  return {LayoutConstraint::contiguous(), LayoutConstraint::strided(std::move(strides))};
}

/// Builds one op instance's contract, operand by operand; a part that
/// TensorContract::make rejects (a bug in this file) leaves no contract.
class ContractBuilder {
 public:
  explicit ContractBuilder(const ContractQuery& query) : query_(query) {}

  /// Operand `operands().size()` (the next one).
  ContractBuilder& operand(Dims dims, DTypes types, std::optional<std::vector<LayoutConstraint>> layouts = {},
                           TensorAccess access = TensorAccess::Read) {
    const size_t index = contract_.operands.size();
    const size_t rank = dims.size();
    add(contract_.operands, TensorContract::make(std::move(dims), std::move(types),
                                                 layouts ? std::move(*layouts) : any_strides(index, rank), access,
                                                 AliasPolicy::none()));
    return *this;
  }
  /// The next result: the query's dtype, contiguous, written.
  ContractBuilder& result(Dims dims, AliasPolicy alias = AliasPolicy::none()) {
    const size_t index = contract_.results.size();
    if (index >= query_.results.size()) {
      valid_ = false;
      return *this;
    }
    add(contract_.results, TensorContract::make(std::move(dims), {query_.results[index].dtype}, contiguous_only(),
                                                TensorAccess::Write, alias));
    return *this;
  }
  std::optional<OpContract> done() && {
    if (!valid_ || contract_.operands.size() != query_.operands.size() ||
        contract_.results.size() != query_.results.size())
      return std::nullopt;
    return std::move(contract_);
  }

 private:
  void add(std::vector<TensorContract>& to, Result<TensorContract> made) {
    if (made.ok()) to.push_back(std::move(*made));
    else valid_ = false;
  }

  const ContractQuery& query_;
  OpContract contract_;
  bool valid_ = true;
};

const SymbolBindings& symbols_of(const ContractQuery& q) {
  static const SymbolBindings none;
  return q.symbols ? *q.symbols : none;
}

// -- the contract of each provider ------------------------------------------------

/// The dtypes find_elementwise_kernel admits at operand `index`, the
/// operands that must share its dtype (all but select's predicate) taking
/// each dtype in turn.
DTypes elementwise_operand_dtypes(const ContractQuery& q, size_t index) {
  DTypes admitted;
  DTypes trial;
  for (const ValueType& t : q.operands) trial.push_back(t.dtype);
  const bool select = q.kind == OpKind::Select;
  for (DType t : kAllDTypes) {
    DTypes tried = trial;
    for (size_t j = 0; j < tried.size(); ++j)
      if (!select || (j == 0) == (index == 0)) tried[j] = t;
    if (find_elementwise_kernel(q.kind, *q.attrs, tried).ok()) admitted.push_back(t);
  }
  return admitted;
}

std::optional<OpContract> elementwise_contract(const ContractQuery& q) {
  if (family_of(q.kind) != OpFamily::Elementwise || q.results.size() != 1) return std::nullopt;
  const size_t rank = q.results[0].rank();
  ContractBuilder b{q};
  for (size_t i = 0; i < q.operands.size(); ++i) {
    DTypes types = elementwise_operand_dtypes(q, i);
    if (types.empty()) return std::nullopt;
    const size_t r = q.operands[i].rank();
    if (r != rank && r != 0) return std::nullopt;
    b.operand(named_dims(r), std::move(types));
  }
  return std::move(b.result(named_dims(rank))).done();
}

std::optional<OpContract> reduction_contract(const ContractQuery& q) {
  const auto* attrs = std::get_if<ReduceAttrs>(q.attrs);
  if (family_of(q.kind) != OpFamily::Reduction || attrs == nullptr || q.operands.size() != 1) return std::nullopt;
  const Dims dims = named_dims(q.operands[0].rank());
  Dims kept;
  for (size_t a = 0; a < dims.size(); ++a)
    if (std::find(attrs->dimensions.begin(), attrs->dimensions.end(), static_cast<int64_t>(a)) ==
        attrs->dimensions.end())
      kept.push_back(dims[a]);
  ContractBuilder b{q};
  b.operand(dims, q.kind == OpKind::ReduceSumSquares ? numeric_dtypes() : every_dtype());
  return std::move(b.result(std::move(kept))).done();
}

/// Names the axes of one dot_general operand: batching b<i>, contracting
/// k<i>, the others `free`<j> in order; nullopt for an axis list out of
/// range or repeated.
std::optional<Dims> dot_operand_dims(size_t rank, const std::vector<int64_t>& batching,
                                     const std::vector<int64_t>& contracting, const char* free) {
  std::vector<std::string> names(rank);
  auto name = [&](const std::vector<int64_t>& axes, const char* prefix) {
    for (size_t i = 0; i < axes.size(); ++i) {
      if (axes[i] < 0 || static_cast<size_t>(axes[i]) >= rank || !names[static_cast<size_t>(axes[i])].empty())
        return false;
      names[static_cast<size_t>(axes[i])] = prefix + std::to_string(i);
    }
    return true;
  };
  if (!name(batching, "b") || !name(contracting, "k")) return std::nullopt;
  Dims dims;
  size_t j = 0;
  for (std::string& n : names) dims.push_back(DimensionConstraint::named(n.empty() ? free + std::to_string(j++) : n));
  return dims;
}

std::optional<OpContract> blas_dot_contract(const ContractQuery& q) {
  const auto* attrs = std::get_if<DotGeneralAttrs>(q.attrs);
  if (q.kind != OpKind::DotGeneral || attrs == nullptr || q.operands.size() != 2) return std::nullopt;
  if (attrs->lhs_batching_dimensions.size() != attrs->rhs_batching_dimensions.size() ||
      attrs->lhs_contracting_dimensions.size() != attrs->rhs_contracting_dimensions.size())
    return std::nullopt;
  auto lhs = dot_operand_dims(q.operands[0].rank(), attrs->lhs_batching_dimensions,
                              attrs->lhs_contracting_dimensions, "m");
  auto rhs = dot_operand_dims(q.operands[1].rank(), attrs->rhs_batching_dimensions,
                              attrs->rhs_contracting_dimensions, "n");
  if (!lhs || !rhs) return std::nullopt;
  Dims result;
  for (size_t i = 0; i < attrs->lhs_batching_dimensions.size(); ++i)
    result.push_back(DimensionConstraint::named("b" + std::to_string(i)));
  for (const Dims* side : {&*lhs, &*rhs})
    for (const DimensionConstraint& d : *side)
      if (d.symbol[0] == 'm' || d.symbol[0] == 'n') result.push_back(d);
  ContractBuilder b{q};
  b.operand(std::move(*lhs), numeric_dtypes()).operand(std::move(*rhs), numeric_dtypes());
  return std::move(b.result(std::move(result))).done();
}

std::optional<OpContract> packed_panels_contract(const ContractQuery& q) {
  const auto* attrs = std::get_if<DotGeneralAttrs>(q.attrs);
  if (q.kind != OpKind::DotGeneral || attrs == nullptr || q.operands.size() != 2 || q.results.size() != 1)
    return std::nullopt;
  if (attrs->lhs_contracting_dimensions != std::vector<int64_t>{1} ||
      attrs->rhs_contracting_dimensions != std::vector<int64_t>{0} || !attrs->lhs_batching_dimensions.empty() ||
      !attrs->rhs_batching_dimensions.empty() || attrs->conj_lhs || attrs->conj_rhs)
    return std::nullopt;
  const ValueType& lhs = q.operands[0];
  const ValueType& rhs = q.operands[1];
  if (lhs.rank() != 2 || rhs.rank() != 2 || lhs.dtype != DType::F32 || rhs.dtype != DType::F32 ||
      q.results[0].dtype != DType::F32)
    return std::nullopt;
  const std::optional<uint64_t> m = extent_value(lhs.shape[0], symbols_of(q));
  if (!m || *m < 1 || *m > static_cast<uint64_t>(kPackedPanelsMaxRows)) return std::nullopt;
  auto named = [](const char* x, const char* y) {
    return Dims{DimensionConstraint::named(x), DimensionConstraint::named(y)};
  };
  ContractBuilder b{q};
  b.operand(named("m", "k"), {DType::F32});
  b.operand(named("k", "n"), {DType::F32}, std::vector{LayoutConstraint::blocked_as(packed_panels_layout())});
  return std::move(b.result(named("m", "n"))).done();
}

std::optional<OpContract> update_slice_in_place_contract(const ContractQuery& q) {
  if (q.kind != OpKind::DynamicUpdateSlice || q.operands.size() < 2) return std::nullopt;
  const ValueType& operand = q.operands[0];
  if (q.operands[1].rank() != operand.rank() || q.operands.size() != 2 + operand.rank()) return std::nullopt;
  Dims window;
  for (const ShapeExtent& e : operand.shape) {
    std::optional<uint64_t> extent = extent_value(e, symbols_of(q));
    if (!extent) return std::nullopt;
    window.push_back(DimensionConstraint::range(0, *extent));
  }
  ContractBuilder b{q};
  b.operand(named_dims(operand.rank()), every_dtype(), contiguous_only(), TensorAccess::ReadWrite);
  b.operand(std::move(window), every_dtype());
  for (size_t i = 2; i < q.operands.size(); ++i) b.operand({}, integer_dtypes());
  return std::move(b.result(named_dims(operand.rank()), AliasPolicy::must(0))).done();
}

std::optional<OpContract> scatter_in_place_contract(const ContractQuery& q) {
  if (q.kind != OpKind::Scatter || q.operands.size() != 3) return std::nullopt;
  auto indices = exact_dims(q.operands[1], symbols_of(q));
  auto updates = exact_dims(q.operands[2], symbols_of(q));
  if (!indices || !updates) return std::nullopt;
  ContractBuilder b{q};
  b.operand(named_dims(q.operands[0].rank()), every_dtype(), contiguous_only(), TensorAccess::ReadWrite);
  b.operand(std::move(*indices), integer_dtypes()).operand(std::move(*updates), every_dtype());
  return std::move(b.result(named_dims(q.operands[0].rank()), AliasPolicy::must(0))).done();
}

/// Whether operand `index` of an indexing op is an index (integer) operand.
bool integer_operand(OpKind kind, size_t index) {
  switch (kind) {
    case OpKind::DynamicSlice: return index >= 1;
    case OpKind::DynamicUpdateSlice: return index >= 2;
    case OpKind::Gather:
    case OpKind::Scatter:
    case OpKind::DynamicTruncate: return index == 1;
    default: return false;
  }
}

/// Operands and results with exact extents; each operand's dtypes from
/// `dtypes_at`, its layouts from `layouts_at` (strided or not).
template <class DTypesAt>
std::optional<OpContract> exact_contract(const ContractQuery& q, DTypesAt&& dtypes_at, bool strided) {
  ContractBuilder b{q};
  for (size_t i = 0; i < q.operands.size(); ++i) {
    auto dims = exact_dims(q.operands[i], symbols_of(q));
    if (!dims) return std::nullopt;
    const size_t rank = dims->size();
    b.operand(std::move(*dims), dtypes_at(i), strided ? any_strides(i, rank) : contiguous_only());
  }
  for (const ValueType& r : q.results) {
    auto dims = exact_dims(r, symbols_of(q));
    if (!dims) return std::nullopt;
    b.result(std::move(*dims));
  }
  return std::move(b).done();
}

std::optional<OpContract> family_contract(const ContractQuery& q, OpFamily family) {
  if (family_of(q.kind) != family) return std::nullopt;
  return exact_contract(
      q, [&](size_t i) { return integer_operand(q.kind, i) ? integer_dtypes() : every_dtype(); }, true);
}

std::optional<OpContract> extension_contract(const ContractQuery& q) {
  if (q.kind != OpKind::Extension || !std::holds_alternative<ExtensionAttrs>(*q.attrs)) return std::nullopt;
  return exact_contract(q, [&](size_t i) { return DTypes{q.operands[i].dtype}; }, false);
}

OpProvider provider(std::string_view id, std::vector<std::string> capabilities,
                    std::function<std::optional<OpContract>(const ContractQuery&)> contract, uint64_t alignment,
                    const std::vector<OpKind>& lacks) {
  OpProvider p;
  p.id = std::string{id};
  p.capabilities = std::move(capabilities);
  p.contract = [contract = std::move(contract), lacks](const ContractQuery& q) -> std::optional<OpContract> {
    if (q.attrs == nullptr || std::find(lacks.begin(), lacks.end(), q.kind) != lacks.end()) return std::nullopt;
    return contract(q);
  };
  p.value_alignment_bytes = alignment;
  return p;
}

// -- provider choices ---------------------------------------------------------------

const OpProvider* find_provider(const EngineCapabilities& capabilities, std::string_view id) {
  if (!capabilities.providers) return nullptr;
  for (const OpProvider& p : *capabilities.providers)
    if (p.id == id) return &p;
  return nullptr;
}

/// Whether `contract` lists `layout` among its layouts.
bool lists(const TensorContract& contract, const ResolvedTensorLayout& layout) {
  for (const LayoutConstraint& l : contract.layouts) {
    switch (layout.kind) {
      case ResolvedTensorLayout::Kind::Contiguous:
        if (l.kind == LayoutConstraint::Kind::Contiguous) return true;
        break;
      case ResolvedTensorLayout::Kind::Strided: {
        if (l.kind != LayoutConstraint::Kind::Strided || l.strides.size() != layout.byte_strides.size()) break;
        bool fits = true;
        for (size_t a = 0; a < l.strides.size(); ++a)
          fits = fits && (l.strides[a].kind != StrideConstraint::Kind::ExactBytes ||
                          l.strides[a].bytes == layout.byte_strides[a]);
        if (fits) return true;
        break;
      }
      case ResolvedTensorLayout::Kind::Blocked:
        if (l.kind == LayoutConstraint::Kind::Blocked && l.blocked == layout.blocked) return true;
        break;
    }
  }
  return false;
}

std::string op_text(const OpPrepareRequest& request) {
  std::string s = "op #" + std::to_string(request.op_index) + " (" + std::string{to_string(request.kind)} + " of ";
  for (size_t i = 0; i < request.operands.size(); ++i) s += (i ? ", " : "") + request.operands[i].to_string();
  return s + ")";
}

/// The symbols a prepare request's contract query is evaluated at: the
/// request's fixed symbols, and 1 for every other symbol its types name.
/// What the specialization leaves open is not the engine's to check (the
/// plan compiler unified the contract at the model's own values); the
/// kind, attributes, dtypes and layouts are, and no contract here makes
/// those depend on an extent.
SymbolBindings symbols_for_check(const OpPrepareRequest& request) {
  SymbolBindings symbols = request.fixed_symbols;
  for (const std::vector<ValueType>* types : {&request.operands, &request.results})
    for (const ValueType& t : *types)
      for (const ShapeExtent& e : t.shape)
        if (e.kind != ExtentKind::Unknown)
          for (std::string& name : e.expr.symbols()) symbols.emplace(std::move(name), 1);
  return symbols;
}

/// Why `request.provider` cannot be honoured, or nullopt when it can.
std::optional<std::string> refusal(const EngineIdentity& engine, const EngineCapabilities& capabilities,
                                   const OpPrepareRequest& request) {
  const ProviderChoice& choice = *request.provider;
  const std::string who = "engine '" + engine.id + "'";
  const OpProvider* p = find_provider(capabilities, choice.id);
  if (p == nullptr) return who + " has no provider '" + choice.id + "'";
  const SymbolBindings symbols = symbols_for_check(request);
  const ContractQuery query{request.kind, &request.attrs, request.operands, request.results, &symbols};
  std::optional<OpContract> contract = p->contract ? p->contract(query) : std::nullopt;
  if (!contract) return who + "'s provider '" + choice.id + "' does not serve " + op_text(request);
  if (!choice.operand_layouts.empty() && choice.operand_layouts.size() != request.operands.size())
    return who + ": the choice of provider '" + choice.id + "' names " +
           std::to_string(choice.operand_layouts.size()) + " operand layouts for " +
           std::to_string(request.operands.size()) + " operands";
  for (size_t i = 0; i < contract->operands.size(); ++i) {
    const ResolvedTensorLayout layout =
        i < choice.operand_layouts.size() ? choice.operand_layouts[i] : ResolvedTensorLayout::contiguous();
    if (!lists(contract->operands[i], layout))
      return who + "'s provider '" + choice.id + "' does not take operand " + std::to_string(i) + " of " +
             op_text(request) + " as " + layout.to_string();
  }
  return std::nullopt;
}

}  // namespace

OpProviderList cpu_op_providers(uint64_t value_alignment_bytes, std::vector<OpKind> lacks) {
  auto family = [](OpFamily f) {
    return [f](const ContractQuery& q) { return family_contract(q, f); };
  };
  const uint64_t a = value_alignment_bytes;
  auto list = std::make_shared<std::vector<OpProvider>>();
  list->push_back(provider(kElementwiseProvider, {"elementwise", "strided_operands"}, elementwise_contract, a, lacks));
  list->push_back(provider(kReductionProvider, {"reduction", "strided_operands"}, reduction_contract, a, lacks));
  list->push_back(
      provider(kPackedPanelsProvider, {"blocked_weights", "dot_general"}, packed_panels_contract, a, lacks));
  list->push_back(provider(kBlasDotProvider, {"dot_general", "strided_operands"}, blas_dot_contract, a, lacks));
  list->push_back(
      provider(kUpdateSliceInPlaceProvider, {"in_place", "indexing"}, update_slice_in_place_contract, a, lacks));
  list->push_back(provider(kScatterInPlaceProvider, {"in_place", "indexing"}, scatter_in_place_contract, a, lacks));
  list->push_back(
      provider(kIndexingProvider, {"indexing", "strided_operands"}, family(OpFamily::Indexing), a, lacks));
  list->push_back(provider(kLayoutProvider, {"layout", "strided_operands"}, family(OpFamily::Layout), a, lacks));
  list->push_back(provider(kExtensionProvider, {"extension"}, extension_contract, a, lacks));
  return list;
}

PrepareAnswer answer_with_cpu_kernels(const EngineIdentity& engine, const EngineCapabilities& capabilities,
                                      const OpPrepareRequest& request) {
  if (request.provider)
    if (std::optional<std::string> why = refusal(engine, capabilities, request)) return Unsupported{std::move(*why)};
  if (request.kind == OpKind::Extension) return answer_host_extension(engine, capabilities, request);
  return answer_core_op(engine, capabilities, request);
}

KernelVariant kernel_variant_of(const PreparedOp& op) {
  if (!op.provider) return KernelVariant::Standard;
  const std::string_view id = op.provider->id;
  if (id == kPackedPanelsProvider) return KernelVariant::PackedPanels;
  if (id.ends_with(".in_place")) return KernelVariant::InPlace;
  return KernelVariant::Standard;
}

KernelCall kernel_call_for(const PreparedOp& op, std::span<const HostTensor> inputs, const SymbolBindings& symbols,
                           WorkerPool* pool, std::span<const HostTensor> destinations) {
  const HostExtensionPlan* extension = host_extension_plan(op);
  KernelCall call{op.kind, op.attrs, inputs, op.results, symbols, pool, extension ? &extension->kernel : nullptr};
  call.destinations = destinations;
  call.variant = kernel_variant_of(op);
  if (op.provider) call.operand_layouts = op.provider->operand_layouts;
  return call;
}

}  // namespace tenact::cpu
