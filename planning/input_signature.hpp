// Input descriptors: everything about one caller input that a prepared plan
// may specialize on: dtype, concrete
// shape, placement, strides (layout) and alignment. planning/signature.hpp's
// InputSignature is the dtype+shape part that binding and guards need.
//
// Pure values and functions; thread-safe. Cost: O(rank) per input.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.hpp"
#include "engines/engine.hpp"
#include "planning/signature.hpp"

namespace tenact {

std::string_view to_string(LayoutClass layout) noexcept;

/// The layout class of `shape` with element `strides` (same length).
LayoutClass layout_class_of(std::span<const int64_t> shape, std::span<const int64_t> strides);

/// Log2 of the largest power of two dividing `address`, at most 63;
/// nullopt for a null pointer (no buffer: nothing is known).
std::optional<uint8_t> alignment_log2_of(const void* address);

/// One caller input as preparation sees it.
struct InputDescriptor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Where the buffer lives.
  Endpoint placement;
  /// Element strides, one per axis.
  std::vector<int64_t> strides;
  /// Alignment of the first element, log2 bytes; nullopt when unknown.
  std::optional<uint8_t> alignment_log2;

  LayoutClass layout_class() const { return layout_class_of(shape, strides); }
  friend bool operator==(const InputDescriptor&, const InputDescriptor&) = default;
};

/// Describes a host tensor that lives at `placement`: its dtype, shape,
/// strides and the alignment of its first element's address.
InputDescriptor describe_input(const HostTensor& tensor, Endpoint placement);

/// describe_input for every tensor, all at `placement`.
std::vector<InputDescriptor> describe_inputs(std::span<const HostTensor> tensors,
                                             const Endpoint& placement);

/// The dtype+shape part, for bind_signature().
std::vector<InputSignature> signature_of(std::span<const InputDescriptor> inputs);

/// "f32[2, 3] at cpu/host, strides [3, 1] (row_major), align 2^6".
std::string to_string(const InputDescriptor& input);

}  // namespace tenact
