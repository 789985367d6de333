// run_dot_general: the batched matrix product of dot_general (result axes:
// batch, lhs free, rhs free).
//
// - f32/f64/c64/c128: OpenBLAS ?gemm per batch. An operand whose matrices
//   BLAS can read in place (rows or columns contiguous, the other axis one
//   constant stride) is passed as it is, with NoTrans/Trans (ConjNoTrans/
//   ConjTrans for a conjugated complex operand); any other layout is packed
//   per batch into a dense buffer (conjugated while packing).
// - f16/bf16: both operands converted to f32 and packed, sgemm into an f32
//   buffer, each result rounded once to the dtype.
// - integers: dot_loops.hpp, wrapping (unsigned arithmetic), exact.
// - Sizes BLAS's 32-bit integers cannot describe fall back to dot_loops.hpp.
// Threads: see blas_threads.hpp for how BLAS and the pool share the cores.
// The PackedPanels variant (a rhs packed in panels of 16 columns) is
// dot_packed_panels.cpp's.
#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <complex>
#include <cstdint>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "engines/cpu/kernels/blas_threads.hpp"
#include "engines/cpu/kernels/dot_loops.hpp"
#include "engines/cpu/kernels/dot_packed_panels.hpp"
#include "engines/cpu/kernels/dot_pack.hpp"
#include "engines/cpu/kernels/dot_plan.hpp"
#include "engines/cpu/kernels/dtype_dispatch.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "util/worker_pool.hpp"

