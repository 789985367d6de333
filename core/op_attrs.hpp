// Attribute structs of every op, one per row of ops.def, held in OpAttrs.
// Field names are the JSON attribute names of docs/program-format.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/dim_expr.hpp"
#include "core/dtype.hpp"
#include "core/op_kind.hpp"
#include "core/scalar.hpp"
#include "core/tensor.hpp"

namespace tenact {

struct NoAttrs {
  friend bool operator==(const NoAttrs&, const NoAttrs&) = default;
};
struct CompareAttrs {
  CompareDirection direction = CompareDirection::EQ;
  friend bool operator==(const CompareAttrs&, const CompareAttrs&) = default;
};
struct TransposeAttrs {
  std::vector<int64_t> permutation;
  friend bool operator==(const TransposeAttrs&, const TransposeAttrs&) = default;
};
struct ReshapeAttrs {
  std::vector<DimExpr> shape;
  friend bool operator==(const ReshapeAttrs&, const ReshapeAttrs&) = default;
};
struct BroadcastInDimAttrs {
  std::vector<DimExpr> shape;
  std::vector<int64_t> broadcast_dimensions;
  friend bool operator==(const BroadcastInDimAttrs&, const BroadcastInDimAttrs&) = default;
};
struct ConvertAttrs {
  DType dtype = DType::F32;
  friend bool operator==(const ConvertAttrs&, const ConvertAttrs&) = default;
};
/// A constant holds either a splat scalar (the shape may be symbolic) or a
/// dense row-major tensor of exactly the (concrete) shape.
struct ConstantAttrs {
  DType dtype = DType::F32;
  std::vector<DimExpr> shape;
  std::optional<Scalar> splat;      // set for the scalar form
  std::optional<HostTensor> dense;  // set for the list form (dtype, concrete shape)
  friend bool operator==(const ConstantAttrs& a, const ConstantAttrs& b);
};
struct IotaAttrs {
  DType dtype = DType::I64;
  std::vector<DimExpr> shape;
  int64_t iota_dimension = 0;
  friend bool operator==(const IotaAttrs&, const IotaAttrs&) = default;
};
struct TriangleAttrs {
  int64_t k = 0;
  friend bool operator==(const TriangleAttrs&, const TriangleAttrs&) = default;
};
struct ReduceAttrs {
  std::vector<int64_t> dimensions;
  friend bool operator==(const ReduceAttrs&, const ReduceAttrs&) = default;
};
struct SliceAttrs {
  std::vector<DimExpr> start_indices;
  std::vector<DimExpr> limit_indices;
  std::vector<int64_t> strides;  // defaulted to all 1 by the loader/builder
  friend bool operator==(const SliceAttrs&, const SliceAttrs&) = default;
};
struct DynamicSliceAttrs {
  std::vector<DimExpr> slice_sizes;
  friend bool operator==(const DynamicSliceAttrs&, const DynamicSliceAttrs&) = default;
};
struct PadAttrs {
  std::vector<DimExpr> edge_padding_low;
  std::vector<DimExpr> edge_padding_high;
  std::vector<DimExpr> interior_padding;  // defaulted to zeros
  friend bool operator==(const PadAttrs&, const PadAttrs&) = default;
};
struct ConcatenateAttrs {
  int64_t dimension = 0;
  friend bool operator==(const ConcatenateAttrs&, const ConcatenateAttrs&) = default;
};
struct ReverseAttrs {
  std::vector<int64_t> dimensions;
  friend bool operator==(const ReverseAttrs&, const ReverseAttrs&) = default;
};
struct GatherAttrs {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<DimExpr> slice_sizes;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  friend bool operator==(const GatherAttrs&, const GatherAttrs&) = default;
};
struct ScatterAttrs {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  ScatterUpdate update = ScatterUpdate::Replace;
  friend bool operator==(const ScatterAttrs&, const ScatterAttrs&) = default;
};
struct DynamicTruncateAttrs {
  int64_t dimension = 0;
  friend bool operator==(const DynamicTruncateAttrs&, const DynamicTruncateAttrs&) = default;
};
struct PadToMatchAttrs {
  /// The padding value; none: the zero of x's dtype (false for bool).
  std::optional<Scalar> value;
  friend bool operator==(const PadToMatchAttrs&, const PadToMatchAttrs&) = default;
};
struct DotGeneralAttrs {
  std::vector<int64_t> lhs_batching_dimensions;
  std::vector<int64_t> rhs_batching_dimensions;
  std::vector<int64_t> lhs_contracting_dimensions;
  std::vector<int64_t> rhs_contracting_dimensions;
  bool conj_lhs = false;
  bool conj_rhs = false;
  friend bool operator==(const DotGeneralAttrs&, const DotGeneralAttrs&) = default;
};
/// `attributes_json` is the canonical JSON text (keys sorted, no spaces)
/// of the op's "attributes" object; "{}" when absent.
struct ExtensionAttrs {
  std::string family;
  std::string attributes_json = "{}";
  friend bool operator==(const ExtensionAttrs&, const ExtensionAttrs&) = default;
};

using OpAttrs = std::variant<NoAttrs, CompareAttrs, TransposeAttrs, ReshapeAttrs,
                             BroadcastInDimAttrs, ConvertAttrs, ConstantAttrs, IotaAttrs,
                             TriangleAttrs, ReduceAttrs, SliceAttrs, DynamicSliceAttrs,
                             PadAttrs, ConcatenateAttrs, ReverseAttrs, GatherAttrs,
                             ScatterAttrs, DynamicTruncateAttrs, PadToMatchAttrs,
                             DotGeneralAttrs, ExtensionAttrs>;

/// Default-constructed attributes of the type `kind` uses.
OpAttrs default_attrs(OpKind kind);
/// True when `attrs` holds the alternative `kind` uses.
bool attrs_match_kind(OpKind kind, const OpAttrs& attrs);

}  // namespace tenact
