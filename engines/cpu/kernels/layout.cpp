// The layout family on the CPU: transpose, reshape, broadcast_in_dim,
// constant, iota, extract_diag, embed_diag, tril, triu.
//
// Every op materializes a dense row-major output (views are the engine's
// business); bytes move through layout_strided_copy by element size, and
// only constant and iota look at values. Shapes and attributes are checked
// again here, cheaply, so a malformed call is an error, never a crash.
#include <algorithm>
#include <complex>
#include <cstring>
#include <string>

#include "core/checked.hpp"
#include "core/half.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "engines/cpu/kernels/layout_kernel_support.hpp"
#include "engines/cpu/kernels/layout_strided_copy.hpp"
#include "util/worker_pool.hpp"

namespace tenact::cpu {

Status support::check_broadcast_operand(std::span<const int64_t> x_shape, std::span<const int64_t> shape,
                                        std::span<const int64_t> dims) {
  bool mapped = dims.size() == x_shape.size();
  for (size_t i = 0; mapped && i < dims.size(); ++i) {  // in range and distinct (ranks are small)
    mapped = dims[i] >= 0 && static_cast<uint64_t>(dims[i]) < shape.size();
    for (size_t j = 0; mapped && j < i; ++j) mapped = dims[j] != dims[i];
  }
  if (!mapped)
    return Error{ErrorCode::InvalidAttribute, "broadcast_dimensions " + dims_text(dims) +
                                                  " do not map the operand's " + std::to_string(x_shape.size()) +
                                                  " axes to distinct axes of the result " + dims_text(shape)};
  for (size_t i = 0; i < dims.size(); ++i) {
    const auto to = static_cast<size_t>(dims[i]);
    if (x_shape[i] != shape[to] && x_shape[i] != 1)
      return Error{ErrorCode::InputMismatch, "operand axis " + std::to_string(i) + " of extent " +
                                                 std::to_string(x_shape[i]) + " cannot broadcast to result axis " +
                                                 std::to_string(to) + " of extent " + std::to_string(shape[to])};
  }
  return ok_status();
}

namespace {

using namespace support;
using Outputs = std::vector<HostTensor>;

// -- transpose, reshape, broadcast_in_dim ---------------------------------------

Result<Outputs> run_transpose(const KernelCall& call) {
  TENACT_TRY(expect_inputs(call, 1));
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<TransposeAttrs>(call));
  const HostTensor& x = call.inputs[0];
  TENACT_TRY(expect_result_dtype(call, x.dtype()));
  if (attrs->permutation.size() != x.rank() || !valid_axes(attrs->permutation, x.rank()))
    return op_error(call, ErrorCode::InvalidAttribute,
                    "permutation " + dims_text(attrs->permutation) +
                        " is not a permutation of the operand's " + std::to_string(x.rank()) +
                        " axes");
  const HostTensor view = x.transposed(attrs->permutation);
  TENACT_ASSIGN_OR_RETURN(HostTensor out, full_output(call, x.dtype(), view.shape()));
  copy_to_dense(view, out.data(), call.pool);
  return Outputs{std::move(out)};
}

Result<Outputs> run_reshape(const KernelCall& call) {
  TENACT_TRY(expect_inputs(call, 1));
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<ReshapeAttrs>(call));
  const HostTensor& x = call.inputs[0];
  TENACT_TRY(expect_result_dtype(call, x.dtype()));
  TENACT_ASSIGN_OR_RETURN(auto shape, eval_shape(call, attrs->shape, "shape"));
  auto count = checked_element_count(shape);
  if (!count.ok()) return std::move(count).error().with_context(op_name(call));
  if (*count != x.element_count())
    return op_error(call, ErrorCode::InputMismatch,
                    "shape " + dims_text(shape) + " holds " + std::to_string(*count) +
                        " elements, the operand " + dims_text(x.shape()) + " holds " +
                        std::to_string(x.element_count()));
  TENACT_ASSIGN_OR_RETURN(HostTensor out, full_output(call, x.dtype(), std::move(shape)));
  // Row-major order of the operand is row-major order of the result.
  copy_to_dense(x, out.data(), call.pool);
  return Outputs{std::move(out)};
}

/// broadcast_in_dim's result shape, source strides and copy plan for one
/// operand layout: what a KernelKeep holds between runs of one op (the
/// shape comes from the op's attributes under the call's symbols, which
/// stay those of the kept call: a keep's owner drops it when it binds
/// others).
struct KeptBroadcast {
  DType dtype = DType::F32;
  std::vector<int64_t> x_shape, x_strides;
  bool split_rows = false;
  std::vector<int64_t> shape;
  std::vector<int64_t> src_strides;
  std::vector<int64_t> dst_strides;  // the plan's (the result's row-major strides)
  CopyPlan plan;

