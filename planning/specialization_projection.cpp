#include "planning/specialization_projection.hpp"

#include <algorithm>
#include <functional>

#include "core/shape.hpp"

namespace tenact {

namespace {

std::string input_label(const SemanticProgram& program, size_t i) {
  if (i < program.inputs().size()) return "input '" + program.value(program.inputs()[i]).name + "'";
  return "input #" + std::to_string(i);
}

std::string axes_text(const std::vector<size_t>& axes) {
  std::string out = "[";
  for (size_t i = 0; i < axes.size(); ++i) out += (i ? ", " : "") + std::to_string(axes[i]);
  return out + "]";
}

}  // namespace

std::string_view to_string(PlacementSpecialization placement) noexcept {
  switch (placement) {
    case PlacementSpecialization::None: return "none";
    case PlacementSpecialization::StorageClass: return "storage_class";
    case PlacementSpecialization::Device: return "device";
  }
  return "unknown";
}

std::string_view to_string(LayoutSpecialization layout) noexcept {
  switch (layout) {
    case LayoutSpecialization::None: return "none";
    case LayoutSpecialization::Class: return "class";
    case LayoutSpecialization::ExactStrides: return "exact_strides";
  }
  return "unknown";
}

std::string describe_requirement(const InputRequirement& r) {
  std::vector<std::string> parts;
  if (r.dtype) parts.push_back("dtype");
  if (r.rank) parts.push_back("rank");
  if (!r.concrete_dims.empty()) parts.push_back("concrete axes " + axes_text(r.concrete_dims));
  if (r.placement != PlacementSpecialization::None)
    parts.push_back("placement " + std::string{to_string(r.placement)});
  if (r.layout != LayoutSpecialization::None)
    parts.push_back("layout " + std::string{to_string(r.layout)});
  if (r.alignment_log2) parts.push_back("alignment >= 2^" + std::to_string(*r.alignment_log2));
  if (parts.empty()) return "none";
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out;
}

SpecializationRequirements polymorphic_requirements(size_t inputs) {
  return SpecializationRequirements{std::vector<InputRequirement>(inputs)};
}

Result<SpecializationRequirements> canonical_requirements(
    const SpecializationRequirements& requirements, size_t inputs) {
  if (requirements.inputs.empty()) return polymorphic_requirements(inputs);
  if (requirements.inputs.size() != inputs)
    return Error{ErrorCode::ProviderContract,
                 "specialization requirements list " + std::to_string(requirements.inputs.size()) +
                     " inputs, but the program has " + std::to_string(inputs)};
  auto sorted = [](const InputRequirement& r) {
    return std::adjacent_find(r.concrete_dims.begin(), r.concrete_dims.end(),
                              std::greater_equal<>{}) == r.concrete_dims.end();
  };
  // Already canonical (every request after the first): the same list, shared.
  if (std::all_of(requirements.inputs.begin(), requirements.inputs.end(), sorted)) return requirements;
  std::vector<InputRequirement> out = requirements.inputs.items();
  for (InputRequirement& r : out) {
    std::sort(r.concrete_dims.begin(), r.concrete_dims.end());
    r.concrete_dims.erase(std::unique(r.concrete_dims.begin(), r.concrete_dims.end()),
                          r.concrete_dims.end());
  }
  return SpecializationRequirements{std::move(out)};
}

std::string describe_requirements(const SemanticProgram& program,
                                  const SpecializationRequirements& requirements) {
  if (requirements.inputs.empty()) return "none";
  std::string out;
  for (size_t i = 0; i < requirements.inputs.size(); ++i)
    out += (i ? "; " : "") + input_label(program, i) + ": " +
           describe_requirement(requirements.inputs[i]);
  return out;
}

uint64_t hash_of(const SpecializationProjection& projection) {
  KeyEncoder enc;
  encode(enc, projection);
  return enc.digest64();
}

std::string to_string(const SpecializationProjection& projection) {
  const auto& inputs = projection.inputs;
  std::string out = "[";
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputProjection& p = inputs[i];
    std::vector<std::string> parts;
    if (p.dtype) parts.emplace_back(tenact::to_string(*p.dtype));
    if (p.rank) parts.push_back("rank " + std::to_string(*p.rank));
    if (!p.concrete_dims.empty()) {
      std::string dims = "dims {";
      for (size_t k = 0; k < p.concrete_dims.size(); ++k)
        dims += (k ? ", " : "") + std::to_string(p.concrete_dims[k].axis) + ": " +
                std::to_string(p.concrete_dims[k].extent);
      parts.push_back(dims + "}");
    }
    if (p.storage_class)
      parts.push_back("at " + (p.engine ? *p.engine + "/" : std::string{}) + *p.storage_class);
    if (p.strides) parts.push_back("strides " + tenact::to_string(*p.strides));
    else if (p.layout_class) parts.emplace_back(tenact::to_string(*p.layout_class));
    if (p.alignment_log2) parts.push_back("align 2^" + std::to_string(*p.alignment_log2));
    out += i ? "; " : "";
    if (parts.empty()) out += "-";
    for (size_t k = 0; k < parts.size(); ++k) out += (k ? ", " : "") + parts[k];
  }
  return out + "]";
}

