// Memory-bound kernels: transpose 4096x4096 f32, reduce_sum over 16M f32,
// against memcpy bandwidth and the cost of allocating a kernel output,
// measured in the same run.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "bench/cpu_bench_sections.hpp"
#include "engines/cpu/kernels/kernel.hpp"

namespace tenact::bench {

namespace {

constexpr int64_t kTransposeSide = 4096;
constexpr int64_t kReduceElements = int64_t{16} * 1024 * 1024;
constexpr size_t kCopyBytes = size_t{64} * 1024 * 1024;

Status run_and_drop(const cpu::KernelCall& call) {
  auto r = cpu::run_kernel(call);
  return r.ok() ? ok_status() : Status{std::move(r).error()};
}

// Reference: a plain 32x32-blocked transpose of a square f32 matrix over
// the pool (rows of blocks per task) into a preallocated, mapped output.
void blocked_transpose(WorkerPool& pool, const float* src, float* dst, int64_t n) {
  constexpr int64_t kBlock = 32;
  parallel_for(&pool, n / kBlock, 4, [=](int64_t b0, int64_t b1) {
    for (int64_t bi = b0 * kBlock; bi < b1 * kBlock; bi += kBlock)
      for (int64_t bj = 0; bj < n; bj += kBlock)
        for (int64_t i = bi; i < bi + kBlock; ++i)
          for (int64_t j = bj; j < bj + kBlock; ++j) dst[j * n + i] = src[i * n + j];
  });
}

void bench_transpose(BenchContext& ctx) {
  const std::string label = "transpose f32 4096x4096 [1,0]";
  const int64_t n = kTransposeSide;
  auto x = uniform_tensor<float>(DType::F32, {n, n}, -1.0, 1.0, 21);
  if (!x.ok()) {
    ctx.checks.fail(label + ": input allocation failed");
    return;
  }
  const std::vector<HostTensor> inputs{*x};
  const OpAttrs attrs = TransposeAttrs{{1, 0}};
  const std::vector<ValueType> result_types{ValueType{DType::F32, exact_shape({n, n})}};
  const SymbolBindings symbols;
  const cpu::KernelCall call{OpKind::Transpose, attrs, inputs, result_types, symbols,
                             &ctx.engine.pool()};
  auto out = cpu::run_kernel(call);
  if (!out.ok()) {
    ctx.checks.fail(label + ": " + out.error().to_string());
    return;
  }
  const float* src = x->data_as<float>();
  const HostTensor& y = (*out)[0];
  bool equal = y.shape() == std::vector<int64_t>{n, n} && y.is_contiguous();
  const float* dst = y.data_as<float>();
  for (int64_t i = 0; equal && i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      if (std::memcmp(&dst[j * n + i], &src[i * n + j], sizeof(float)) != 0) {
        equal = false;
        break;
      }
  ctx.checks.check(equal, label + ": output is the exact transpose");
  out = std::vector<HostTensor>{};

  auto reference_out = HostTensor::zeros(DType::F32, {n, n});
  if (!reference_out.ok()) {
    ctx.checks.fail(label + ": reference output allocation failed");
    return;
  }
  float* ref = reference_out->data_as<float>();
  const Variant variants[] = {
      [&] { return run_and_drop(call); },
      [&]() -> Status {
        blocked_transpose(ctx.engine.pool(), src, ref, n);
        return ok_status();
      },
  };
  auto samples = run_interleaved(ctx.options.reps(21), variants);
  if (!samples.ok()) {
    ctx.checks.fail(label + ": " + samples.error().to_string());
    return;
  }
  const double bytes = 2.0 * static_cast<double>(n * n) * sizeof(float);
  const double gbps = bytes / (*samples)[0].pick(ctx.options.statistic) / kGB;
  const double ref_gbps = bytes / (*samples)[1].pick(ctx.options.statistic) / kGB;
  char note[128];
  std::snprintf(note, sizeof note, "read+write (2 x 64 MiB); ratio vs hand 32x32-blocked %.2f GB/s",
                ref_gbps);
  ctx.table.add({label, gbps, "GB/s", gbps / ref_gbps, 5.0, true, note});
}

// memcpy split into one contiguous chunk per pool range (the threads the
// kernels use).
void pool_memcpy(WorkerPool& pool, std::byte* dst, const std::byte* src, size_t bytes) {
  const int64_t blocks = static_cast<int64_t>(bytes / 4096);
  parallel_for(&pool, blocks, 1024, [=](int64_t begin, int64_t end) {
    const size_t from = static_cast<size_t>(begin) * 4096;
    const size_t to = end == blocks ? bytes : static_cast<size_t>(end) * 4096;
    std::memcpy(dst + from, src + from, to - from);
  });
}

void bench_reduce_and_copy(BenchContext& ctx) {
  const std::string label = "reduce_sum f32 16M [0]";
  auto x = uniform_tensor<float>(DType::F32, {kReduceElements}, -1.0, 1.0, 31);
  auto copy_dst = HostTensor::zeros(DType::F32, {kReduceElements});
  if (!x.ok() || !copy_dst.ok()) {
    ctx.checks.fail(label + ": input allocation failed");
    return;
  }
  const std::vector<HostTensor> inputs{*x};
  const OpAttrs attrs = ReduceAttrs{{0}};
  const std::vector<ValueType> result_types{ValueType{DType::F32, Shape{}}};
  const SymbolBindings symbols;
  const cpu::KernelCall call{OpKind::ReduceSum, attrs, inputs, result_types, symbols,
                             &ctx.engine.pool()};
  auto out = cpu::run_kernel(call);
  if (!out.ok()) {
    ctx.checks.fail(label + ": " + out.error().to_string());
    return;
  }
  // Oracle: the sum in long double; bound of docs/program-format.md, "Sums".
  const float* xs = x->data_as<float>();
  long double exact = 0, abs_sum = 0;
  for (int64_t i = 0; i < kReduceElements; ++i) {
    exact += xs[i];
    abs_sum += std::abs(xs[i]);
  }
  const double got = (*out)[0].rank() == 0 ? static_cast<double>(*(*out)[0].data_as<float>())
                                            : std::numeric_limits<double>::quiet_NaN();
  const double bound = 2.0 * 24.0 * std::numeric_limits<float>::epsilon() * static_cast<double>(abs_sum);
  const double err = std::abs(got - static_cast<double>(exact));
  ctx.checks.check(err <= bound, label + ": |sum - exact| " + std::to_string(err) + " <= " +
                                     std::to_string(bound));

  std::byte* dst = copy_dst->data();
  const std::byte* src = x->data();
  WorkerPool& pool = ctx.engine.pool();
  const Variant variants[] = {
      [&] { return run_and_drop(call); },
      [&]() -> Status {
        pool_memcpy(pool, dst, src, kCopyBytes);
        return ok_status();
      },
      [&]() -> Status {
        std::memcpy(dst, src, kCopyBytes);
        return ok_status();
      },
      [&]() -> Status {
        auto b = Buffer::allocate(kCopyBytes);
        return b.ok() ? ok_status() : Status{std::move(b).error()};
      },
  };
  auto samples = run_interleaved(ctx.options.reps(31), variants);
  if (!samples.ok()) {
    ctx.checks.fail(label + ": " + samples.error().to_string());
    return;
  }
  const double bytes = static_cast<double>(kCopyBytes);
  auto gbps = [&](size_t i) { return bytes / (*samples)[i].pick(ctx.options.statistic) / kGB; };
  const double g_reduce = gbps(0), g_copy = gbps(1), g_copy1 = gbps(2), g_alloc = gbps(3);
  char note[128];
  std::snprintf(note, sizeof note, "bytes read; vs pool memcpy %.2f GB/s read", g_copy);
  ctx.table.add({label, g_reduce, "GB/s", g_reduce / g_copy, 0.7, false, note});
  std::snprintf(note, sizeof note, "64 MiB over the pool; read+write %.2f GB/s", 2 * g_copy);
  ctx.table.add({"memcpy, pool threads (info)", g_copy, "GB/s", std::nullopt, std::nullopt, false,
                 note});
  std::snprintf(note, sizeof note, "64 MiB, one thread; read+write %.2f GB/s", 2 * g_copy1);
  ctx.table.add({"memcpy, one thread (info)", g_copy1, "GB/s", std::nullopt, std::nullopt, false,
                 note});
  std::snprintf(note, sizeof note, "%.2f ms per 64 MiB kernel output (zero-filled)",
                (*samples)[3].pick(ctx.options.statistic) * 1e3);
  ctx.table.add({"Buffer::allocate 64 MiB (info)", g_alloc, "GB/s", std::nullopt, std::nullopt,
                 false, note});
}

}  // namespace

void bench_memory_bound(BenchContext& ctx) {
  bench_transpose(ctx);
  bench_reduce_and_copy(ctx);
}

}  // namespace tenact::bench
