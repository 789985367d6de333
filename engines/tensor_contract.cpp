#include "engines/tensor_contract.hpp"

#include <algorithm>

namespace tenact {

namespace {

template <class T, class F>
std::string list_text(const std::vector<T>& v, F&& text) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + text(v[i]);
  return s + "]";
}

Error invalid(std::string message) { return Error{ErrorCode::InvalidPlan, std::move(message)}; }

}  // namespace

std::string DimensionConstraint::to_string() const {
  switch (kind) {
    case Kind::Exact: return "Exact(" + std::to_string(value) + ")";
    case Kind::Range:
      return "Range{minimum: " + std::to_string(minimum) + ", maximum: " + std::to_string(maximum) + "}";
    case Kind::Symbol: return "Symbol(" + symbol + ")";
  }
  return "?";
}

std::string StrideConstraint::to_string() const {
  return kind == Kind::ExactBytes ? "ExactBytes(" + std::to_string(bytes) + ")" : "Symbol(" + symbol + ")";
}

std::string LayoutConstraint::to_string() const {
  switch (kind) {
    case Kind::Contiguous: return "Contiguous";
    case Kind::Strided: return "Strided" + list_text(strides, [](const StrideConstraint& c) { return c.to_string(); });
    case Kind::Blocked: return "Blocked{" + blocked.to_string() + "}";
  }
  return "?";
}

std::string AliasPolicy::to_string() const {
  switch (kind) {
    case Kind::NoAlias: return "NoAlias";
    case Kind::MayAlias: return "MayAlias{input: " + std::to_string(input) + "}";
    case Kind::MustAlias: return "MustAlias{input: " + std::to_string(input) + "}";
  }
  return "?";
}

Result<TensorContract> TensorContract::make(std::vector<DimensionConstraint> dimensions,
                                            std::vector<DType> element_types,
                                            std::vector<LayoutConstraint> layouts, TensorAccess access,
                                            AliasPolicy alias) {
  if (element_types.empty()) return invalid("a tensor contract accepts no element type");
  if (layouts.empty()) return invalid("a tensor contract accepts no layout");
  for (size_t a = 0; a < dimensions.size(); ++a) {
    const DimensionConstraint& d = dimensions[a];
    if (d.kind == DimensionConstraint::Kind::Range && d.minimum > d.maximum)
      return invalid("a tensor contract's dimension[" + std::to_string(a) + "] is the empty " + d.to_string());
    if (d.kind == DimensionConstraint::Kind::Symbol && d.symbol.empty())
      return invalid("a tensor contract's dimension[" + std::to_string(a) + "] is a symbol without a name");
  }
  for (const LayoutConstraint& l : layouts) {
    if (l.kind == LayoutConstraint::Kind::Strided) {
      if (l.strides.size() != dimensions.size())
        return invalid("a tensor contract's layout " + l.to_string() + " has " + std::to_string(l.strides.size()) +
                       " strides for rank " + std::to_string(dimensions.size()));
      for (const StrideConstraint& s : l.strides)
        if (s.kind == StrideConstraint::Kind::Symbol && s.symbol.empty())
          return invalid("a tensor contract's layout " + l.to_string() + " has a stride symbol without a name");
    }
    if (l.kind == LayoutConstraint::Kind::Blocked) TENACT_TRY(check_blocked_layout(l.blocked, dimensions.size()));
  }
  std::sort(element_types.begin(), element_types.end());
  element_types.erase(std::unique(element_types.begin(), element_types.end()), element_types.end());
  TensorContract c;
  c.dimensions = std::move(dimensions);
  c.element_types = std::move(element_types);
  c.layouts = std::move(layouts);
  c.access = access;
  c.alias = alias;
  return c;
}

bool TensorContract::accepts(DType dtype) const {
  return std::binary_search(element_types.begin(), element_types.end(), dtype);
}

bool OpProvider::has_capability(std::string_view capability) const {
  return std::find(capabilities.begin(), capabilities.end(), capability) != capabilities.end();
}

std::string ProviderChoice::to_string() const {
  std::string s = id;
  std::string layouts;
  for (size_t i = 0; i < operand_layouts.size(); ++i)
    if (operand_layouts[i].kind != ResolvedTensorLayout::Kind::Contiguous)
      layouts += (layouts.empty() ? "" : ", ") + std::string{"operand "} + std::to_string(i) + " " +
                 operand_layouts[i].to_string();
  return layouts.empty() ? s : s + " (" + layouts + ")";
}

}  // namespace tenact
