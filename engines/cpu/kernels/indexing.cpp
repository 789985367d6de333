// The indexing family on the CPU: slice, dynamic_slice, dynamic_update_slice,
// pad, concatenate, reverse, shape_of, dynamic_truncate, pad_to_match (gather
// and scatter live in gather_scatter.cpp).
//
// Each op is a strided view of its operand copied (by element size) into a
// dense output, or into a strided view of it. Index tensors are never
// trusted: dynamic starts are clamped as StableHLO defines; every run-time
// shape condition is an InputMismatch error. dynamic_update_slice's InPlace
// variant writes only the window into operand 0's buffer and returns operand
// 0 itself (operand_zero_copy), with the same clamping.
#include <algorithm>
#include <cstring>
#include <string>

#include "core/checked.hpp"
#include "engines/cpu/kernels/gather_scatter.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "engines/cpu/kernels/layout_kernel_support.hpp"
#include "engines/cpu/kernels/layout_strided_copy.hpp"

namespace tenact::cpu {

namespace {

using namespace support;
using Outputs = std::vector<HostTensor>;

// Byte pointer `elements` elements away from p (elements may be negative).
inline std::byte* advance(std::byte* p, int64_t elements, size_t elem) {
  return p + elements * static_cast<int64_t>(elem);
}

// Copies the box [start, start + extent) of `x` (extent[d] <= dim - start)
// into a new dense tensor.
Result<Outputs> copy_box(const KernelCall& call, const HostTensor& x,
                         const std::vector<int64_t>& start, std::vector<int64_t> extent) {
  TENACT_ASSIGN_OR_RETURN(HostTensor out, full_output(call, x.dtype(), extent));
  if (out.element_count() == 0) return Outputs{std::move(out)};
  int64_t offset = 0;
  for (size_t d = 0; d < x.rank(); ++d) offset += start[d] * x.strides()[d];
  strided_copy(extent, out.data(), out.strides(), advance(x.data(), offset, size_of(x.dtype())),
               x.strides(), size_of(x.dtype()), call.pool);
  return Outputs{std::move(out)};
}

// -- slice, dynamic_slice, dynamic_update_slice ---------------------------------------

Result<Outputs> run_slice(const KernelCall& call) {
  TENACT_TRY(expect_inputs(call, 1));
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<SliceAttrs>(call));
  const HostTensor& x = call.inputs[0];
  TENACT_TRY(expect_result_dtype(call, x.dtype()));
  const size_t r = x.rank();
  TENACT_ASSIGN_OR_RETURN(auto start, eval_dims(call, attrs->start_indices, "start_indices"));
  TENACT_ASSIGN_OR_RETURN(auto limit, eval_dims(call, attrs->limit_indices, "limit_indices"));
  std::vector<int64_t> steps = attrs->strides;
  if (steps.empty()) steps.assign(r, 1);
  if (start.size() != r || limit.size() != r || steps.size() != r)
    return op_error(call, ErrorCode::InvalidAttribute,
                    "start_indices, limit_indices and strides need one entry per axis (rank " +
                        std::to_string(r) + ")");
  std::vector<int64_t> extent(r);
  std::vector<int64_t> strides(r);
  int64_t offset = 0;
  bool empty = false;
  for (size_t d = 0; d < r; ++d) {
    if (steps[d] < 1)
      return op_error(call, ErrorCode::InvalidAttribute,
                      "stride " + std::to_string(steps[d]) + " at axis " + std::to_string(d) +
                          " is not positive");
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > x.shape()[d])
      return op_error(call, ErrorCode::InputMismatch,
                      "axis " + std::to_string(d) + ": start " + std::to_string(start[d]) +
                          " and limit " + std::to_string(limit[d]) +
                          " do not satisfy 0 <= start <= limit <= " +
                          std::to_string(x.shape()[d]));
    const int64_t span = limit[d] - start[d];
    extent[d] = span == 0 ? 0 : 1 + (span - 1) / steps[d];
    // A step never exceeds the span when the extent is above 1: no overflow.
    strides[d] = extent[d] > 1 ? x.strides()[d] * steps[d] : 0;
    empty = empty || extent[d] == 0;
    if (extent[d] > 0) offset += start[d] * x.strides()[d];
  }
  TENACT_ASSIGN_OR_RETURN(HostTensor out, full_output(call, x.dtype(), extent));
  if (!empty)
    strided_copy(extent, out.data(), out.strides(), advance(x.data(), offset, size_of(x.dtype())),
                 strides, size_of(x.dtype()), call.pool);
  return Outputs{std::move(out)};
}

