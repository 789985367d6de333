#include "engines/cpu/kernels/gather_scatter.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>

#include "core/checked.hpp"
#include "core/half.hpp"
#include "engines/cpu/kernels/element_bytes.hpp"
#include "engines/cpu/kernels/layout_kernel_support.hpp"
#include "engines/cpu/kernels/layout_strided_copy.hpp"
#include "util/worker_pool.hpp"

namespace tenact::cpu {

namespace {

using namespace support;
using Outputs = std::vector<HostTensor>;

inline bool contains(std::span<const int64_t> v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

inline bool strictly_sorted(std::span<const int64_t> v) {
  for (size_t i = 1; i < v.size(); ++i)
    if (v[i - 1] >= v[i]) return false;
  return true;
}

// True when every axis of `a` and `b` together is distinct and in [0, rank).
inline bool disjoint_axes(std::span<const int64_t> a, std::span<const int64_t> b, size_t rank) {
  std::vector<int64_t> all(a.begin(), a.end());
  all.insert(all.end(), b.begin(), b.end());
  return valid_axes(all, rank);
}

// The index positions of gather and scatter: the axes of the index tensor
// other than index_vector_dim, in order. For each: its extent and stride in
// the index tensor.
struct IndexBatch {
  std::vector<size_t> axes;          // axes of the index tensor
  std::vector<int64_t> extents;
  std::vector<int64_t> strides;
  int64_t vector_stride = 0;         // stride along index_vector_dim (0 if implicit)
  int64_t vector_length = 1;         // start indices per position
  // Position k of an index-tensor axis in `axes` (or -1 for index_vector_dim).
  std::vector<int64_t> position_of_axis;
};

IndexBatch index_batch(const HostTensor& s, int64_t ivd) {
  IndexBatch b;
  b.position_of_axis.assign(s.rank(), -1);
  for (size_t d = 0; d < s.rank(); ++d) {
    if (static_cast<int64_t>(d) == ivd) {
      b.vector_stride = s.strides()[d];
      b.vector_length = s.shape()[d];
      continue;
    }
    b.position_of_axis[d] = static_cast<int64_t>(b.axes.size());
    b.axes.push_back(d);
    b.extents.push_back(s.shape()[d]);
    b.strides.push_back(s.strides()[d]);
  }
  return b;
}

// -- gather ---------------------------------------------------------------------------

Result<Outputs> gather(const KernelCall& call) {
  TENACT_TRY(expect_inputs(call, 2));
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<GatherAttrs>(call));
  const HostTensor& x = call.inputs[0];
  const HostTensor& s = call.inputs[1];
  TENACT_TRY(expect_result_dtype(call, x.dtype()));
  if (!is_integer(s.dtype()))
    return op_error(call, ErrorCode::TypeMismatch,
                    "start_indices must be integers, got " + std::string(to_string(s.dtype())));
  const size_t R = x.rank();
  const size_t S = s.rank();
  const int64_t ivd = attrs->index_vector_dim;
  const auto& offset_dims = attrs->offset_dims;
  const auto& collapsed = attrs->collapsed_slice_dims;
  const auto& op_batch = attrs->operand_batching_dims;
  const auto& idx_batch = attrs->start_indices_batching_dims;
  const auto& start_map = attrs->start_index_map;
  auto invalid = [&](const std::string& what) {
    return op_error(call, ErrorCode::InvalidAttribute, what);
  };
  if (ivd < 0 || static_cast<uint64_t>(ivd) > S)
    return invalid("index_vector_dim " + std::to_string(ivd) + " is outside [0, " +
                   std::to_string(S) + "]");
  if (!disjoint_axes(collapsed, op_batch, R))
    return invalid("collapsed_slice_dims " + dims_text(collapsed) + " and operand_batching_dims " +
                   dims_text(op_batch) + " are not distinct operand axes");
  if (!disjoint_axes(start_map, op_batch, R))
    return invalid("start_index_map " + dims_text(start_map) +
                   " must name distinct operand axes outside operand_batching_dims");
  if (!valid_axes(idx_batch, S) || contains(idx_batch, ivd) || idx_batch.size() != op_batch.size())
    return invalid("start_indices_batching_dims " + dims_text(idx_batch) +
                   " must name distinct axes of start_indices other than index_vector_dim, one "
                   "per operand batching dim");
  TENACT_ASSIGN_OR_RETURN(auto sizes, eval_dims(call, attrs->slice_sizes, "slice_sizes"));
  if (sizes.size() != R) return invalid("slice_sizes need one entry per operand axis");
  for (size_t d = 0; d < R; ++d) {
    const bool unit = contains(collapsed, static_cast<int64_t>(d)) ||
                      contains(op_batch, static_cast<int64_t>(d));
    if (unit && sizes[d] != 1)
      return invalid("slice size of collapsed or batching axis " + std::to_string(d) +
                     " must be 1, got " + std::to_string(sizes[d]));
    if (sizes[d] < 0 || sizes[d] > x.shape()[d])
      return op_error(call, ErrorCode::InputMismatch,
                      "slice size " + std::to_string(sizes[d]) + " of axis " + std::to_string(d) +
                          " is outside [0, " + std::to_string(x.shape()[d]) + "]");
  }
  const IndexBatch batch = index_batch(s, ivd);
  if (static_cast<int64_t>(start_map.size()) != batch.vector_length)
    return op_error(call, ErrorCode::InputMismatch,
                    "start_index_map has " + std::to_string(start_map.size()) +
                        " entries, the index vectors have " +
                        std::to_string(batch.vector_length));
  for (size_t i = 0; i < op_batch.size(); ++i)
    if (x.shape()[static_cast<size_t>(op_batch[i])] != s.shape()[static_cast<size_t>(idx_batch[i])])
      return op_error(call, ErrorCode::InputMismatch,
                      "operand batching axis " + std::to_string(op_batch[i]) +
                          " and start_indices batching axis " + std::to_string(idx_batch[i]) +
                          " differ in extent");
  // Window axes: operand axes neither collapsed nor batching, in order.
  std::vector<size_t> window_axes;
  for (size_t d = 0; d < R; ++d)
    if (!contains(collapsed, static_cast<int64_t>(d)) && !contains(op_batch, static_cast<int64_t>(d)))
      window_axes.push_back(d);
  const size_t result_rank = offset_dims.size() + batch.axes.size();
  if (offset_dims.size() != window_axes.size() || !strictly_sorted(offset_dims) ||
      !valid_axes(offset_dims, result_rank))
    return invalid("offset_dims " + dims_text(offset_dims) + " must be " +
                   std::to_string(window_axes.size()) + " sorted distinct axes of the rank-" +
                   std::to_string(result_rank) + " result");
  // Result shape: offset dims take the window sizes, the others the index
  // positions, each in order.
  std::vector<int64_t> shape(result_rank);
  std::vector<size_t> batch_result_axes;
  for (size_t d = 0, w = 0; d < result_rank; ++d) {
    if (w < offset_dims.size() && offset_dims[w] == static_cast<int64_t>(d)) {
      shape[d] = sizes[window_axes[w++]];
    } else {
      shape[d] = batch.extents[batch_result_axes.size()];
      batch_result_axes.push_back(d);
    }
  }
  TENACT_ASSIGN_OR_RETURN(HostTensor out, full_output(call, x.dtype(), shape));
  if (out.element_count() == 0) return Outputs{std::move(out)};

  std::vector<int64_t> window_shape, window_dst, window_src;
  for (size_t w = 0; w < window_axes.size(); ++w) {
    window_shape.push_back(sizes[window_axes[w]]);
    window_dst.push_back(out.strides()[static_cast<size_t>(offset_dims[w])]);
    window_src.push_back(x.strides()[window_axes[w]]);
  }
  const size_t elem = size_of(x.dtype());
  const CopyPlan window = make_copy_plan(window_shape, window_dst, window_src, elem, false);
  const int64_t window_items = window.items();

  struct StartAxis {
    int64_t operand_stride;
    int64_t hi;  // dim - slice size: the clamp bound
  };
  std::vector<StartAxis> start_axes;
  for (int64_t a : start_map) {
    const auto d = static_cast<size_t>(a);
    start_axes.push_back({x.strides()[d], x.shape()[d] - sizes[d]});
  }
  struct BatchingAxis {
    size_t position;  // in batch.axes
    int64_t operand_stride;
  };
  std::vector<BatchingAxis> batching;
  for (size_t i = 0; i < op_batch.size(); ++i)
    batching.push_back({static_cast<size_t>(batch.position_of_axis[static_cast<size_t>(idx_batch[i])]),
                        x.strides()[static_cast<size_t>(op_batch[i])]});
  std::vector<int64_t> out_batch_strides;
  for (size_t r : batch_result_axes) out_batch_strides.push_back(out.strides()[r]);

  int64_t positions = 1;
  for (int64_t e : batch.extents) positions *= e;
  const std::byte* sdata = s.data();
  const size_t selem = size_of(s.dtype());
  const std::byte* xdata = x.data();
  std::byte* odata = out.data();
  const size_t nb = batch.axes.size();
  auto run_positions = [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(nb);
    int64_t soff = 0;
    int64_t doff = 0;
    int64_t rest = begin;
    for (size_t k = nb; k-- > 0;) {
      idx[k] = rest % batch.extents[k];
      rest /= batch.extents[k];
      soff += idx[k] * batch.strides[k];
      doff += idx[k] * out_batch_strides[k];
    }
    for (int64_t p = begin; p < end; ++p) {
      int64_t xoff = 0;
      for (size_t j = 0; j < start_axes.size(); ++j) {
        const std::byte* at = sdata + (soff + static_cast<int64_t>(j) * batch.vector_stride) *
                                          static_cast<int64_t>(selem);
        xoff += load_index_clamped(s.dtype(), at, start_axes[j].hi) * start_axes[j].operand_stride;
      }
      for (const BatchingAxis& b : batching) xoff += idx[b.position] * b.operand_stride;
      run_copy_items(window, odata + doff * static_cast<int64_t>(elem),
                     xdata + xoff * static_cast<int64_t>(elem), 0, window_items);
      for (size_t k = nb; k-- > 0;) {
        soff += batch.strides[k];
        doff += out_batch_strides[k];
        if (++idx[k] < batch.extents[k]) break;
        soff -= batch.strides[k] * batch.extents[k];
        doff -= out_batch_strides[k] * batch.extents[k];
        idx[k] = 0;
      }
    }
  };
  const int64_t per_position = std::max<int64_t>(1, out.element_count() / positions);
  parallel_for(call.pool, positions, std::max<int64_t>(1, (1 << 15) / per_position),
               run_positions);
  return Outputs{std::move(out)};
}

// -- scatter combiners ---------------------------------------------------------------------


// A box of destination elements with the update elements that combine into
// them, both strided; applied in row-major order of the box.
struct Box {
  std::vector<int64_t> extent;
  std::vector<int64_t> dst;  // element strides
  std::vector<int64_t> src;
};
using BoxFn = std::function<void(const Box&, std::byte*, const std::byte*)>;

template <class T, class Op>
void apply_box(const Box& box, size_t level, std::byte* d, const std::byte* s, const Op& op) {
  constexpr auto sz = static_cast<int64_t>(sizeof(T));
  if (box.extent.empty()) {
    store_element<T>(d, op(load_element<T>(d), load_element<T>(s)));
    return;
  }
  const int64_t n = box.extent[level];
  const int64_t ds = box.dst[level] * sz;
  const int64_t ss = box.src[level] * sz;
  if (level + 1 == box.extent.size()) {
    for (int64_t i = 0; i < n; ++i) store_element<T>(d + i * ds, op(load_element<T>(d + i * ds), load_element<T>(s + i * ss)));
    return;
  }
  for (int64_t i = 0; i < n; ++i) apply_box<T>(box, level + 1, d + i * ds, s + i * ss, op);
}

template <class T, class Op>
BoxFn box_fn(Op op) {
  return [op](const Box& box, std::byte* d, const std::byte* s) { apply_box<T>(box, 0, d, s, op); };
}

// IEEE-754 maximum/minimum: NaN propagates (the current value's NaN first),
// -0 < +0.
template <class F>
inline bool take_update_for_max(F cur, F upd) {
  if (std::isnan(cur)) return false;
  if (std::isnan(upd)) return true;
  if (cur == upd) return std::signbit(cur) && !std::signbit(upd);
  return upd > cur;
}
template <class F>
inline bool take_update_for_min(F cur, F upd) {
  if (std::isnan(cur)) return false;
  if (std::isnan(upd)) return true;
  if (cur == upd) return !std::signbit(cur) && std::signbit(upd);
  return upd < cur;
}

// Lexicographic (real, imaginary) order; a value with a NaN part propagates
// (the current value's first).
template <class C>
inline bool has_nan(C z) {
  return std::isnan(z.real()) || std::isnan(z.imag());
}
template <class C>
inline bool lex_less(C a, C b) {
  return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
}

BoxFn bool_fn(ScatterUpdate up) {
  switch (up) {
    case ScatterUpdate::Add:
    case ScatterUpdate::Max:
      return box_fn<uint8_t>([](uint8_t a, uint8_t b) -> uint8_t { return (a | b) != 0; });
    case ScatterUpdate::Multiply:
    case ScatterUpdate::Min:
      return box_fn<uint8_t>([](uint8_t a, uint8_t b) -> uint8_t { return a != 0 && b != 0; });
    case ScatterUpdate::Replace: break;
  }
  return nullptr;
}

template <class T>
BoxFn int_fn(ScatterUpdate up) {
  // Wrapping arithmetic in an unsigned type at least as wide as int (no
  // promotion to signed int, so no overflow).
  using W = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
  switch (up) {
    case ScatterUpdate::Add:
      return box_fn<T>([](T a, T b) { return static_cast<T>(static_cast<W>(a) + static_cast<W>(b)); });
    case ScatterUpdate::Multiply:
      return box_fn<T>([](T a, T b) { return static_cast<T>(static_cast<W>(a) * static_cast<W>(b)); });
    case ScatterUpdate::Max: return box_fn<T>([](T a, T b) { return std::max(a, b); });
    case ScatterUpdate::Min: return box_fn<T>([](T a, T b) { return std::min(a, b); });
    case ScatterUpdate::Replace: break;
  }
  return nullptr;
}

template <class F>
BoxFn float_fn(ScatterUpdate up) {
  switch (up) {
    case ScatterUpdate::Add: return box_fn<F>([](F a, F b) { return a + b; });
    case ScatterUpdate::Multiply: return box_fn<F>([](F a, F b) { return a * b; });
    case ScatterUpdate::Max:
      return box_fn<F>([](F a, F b) { return take_update_for_max(a, b) ? b : a; });
    case ScatterUpdate::Min:
      return box_fn<F>([](F a, F b) { return take_update_for_min(a, b) ? b : a; });
    case ScatterUpdate::Replace: break;
  }
  return nullptr;
}

// f16/bf16: computed in f32, rounded to the dtype after every update.
template <class H>
BoxFn half_fn(ScatterUpdate up) {
  switch (up) {
    case ScatterUpdate::Add:
      return box_fn<H>([](H a, H b) { return H(a.to_float() + b.to_float()); });
    case ScatterUpdate::Multiply:
      return box_fn<H>([](H a, H b) { return H(a.to_float() * b.to_float()); });
    case ScatterUpdate::Max:
      return box_fn<H>(
          [](H a, H b) { return take_update_for_max(a.to_float(), b.to_float()) ? b : a; });
    case ScatterUpdate::Min:
      return box_fn<H>(
          [](H a, H b) { return take_update_for_min(a.to_float(), b.to_float()) ? b : a; });
    case ScatterUpdate::Replace: break;
  }
  return nullptr;
}

template <class C>
BoxFn complex_fn(ScatterUpdate up) {
  switch (up) {
    case ScatterUpdate::Add: return box_fn<C>([](C a, C b) { return a + b; });
    case ScatterUpdate::Multiply: return box_fn<C>([](C a, C b) { return a * b; });
    case ScatterUpdate::Max:
      return box_fn<C>([](C a, C b) {
        if (has_nan(a)) return a;
        if (has_nan(b)) return b;
        return lex_less(a, b) ? b : a;
      });
    case ScatterUpdate::Min:
      return box_fn<C>([](C a, C b) {
        if (has_nan(a)) return a;
        if (has_nan(b)) return b;
        return lex_less(b, a) ? b : a;
      });
    case ScatterUpdate::Replace: break;
  }
  return nullptr;
}

BoxFn combiner(DType dtype, ScatterUpdate up) {
  if (up == ScatterUpdate::Replace) {
    auto second = [](auto, auto b) { return b; };
    switch (size_of(dtype)) {
      case 1: return box_fn<uint8_t>(second);
      case 2: return box_fn<uint16_t>(second);
      case 4: return box_fn<uint32_t>(second);
      case 8: return box_fn<uint64_t>(second);
      case 16: return box_fn<Bytes16>(second);
      default: return nullptr;
    }
  }
  switch (dtype) {
    case DType::Bool: return bool_fn(up);
    case DType::I8: return int_fn<int8_t>(up);
    case DType::I16: return int_fn<int16_t>(up);
    case DType::I32: return int_fn<int32_t>(up);
    case DType::I64: return int_fn<int64_t>(up);
    case DType::U8: return int_fn<uint8_t>(up);
    case DType::U16: return int_fn<uint16_t>(up);
    case DType::U32: return int_fn<uint32_t>(up);
    case DType::U64: return int_fn<uint64_t>(up);
    case DType::F16: return half_fn<f16>(up);
    case DType::BF16: return half_fn<bf16>(up);
    case DType::F32: return float_fn<float>(up);
    case DType::F64: return float_fn<double>(up);
    case DType::C64: return complex_fn<std::complex<float>>(up);
    case DType::C128: return complex_fn<std::complex<double>>(up);
  }
  return nullptr;
}

// -- scatter -----------------------------------------------------------------------------------

Result<Outputs> scatter(const KernelCall& call) {
  TENACT_TRY(expect_inputs(call, 3));
  TENACT_ASSIGN_OR_RETURN(const auto* attrs, attrs_of<ScatterAttrs>(call));
  const HostTensor& x = call.inputs[0];
  const HostTensor& s = call.inputs[1];
  const HostTensor& u = call.inputs[2];
  TENACT_TRY(expect_result_dtype(call, x.dtype()));
  if (!is_integer(s.dtype()))
    return op_error(call, ErrorCode::TypeMismatch,
                    "scatter_indices must be integers, got " + std::string(to_string(s.dtype())));
  if (u.dtype() != x.dtype())
    return op_error(call, ErrorCode::TypeMismatch,
                    "updates " + std::string(to_string(u.dtype())) + " differ from operand " +
                        std::string(to_string(x.dtype())));
  const size_t R = x.rank();
  const size_t S = s.rank();
  const size_t U = u.rank();
  const int64_t ivd = attrs->index_vector_dim;
  const auto& window_dims = attrs->update_window_dims;
  const auto& inserted = attrs->inserted_window_dims;
  const auto& in_batch = attrs->input_batching_dims;
  const auto& idx_batch = attrs->scatter_indices_batching_dims;
  const auto& to_operand = attrs->scatter_dims_to_operand_dims;
  auto invalid = [&](const std::string& what) {
    return op_error(call, ErrorCode::InvalidAttribute, what);
  };
  if (ivd < 0 || static_cast<uint64_t>(ivd) > S)
    return invalid("index_vector_dim " + std::to_string(ivd) + " is outside [0, " +
                   std::to_string(S) + "]");
  if (!disjoint_axes(inserted, in_batch, R))
    return invalid("inserted_window_dims " + dims_text(inserted) + " and input_batching_dims " +
                   dims_text(in_batch) + " are not distinct operand axes");
  if (!disjoint_axes(to_operand, in_batch, R))
    return invalid("scatter_dims_to_operand_dims " + dims_text(to_operand) +
                   " must name distinct operand axes outside input_batching_dims");
  if (!valid_axes(idx_batch, S) || contains(idx_batch, ivd) || idx_batch.size() != in_batch.size())
    return invalid("scatter_indices_batching_dims " + dims_text(idx_batch) +
                   " must name distinct axes of scatter_indices other than index_vector_dim, "
                   "one per input batching dim");
  const IndexBatch batch = index_batch(s, ivd);
  std::vector<size_t> window_operand_axes;
  for (size_t d = 0; d < R; ++d)
    if (!contains(inserted, static_cast<int64_t>(d)) && !contains(in_batch, static_cast<int64_t>(d)))
      window_operand_axes.push_back(d);
  if (window_dims.size() != window_operand_axes.size() || !strictly_sorted(window_dims) ||
      !valid_axes(window_dims, U) || U != window_dims.size() + batch.axes.size())
    return invalid("update_window_dims " + dims_text(window_dims) + " must be " +
                   std::to_string(window_operand_axes.size()) +
                   " sorted distinct axes of updates, the other update axes matching the "
                   "scatter positions");
  if (static_cast<int64_t>(to_operand.size()) != batch.vector_length)
    return op_error(call, ErrorCode::InputMismatch,
                    "scatter_dims_to_operand_dims has " + std::to_string(to_operand.size()) +
                        " entries, the index vectors have " +
                        std::to_string(batch.vector_length));
  for (size_t i = 0; i < in_batch.size(); ++i)
    if (x.shape()[static_cast<size_t>(in_batch[i])] != s.shape()[static_cast<size_t>(idx_batch[i])])
      return op_error(call, ErrorCode::InputMismatch,
                      "input batching axis " + std::to_string(in_batch[i]) +
                          " and scatter_indices batching axis " + std::to_string(idx_batch[i]) +
                          " differ in extent");
  // Update axes: window axes map to operand axes in order; the others are
  // the scatter positions, in order, and must match the index tensor.
  std::vector<int64_t> window_of_update_axis(U, -1);
  std::vector<size_t> scatter_update_axes;
  for (size_t k = 0; k < window_dims.size(); ++k)
    window_of_update_axis[static_cast<size_t>(window_dims[k])] = static_cast<int64_t>(k);
  for (size_t a = 0; a < U; ++a) {
    const int64_t k = window_of_update_axis[a];
    if (k < 0) {
      const size_t p = scatter_update_axes.size();
      if (u.shape()[a] != batch.extents[p])
        return op_error(call, ErrorCode::InputMismatch,
                        "updates axis " + std::to_string(a) + " of extent " +
                            std::to_string(u.shape()[a]) + " does not match scatter_indices axis " +
                            std::to_string(batch.axes[p]) + " of extent " +
                            std::to_string(batch.extents[p]));
      scatter_update_axes.push_back(a);
    } else if (u.shape()[a] > x.shape()[window_operand_axes[static_cast<size_t>(k)]]) {
      return op_error(call, ErrorCode::InputMismatch,
                      "update window axis " + std::to_string(a) + " of extent " +
                          std::to_string(u.shape()[a]) + " is larger than operand axis " +
                          std::to_string(window_operand_axes[static_cast<size_t>(k)]));
    }
  }
  BoxFn combine = combiner(x.dtype(), attrs->update);
  if (!combine)
    return op_error(call, ErrorCode::Unsupported,
                    "update '" + std::string(to_string(attrs->update)) + "' on " +
                        std::string(to_string(x.dtype())));

  TENACT_ASSIGN_OR_RETURN(HostTensor out, operand_zero_copy(call));
  if (out.element_count() == 0 || u.element_count() == 0) return Outputs{std::move(out)};

  // Updates apply in row-major order: the leading update axes up to the last
  // scatter axis are iterated one index at a time ("prefix"), the trailing
  // window axes after it form one box per prefix index, clipped to the
  // operand (out-of-bounds elements are skipped one by one).
  const size_t prefix = scatter_update_axes.empty() ? 0 : scatter_update_axes.back() + 1;
  std::vector<size_t> batching_position(R, 0);
  std::vector<bool> is_batching(R, false);
  for (size_t i = 0; i < in_batch.size(); ++i) {
    const auto a = static_cast<size_t>(in_batch[i]);
    is_batching[a] = true;
    batching_position[a] =
        static_cast<size_t>(batch.position_of_axis[static_cast<size_t>(idx_batch[i])]);
  }
  std::vector<int64_t> operand_axis_of_window(window_dims.size());
  for (size_t k = 0; k < window_dims.size(); ++k)
    operand_axis_of_window[k] = static_cast<int64_t>(window_operand_axes[k]);
  std::vector<bool> in_box(R, false);
  Box box;
  std::vector<size_t> box_update_axes;
  for (size_t a = prefix; a < U; ++a) {
    const auto oa = static_cast<size_t>(operand_axis_of_window[static_cast<size_t>(window_of_update_axis[a])]);
    in_box[oa] = true;
    box_update_axes.push_back(a);
    box.dst.push_back(out.strides()[oa]);
    box.src.push_back(u.strides()[a]);
  }
  box.extent.resize(box_update_axes.size());

  const size_t elem = size_of(x.dtype());
  const size_t selem = size_of(s.dtype());
  std::vector<int64_t> pidx(prefix, 0);
  std::vector<int64_t> pos(R);
  std::vector<int64_t> positions(batch.axes.size());
  int64_t prefix_count = 1;
  for (size_t a = 0; a < prefix; ++a) prefix_count *= u.shape()[a];
  for (int64_t p = 0; p < prefix_count; ++p) {
    // Index position of this prefix index and the update offset.
    int64_t uoff = 0;
    for (size_t a = 0; a < prefix; ++a) uoff += pidx[a] * u.strides()[a];
    int64_t soff = 0;
    for (size_t k = 0; k < scatter_update_axes.size(); ++k) {
      positions[k] = pidx[scatter_update_axes[k]];
      soff += positions[k] * batch.strides[k];
    }
    std::fill(pos.begin(), pos.end(), 0);
    for (size_t j = 0; j < to_operand.size(); ++j)
      pos[static_cast<size_t>(to_operand[j])] = load_index_saturated(
          s.dtype(), s.data() + (soff + static_cast<int64_t>(j) * batch.vector_stride) *
                                    static_cast<int64_t>(selem));
    for (size_t a = 0; a < R; ++a)
      if (is_batching[a]) pos[a] = positions[batching_position[a]];
    bool in_bounds = true;
    for (size_t a = 0; a < prefix && in_bounds; ++a) {
      const int64_t k = window_of_update_axis[a];
      if (k < 0) continue;
      const auto oa = static_cast<size_t>(operand_axis_of_window[static_cast<size_t>(k)]);
      auto sum = checked_add(pos[oa], pidx[a]);
      in_bounds = sum.has_value();
      if (sum) pos[oa] = *sum;
    }
    int64_t doff = 0;
    for (size_t a = 0; a < R && in_bounds; ++a) {
      if (in_box[a]) continue;
      in_bounds = pos[a] >= 0 && pos[a] < x.shape()[a];
      if (in_bounds) doff += pos[a] * out.strides()[a];
    }
    // Clip the box: window index t lands at pos + t, kept when in [0, dim).
    for (size_t b = 0; b < box_update_axes.size() && in_bounds; ++b) {
      const size_t ua = box_update_axes[b];
      const auto oa = static_cast<size_t>(operand_axis_of_window[static_cast<size_t>(window_of_update_axis[ua])]);
      const int64_t ext = u.shape()[ua];
      const int64_t dim = x.shape()[oa];
      const int64_t at = pos[oa];
      if (at < -ext || at >= dim) {
        in_bounds = false;
        break;
      }
      const int64_t lo = at < 0 ? -at : 0;
      const int64_t hi = std::min(ext, dim - at);
      if (hi <= lo) {
        in_bounds = false;
        break;
      }
      box.extent[b] = hi - lo;
      doff += (at + lo) * out.strides()[oa];
      uoff += lo * u.strides()[ua];
    }
    if (in_bounds)
      combine(box, out.data() + doff * static_cast<int64_t>(elem),
              u.data() + uoff * static_cast<int64_t>(elem));
    for (size_t a = prefix; a-- > 0;) {
      if (++pidx[a] < u.shape()[a]) break;
      pidx[a] = 0;
    }
  }
  return Outputs{std::move(out)};
}

}  // namespace

Result<std::vector<HostTensor>> run_gather(const KernelCall& call) { return gather(call); }
Result<std::vector<HostTensor>> run_scatter(const KernelCall& call) { return scatter(call); }

}  // namespace tenact::cpu