  bool fits(const KernelCall& call, const HostTensor& x) const {
    return dtype == x.dtype() && split_rows == (call.pool != nullptr) && x_shape == x.shape() &&
           x_strides == x.strides();
  }
};

/// Names KeptBroadcast objects in a KernelKeep.
constexpr char kKeptBroadcastOwner = 0;

/// The result shape and source strides (0 where the operand has no axis or
/// an axis of extent 1) of a broadcast_in_dim call, checked.
Result<std::pair<std::vector<int64_t>, std::vector<int64_t>>> broadcast_geometry(const KernelCall& call,
                                                                                const BroadcastInDimAttrs& attrs,
                                                                                const HostTensor& x) {
  TENACT_ASSIGN_OR_RETURN(auto shape, eval_shape(call, attrs.shape, "shape"));
  if (Status fits = check_broadcast_operand(x.shape(), shape, attrs.broadcast_dimensions); !fits.ok())
    return fits.error().with_context(op_name(call));
  std::vector<int64_t> src_strides = x.broadcast_view(shape, attrs.broadcast_dimensions).strides();
  return std::pair{std::move(shape), std::move(src_strides)};
}

Result<Outputs> run_broadcast_in_dim(const KernelCall& call) {
  TENACT_TRY(expect_inputs(call, 1));
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<BroadcastInDimAttrs>(call));
  const HostTensor& x = call.inputs[0];
  TENACT_TRY(expect_result_dtype(call, x.dtype()));
  const KeptBroadcast* kept = call.keep ? call.keep->find<KeptBroadcast>(&kKeptBroadcastOwner) : nullptr;
  if (kept != nullptr && kept->fits(call, x)) {
    TENACT_ASSIGN_OR_RETURN(HostTensor out, full_output(call, x.dtype(), kept->shape));
    if (out.strides() == kept->dst_strides) {
      run_copy_plan(kept->plan, out.data(), x.data(), call.pool);
    } else {  // a destination of another layout: planned for it
      strided_copy(kept->shape, out.data(), out.strides(), x.data(), kept->src_strides, size_of(x.dtype()),
                   call.pool);
    }
    return Outputs{std::move(out)};
  }
  TENACT_ASSIGN_OR_RETURN(auto geometry, broadcast_geometry(call, *attrs, x));
  auto& [shape, src_strides] = geometry;
  TENACT_ASSIGN_OR_RETURN(HostTensor out, full_output(call, x.dtype(), shape));
  CopyPlan plan = make_copy_plan(shape, out.strides(), src_strides, size_of(x.dtype()), call.pool != nullptr);
  run_copy_plan(plan, out.data(), x.data(), call.pool);
  if (call.keep) {
    auto made = std::make_shared<KeptBroadcast>();
    made->dtype = x.dtype();
    made->x_shape = x.shape();
    made->x_strides = x.strides();
    made->split_rows = call.pool != nullptr;
    made->dst_strides = out.strides();
    made->shape = std::move(shape);
    made->src_strides = std::move(src_strides);
    made->plan = std::move(plan);
    call.keep->keep(&kKeptBroadcastOwner, std::move(made));
  }
  return Outputs{std::move(out)};
}

// -- constant, iota --------------------------------------------------------------

Result<Outputs> run_constant(const KernelCall& call) {
  TENACT_TRY(expect_inputs(call, 0));
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<ConstantAttrs>(call));
  TENACT_TRY(expect_result_dtype(call, attrs->dtype));
  TENACT_ASSIGN_OR_RETURN(auto shape, eval_shape(call, attrs->shape, "shape"));
  if (attrs->dense) {
    const HostTensor& dense = *attrs->dense;
    if (dense.dtype() != attrs->dtype || dense.shape() != shape)
      return op_error(call, ErrorCode::InvalidAttribute,
                      "dense value " + std::string(to_string(dense.dtype())) +
                          dims_text(dense.shape()) + " does not match the declared " +
                          std::string(to_string(attrs->dtype)) + dims_text(shape));
    if (!dense.buffer() && dense.element_count() != 0)
      return op_error(call, ErrorCode::InvalidAttribute, "dense value has no buffer");
    TENACT_ASSIGN_OR_RETURN(HostTensor out, full_output(call, attrs->dtype, shape));
    copy_to_dense(dense, out.data(), call.pool);
    return Outputs{std::move(out)};
  }
  if (!attrs->splat)
    return op_error(call, ErrorCode::InvalidAttribute, "has neither a scalar nor a dense value");
  auto fits = attrs->splat->check_fits(attrs->dtype);
  if (!fits.ok()) return std::move(fits).error().with_context(op_name(call));
  alignas(16) std::byte value[16] = {};
  attrs->splat->store(attrs->dtype, value);
  TENACT_ASSIGN_OR_RETURN(HostTensor out, full_output(call, attrs->dtype, shape));
  fill_elements(out.data(), out.element_count(), value, size_of(attrs->dtype), call.pool);
  return Outputs{std::move(out)};
}

