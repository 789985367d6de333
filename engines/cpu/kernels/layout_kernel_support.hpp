// Small helpers shared by the layout, indexing, gather and scatter kernels:
// checked access to a KernelCall's attributes and inputs, evaluation of
// dimension expressions, results (in their destinations when given), and
// reading index scalars.
//
// Contract: every function returns an Error (never throws, never crashes)
// when the call does not have what the op needs; messages start with the
// op's name. Header-only; no state.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/error.hpp"
#include "core/op_attrs.hpp"
#include "core/shape.hpp"
#include "core/tensor.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "engines/cpu/kernels/layout_strided_copy.hpp"

namespace tenact::cpu::support {

inline std::string op_name(const KernelCall& call) { return std::string{to_string(call.kind)}; }

inline Error op_error(const KernelCall& call, ErrorCode code, const std::string& what) {
  return Error{code, op_name(call) + ": " + what};
}

inline std::string dims_text(std::span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

/// The attribute struct of the op, or Internal when the call holds another.
template <class A>
Result<const A*> attrs_of(const KernelCall& call) {
  const A* a = std::get_if<A>(&call.attrs);
  if (a == nullptr)
    return op_error(call, ErrorCode::Internal, "the call carries the attributes of another op");
  return a;
}

/// Checks the input count (exact, or at least `min` when `exact` is false),
/// and that every input has a buffer or no elements.
inline Status expect_inputs(const KernelCall& call, size_t count, bool exact = true) {
  if (exact ? call.inputs.size() != count : call.inputs.size() < count)
    return op_error(call, ErrorCode::InputMismatch,
                    "expects " + std::string(exact ? "" : "at least ") + std::to_string(count) +
                        " inputs, got " + std::to_string(call.inputs.size()));
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const HostTensor& t = call.inputs[i];
    if (t.shape().size() != t.strides().size())
      return op_error(call, ErrorCode::InputMismatch,
                      "input " + std::to_string(i) + " has shape and strides of different ranks");
    if (!t.buffer() && t.element_count() != 0)
      return op_error(call, ErrorCode::InputMismatch,
                      "input " + std::to_string(i) + " has no buffer");
  }
  return ok_status();
}

/// The dtype the program inferred for result 0.
inline Result<DType> result_dtype(const KernelCall& call) {
  if (call.result_types.empty())
    return op_error(call, ErrorCode::Internal, "the call has no result type");
  return call.result_types[0].dtype;
}

/// Requires the result dtype to equal `dtype` (layout ops keep the dtype).
inline Status expect_result_dtype(const KernelCall& call, DType dtype) {
  TENACT_ASSIGN_OR_RETURN(DType r, result_dtype(call));
  if (r != dtype)
    return op_error(call, ErrorCode::TypeMismatch,
                    "result type " + std::string(to_string(r)) + " differs from the operand's " +
                        std::string(to_string(dtype)));
  return ok_status();
}

/// Evaluates dimension expressions against the call's symbols.
inline Result<std::vector<int64_t>> eval_dims(const KernelCall& call,
                                              const std::vector<DimExpr>& exprs,
                                              std::string_view what) {
  std::vector<int64_t> out;
  out.reserve(exprs.size());
  for (size_t i = 0; i < exprs.size(); ++i) {
    auto v = exprs[i].evaluate(call.symbols);
    if (!v.ok())
      return std::move(v).error().with_context(op_name(call) + ": " + std::string(what) + "[" +
                                               std::to_string(i) + "]");
    out.push_back(*v);
  }
  return out;
}

/// Evaluates a shape: every dimension must be non-negative.
inline Result<std::vector<int64_t>> eval_shape(const KernelCall& call,
                                               const std::vector<DimExpr>& exprs,
                                               std::string_view what) {
  TENACT_ASSIGN_OR_RETURN(auto dims, eval_dims(call, exprs, what));
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0)
      return op_error(call, ErrorCode::InputMismatch,
                      std::string(what) + " " + dims_text(dims) + " has a negative dimension at " +
                          std::to_string(i));
  return dims;
}

/// The op's dense, zero-filled result 0 (output_tensor: in its destination
/// when one fits), with the op named in an allocation error.
inline Result<HostTensor> allocate_output(const KernelCall& call, DType dtype, std::span<const int64_t> shape) {
  return output_tensor(call, 0, dtype, shape, BufferFill::Zeroed);
}

