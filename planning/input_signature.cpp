#include "planning/input_signature.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>

#include "core/checked.hpp"
#include "core/shape.hpp"

namespace tenact {

std::string_view to_string(LayoutClass layout) noexcept {
  switch (layout) {
    case LayoutClass::RowMajor: return "row_major";
    case LayoutClass::DensePermuted: return "dense_permuted";
    case LayoutClass::Strided: return "strided";
  }
  return "unknown_layout";
}

LayoutClass layout_class_of(std::span<const int64_t> shape, std::span<const int64_t> strides) {
  if (shape.size() != strides.size()) return LayoutClass::Strided;
  for (int64_t d : shape)
    if (d < 0) return LayoutClass::Strided;
  for (int64_t d : shape)
    if (d == 0) return LayoutClass::RowMajor;
  // Axes of extent 1 are never stepped over: their stride is irrelevant.
  struct Axis {
    int64_t extent, stride;
  };
  std::vector<Axis> stepped;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1) stepped.push_back({shape[i], strides[i]});
  // Each stride must be the product of the extents inside it; a product
  // that overflows int64 can equal no stride, so it ends the match.
  auto packed = [](const std::vector<Axis>& axes_inner_first) {
    int64_t expected = 1;
    for (size_t i = 0; i < axes_inner_first.size(); ++i) {
      if (axes_inner_first[i].stride != expected) return false;
      if (i + 1 == axes_inner_first.size()) break;
      auto next = checked_mul(expected, axes_inner_first[i].extent);
      if (!next) return false;
      expected = *next;
    }
    return true;
  };
  std::vector<Axis> inner_first(stepped.rbegin(), stepped.rend());
  if (packed(inner_first)) return LayoutClass::RowMajor;
  for (const Axis& a : stepped)
    if (a.stride <= 0) return LayoutClass::Strided;
  std::sort(stepped.begin(), stepped.end(),
            [](const Axis& a, const Axis& b) { return a.stride < b.stride; });
  if (!packed(stepped)) return LayoutClass::Strided;
  return LayoutClass::DensePermuted;
}

std::optional<uint8_t> alignment_log2_of(const void* address) {
  const auto bits = reinterpret_cast<std::uintptr_t>(address);
  if (bits == 0) return std::nullopt;
  return static_cast<uint8_t>(std::min(std::countr_zero(bits), 63));
}

InputDescriptor describe_input(const HostTensor& tensor, Endpoint placement) {
  return InputDescriptor{tensor.dtype(), tensor.shape(), std::move(placement), tensor.strides(),
                         alignment_log2_of(tensor.data())};
}

std::vector<InputDescriptor> describe_inputs(std::span<const HostTensor> tensors,
                                             const Endpoint& placement) {
  std::vector<InputDescriptor> out;
  out.reserve(tensors.size());
  for (const HostTensor& t : tensors) out.push_back(describe_input(t, placement));
  return out;
}

std::vector<InputSignature> signature_of(std::span<const InputDescriptor> inputs) {
  std::vector<InputSignature> out;
  out.reserve(inputs.size());
  for (const InputDescriptor& d : inputs) out.push_back(InputSignature{d.dtype, d.shape});
  return out;
}

std::string to_string(const InputDescriptor& input) {
  std::string out{to_string(input.dtype)};
  out += to_string(input.shape);
  out += " at " + input.placement.to_string();
  out += ", strides " + to_string(input.strides);
  out += " (";
  out += to_string(input.layout_class());
  out += ")";
  if (input.alignment_log2) out += ", align 2^" + std::to_string(*input.alignment_log2);
  return out;
}

}  // namespace tenact
