// Weight materializers: how a model's weights are turned into the physical
// form its providers read, selected exactly by id (ModelCompileOptions::
// weight_materializer). A materializer decides, per weight, the physical
// tensor (dtype, extents, layout) — the plan compiler unifies that with the
// contracts of the weight's readers — and produces its bytes from the
// logical data when the model is loaded.
//
// Built in:
// - "identity": every weight as declared (contiguous, its dtype).
// - "tenact.pack_panels": a 2-D f32 weight that every reader reads as the
//   rhs of a plain matrix product (dot_general with lhs_contracting [1],
//   rhs_contracting [0], no batching dimensions, no conjugation) is stored
//   in panels of 16 columns — blocked layout, block [1, 16], axis order
//   [1, 0], zero padding (core/tensor_layout.hpp) — which the
//   `dot_general.packed_panels` providers read; every other weight as
//   declared.
//
// Contract: immutable once built; the functions are pure and thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/program.hpp"
#include "core/tensor.hpp"
#include "core/tensor_layout.hpp"

namespace tenact {

inline constexpr std::string_view kIdentityMaterializer = "identity";
inline constexpr std::string_view kPackPanelsMaterializer = "tenact.pack_panels";

struct WeightMaterializer {
  std::string id;
  /// One line for reports.
  std::string description;
  /// The physical tensor weight `weight` (a value of `program` with role
  /// Weight) is stored as.
  std::function<Result<ResolvedTensorSpec>(const SemanticProgram& program, ValueId weight)> physical;
  /// The physical bytes of one weight: from its logical data (a host tensor
  /// of the weight's declared dtype and shape, any strides) to a dense 1-D
  /// host tensor of the physical dtype holding exactly
  /// physical.minimum_storage_bytes() bytes.
  std::function<Result<HostTensor>(const HostTensor& logical, const ResolvedTensorSpec& physical)>
      materialize;
};

class WeightMaterializerRegistry {
 public:
  /// "identity" alone.
  static WeightMaterializerRegistry identity_only();
  /// "identity" and "tenact.pack_panels".
  static WeightMaterializerRegistry builtin();
  /// Adds one. Errors: InvalidPlan for an empty id, an id registered
  /// already, or missing functions.
  Status add(WeightMaterializer materializer);
  /// The materializer of `id`. Errors: InvalidPlan "unknown weight
  /// materializer `x` (registered: identity, tenact.pack_panels)".
  Result<std::shared_ptr<const WeightMaterializer>> select(std::string_view id) const;
  std::vector<std::string> ids() const;

 private:
  std::vector<std::shared_ptr<const WeightMaterializer>> materializers_;
};

}  // namespace tenact