// Reads the start index inputs [first, first + rank) of a dynamic slice and
// clamps each to [0, dim - size].
Result<std::vector<int64_t>> clamped_starts(const KernelCall& call, size_t first,
                                            const std::vector<int64_t>& dims,
                                            const std::vector<int64_t>& sizes) {
  const size_t r = dims.size();
  if (call.inputs.size() != first + r)
    return op_error(call, ErrorCode::InputMismatch,
                    "needs " + std::to_string(r) + " start indices (one per axis), got " +
                        std::to_string(call.inputs.size() - first));
  std::vector<int64_t> starts(r);
  for (size_t d = 0; d < r; ++d) {
    const HostTensor& s = call.inputs[first + d];
    TENACT_TRY(expect_index_scalar(call, s, "start index " + std::to_string(d)));
    if (s.dtype() != call.inputs[first].dtype())
      return op_error(call, ErrorCode::TypeMismatch,
                      "start indices must share one dtype, got " +
                          std::string(to_string(call.inputs[first].dtype())) + " and " +
                          std::string(to_string(s.dtype())));
    starts[d] = load_index_clamped(s.dtype(), s.data(), dims[d] - sizes[d]);
  }
  return starts;
}

Result<Outputs> run_dynamic_slice(const KernelCall& call) {
  TENACT_TRY(expect_inputs(call, 1, false));
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<DynamicSliceAttrs>(call));
  const HostTensor& x = call.inputs[0];
  TENACT_TRY(expect_result_dtype(call, x.dtype()));
  TENACT_ASSIGN_OR_RETURN(auto sizes, eval_dims(call, attrs->slice_sizes, "slice_sizes"));
  if (sizes.size() != x.rank())
    return op_error(call, ErrorCode::InvalidAttribute,
                    "slice_sizes " + dims_text(sizes) + " need one entry per operand axis (rank " +
                        std::to_string(x.rank()) + ")");
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] < 0 || sizes[d] > x.shape()[d])
      return op_error(call, ErrorCode::InputMismatch,
                      "slice size " + std::to_string(sizes[d]) + " at axis " + std::to_string(d) +
                          " is outside [0, " + std::to_string(x.shape()[d]) + "]");
  TENACT_ASSIGN_OR_RETURN(auto starts, clamped_starts(call, 1, x.shape(), sizes));
  return copy_box(call, x, starts, std::move(sizes));
}

Result<Outputs> run_dynamic_update_slice(const KernelCall& call) {
  TENACT_TRY(expect_inputs(call, 2, false));
  const HostTensor& x = call.inputs[0];
  const HostTensor& u = call.inputs[1];
  TENACT_TRY(expect_result_dtype(call, x.dtype()));
  if (u.dtype() != x.dtype())
    return op_error(call, ErrorCode::TypeMismatch,
                    "update " + std::string(to_string(u.dtype())) + " differs from operand " +
                        std::string(to_string(x.dtype())));
  if (u.rank() != x.rank())
    return op_error(call, ErrorCode::InputMismatch,
                    "update " + dims_text(u.shape()) + " and operand " + dims_text(x.shape()) +
                        " differ in rank");
  for (size_t d = 0; d < x.rank(); ++d)
    if (u.shape()[d] > x.shape()[d])
      return op_error(call, ErrorCode::InputMismatch,
                      "update " + dims_text(u.shape()) + " is larger than operand " +
                          dims_text(x.shape()) + " at axis " + std::to_string(d));
  TENACT_ASSIGN_OR_RETURN(auto starts, clamped_starts(call, 2, x.shape(), u.shape()));
  TENACT_ASSIGN_OR_RETURN(HostTensor out, operand_zero_copy(call));
  if (u.element_count() > 0) {
    int64_t offset = 0;
    for (size_t d = 0; d < x.rank(); ++d) offset += starts[d] * out.strides()[d];
    strided_copy(u.shape(), advance(out.data(), offset, size_of(x.dtype())), out.strides(),
                 u.data(), u.strides(), size_of(x.dtype()), call.pool);
  }
  return Outputs{std::move(out)};
}

