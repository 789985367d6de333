// The vocabulary of specialization shared by planning and every engine:
// what a prepared plan may assume about each program input (requirements)
// and what those requirements fix of one concrete signature (projection).
// Plain values; the functions over them live in planning/
// (specialization_projection.hpp, specialization.hpp). The per-input lists
// are SharedLists: one preparation copies its requirements and projection
// into the request and the plan of every op, at O(1) per copy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/shared_list.hpp"

namespace tenact {

/// The coarse layout of a strided tensor, coarsest guarantee last.
enum class LayoutClass : uint8_t {
  /// Dense and row-major (axes of extent 1 ignored; empty and one-element
  /// tensors are row-major).
  RowMajor,
  /// Dense (every element once, no gaps, positive strides) in some other
  /// axis order, e.g. a transposed row-major buffer.
  DensePermuted,
  /// Anything else: gaps, zero (broadcast) or negative strides.
  Strided,
};

enum class PlacementSpecialization : uint8_t { None, StorageClass, Device };
enum class LayoutSpecialization : uint8_t { None, Class, ExactStrides };

/// What a prepared plan may assume about one program input. "None"/false
/// everywhere is the most general plan (shape-polymorphic).
struct InputRequirement {
  bool dtype = false;
  bool rank = false;
  /// Axes whose concrete extent the plan is specialized for.
  std::vector<size_t> concrete_dims;
  PlacementSpecialization placement = PlacementSpecialization::None;
  LayoutSpecialization layout = LayoutSpecialization::None;
  /// Minimum alignment the plan relies on, as log2 bytes.
  std::optional<uint8_t> alignment_log2;
  friend bool operator==(const InputRequirement&, const InputRequirement&) = default;
};

struct SpecializationRequirements {
  SharedList<InputRequirement> inputs;  // one per program input, or empty (none)
  friend bool operator==(const SpecializationRequirements&, const SpecializationRequirements&) = default;
};

/// One concrete extent a plan may assume.
struct ConcreteDim {
  uint32_t axis = 0;
  int64_t extent = 0;
  friend bool operator==(const ConcreteDim&, const ConcreteDim&) = default;
};

/// What a plan may assume about one input; unset means "anything".
struct InputProjection {
  std::optional<DType> dtype;
  std::optional<uint32_t> rank;
  /// Ascending by axis.
  std::vector<ConcreteDim> concrete_dims;
  /// Set when placement is StorageClass or Device.
  std::optional<std::string> storage_class;
  /// Set when placement is Device.
  std::optional<std::string> engine;
  /// Set when layout is Class or ExactStrides.
  std::optional<LayoutClass> layout_class;
  /// Set when layout is ExactStrides (element strides).
  std::optional<std::vector<int64_t>> strides;
  /// The alignment the plan may rely on: min(required, actual); set when
  /// alignment is required and the input's alignment is known.
  std::optional<uint8_t> alignment_log2;

  friend bool operator==(const InputProjection&, const InputProjection&) = default;
};

struct SpecializationProjection {
  SharedList<InputProjection> inputs;

  friend bool operator==(const SpecializationProjection&, const SpecializationProjection&) = default;
};

}  // namespace tenact
