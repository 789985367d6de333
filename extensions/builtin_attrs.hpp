// The attributes and operand rules of the built-in module `tenact`
// (docs/program-format.md, "Extension ops"): one checker shared by result
// inference (at validation) and by the host kernels' prepare, so that a
// kernel only ever runs an op whose attributes and operands passed it.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/shape.hpp"

namespace tenact::builtin {

/// The five families, in the order the format lists them.
enum class BuiltinOp : uint8_t { Softmax, LogSoftmax, LayerNorm, RmsNorm, Gelu };

/// "tenact.softmax", ...
std::string_view family_name(BuiltinOp op);

/// An op's parsed and checked attributes (defaults filled in).
struct BuiltinAttrs {
  BuiltinOp op = BuiltinOp::Softmax;
  /// The reduced axes of x, increasing: softmax and log_softmax hold their
  /// one `dimension`; the norms their `dimensions` (possibly none); gelu
  /// none.
  std::vector<int64_t> dimensions;
  /// layer_norm (default 1e-5) and rms_norm (default 1e-6): finite, >= 0.
  double epsilon = 0.0;
  /// gelu: `approximate` is "tanh" (false: "none", the erf form).
  bool tanh_approximation = false;
  /// layer_norm with [x, scale, bias]; rms_norm with [x, scale].
  bool has_scale = false;
  bool has_bias = false;
};

/// Checks the operands (count; one float dtype: f16, bf16, f32, f64; the
/// shape of scale and bias: x's shape restricted to `dimensions`, extents
/// compared structurally) and the attributes (the canonical JSON text of
/// an object: only the family's keys, each of its JSON type and in range).
/// Errors, each naming the attribute or operand and what is wrong: Parse
/// (not JSON), Schema (not an object, an unknown key, a wrong JSON type, a
/// missing `dimension`/`dimensions`, a wrong operand count),
/// InvalidAttribute (an axis out of range or not increasing, a negative or
/// non-finite epsilon, an unknown `approximate`), TypeMismatch (a non-float
/// or mixed dtype), ShapeMismatch (scale or bias). The caller prefixes the
/// op and the family.
Result<BuiltinAttrs> check_builtin_op(BuiltinOp op, std::span<const ValueType> operands,
                                      const std::string& attributes_json);

}  // namespace tenact::builtin
