// Elementwise ops specialized to their operand dtypes: the type rules
// (which dtypes each op admits, what it yields) and the tile function that
// computes it over dense arrays. Both the single-op kernels
// (elementwise.cpp) and the fused executor (fused_elementwise.cpp) run ops
// only through these functions, which is what makes a fused region give the
// same bits as its ops run one by one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/op_attrs.hpp"
#include "core/op_kind.hpp"

namespace tenact::cpu {

/// out[i] = op(operands[0][i], ...) for i in [0, n). Every array is dense,
/// in its dtype's storage layout (bool: one byte 0/1), suitably aligned for
/// its element type; `out` overlaps no operand. Pure: no state, any thread.
using TileFn = void (*)(const std::byte* const* operands, std::byte* out, int64_t n);

struct ElementwiseKernel {
  TileFn fn = nullptr;
  DType result = DType::F32;
  /// Operand count the tile function reads.
  size_t arity = 0;
};

/// Resolves an elementwise op on operands of `operand_dtypes`. Errors:
/// InvalidAttribute for a missing attribute struct, InputMismatch for a
/// wrong operand count or operands whose dtypes must agree and do not,
/// TypeMismatch for a dtype the op rejects (docs/program-format.md "Type sets"),
/// Unsupported for an op outside the elementwise family. The messages name
/// the op and the dtype.
Result<ElementwiseKernel> find_elementwise_kernel(OpKind kind, const OpAttrs& attrs,
                                                  std::span<const DType> operand_dtypes);

/// True for the ops find_elementwise_kernel serves (the Elementwise family
/// of ops.def, convert included).
bool is_elementwise_op(OpKind kind);

namespace ew {
// Per-family tile finders, one translation unit each; nullptr when the op
// rejects the dtype. Used by find_elementwise_kernel only.
TileFn unary_tile_for(OpKind kind, DType operand);
/// The result dtype of a unary op (abs of complex: the real type).
DType unary_result_dtype(OpKind kind, DType operand);
TileFn binary_tile_for(OpKind kind, DType operand);
TileFn compare_tile_for(CompareDirection direction, DType operand);
TileFn select_tile_for(DType operand);
TileFn clamp_tile_for(DType operand);
TileFn convert_tile_for(DType from, DType to);
}  // namespace ew

}  // namespace tenact::cpu
