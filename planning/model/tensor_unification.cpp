#include "planning/model/tensor_unification.hpp"

namespace tenact {

namespace {

using SymbolMap = std::map<std::string, uint64_t, std::less<>>;

Error invalid_plan(std::string message) { return Error{ErrorCode::InvalidPlan, std::move(message)}; }

template <class T, class Text>
std::string list_text(const std::vector<T>& items, Text&& text) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + std::string{text(items[i])};
  return s + "]";
}

bool dimension_fits(const DimensionConstraint& constraint, uint64_t extent, SymbolMap& symbols) {
  switch (constraint.kind) {
    case DimensionConstraint::Kind::Exact: return constraint.value == extent;
    case DimensionConstraint::Kind::Range: return constraint.minimum <= extent && extent <= constraint.maximum;
    case DimensionConstraint::Kind::Symbol: return bind_symbol(symbols, constraint.symbol, extent);
  }
  return false;
}

Status unify_dimensions(const std::vector<DimensionConstraint>& constraints, const std::vector<uint64_t>& dims,
                        SymbolMap& symbols, const std::string& context) {
  for (size_t axis = 0; axis < constraints.size(); ++axis)
    if (!dimension_fits(constraints[axis], dims[axis], symbols))
      return invalid_plan(context + " dimension[" + std::to_string(axis) + "]=" + std::to_string(dims[axis]) +
                          " violates `" + constraints[axis].to_string() + "`");
  return ok_status();
}

bool strides_fit(const std::vector<StrideConstraint>& constraints, const std::vector<uint64_t>& strides,
                 SymbolMap& symbols) {
  if (constraints.size() != strides.size()) return false;
  for (size_t a = 0; a < constraints.size(); ++a) {
    const StrideConstraint& c = constraints[a];
    const bool fits = c.kind == StrideConstraint::Kind::ExactBytes ? c.bytes == strides[a]
                                                                   : bind_symbol(symbols, c.symbol, strides[a]);
    if (!fits) return false;
  }
  return true;
}

/// Whether `layout` matches one of `constraints`; the stride symbols of the
/// first match are bound in `symbols`, nothing otherwise.
bool layout_matches(const std::vector<LayoutConstraint>& constraints, const ResolvedTensorLayout& layout,
                    SymbolMap& symbols) {
  for (const LayoutConstraint& c : constraints) {
    SymbolMap candidate = symbols;
    bool matches = false;
    switch (c.kind) {
      case LayoutConstraint::Kind::Contiguous: matches = layout.kind == ResolvedTensorLayout::Kind::Contiguous; break;
      case LayoutConstraint::Kind::Strided:
        matches = layout.kind == ResolvedTensorLayout::Kind::Strided &&
                  strides_fit(c.strides, layout.byte_strides, candidate);
        break;
      case LayoutConstraint::Kind::Blocked:
        matches = layout.kind == ResolvedTensorLayout::Kind::Blocked && c.blocked == layout.blocked;
        break;
    }
    if (matches) {
      symbols = std::move(candidate);
      return true;
    }
  }
  return false;
}

Result<uint64_t> inferred_extent(const DimensionConstraint& d, const TensorSymbols& symbols, std::string_view node) {
  switch (d.kind) {
    case DimensionConstraint::Kind::Exact: return d.value;
    case DimensionConstraint::Kind::Range:
      if (d.minimum == d.maximum) return d.minimum;
      return invalid_plan("node `" + std::string{node} + "` output range is ambiguous; provide an explicit tensor");
    case DimensionConstraint::Kind::Symbol: {
      auto it = symbols.dimensions.find(d.symbol);
      if (it != symbols.dimensions.end()) return it->second;
      return invalid_plan("node `" + std::string{node} + "` output symbol `" + d.symbol +
                          "` is unresolved; provide an explicit tensor");
    }
  }
  return Error{ErrorCode::Internal, "a dimension constraint of an unknown kind"};
}

Result<ResolvedTensorLayout> infer_layout(const std::vector<LayoutConstraint>& layouts,
                                          const std::vector<uint64_t>& dims, const TensorSymbols& symbols,
                                          std::string_view node) {
  if (layouts.size() != 1)
    return invalid_plan("node `" + std::string{node} + "` output layout is ambiguous; provide an explicit tensor");
  const LayoutConstraint& layout = layouts.front();
  switch (layout.kind) {
    case LayoutConstraint::Kind::Contiguous: return ResolvedTensorLayout::contiguous();
    case LayoutConstraint::Kind::Strided: {
      std::vector<uint64_t> strides;
      for (const StrideConstraint& s : layout.strides) {
        if (s.kind == StrideConstraint::Kind::ExactBytes) {
          strides.push_back(s.bytes);
          continue;
        }
        auto it = symbols.strides.find(s.symbol);
        if (it == symbols.strides.end())
          return invalid_plan("node `" + std::string{node} + "` stride symbol `" + s.symbol + "` is unresolved");
        strides.push_back(it->second);
      }
      return ResolvedTensorLayout::strided(std::move(strides));
    }
    case LayoutConstraint::Kind::Blocked: return ResolvedTensorLayout::blocked_for(layout.blocked, dims);
  }
  return Error{ErrorCode::Internal, "a layout constraint of an unknown kind"};
}

}  // namespace

bool bind_symbol(SymbolMap& symbols, std::string_view symbol, uint64_t value) {
  if (value == 0) return false;
  auto it = symbols.find(symbol);
  if (it != symbols.end()) return it->second == value;
  symbols.emplace(std::string{symbol}, value);
  return true;
}

Status unify_tensor(const TensorContract& contract, const ResolvedTensorSpec& tensor, TensorSymbols& symbols,
                    std::string_view node, std::string_view role, size_t ordinal, std::string_view value) {
  const std::string context = "node `" + std::string{node} + "` " + std::string{role} + "[" + std::to_string(ordinal) +
                              "] `" + std::string{value} + "`";
  if (!contract.accepts(tensor.dtype) || contract.dimensions.size() != tensor.dims.size())
    return invalid_plan(context + " rank or dtype differs from its operation contract: actual rank=" +
                        std::to_string(tensor.dims.size()) + " dtype=" + std::string{to_string(tensor.dtype)} +
                        ", expected rank=" + std::to_string(contract.dimensions.size()) +
                        " dtypes=" + list_text(contract.element_types, [](DType t) { return to_string(t); }));
  TENACT_TRY(unify_dimensions(contract.dimensions, tensor.dims, symbols.dimensions, context));
  if (!layout_matches(contract.layouts, tensor.layout, symbols.strides))
    return invalid_plan(context + " layout " + tensor.layout.to_string() + " differs from its operation contract " +
                        list_text(contract.layouts, [](const LayoutConstraint& l) { return l.to_string(); }));
  return ok_status();
}

Result<ResolvedTensorSpec> infer_tensor(const TensorContract& contract, const TensorSymbols& symbols,
                                        std::string_view node) {
  if (contract.element_types.size() != 1)
    return invalid_plan("node `" + std::string{node} + "` output dtype is ambiguous; provide an explicit tensor");
  std::vector<uint64_t> dims;
  for (const DimensionConstraint& d : contract.dimensions) {
    TENACT_ASSIGN_OR_RETURN(uint64_t extent, inferred_extent(d, symbols, node));
    dims.push_back(extent);
  }
  TENACT_ASSIGN_OR_RETURN(ResolvedTensorLayout layout, infer_layout(contract.layouts, dims, symbols, node));
  return ResolvedTensorSpec::make(std::move(dims), contract.element_types.front(), std::move(layout));
}

}  // namespace tenact