/// allocate_output for a kernel that writes every element (no zero fill).
inline Result<HostTensor> full_output(const KernelCall& call, DType dtype, std::span<const int64_t> shape) {
  return output_tensor(call, 0, dtype, shape, BufferFill::Unspecified);
}

/// The result of an op that starts from a copy of operand 0 and then
/// overwrites some elements (dynamic_update_slice, scatter): for the
/// InPlace variant operand 0 itself (same buffer and offset), which must
/// be a dense row-major host tensor (InputMismatch otherwise); else a
/// dense copy of it (in the op's destination when one fits).
inline Result<HostTensor> operand_zero_copy(const KernelCall& call) {
  const HostTensor& x = call.inputs[0];
  if (call.variant == KernelVariant::InPlace) {
    if (!x.is_host() || !x.is_contiguous() || (!x.buffer() && x.element_count() != 0))
      return op_error(call, ErrorCode::InputMismatch,
                      "in place: operand 0 must be a dense row-major host tensor, got shape " +
                          dims_text(x.shape()) + " with strides " + dims_text(x.strides()));
    return x;
  }
  TENACT_ASSIGN_OR_RETURN(HostTensor out, full_output(call, x.dtype(), x.shape()));
  copy_to_dense(x, out.data(), call.pool);
  return out;
}

/// True when every axis number is in [0, rank) and none repeats.
inline bool valid_axes(std::span<const int64_t> axes, size_t rank) {
  std::vector<bool> seen(rank, false);
  for (int64_t a : axes) {
    if (a < 0 || static_cast<uint64_t>(a) >= rank || seen[static_cast<size_t>(a)]) return false;
    seen[static_cast<size_t>(a)] = true;
  }
  return true;
}

/// Whether an operand of `x_shape` broadcasts to `shape` along `dims`
/// (broadcast_in_dim's rule; Tensor::broadcast_view then reads it).
/// Errors (messages name no op: callers add it): InvalidAttribute when
/// `dims` does not map the operand's axes to distinct axes of `shape`;
/// InputMismatch when an operand extent is neither the result's nor 1.
/// No allocation unless it fails (a region checks each run). Defined in
/// layout.cpp.
Status check_broadcast_operand(std::span<const int64_t> x_shape, std::span<const int64_t> shape,
                               std::span<const int64_t> dims);

/// Reads one integer element of `dtype` as int64; unsigned values above
/// INT64_MAX saturate to INT64_MAX. Precondition: is_integer(dtype).
inline int64_t load_index_saturated(DType dtype, const std::byte* p) {
  auto get = [p]<class T>(T) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  };
  switch (dtype) {
    case DType::I8: return get(int8_t{});
    case DType::I16: return get(int16_t{});
    case DType::I32: return get(int32_t{});
    case DType::I64: return get(int64_t{});
    case DType::U8: return get(uint8_t{});
    case DType::U16: return get(uint16_t{});
    case DType::U32: return get(uint32_t{});
    case DType::U64: {
      const uint64_t u = get(uint64_t{});
      return u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                 ? std::numeric_limits<int64_t>::max()
                 : static_cast<int64_t>(u);
    }
    default: return 0;
  }
}

/// StableHLO's clamp(index, 0, hi) of an integer element (hi >= 0); unsigned
/// values are taken as they are, so large ones clamp to hi.
inline int64_t load_index_clamped(DType dtype, const std::byte* p, int64_t hi) {
  const int64_t v = load_index_saturated(dtype, p);
  return v < 0 ? 0 : (v > hi ? hi : v);
}

/// Checks that `t` is a scalar (rank 0) of an integer dtype; `what` names it.
inline Status expect_index_scalar(const KernelCall& call, const HostTensor& t,
                                  std::string_view what) {
  if (!is_integer(t.dtype()))
    return op_error(call, ErrorCode::TypeMismatch,
                    std::string(what) + " must be an integer, got " +
                        std::string(to_string(t.dtype())));
  if (t.rank() != 0)
    return op_error(call, ErrorCode::InputMismatch,
                    std::string(what) + " must be a scalar, got shape " + dims_text(t.shape()));
  return ok_status();
}

}  // namespace tenact::cpu::support
