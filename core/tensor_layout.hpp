// Physical layouts of tensors with concrete shapes: contiguous (dense,
// row-major), strided (a byte stride per axis) and blocked (tiles of fixed
// size, zero-padded). What provider tensor contracts are unified against
// (engines/tensor_contract.hpp), what the plan compiler resolves every
// value to (planning/model/), and what a weight materializer packs into.
//
// Blocked layout, exactly. For logical extents d[a] and blocks b[a] (each
// >= 1), every axis is padded with zeros to P[a] = ceil(d[a] / b[a]) * b[a].
// The padded tensor is cut into tiles of b[0] x ... x b[r-1] elements; tile
// coordinates t[a] = i[a] / b[a] over the grid P[a] / b[a], coordinates in
// the tile w[a] = i[a] % b[a]. Tiles are stored in row-major order of their
// coordinates taken in `axis_order` (outermost first), and the elements of
// a tile in row-major order of w taken in `axis_order` too. So [K, N] with
// block [1, 16] and axis order [1, 0] is "panels of 16 columns": panel
// n / 16 holds K rows of 16 contiguous values, element (k, n) at
// ((n / 16) * K + k) * 16 + n % 16.
//
// Contract: plain values, thread-safe to read; every function is pure.
// Sizes are checked (Overflow, LimitExceeded), never wrapped.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/tensor.hpp"

namespace tenact {

/// Tile sizes per logical axis and the order (outermost first) in which
/// tiles and the elements of a tile are stored.
struct BlockedLayout {
  std::vector<uint64_t> block;
  std::vector<uint32_t> axis_order;
  friend bool operator==(const BlockedLayout&, const BlockedLayout&) = default;
  /// "block=[1, 16], axis_order=[1, 0]".
  std::string to_string() const;
};

struct ResolvedTensorLayout {
  enum class Kind : uint8_t { Contiguous, Strided, Blocked };
  Kind kind = Kind::Contiguous;
  /// Strided: one byte stride per axis.
  std::vector<uint64_t> byte_strides;
  /// Blocked: the tiles.
  BlockedLayout blocked;
  /// Blocked: empty when every extent is a multiple of its block (exact);
  /// otherwise the padded extents P in `axis_order` (zero-filled padding).
  std::vector<uint64_t> zero_fill_physical_dims;

  static ResolvedTensorLayout contiguous() { return {}; }
  static ResolvedTensorLayout strided(std::vector<uint64_t> byte_strides);
  /// A blocked layout of a tensor of `dims`, its padding computed.
  /// Errors: InvalidPlan for blocks that are not one positive size per
  /// axis or an axis order that is not a permutation; Overflow.
  static Result<ResolvedTensorLayout> blocked_for(const BlockedLayout& layout,
                                                  std::span<const uint64_t> dims);

  friend bool operator==(const ResolvedTensorLayout&, const ResolvedTensorLayout&) = default;
  /// "contiguous", "strided[16, 4]", "blocked{block=[1, 16], axis_order=[1, 0]}",
  /// "blocked{block=[1, 16], axis_order=[1, 0], zero_fill=[32, 784]}".
  std::string to_string() const;
};

/// Checks `layout` as a blocked layout of a rank-`rank` tensor.
/// Errors: InvalidPlan naming what is wrong.
Status check_blocked_layout(const BlockedLayout& layout, size_t rank);

/// A value's concrete extents, element type and physical layout.
struct ResolvedTensorSpec {
  std::vector<uint64_t> dims;
  DType dtype = DType::F32;
  ResolvedTensorLayout layout;

  /// Validates the combination: a stride per axis, a valid blocked layout
  /// (its padding recomputed from `dims`), extents within
  /// kMaxTensorBytes. Errors: InvalidPlan, Overflow, LimitExceeded.
  static Result<ResolvedTensorSpec> make(std::vector<uint64_t> dims, DType dtype,
                                         ResolvedTensorLayout layout);
  /// Bytes of storage the layout needs: elements x size for contiguous;
  /// for strided, the last reachable byte + 1 (0 when empty); for blocked,
  /// the padded element count x size. Errors: Overflow, LimitExceeded.
  Result<uint64_t> minimum_storage_bytes() const;
  friend bool operator==(const ResolvedTensorSpec&, const ResolvedTensorSpec&) = default;
  /// "f32[4, 784] contiguous".
  std::string to_string() const;
};

/// The padded extents P[a] of a blocked tensor of `dims`, per logical axis.
/// Errors: Overflow.
Result<std::vector<uint64_t>> blocked_padded_dims(const BlockedLayout& layout,
                                                  std::span<const uint64_t> dims);
/// Element offset of logical index `index` (one per axis, within `dims`)
/// in the blocked storage of a tensor of `dims` (see the file comment).
/// Precondition: check_blocked_layout passed and the padded element count
/// fits in 64 bits.
uint64_t blocked_element_offset(const BlockedLayout& layout, std::span<const uint64_t> dims,
                                std::span<const uint64_t> index);
/// `dense` (any strides, host memory) packed into the blocked form: a new
/// dense 1-D host tensor of its dtype holding every padded element (zeros
/// in the padding), from the calling thread's host buffer source.
/// Errors: InvalidPlan for a layout of another rank, Overflow,
/// LimitExceeded, ResourceExhausted.
Result<HostTensor> pack_blocked(const HostTensor& dense, const BlockedLayout& layout);
/// The inverse: the logical dense row-major tensor of `dims` read back from
/// blocked storage `packed` (a host tensor of at least the padded count).
Result<HostTensor> unpack_blocked(const HostTensor& packed, const BlockedLayout& layout,
                                  std::span<const uint64_t> dims);

}  // namespace tenact
