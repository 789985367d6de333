// dot_general through run_kernel vs a direct cblas_?gemm on the same input
// buffers with the same OpenBLAS thread count.
#include <cblas.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "bench/cpu_bench_sections.hpp"
#include "engines/cpu/kernels/blas_threads.hpp"
#include "engines/cpu/kernels/kernel.hpp"

namespace tenact::bench {

namespace {

void direct_gemm(int n, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
}
void direct_gemm(int n, const double* a, const double* b, double* c) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
}

// Repetitions of a full run per size: about the same total time per size.
int full_reps(int64_t n) {
  if (n <= 256) return 41;
  if (n <= 512) return 21;
  if (n <= 1024) return 11;
  return 5;
}

template <class T>
void bench_one(BenchContext& ctx, DType dtype, int64_t n) {
  const std::string label = std::string("dot_general ") + std::string(to_string(dtype)) +
                            " n=" + std::to_string(n);
  auto a = uniform_tensor<T>(dtype, {n, n}, -1.0, 1.0, 1);
  auto b = uniform_tensor<T>(dtype, {n, n}, -1.0, 1.0, 2);
  auto c = HostTensor::zeros(dtype, {n, n});
  if (!a.ok() || !b.ok() || !c.ok()) {
    ctx.checks.fail(label + ": input allocation failed");
    return;
  }
  const std::vector<HostTensor> inputs{*a, *b};
  DotGeneralAttrs dims;
  dims.lhs_contracting_dimensions = {1};
  dims.rhs_contracting_dimensions = {0};
  const OpAttrs attrs = dims;
  const std::vector<ValueType> result_types{ValueType{dtype, exact_shape({n, n})}};
  const SymbolBindings symbols;
  const cpu::KernelCall call{OpKind::DotGeneral, attrs, inputs, result_types, symbols,
                             &ctx.engine.pool()};

  // The engine gives OpenBLAS the pool's thread count; the baseline runs
  // with the same setting.
  cpu::set_blas_threads(static_cast<int>(ctx.engine.pool().thread_count()));
  const int ni = static_cast<int>(n);
  const T* ap = a->template data_as<T>();
  const T* bp = b->template data_as<T>();
  T* cp = c->template data_as<T>();

  // Correctness first: engine vs baseline within the summation bound of
  // docs/program-format.md (|a|, |b| < 1, so sum |terms| <= n), counted twice
  // (both results carry it).
  auto engine_out = cpu::run_kernel(call);
  if (!engine_out.ok()) {
    ctx.checks.fail(label + ": " + engine_out.error().to_string());
    return;
  }
  direct_gemm(ni, ap, bp, cp);
  const T* ep = (*engine_out)[0].template data_as<T>();
  const double bound = 2.0 * 2.0 * std::ceil(std::log2(static_cast<double>(n))) *
                       std::numeric_limits<T>::epsilon() * static_cast<double>(n);
  double max_diff = 0;
  for (int64_t i = 0; i < n * n; ++i)
    max_diff = std::max(max_diff, std::abs(static_cast<double>(ep[i]) - static_cast<double>(cp[i])));
  const bool bitwise = std::memcmp(ep, cp, static_cast<size_t>(n * n) * sizeof(T)) == 0;
  ctx.checks.check(max_diff <= bound,
                   label + " matches cblas (" +
                       (bitwise ? std::string("bitwise equal")
                                : "max |diff| " + std::to_string(max_diff) + " <= " +
                                      std::to_string(bound)) +
                       ")");
  engine_out = std::vector<HostTensor>{};

  const Variant variants[] = {
      [&]() -> Status {
        auto r = cpu::run_kernel(call);
        if (!r.ok()) return std::move(r).error();
        return ok_status();
      },
      [&]() -> Status {
        direct_gemm(ni, ap, bp, cp);
        return ok_status();
      },
  };
  auto samples = run_interleaved(ctx.options.reps(full_reps(n)), variants);
  if (!samples.ok()) {
    ctx.checks.fail(label + ": " + samples.error().to_string());
    return;
  }
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  const double engine_gflops = flops / (*samples)[0].pick(ctx.options.statistic) / kGB;
  const double blas_gflops = flops / (*samples)[1].pick(ctx.options.statistic) / kGB;
  char note[96];
  std::snprintf(note, sizeof note, "vs cblas_%cgemm %.1f GFLOP/s", dtype == DType::F32 ? 's' : 'd',
                blas_gflops);
  Figure f{label, engine_gflops, "GFLOP/s", engine_gflops / blas_gflops, std::nullopt, false, note};
  if (n >= 512) f.target = 0.95;
  ctx.table.add(std::move(f));
}

}  // namespace

void bench_dot_general(BenchContext& ctx) {
  for (int64_t n : {256, 512, 1024, 2048}) {
    bench_one<float>(ctx, DType::F32, n);
    bench_one<double>(ctx, DType::F64, n);
  }
}

}  // namespace tenact::bench