// -- pad, pad_to_match ----------------------------------------------------------------

// Fills a dense output with the element at `value` and copies `x` into the
// box at `start` (destination strides `dst_strides`).
void fill_and_place(const KernelCall& call, HostTensor& out, const std::byte* value,
                    std::span<const int64_t> box, const std::byte* src,
                    std::span<const int64_t> src_strides, int64_t dst_offset,
                    std::span<const int64_t> dst_strides) {
  const size_t elem = size_of(out.dtype());
  fill_elements(out.data(), out.element_count(), value, elem, call.pool);
  strided_copy(box, advance(out.data(), dst_offset, elem), dst_strides, src, src_strides, elem,
               call.pool);
}

Result<Outputs> run_pad(const KernelCall& call) {
  TENACT_TRY(expect_inputs(call, 2));
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<PadAttrs>(call));
  const HostTensor& x = call.inputs[0];
  const HostTensor& pv = call.inputs[1];
  TENACT_TRY(expect_result_dtype(call, x.dtype()));
  if (pv.dtype() != x.dtype() || pv.rank() != 0)
    return op_error(call, ErrorCode::InputMismatch,
                    "padding_value must be a scalar " + std::string(to_string(x.dtype())) +
                        ", got " + std::string(to_string(pv.dtype())) + dims_text(pv.shape()));
  const size_t r = x.rank();
  TENACT_ASSIGN_OR_RETURN(auto low, eval_dims(call, attrs->edge_padding_low, "edge_padding_low"));
  TENACT_ASSIGN_OR_RETURN(auto high,
                          eval_dims(call, attrs->edge_padding_high, "edge_padding_high"));
  TENACT_ASSIGN_OR_RETURN(auto interior,
                          eval_dims(call, attrs->interior_padding, "interior_padding"));
  if (interior.empty()) interior.assign(r, 0);
  if (low.size() != r || high.size() != r || interior.size() != r)
    return op_error(call, ErrorCode::InvalidAttribute,
                    "padding amounts need one entry per axis (rank " + std::to_string(r) + ")");
  std::vector<int64_t> shape(r);
  std::vector<int64_t> box(r);
  std::vector<int64_t> src_strides(r);
  int64_t src_offset = 0;
  for (size_t d = 0; d < r; ++d) {
    const int64_t n = x.shape()[d];
    if (interior[d] < 0)
      return op_error(call, ErrorCode::InputMismatch,
                      "interior_padding " + std::to_string(interior[d]) + " at axis " +
                          std::to_string(d) + " is negative");
    // dim = n + max(n - 1, 0) * interior + low + high, checked.
    auto grown = checked_mul(std::max<int64_t>(n - 1, 0), interior[d]);
    std::optional<int64_t> dim = grown ? checked_add(*grown, n) : std::nullopt;
    if (dim) dim = checked_add(*dim, low[d]);
    if (dim) dim = checked_add(*dim, high[d]);
    if (!dim)
      return op_error(call, ErrorCode::Overflow,
                      "result extent of axis " + std::to_string(d) + " overflows 64 bits");
    if (*dim < 0)
      return op_error(call, ErrorCode::InputMismatch,
                      "result extent " + std::to_string(*dim) + " of axis " + std::to_string(d) +
                          " is negative");
    shape[d] = *dim;
  }
  TENACT_ASSIGN_OR_RETURN(HostTensor out, full_output(call, x.dtype(), shape));
  // Per axis: operand elements [lo, hi) land at low + i * step inside
  // [0, dim). Computed modulo 2^64 where intermediate values may exceed
  // int64 (low = INT64_MIN); the values used are in range.
  std::vector<int64_t> dst_strides(r);
  int64_t dst_offset = 0;
  bool empty = out.element_count() == 0;
  for (size_t d = 0; d < r && !empty; ++d) {
    const int64_t n = x.shape()[d];
    const auto step = static_cast<uint64_t>(interior[d]) + 1;
    const auto ulow = static_cast<uint64_t>(low[d]);
    uint64_t lo = 0;
    if (low[d] < 0) lo = (uint64_t{0} - ulow + step - 1) / step;
    uint64_t hi = 0;
    if (shape[d] > low[d]) {
      const uint64_t span = static_cast<uint64_t>(shape[d]) - ulow;
      hi = span / step + (span % step != 0 ? 1 : 0);
    }
    lo = std::min<uint64_t>(lo, static_cast<uint64_t>(n));
    hi = std::min<uint64_t>(hi, static_cast<uint64_t>(n));
    if (hi <= lo) {
      empty = true;
      break;
    }
    box[d] = static_cast<int64_t>(hi - lo);
    const auto first = static_cast<int64_t>(ulow + lo * step);  // in [0, dim)
    dst_offset += first * out.strides()[d];
    dst_strides[d] = box[d] > 1 ? out.strides()[d] * static_cast<int64_t>(step) : 0;
    src_offset += static_cast<int64_t>(lo) * x.strides()[d];
    src_strides[d] = x.strides()[d];
  }
  if (empty) box.assign(r, 0);
  const size_t elem = size_of(x.dtype());
  fill_and_place(call, out, pv.data(), box, advance(x.data(), src_offset, elem), src_strides,
                 dst_offset, dst_strides);
  return Outputs{std::move(out)};
}

