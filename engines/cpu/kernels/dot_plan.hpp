// Shape analysis of one dot_general: the batch, free and contracting axes
// of both operands, the sizes B, M, N, K of the batched matrix product
// C[b] = A[b] (M x K) * B[b] (K x N), and how each operand's matrices can
// be handed to BLAS without a copy.
//
// Contract: pure functions of shapes, strides and attributes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/error.hpp"
#include "core/op_attrs.hpp"

namespace tenact::cpu {

/// A group of axes of one operand iterated as one index, row-major over
/// the group (the first axis outermost).
struct AxisGroup {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t count() const;
  /// When the group walks memory with one constant stride (axes of size 1
  /// ignored), that stride; 0 for a group of one element.
  bool single_stride(int64_t& stride) const;
};

struct DotPlan {
  std::vector<int64_t> out_shape;  // batch, lhs free, rhs free
  int64_t batch = 1, m = 1, n = 1, k = 1;
  AxisGroup lhs_batch, lhs_free, lhs_contract;  // A[b] is (lhs_free x lhs_contract)
  AxisGroup rhs_batch, rhs_contract, rhs_free;  // B[b] is (rhs_contract x rhs_free)
};

/// Errors: InvalidAttribute (axis out of range, repeated, or list lengths
/// that differ), InputMismatch (batch or contracting extents that differ).
Result<DotPlan> plan_dot(std::span<const int64_t> lhs_shape, std::span<const int64_t> lhs_strides,
                         std::span<const int64_t> rhs_shape, std::span<const int64_t> rhs_strides,
                         const DotGeneralAttrs& attrs);

/// How a (rows x cols) matrix view reaches BLAS (row-major convention):
/// directly as stored (`transposed` false: element (r, c) at r*ld + c),
/// directly as the transpose of a stored (cols x rows) matrix (`transposed`
/// true: element (r, c) at c*ld + r), or not at all (`direct` false: the
/// caller packs it into a dense buffer).
struct BlasOperand {
  bool direct = false;
  bool transposed = false;
  int64_t ld = 0;
};

/// Decides for the matrix whose rows iterate `rows` and columns `cols`.
/// Requires rows.count() and cols.count() >= 1. Leading dimensions follow
/// BLAS's rules (ld >= the stored row length, >= 1).
BlasOperand blas_operand(const AxisGroup& rows, const AxisGroup& cols);

}  // namespace tenact::cpu