namespace tenact::cpu {

namespace {

using namespace dot;

template <class T> inline constexpr bool is_blas_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> ||
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

/// The type a product computes in: f32 for f16/bf16, the unsigned type of
/// the same width for integers, the type itself otherwise.
template <class T> struct CalcOf { using type = std::make_unsigned_t<T>; };
template <> struct CalcOf<f16> { using type = float; };
template <> struct CalcOf<bf16> { using type = float; };
template <> struct CalcOf<float> { using type = float; };
template <> struct CalcOf<double> { using type = double; };
template <> struct CalcOf<std::complex<float>> { using type = std::complex<float>; };
template <> struct CalcOf<std::complex<double>> { using type = std::complex<double>; };
template <class T> using calc_t = typename CalcOf<T>::type;

template <class Out, class C> inline Out from_calc(const C& c) {
  if constexpr (is_half_v<Out>) return Out{c};
  else return static_cast<Out>(c);
}

// -- BLAS ------------------------------------------------------------------------

void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const float* a, int lda,
          const float* b, int ldb, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const double* a, int lda,
          const double* b, int ldb, double* c, int ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
}
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
          const std::complex<float>* a, int lda, const std::complex<float>* b, int ldb,
          std::complex<float>* c, int ldc) {
  const std::complex<float> one{1.0f, 0.0f}, zero{0.0f, 0.0f};
  cblas_cgemm(CblasRowMajor, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
}
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
          const std::complex<double>* a, int lda, const std::complex<double>* b, int ldb,
          std::complex<double>* c, int ldc) {
  const std::complex<double> one{1.0, 0.0}, zero{0.0, 0.0};
  cblas_zgemm(CblasRowMajor, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
}

CBLAS_TRANSPOSE blas_flag(bool transposed, bool conj) {
  if (transposed) return conj ? CblasConjTrans : CblasTrans;
  return conj ? CblasConjNoTrans : CblasNoTrans;
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

/// Everything one dot_general needs, shared by its tasks (read-only).
struct DotCall {
  const DotPlan& plan;
  bool conj_lhs;
  bool conj_rhs;
  std::span<const int64_t> lhs_offsets;  // per batch
  std::span<const int64_t> rhs_offsets;
  WorkerPool* pool;
};

/// A dot's plan and batch offsets (empty when it has no products to
/// compute) for one pair of operand shapes and strides (what a KernelKeep
/// holds between runs of one op).
struct KeptDot {
  std::vector<int64_t> lhs_shape, lhs_strides, rhs_shape, rhs_strides;
  DotPlan plan;
  std::vector<int64_t> lhs_offsets, rhs_offsets;

  bool fits(const HostTensor& lhs, const HostTensor& rhs) const {
    return lhs.shape() == lhs_shape && lhs.strides() == lhs_strides && rhs.shape() == rhs_shape &&
           rhs.strides() == rhs_strides;
  }
};

/// Names KeptDot objects in a KernelKeep.
constexpr char kKeptDotOwner = 0;

/// The plan of `lhs` x `rhs`: from the call's keep when it was worked out
/// for these shapes and strides, else now (and kept when the call has a
/// keep). Errors: plan_dot's, with the op's name.
Result<std::shared_ptr<const KeptDot>> dot_plan_for(const KernelCall& call, const HostTensor& lhs,
                                                    const HostTensor& rhs, const DotGeneralAttrs& attrs) {
  if (call.keep)
    if (const KeptDot* kept = call.keep->find<KeptDot>(&kKeptDotOwner); kept && kept->fits(lhs, rhs))
      return std::static_pointer_cast<const KeptDot>(call.keep->kept);
  auto planned = plan_dot(lhs.shape(), lhs.strides(), rhs.shape(), rhs.strides(), attrs);
  if (!planned.ok()) return std::move(planned).error().with_context("dot_general");
  auto made = std::make_shared<KeptDot>();
  if (call.keep) {  // the operands' layout, only where it is checked again
    made->lhs_shape = lhs.shape();
    made->lhs_strides = lhs.strides();
    made->rhs_shape = rhs.shape();
    made->rhs_strides = rhs.strides();
  }
  made->plan = std::move(*planned);
  const DotPlan& p = made->plan;
  if (p.batch * p.m * p.n != 0 && p.k != 0) {  // offsets only for a dot with products to compute
    made->lhs_offsets = group_offsets(p.lhs_batch);
    made->rhs_offsets = group_offsets(p.rhs_batch);
  }
  if (call.keep) call.keep->keep(&kKeptDotOwner, made);
  return std::shared_ptr<const KeptDot>(std::move(made));
}

/// Runs body(b0, b1) over the batches: spread over the pool when every
/// gemm is small enough that OpenBLAS keeps it in the calling thread,
/// serially (one gemm at a time, BLAS threads inside) otherwise.
/// Returns false when a task failed to allocate.
template <class Body>
bool for_batches(const DotCall& d, bool small_gemms, Body&& body) {
  std::atomic<bool> failed{false};
  auto guarded = [&](int64_t b0, int64_t b1) {
    try {
      body(b0, b1);
    } catch (const std::bad_alloc&) {
      failed.store(true);
    }
  };
  if (small_gemms && d.plan.batch > 1)
    parallel_for(d.pool, d.plan.batch, 1, guarded);
  else
    guarded(0, d.plan.batch);
  return !failed.load();
}

bool small_gemm(const DotPlan& p) {
  return static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) <=
         kBlasSingleThreadWork;
}

/// f32/f64/c64/c128 through BLAS, operands in place where possible.
template <class T>
bool blas_product(const T* lhs, const T* rhs, T* out, const DotCall& d) {
  const DotPlan& p = d.plan;
  const BlasOperand a_op = blas_operand(p.lhs_free, p.lhs_contract);
  const BlasOperand b_op = blas_operand(p.rhs_contract, p.rhs_free);
  const bool a_direct = a_op.direct && fits_int(a_op.ld);
  const bool b_direct = b_op.direct && fits_int(b_op.ld);
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
  return for_batches(d, small_gemm(p), [&](int64_t b0, int64_t b1) {
    std::vector<T> a_buf(a_direct ? 0 : static_cast<size_t>(p.m * p.k));
    std::vector<T> b_buf(b_direct ? 0 : static_cast<size_t>(p.k * p.n));
    for (int64_t b = b0; b < b1; ++b) {
      const T* a = lhs + d.lhs_offsets[static_cast<size_t>(b)];
      const T* bm = rhs + d.rhs_offsets[static_cast<size_t>(b)];
      CBLAS_TRANSPOSE ta = CblasNoTrans, tb = CblasNoTrans;
      int lda = k, ldb = n;
      if (a_direct) {
        ta = blas_flag(a_op.transposed, d.conj_lhs && is_complex_v<T>);
        lda = static_cast<int>(a_op.ld);
      } else {
        pack_matrix<T>(a_buf.data(), a, p.lhs_free, p.lhs_contract, d.conj_lhs);
        a = a_buf.data();
      }
      if (b_direct) {
        tb = blas_flag(b_op.transposed, d.conj_rhs && is_complex_v<T>);
        ldb = static_cast<int>(b_op.ld);
      } else {
        pack_matrix<T>(b_buf.data(), bm, p.rhs_contract, p.rhs_free, d.conj_rhs);
        bm = b_buf.data();
      }
      gemm(ta, tb, m, n, k, a, lda, bm, ldb, out + b * p.m * p.n, n);
    }
  });
}

/// f16/bf16: converted to f32, sgemm, rounded once.
template <class T>
bool half_product(const T* lhs, const T* rhs, T* out, const DotCall& d) {
  const DotPlan& p = d.plan;
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
  return for_batches(d, small_gemm(p), [&](int64_t b0, int64_t b1) {
    std::vector<float> a_buf(static_cast<size_t>(p.m * p.k));
    std::vector<float> b_buf(static_cast<size_t>(p.k * p.n));
    std::vector<float> c_buf(static_cast<size_t>(p.m * p.n));
    for (int64_t b = b0; b < b1; ++b) {
      pack_matrix<float>(a_buf.data(), lhs + d.lhs_offsets[static_cast<size_t>(b)], p.lhs_free,
                         p.lhs_contract, false);
      pack_matrix<float>(b_buf.data(), rhs + d.rhs_offsets[static_cast<size_t>(b)],
                         p.rhs_contract, p.rhs_free, false);
      gemm(CblasNoTrans, CblasNoTrans, m, n, k, a_buf.data(), k, b_buf.data(), n, c_buf.data(), n);
      T* o = out + b * p.m * p.n;
      for (size_t i = 0; i < c_buf.size(); ++i) o[i] = T{c_buf[i]};
    }
  });
}

/// Integers, and any type whose sizes exceed BLAS's ints: dot_loops.hpp,
/// batches in order, the rows of each product spread over the pool.
template <class T>
bool loop_product(const T* lhs, const T* rhs, T* out, const DotCall& d) {
  using C = calc_t<T>;
  const DotPlan& p = d.plan;
  try {
    std::vector<C> a_buf(static_cast<size_t>(p.m * p.k));
    std::vector<C> b_buf(static_cast<size_t>(p.k * p.n));
    std::vector<C> c_buf(static_cast<size_t>(p.m * p.n));
    for (int64_t b = 0; b < p.batch; ++b) {
      pack_matrix<C>(a_buf.data(), lhs + d.lhs_offsets[static_cast<size_t>(b)], p.lhs_free,
                     p.lhs_contract, d.conj_lhs);
      pack_matrix<C>(b_buf.data(), rhs + d.rhs_offsets[static_cast<size_t>(b)], p.rhs_contract,
                     p.rhs_free, d.conj_rhs);
      const int64_t row_work = std::max<int64_t>(1, p.n * p.k);
      parallel_for(d.pool, p.m, std::max<int64_t>(1, (int64_t{1} << 16) / row_work),
                   [&](int64_t r0, int64_t r1) {
                     gemm_rows(a_buf.data(), b_buf.data(), c_buf.data(), p.n, p.k, r0, r1);
                   });
      T* o = out + b * p.m * p.n;
      for (size_t i = 0; i < c_buf.size(); ++i) o[i] = from_calc<T>(c_buf[i]);
    }
  } catch (const std::bad_alloc&) {
    return false;
  }
  return true;
}

template <class T>
bool product(const HostTensor& lhs, const HostTensor& rhs, HostTensor& out, const DotCall& d) {
  const DotPlan& p = d.plan;
  const T* l = lhs.data_as<const T>();
  const T* r = rhs.data_as<const T>();
  T* o = out.data_as<T>();
  const bool blas_sizes = fits_int(p.m) && fits_int(p.n) && fits_int(p.k);
  if constexpr (is_blas_v<T>) {
    if (blas_sizes) return blas_product<T>(l, r, o, d);
  } else if constexpr (is_half_v<T>) {
    if (blas_sizes) return half_product<T>(l, r, o, d);
  }
  return loop_product<T>(l, r, o, d);
}

}  // namespace