Result<Outputs> run_pad_to_match(const KernelCall& call) {
  TENACT_TRY(expect_inputs(call, 2));
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<PadToMatchAttrs>(call));
  const HostTensor& x = call.inputs[0];
  const HostTensor& like = call.inputs[1];
  TENACT_TRY(expect_result_dtype(call, x.dtype()));
  if (like.rank() != x.rank())
    return op_error(call, ErrorCode::InputMismatch,
                    "x " + dims_text(x.shape()) + " and like " + dims_text(like.shape()) +
                        " differ in rank");
  for (size_t d = 0; d < x.rank(); ++d)
    if (x.shape()[d] > like.shape()[d])
      return op_error(call, ErrorCode::InputMismatch,
                      "x " + dims_text(x.shape()) + " is larger than like " +
                          dims_text(like.shape()) + " at axis " + std::to_string(d));
  // No value: all-zero bytes, the zero of every dtype (false, 0, +0.0, 0+0i).
  alignas(16) std::byte value[16] = {};
  if (attrs->value) {
    auto fits = attrs->value->check_fits(x.dtype());
    if (!fits.ok()) return std::move(fits).error().with_context(op_name(call) + ": value");
    attrs->value->store(x.dtype(), value);
  }
  TENACT_ASSIGN_OR_RETURN(HostTensor out, full_output(call, x.dtype(), like.shape()));
  fill_and_place(call, out, value, x.shape(), x.data(), x.strides(), 0, out.strides());
  return Outputs{std::move(out)};
}

// -- concatenate, reverse ---------------------------------------------------------------

Result<Outputs> run_concatenate(const KernelCall& call) {
  TENACT_TRY(expect_inputs(call, 1, false));
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<ConcatenateAttrs>(call));
  const HostTensor& first = call.inputs[0];
  TENACT_TRY(expect_result_dtype(call, first.dtype()));
  const size_t r = first.rank();
  const int64_t axis = attrs->dimension;
  if (axis < 0 || static_cast<uint64_t>(axis) >= r)
    return op_error(call, ErrorCode::InvalidAttribute,
                    "dimension " + std::to_string(axis) + " is not an axis of rank " +
                        std::to_string(r));
  const auto a = static_cast<size_t>(axis);
  std::vector<int64_t> shape = first.shape();
  shape[a] = 0;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const HostTensor& t = call.inputs[i];
    if (t.dtype() != first.dtype())
      return op_error(call, ErrorCode::TypeMismatch,
                      "input " + std::to_string(i) + " is " + std::string(to_string(t.dtype())) +
                          ", input 0 is " + std::string(to_string(first.dtype())));
    bool same = t.rank() == r;
    for (size_t d = 0; same && d < r; ++d) same = d == a || t.shape()[d] == first.shape()[d];
    if (!same)
      return op_error(call, ErrorCode::InputMismatch,
                      "input " + std::to_string(i) + " " + dims_text(t.shape()) +
                          " does not match input 0 " + dims_text(first.shape()) +
                          " outside axis " + std::to_string(a));
    auto sum = checked_add(shape[a], t.shape()[a]);
    if (!sum) return op_error(call, ErrorCode::Overflow, "result extent overflows 64 bits");
    shape[a] = *sum;
  }
  TENACT_ASSIGN_OR_RETURN(HostTensor out, full_output(call, first.dtype(), shape));
  const size_t elem = size_of(first.dtype());
  int64_t at = 0;
  for (const HostTensor& t : call.inputs) {
    if (t.element_count() > 0)
      strided_copy(t.shape(), advance(out.data(), at * out.strides()[a], elem), out.strides(),
                   t.data(), t.strides(), elem, call.pool);
    at += t.shape()[a];
  }
  return Outputs{std::move(out)};
}