// Writes index `i` as one element of `dtype`: integers wrap (two's
// complement) when the index exceeds their range; floats round once, to
// nearest even, from the exact integer; complex holds it in the real part.
void store_index_value(DType dtype, int64_t i, std::byte* dst) {
  auto put = [dst](auto v) { std::memcpy(dst, &v, sizeof(v)); };
  switch (dtype) {
    case DType::I8: put(static_cast<int8_t>(i)); break;
    case DType::I16: put(static_cast<int16_t>(i)); break;
    case DType::I32: put(static_cast<int32_t>(i)); break;
    case DType::I64: put(i); break;
    case DType::U8: put(static_cast<uint8_t>(i)); break;
    case DType::U16: put(static_cast<uint16_t>(i)); break;
    case DType::U32: put(static_cast<uint32_t>(i)); break;
    case DType::U64: put(static_cast<uint64_t>(i)); break;
    case DType::F16: put(f16(i).bits); break;
    case DType::BF16: put(bf16(i).bits); break;
    case DType::F32: put(static_cast<float>(i)); break;
    case DType::F64: put(static_cast<double>(i)); break;
    case DType::C64: put(std::complex<float>(static_cast<float>(i), 0.0f)); break;
    case DType::C128: put(std::complex<double>(static_cast<double>(i), 0.0)); break;
    case DType::Bool: break;
  }
}

Result<Outputs> run_iota(const KernelCall& call) {
  TENACT_TRY(expect_inputs(call, 0));
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<IotaAttrs>(call));
  const DType dtype = attrs->dtype;
  TENACT_TRY(expect_result_dtype(call, dtype));
  if (is_bool(dtype))
    return op_error(call, ErrorCode::TypeMismatch, "takes integer, floating or complex types, not bool");
  TENACT_ASSIGN_OR_RETURN(auto shape, eval_shape(call, attrs->shape, "shape"));
  const int64_t axis = attrs->iota_dimension;
  if (axis < 0 || static_cast<uint64_t>(axis) >= shape.size())
    return op_error(call, ErrorCode::InvalidAttribute,
                    "iota_dimension " + std::to_string(axis) + " is not an axis of " +
                        dims_text(shape));
  TENACT_ASSIGN_OR_RETURN(HostTensor out, full_output(call, dtype, shape));
  if (out.element_count() == 0) return Outputs{std::move(out)};
  const auto a = static_cast<size_t>(axis);
  int64_t outer = 1;
  int64_t inner = 1;
  for (size_t d = 0; d < a; ++d) outer *= shape[d];
  for (size_t d = a + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t n = shape[a];
  const auto elem = static_cast<int64_t>(size_of(dtype));
  std::byte* base = out.data();
  // The first block [n, inner], then copies of it for every outer index.
  const int64_t grain = std::max<int64_t>(1, (1 << 16) / inner);
  parallel_for(call.pool, n, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      std::byte* row = base + i * inner * elem;
      store_index_value(dtype, i, row);
      fill_elements(row + elem, inner - 1, row, static_cast<size_t>(elem), nullptr);
    }
  });
  const int64_t block_bytes = n * inner * elem;
  parallel_for(call.pool, outer - 1, std::max<int64_t>(1, (1 << 20) / block_bytes),
               [&](int64_t begin, int64_t end) {
                 for (int64_t o = begin + 1; o < end + 1; ++o)
                   std::memcpy(base + o * block_bytes, base, static_cast<size_t>(block_bytes));
               });
  return Outputs{std::move(out)};
}

// -- extract_diag, embed_diag, tril, triu -------------------------------------------