Result<std::vector<HostTensor>> run_dot_general(const KernelCall& call) {
  if (call.variant == KernelVariant::PackedPanels) return run_dot_packed_panels(call);
  const auto* attrs = std::get_if<DotGeneralAttrs>(&call.attrs);
  if (attrs == nullptr)
    return Error{ErrorCode::Internal, "dot_general: the attributes are not dot_general attributes"};
  if (call.inputs.size() != 2)
    return Error{ErrorCode::InputMismatch,
                 "dot_general takes 2 operands, got " + std::to_string(call.inputs.size())};
  const HostTensor& lhs = call.inputs[0];
  const HostTensor& rhs = call.inputs[1];
  if (lhs.dtype() != rhs.dtype())
    return Error{ErrorCode::TypeMismatch, "dot_general operands differ in dtype: " +
                                              std::string{to_string(lhs.dtype())} + " and " +
                                              std::string{to_string(rhs.dtype())}};
  if (lhs.dtype() == DType::Bool)
    return Error{ErrorCode::TypeMismatch, "dot_general does not accept bool operands"};
  if (!call.result_types.empty() && call.result_types[0].dtype != lhs.dtype())
    return Error{ErrorCode::InputMismatch,
                 "dot_general: the program expects a " +
                     std::string{to_string(call.result_types[0].dtype)} +
                     " result, the operands give " + std::string{to_string(lhs.dtype())}};

  std::shared_ptr<const KeptDot> kept;
  try {
    TENACT_ASSIGN_OR_RETURN(kept, dot_plan_for(call, lhs, rhs, *attrs));
  } catch (const std::bad_alloc&) {
    return Error{ErrorCode::ResourceExhausted, "dot_general: out of memory for its plan"};
  }
  const DotPlan& plan = kept->plan;
  // Every path writes each element (BLAS with beta = 0 included) unless K
  // is 0: the result is then zeros.
  const bool products = plan.batch * plan.m * plan.n != 0 && plan.k != 0;
  TENACT_ASSIGN_OR_RETURN(HostTensor out,
                          output_tensor(call, 0, lhs.dtype(), plan.out_shape,
                                        products ? BufferFill::Unspecified : BufferFill::Zeroed));

  if (products) {
    bool ok = false;
    try {
      DotCall d{plan, attrs->conj_lhs, attrs->conj_rhs, kept->lhs_offsets, kept->rhs_offsets, call.pool};
      ok = visit_dtype<float>(lhs.dtype(), [&](auto tag) {  // bool is rejected before
        using T = typename decltype(tag)::type;
        return product<T>(lhs, rhs, out, d);
      });
    } catch (const std::bad_alloc&) {
      ok = false;
    }
    if (!ok)
      return Error{ErrorCode::ResourceExhausted,
                   "dot_general: out of memory for the packing buffers of a " +
                       std::to_string(plan.m) + "x" + std::to_string(plan.k) + " by " +
                       std::to_string(plan.k) + "x" + std::to_string(plan.n) + " product"};
  }
  return single_result(call, std::move(out));
}

}  // namespace tenact::cpu
