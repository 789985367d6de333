// The sections of cpu_bench, one file each. Every section measures its
// variants in the same run (interleaved), adds its figures to the table and
// records in `checks` whether the kernels ran and their results agree.
#pragma once

#include <cstdint>
#include <random>

#include "bench/bench_util.hpp"
#include "core/tensor.hpp"
#include "engines/cpu/cpu_engine.hpp"

namespace tenact::bench {

struct BenchContext {
  cpu::CpuEngine& engine;
  const BenchOptions& options;
  Table& table;
  Checks& checks;
};

/// dot_general f32/f64 square matmuls vs direct cblas_?gemm.
void bench_dot_general(BenchContext& ctx);
/// y = tanh(a*b + c) * 0.5 + a: fused runner, op-by-op runner, hand loop.
void bench_elementwise_chain(BenchContext& ctx);
/// transpose 4096x4096 f32; reduce_sum over 16M f32 vs memcpy bandwidth.
void bench_memory_bound(BenchContext& ctx);
/// The packed-panel f32 product vs cblas_sgemm for M 1..64, 1 and all threads.
void bench_packed_panels(BenchContext& ctx);
/// add f32[1] and f32[1000] through run_kernel vs the same add by hand.
void bench_small_ops(BenchContext& ctx);

/// A dense tensor of uniform values in [lo, hi) (fixed seed: every run
/// measures the same data).
template <class T>
Result<HostTensor> uniform_tensor(DType dtype, std::vector<int64_t> shape, double lo, double hi,
                                  uint32_t seed) {
  TENACT_ASSIGN_OR_RETURN(HostTensor t, HostTensor::zeros(dtype, std::move(shape)));
  std::mt19937 rng{seed};
  std::uniform_real_distribution<double> dist{lo, hi};
  T* p = t.data_as<T>();
  for (int64_t i = 0; i < t.element_count(); ++i) p[i] = static_cast<T>(dist(rng));
  return t;
}

}  // namespace tenact::bench