Result<Outputs> run_extract_diag(const KernelCall& call) {
  TENACT_TRY(expect_inputs(call, 1));
  const HostTensor& x = call.inputs[0];
  TENACT_TRY(expect_result_dtype(call, x.dtype()));
  const size_t r = x.rank();
  if (r < 2 || x.shape()[r - 1] != x.shape()[r - 2])
    return op_error(call, ErrorCode::InputMismatch,
                    "needs an operand [..., n, n], got " + dims_text(x.shape()));
  std::vector<int64_t> shape(x.shape().begin(), x.shape().end() - 1);
  std::vector<int64_t> strides(x.strides().begin(), x.strides().end() - 1);
  strides[r - 2] = x.strides()[r - 2] + x.strides()[r - 1];
  TENACT_ASSIGN_OR_RETURN(HostTensor out, full_output(call, x.dtype(), shape));
  strided_copy(shape, out.data(), out.strides(), x.data(), strides, size_of(x.dtype()), call.pool);
  return Outputs{std::move(out)};
}

Result<Outputs> run_embed_diag(const KernelCall& call) {
  TENACT_TRY(expect_inputs(call, 1));
  const HostTensor& x = call.inputs[0];
  TENACT_TRY(expect_result_dtype(call, x.dtype()));
  const size_t r = x.rank();
  if (r < 1)
    return op_error(call, ErrorCode::InputMismatch, "needs an operand of rank 1 or more");
  std::vector<int64_t> shape = x.shape();
  shape.push_back(x.shape()[r - 1]);
  // The output starts zero-filled; only the diagonal is written.
  TENACT_ASSIGN_OR_RETURN(HostTensor out, allocate_output(call, x.dtype(), shape));
  std::vector<int64_t> dst_strides(out.strides().begin(), out.strides().end() - 1);
  dst_strides[r - 1] = out.strides()[r - 1] + out.strides()[r];
  strided_copy(x.shape(), out.data(), dst_strides, x.data(), x.strides(), size_of(x.dtype()),
               call.pool);
  return Outputs{std::move(out)};
}

// tril keeps j <= i + k, triu keeps j >= i + k, on the last two axes [m, n];
// the rest of each row is zero (all-zero bytes are zero in every dtype).
Result<Outputs> run_triangle(const KernelCall& call, bool lower) {
  TENACT_TRY(expect_inputs(call, 1));
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<TriangleAttrs>(call));
  const HostTensor& x = call.inputs[0];
  TENACT_TRY(expect_result_dtype(call, x.dtype()));
  const size_t r = x.rank();
  if (r < 2)
    return op_error(call, ErrorCode::InputMismatch,
                    "needs an operand of rank 2 or more, got " + dims_text(x.shape()));
  TENACT_ASSIGN_OR_RETURN(HostTensor out, full_output(call, x.dtype(), x.shape()));
  copy_to_dense(x, out.data(), call.pool);
  const int64_t m = x.shape()[r - 2];
  const int64_t n = x.shape()[r - 1];
  const int64_t rows = out.element_count() / std::max<int64_t>(n, 1);
  if (out.element_count() == 0) return Outputs{std::move(out)};
  // Clamping k to [-m, n] keeps i + k in range and changes no row.
  const int64_t k = std::clamp<int64_t>(attrs->k, -m, n);
  const auto elem = static_cast<int64_t>(size_of(x.dtype()));
  std::byte* base = out.data();
  parallel_for(call.pool, rows, std::max<int64_t>(1, (1 << 16) / n), [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      const int64_t i = row % m;
      const int64_t edge = std::clamp<int64_t>(i + k + (lower ? 1 : 0), 0, n);
      const int64_t lo = lower ? edge : 0;
      const int64_t hi = lower ? n : edge;
      if (hi > lo)
        std::memset(base + (row * n + lo) * elem, 0, static_cast<size_t>((hi - lo) * elem));
    }
  });
  return Outputs{std::move(out)};
}

}  // namespace

Result<std::vector<HostTensor>> run_layout(const KernelCall& call) {
  switch (call.kind) {
    case OpKind::Transpose: return run_transpose(call);
    case OpKind::Reshape: return run_reshape(call);
    case OpKind::BroadcastInDim: return run_broadcast_in_dim(call);
    case OpKind::Constant: return run_constant(call);
    case OpKind::Iota: return run_iota(call);
    case OpKind::ExtractDiag: return run_extract_diag(call);
    case OpKind::EmbedDiag: return run_embed_diag(call);
    case OpKind::Tril: return run_triangle(call, true);
    case OpKind::Triu: return run_triangle(call, false);
    default: break;
  }
  return Error{ErrorCode::Unsupported, "the CPU layout kernels do not implement op '" +
                                           std::string{to_string(call.kind)} + "'"};
}

}  // namespace tenact::cpu