Result<SpecializationProjection> project(const SemanticProgram& program,
                                         const SpecializationRequirements& requirements,
                                         std::span<const InputDescriptor> inputs) {
  const size_t n = program.inputs().size();
  if (inputs.size() != n)
    return Error{ErrorCode::InputMismatch, "program expects " + std::to_string(n) +
                                               " inputs, got " + std::to_string(inputs.size())};
  TENACT_ASSIGN_OR_RETURN(auto canonical, canonical_requirements(requirements, n));
  std::vector<InputProjection> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const InputRequirement& r = canonical.inputs[i];
    const InputDescriptor& d = inputs[i];
    InputProjection p;
    if (r.dtype) p.dtype = d.dtype;
    if (r.rank) p.rank = static_cast<uint32_t>(d.shape.size());
    for (size_t axis : r.concrete_dims) {
      if (axis >= d.shape.size())
        return Error{ErrorCode::ProviderContract,
                     "specialization requires the concrete extent of " + input_label(program, i) +
                         " axis " + std::to_string(axis) + ", but the input has rank " +
                         std::to_string(d.shape.size())};
      p.concrete_dims.push_back(ConcreteDim{static_cast<uint32_t>(axis), d.shape[axis]});
    }
    if (r.placement != PlacementSpecialization::None) p.storage_class = d.placement.storage_class;
    if (r.placement == PlacementSpecialization::Device) p.engine = d.placement.engine;
    if (r.layout != LayoutSpecialization::None) p.layout_class = d.layout_class();
    if (r.layout == LayoutSpecialization::ExactStrides) p.strides = d.strides;
    if (r.alignment_log2 && d.alignment_log2)
      p.alignment_log2 = std::min(*r.alignment_log2, *d.alignment_log2);
    out.push_back(std::move(p));
  }
  return SpecializationProjection{std::move(out)};
}

void encode(KeyEncoder& out, const SpecializationRequirements& requirements) {
  out.u64(requirements.inputs.size());
  for (const InputRequirement& r : requirements.inputs) {
    out.boolean(r.dtype);
    out.boolean(r.rank);
    out.u64(r.concrete_dims.size());
    for (size_t axis : r.concrete_dims) out.u64(axis);
    out.u8(static_cast<uint8_t>(r.placement));
    out.u8(static_cast<uint8_t>(r.layout));
    out.optional(r.alignment_log2, [&](uint8_t a) { out.u8(a); });
  }
}

void encode(KeyEncoder& out, const SpecializationProjection& projection) {
  out.u64(projection.inputs.size());
  for (const InputProjection& p : projection.inputs) {
    out.optional(p.dtype, [&](DType t) { out.u8(static_cast<uint8_t>(t)); });
    out.optional(p.rank, [&](uint32_t r) { out.u64(r); });
    out.u64(p.concrete_dims.size());
    for (const ConcreteDim& c : p.concrete_dims) {
      out.u64(c.axis);
      out.i64(c.extent);
    }
    out.optional(p.storage_class, [&](const std::string& s) { out.str(s); });
    out.optional(p.engine, [&](const std::string& s) { out.str(s); });
    out.optional(p.layout_class, [&](LayoutClass c) { out.u8(static_cast<uint8_t>(c)); });
    out.optional(p.strides, [&](const std::vector<int64_t>& s) {
      out.u64(s.size());
      for (int64_t v : s) out.i64(v);
    });
    out.optional(p.alignment_log2, [&](uint8_t a) { out.u8(a); });
  }
}

}  // namespace tenact
