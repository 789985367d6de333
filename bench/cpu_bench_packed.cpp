// The packed-panel f32 product (dot_packed_panels.hpp) against cblas_sgemm
// called directly on the same data (B row-major, which sgemm copies into
// its own panels on every call), for the small M of batched inference: M in
// {1, 4, 16, 64}, (K, N) in {(784, 128), (1024, 1024), (4096, 1024)}, on
// one thread (no pool, OpenBLAS at 1 thread) and on all of them (the
// engine's pool, OpenBLAS at as many threads). Both write into a
// preallocated C. The two results are first checked against each other
// within twice the sum bound of docs/program-format.md (both carry it).
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/cpu_bench_sections.hpp"
#include "core/tensor_layout.hpp"
#include "engines/cpu/kernels/blas_threads.hpp"
#include "engines/cpu/kernels/dot_packed_panels.hpp"

namespace tenact::bench {

namespace {

struct Shape {
  int64_t m, k, n;
};

void sgemm(const Shape& s, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(s.m), static_cast<int>(s.n),
              static_cast<int>(s.k), 1.0f, a, static_cast<int>(s.k), b, static_cast<int>(s.n), 0.0f, c,
              static_cast<int>(s.n));
}

/// Calls per timed sample: about 2e7 multiply-adds each, at least one.
int64_t calls_per_sample(const Shape& s) { return std::max<int64_t>(1, 20'000'000 / (s.m * s.k * s.n)); }

void bench_one(BenchContext& ctx, const Shape& s, bool all_threads) {
  const size_t threads = all_threads ? ctx.engine.pool().thread_count() : 1;
  const std::string label = "packed f32 M=" + std::to_string(s.m) + " K=" + std::to_string(s.k) +
                            " N=" + std::to_string(s.n) + " " + std::to_string(threads) + "t";
  auto a = uniform_tensor<float>(DType::F32, {s.m, s.k}, -1.0, 1.0, 31);
  auto b = uniform_tensor<float>(DType::F32, {s.k, s.n}, -1.0, 1.0, 32);
  auto c_packed = HostTensor::zeros(DType::F32, {s.m, s.n});
  auto c_blas = HostTensor::zeros(DType::F32, {s.m, s.n});
  if (!a.ok() || !b.ok() || !c_packed.ok() || !c_blas.ok()) {
    ctx.checks.fail(label + ": allocation failed");
    return;
  }
  auto panels = pack_blocked(*b, cpu::packed_panels_layout());
  if (!panels.ok()) {
    ctx.checks.fail(label + ": " + panels.error().to_string());
    return;
  }
  WorkerPool* pool = all_threads ? &ctx.engine.pool() : nullptr;
  cpu::set_blas_threads(static_cast<int>(threads));
  const float* ap = a->data_as<float>();
  const float* bp = b->data_as<float>();
  float* cp = c_packed->data_as<float>();
  float* cb = c_blas->data_as<float>();
  const cpu::PanelProduct product{ap, s.k, panels->data_as<float>(), cp, s.m, s.k, s.n};

  // Agreement first: |a|, |b| < 1, so sum |terms| <= K per element.
  if (Status st = cpu::packed_panels_product(product, pool); !st.ok()) {
    ctx.checks.fail(label + ": " + st.error().to_string());
    return;
  }
  sgemm(s, ap, bp, cb);
  const double bound = 2.0 * 2.0 * std::ceil(std::log2(static_cast<double>(s.k))) * std::ldexp(1.0, -23) *
                       static_cast<double>(s.k);
  double max_diff = 0;
  for (int64_t i = 0; i < s.m * s.n; ++i)
    max_diff = std::max(max_diff, std::abs(static_cast<double>(cp[i]) - static_cast<double>(cb[i])));
  ctx.checks.check(max_diff <= bound, label + " matches cblas_sgemm (max |diff| " + std::to_string(max_diff) +
                                          " <= " + std::to_string(bound) + ")");

  const int64_t calls = calls_per_sample(s);
  const Variant variants[] = {
      [&]() -> Status {
        for (int64_t i = 0; i < calls; ++i) TENACT_TRY(cpu::packed_panels_product(product, pool));
        return ok_status();
      },
      [&]() -> Status {
        for (int64_t i = 0; i < calls; ++i) sgemm(s, ap, bp, cb);
        return ok_status();
      },
  };
  auto samples = run_interleaved(ctx.options.reps(21), variants);
  cpu::set_blas_threads(static_cast<int>(ctx.engine.pool().thread_count()));
  if (!samples.ok()) {
    ctx.checks.fail(label + ": " + samples.error().to_string());
    return;
  }
  const double per_call = 1e6 / static_cast<double>(calls);
  const double packed_us = (*samples)[0].pick(ctx.options.statistic) * per_call;
  const double sgemm_us = (*samples)[1].pick(ctx.options.statistic) * per_call;
  char note[96];
  std::snprintf(note, sizeof note, "ratio sgemm/packed; cblas_sgemm %.1f us", sgemm_us);
  Figure f{label, packed_us, "us", sgemm_us / packed_us, std::nullopt, false, note};
  if (s.m <= 16) f.target = 1.0;  // small M: faster than sgemm's repacking
  ctx.table.add(std::move(f));
}

}  // namespace

void bench_packed_panels(BenchContext& ctx) {
  for (bool all_threads : {false, true})
    for (Shape kn : {Shape{0, 784, 128}, Shape{0, 1024, 1024}, Shape{0, 4096, 1024}})
      for (int64_t m : {1, 4, 16, 64}) bench_one(ctx, Shape{m, kn.k, kn.n}, all_threads);
}

}  // namespace tenact::bench
