#include "extensions/host_kernels.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

#include "core/half.hpp"

namespace tenact::builtin {

namespace {

/// Below this many elements of work a run stays on the calling thread.
constexpr int64_t kParallelMinWork = int64_t{1} << 15;
/// Elements a parallel task should cover at least.
constexpr int64_t kTaskWork = int64_t{1} << 14;
/// Elements per step of an elementwise pass (gelu, conversions).
constexpr int64_t kMapChunk = 1024;

using Body = std::function<void(int64_t begin, int64_t end)>;

/// body over [0, items), split over `parallel` when the work is worth it.
/// Items are independent, so the split never changes a bit.
void run_items(HostParallel* parallel, int64_t items, int64_t work_per_item, const Body& body) {
  if (items <= 0) return;
  const int64_t per = std::max<int64_t>(work_per_item, 1);
  if (parallel == nullptr || items < 2 || items * per < kParallelMinWork) {
    body(0, items);
    return;
  }
  parallel->for_range(items, std::max<int64_t>(1, kTaskWork / per), body);
}

/// body(begin, end) over element ranges of [0, n), kMapChunk-aligned.
void run_chunks(HostParallel* parallel, int64_t n, const Body& body) {
  run_items(parallel, (n + kMapChunk - 1) / kMapChunk, kMapChunk, [&](int64_t c0, int64_t c1) {
    body(c0 * kMapChunk, std::min(n, c1 * kMapChunk));
  });
}

// -- layout -----------------------------------------------------------------------

struct Layout {
  int64_t outer = 1, n = 1, inner = 1;
  std::vector<int64_t> perm;  // empty: x's own axis order; else kept axes, then dims
};

Layout plan_layout(std::span<const int64_t> shape, std::span<const int64_t> dims) {
  const size_t rank = shape.size();
  std::vector<bool> reduced(rank, false);
  for (int64_t d : dims) reduced[static_cast<size_t>(d)] = true;
  Layout l;
  size_t first = rank, last = 0;
  for (size_t a = 0; a < rank; ++a) {
    if (reduced[a]) l.n *= shape[a];
    if (reduced[a] && shape[a] > 1) {
      first = std::min(first, a);
      last = a;
    }
  }
  bool run = true;  // the reduced axes of extent > 1 are adjacent
  for (size_t a = first; a < rank && a <= last; ++a) run = run && (reduced[a] || shape[a] == 1);
  if (run) {
    if (first == rank) {  // nothing of extent > 1 reduced: groups of one element
      for (size_t a = 0; a < rank; ++a) l.outer *= shape[a];
      return l;
    }
    for (size_t a = 0; a < first; ++a) l.outer *= shape[a];
    for (size_t a = last + 1; a < rank; ++a) l.inner *= shape[a];
    if (l.inner == 1 || l.inner >= kMinColumns) return l;
    l.outer = 1;
    l.inner = 1;
  }
  for (size_t a = 0; a < rank; ++a)
    if (!reduced[a]) {
      l.perm.push_back(static_cast<int64_t>(a));
      l.outer *= shape[a];
    }
  for (int64_t d : dims) l.perm.push_back(d);
  return l;
}

std::vector<int64_t> inverse(std::span<const int64_t> perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

// -- f16 / bf16 <-> f32 -----------------------------------------------------------

void widen(DType t, const std::byte* src, float* dst, int64_t n) {
  const auto* s = reinterpret_cast<const uint16_t*>(src);
  if (t == DType::BF16) {
    for (int64_t i = 0; i < n; ++i) dst[i] = half_detail::bf16_bits_to_float(s[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = half_detail::f16_bits_to_float(s[i]);
  }
}

void narrow(DType t, const float* src, std::byte* dst, int64_t n) {
  auto* d = reinterpret_cast<uint16_t*>(dst);
  if (t == DType::BF16) {
    for (int64_t i = 0; i < n; ++i) d[i] = half_detail::float_to_bf16_bits(src[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = half_detail::float_to_f16_bits(src[i]);
  }
}

/// A dense f32 copy of the f16/bf16 tensor t (any strides).
Result<HostTensor> widened(const HostTensor& t, HostParallel* parallel) {
  TENACT_ASSIGN_OR_RETURN(HostTensor dense, t.contiguous());
  TENACT_ASSIGN_OR_RETURN(HostTensor out, Tensor::zeros(DType::F32, dense.shape()));
  const std::byte* src = dense.data();
  float* dst = out.data_as<float>();
  run_chunks(parallel, dense.element_count(), [&](int64_t b, int64_t e) {
    widen(t.dtype(), src + 2 * b, dst + b, e - b);
  });
  return out;
}

// -- groups -----------------------------------------------------------------------

template <class T>
GroupFn<T> group_fn(const LoopTable<T>& table, BuiltinOp op) {
  switch (op) {
    case BuiltinOp::Softmax: return table.softmax;
    case BuiltinOp::LogSoftmax: return table.log_softmax;
    case BuiltinOp::LayerNorm: return table.layer_norm;
    case BuiltinOp::RmsNorm: return table.rms_norm;
    case BuiltinOp::Gelu: break;
  }
  return nullptr;
}

template <class T>
void run_block(GroupFn<T> fn, const GroupBlock<T>& b, HostParallel* parallel) {
  const int64_t work = b.inner == 1 ? b.n : b.n * std::min(kColumnTile, b.inner);
  run_items(parallel, group_items(b.outer, b.inner), work,
            [&](int64_t i0, int64_t i1) { fn(b, i0, i1); });
}

/// Computes the groups of `x` (a dense block of T in layout `l`) into `y`
/// (dense, x's shape and T).
template <class T>
void compute_groups(const LoopTable<T>& table, const BuiltinAttrs& attrs, const Layout& l,
                    const HostTensor& x, HostTensor& y, const HostTensor* scale,
                    const HostTensor* bias, HostParallel* parallel) {
  GroupBlock<T> b;
  b.x = x.data_as<const T>();
  b.y = y.data_as<T>();
  b.outer = l.outer;
  b.n = l.n;
  b.inner = l.inner;
  b.scale = scale ? scale->data_as<const T>() : nullptr;
  b.bias = bias ? bias->data_as<const T>() : nullptr;
  b.epsilon = static_cast<T>(attrs.epsilon);
  run_block(group_fn(table, attrs.op), b, parallel);
}

/// `t` (scale or bias) dense in the computation type of dtype `compute`.
Result<HostTensor> parameter(const HostTensor& t, DType compute, HostParallel* parallel) {
  if (t.dtype() == compute) return t.contiguous();
  return widened(t, parallel);
}

Status run_groups(const BuiltinAttrs& attrs, LoopIsa isa, std::span<const HostTensor> in,
                  HostTensor& out, HostParallel* parallel) {
  const HostTensor& x = in[0];
  const DType dtype = x.dtype();
  const bool half = dtype == DType::F16 || dtype == DType::BF16;
  const DType compute = half ? DType::F32 : dtype;
  const Layout l = plan_layout(x.shape(), attrs.dimensions);
  const HostTensor xv = l.perm.empty() ? x : x.transposed(l.perm);
  HostTensor xc, scale, bias;
  if (half) {
    TENACT_ASSIGN_OR_RETURN(xc, widened(xv, parallel));
  } else {
    TENACT_ASSIGN_OR_RETURN(xc, xv.contiguous());
  }
  if (attrs.has_scale) {
    TENACT_ASSIGN_OR_RETURN(scale, parameter(in[1], compute, parallel));
  }
  if (attrs.has_bias) {
    TENACT_ASSIGN_OR_RETURN(bias, parameter(in[2], compute, parallel));
  }
  const HostTensor* sp = attrs.has_scale ? &scale : nullptr;
  const HostTensor* bp = attrs.has_bias ? &bias : nullptr;
  // y: the block's result, in the block's axis order; out itself when
  // neither a rounding nor a transposition follows.
  HostTensor y = out;
  if (half || !l.perm.empty()) {
    TENACT_ASSIGN_OR_RETURN(y, Tensor::zeros(compute, xc.shape()));
  }
  if (compute == DType::F64) compute_groups(f64_loops(isa), attrs, l, xc, y, sp, bp, parallel);
  else compute_groups(f32_loops(isa), attrs, l, xc, y, sp, bp, parallel);
  if (half) {  // round once into x's dtype
    HostTensor rounded = out;
    if (!l.perm.empty()) {
      TENACT_ASSIGN_OR_RETURN(rounded, Tensor::zeros(dtype, y.shape()));
    }
    const float* src = y.data_as<const float>();
    std::byte* dst = rounded.data();
    run_chunks(parallel, y.element_count(),
               [&](int64_t b, int64_t e) { narrow(dtype, src + b, dst + 2 * b, e - b); });
    y = rounded;
  }
  if (l.perm.empty()) return ok_status();
  return y.transposed(inverse(l.perm)).copy_to_dense(out.data());
}

// -- gelu -------------------------------------------------------------------------

Status run_gelu(const BuiltinAttrs& attrs, LoopIsa isa, const HostTensor& x, HostTensor& out,
                HostParallel* parallel) {
  TENACT_ASSIGN_OR_RETURN(const HostTensor xc, x.contiguous());
  const int64_t n = xc.element_count();
  const DType dtype = x.dtype();
  if (dtype == DType::F64) {
    const auto& t = f64_loops(isa);
    const MapFn<double> fn = attrs.tanh_approximation ? t.gelu_tanh : t.gelu_erf;
    const double* src = xc.data_as<const double>();
    double* dst = out.data_as<double>();
    run_chunks(parallel, n, [&](int64_t b, int64_t e) { fn(src + b, dst + b, e - b); });
    return ok_status();
  }
  const auto& t = f32_loops(isa);
  const MapFn<float> fn = attrs.tanh_approximation ? t.gelu_tanh : t.gelu_erf;
  if (dtype == DType::F32) {
    const float* src = xc.data_as<const float>();
    float* dst = out.data_as<float>();
    run_chunks(parallel, n, [&](int64_t b, int64_t e) { fn(src + b, dst + b, e - b); });
    return ok_status();
  }
  const std::byte* src = xc.data();
  std::byte* dst = out.data();
  run_chunks(parallel, n, [&](int64_t b, int64_t e) {
    float wide[kMapChunk], result[kMapChunk];
    for (int64_t c = b; c < e; c += kMapChunk) {
      const int64_t len = std::min(kMapChunk, e - c);
      widen(dtype, src + 2 * c, wide, len);
      fn(wide, result, len);
      narrow(dtype, result, dst + 2 * c, len);
    }
  });
  return ok_status();
}

// -- the kernel -------------------------------------------------------------------

Error mismatch(std::string message) {
  return Error{ErrorCode::InputMismatch, std::move(message)};
}

/// What preparation checked on the types, checked again on the tensors.
Status check_inputs(const BuiltinAttrs& attrs, std::span<const HostTensor> in) {
  const size_t expected = 1 + (attrs.has_scale ? 1 : 0) + (attrs.has_bias ? 1 : 0);
  if (in.size() != expected)
    return mismatch("expects " + std::to_string(expected) + " inputs, got " + std::to_string(in.size()));
  const HostTensor& x = in[0];
  for (const HostTensor& t : in) {
    if (t.dtype() != x.dtype() || !is_float(x.dtype()))
      return mismatch("inputs have dtype " + std::string{tenact::to_string(t.dtype())} + ", prepared for " +
                      "one float dtype");
    if (!t.is_host()) return mismatch("an input is not in host memory");
  }
  for (int64_t d : attrs.dimensions)
    if (static_cast<size_t>(d) >= x.rank())
      return mismatch("x has rank " + std::to_string(x.rank()) + ", below axis " + std::to_string(d));
  std::vector<int64_t> want;
  for (int64_t d : attrs.dimensions) want.push_back(x.shape()[static_cast<size_t>(d)]);
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].shape() != want)
      return mismatch("input " + std::to_string(i) + " has shape " + tenact::to_string(in[i].shape()) +
                      ", not x's shape restricted to the dimensions, " + tenact::to_string(want));
  return ok_status();
}

Result<std::vector<HostTensor>> run_op(const BuiltinAttrs& attrs, LoopIsa isa,
                                       const HostKernelArgs& args) {
  TENACT_TRY(check_inputs(attrs, args.inputs));
  const HostTensor& x = args.inputs[0];
  TENACT_ASSIGN_OR_RETURN(HostTensor out, Tensor::zeros(x.dtype(), x.shape()));
  if (x.element_count() > 0) {
    if (attrs.op == BuiltinOp::Gelu) TENACT_TRY(run_gelu(attrs, isa, x, out, args.parallel));
    else TENACT_TRY(run_groups(attrs, isa, args.inputs, out, args.parallel));
  }
  std::vector<HostTensor> results;
  results.push_back(std::move(out));
  return results;
}

}  // namespace

HostExtensionKernel make_host_kernel(BuiltinAttrs attrs, LoopIsa isa) {
  return [attrs = std::move(attrs), isa](const HostKernelArgs& args) { return run_op(attrs, isa, args); };
}

HostExtensionKernel make_host_kernel(BuiltinAttrs attrs) {
  return make_host_kernel(std::move(attrs), best_loop_isa());
}

}  // namespace tenact::builtin