Result<Outputs> run_reverse(const KernelCall& call) {
  TENACT_TRY(expect_inputs(call, 1));
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<ReverseAttrs>(call));
  const HostTensor& x = call.inputs[0];
  TENACT_TRY(expect_result_dtype(call, x.dtype()));
  if (!valid_axes(attrs->dimensions, x.rank()))
    return op_error(call, ErrorCode::InvalidAttribute,
                    "dimensions " + dims_text(attrs->dimensions) +
                        " are not distinct axes of rank " + std::to_string(x.rank()));
  TENACT_ASSIGN_OR_RETURN(HostTensor out, full_output(call, x.dtype(), x.shape()));
  if (out.element_count() == 0) return Outputs{std::move(out)};
  std::vector<int64_t> strides = x.strides();
  int64_t offset = 0;
  for (int64_t d : attrs->dimensions) {
    const auto a = static_cast<size_t>(d);
    offset += (x.shape()[a] - 1) * strides[a];
    strides[a] = -strides[a];
  }
  strided_copy(x.shape(), out.data(), out.strides(), advance(x.data(), offset, size_of(x.dtype())),
               strides, size_of(x.dtype()), call.pool);
  return Outputs{std::move(out)};
}

// -- shape_of, dynamic_truncate -------------------------------------------------------------

Result<Outputs> run_shape_of(const KernelCall& call) {
  TENACT_TRY(expect_inputs(call, 1));
  TENACT_TRY(expect_result_dtype(call, DType::I64));
  const HostTensor& x = call.inputs[0];
  TENACT_ASSIGN_OR_RETURN(HostTensor out,
                          full_output(call, DType::I64, std::vector<int64_t>{static_cast<int64_t>(x.rank())}));
  if (x.rank() > 0)
    std::memcpy(out.data(), x.shape().data(), x.rank() * sizeof(int64_t));
  return Outputs{std::move(out)};
}

Result<Outputs> run_dynamic_truncate(const KernelCall& call) {
  TENACT_TRY(expect_inputs(call, 2));
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<DynamicTruncateAttrs>(call));
  const HostTensor& x = call.inputs[0];
  const HostTensor& length = call.inputs[1];
  TENACT_TRY(expect_result_dtype(call, x.dtype()));
  const int64_t axis = attrs->dimension;
  if (axis < 0 || static_cast<uint64_t>(axis) >= x.rank())
    return op_error(call, ErrorCode::InvalidAttribute,
                    "dimension " + std::to_string(axis) + " is not an axis of rank " +
                        std::to_string(x.rank()));
  TENACT_TRY(expect_index_scalar(call, length, "length"));
  const auto a = static_cast<size_t>(axis);
  std::vector<int64_t> extent = x.shape();
  extent[a] = load_index_clamped(length.dtype(), length.data(), x.shape()[a]);
  return copy_box(call, x, std::vector<int64_t>(x.rank(), 0), std::move(extent));
}

}  // namespace

Result<std::vector<HostTensor>> run_indexing(const KernelCall& call) {
  switch (call.kind) {
    case OpKind::Slice: return run_slice(call);
    case OpKind::DynamicSlice: return run_dynamic_slice(call);
    case OpKind::DynamicUpdateSlice: return run_dynamic_update_slice(call);
    case OpKind::Pad: return run_pad(call);
    case OpKind::Concatenate: return run_concatenate(call);
    case OpKind::Reverse: return run_reverse(call);
    case OpKind::Gather: return run_gather(call);
    case OpKind::Scatter: return run_scatter(call);
    case OpKind::ShapeOf: return run_shape_of(call);
    case OpKind::DynamicTruncate: return run_dynamic_truncate(call);
    case OpKind::PadToMatch: return run_pad_to_match(call);
    default: break;
  }
  return Error{ErrorCode::Unsupported, "the CPU indexing kernels do not implement op '" +
                                           std::string{to_string(call.kind)} + "'"};
}

}  // namespace tenact::cpu
