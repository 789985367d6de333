// Small ops through the kernels' entry point: what one call costs when the
// arithmetic is nearly free. `add f32[n]` for n = 1 and 1000 through
// run_kernel (the engine's pool attached, as the engine calls it), each
// against the same add written by hand into a preallocated buffer, timed
// over batches of calls (the figure is per call).
#include <cstdio>
#include <string>
#include <vector>

#include "bench/cpu_bench_sections.hpp"
#include "engines/cpu/kernels/kernel.hpp"

namespace tenact::bench {

namespace {

void bench_add(BenchContext& ctx, int64_t n, int calls_per_sample, std::optional<double> ceiling_ns) {
  const std::string label = "add f32[" + std::to_string(n) + "] via run_kernel";
  auto a = uniform_tensor<float>(DType::F32, {n}, -1, 1, 7);
  auto b = uniform_tensor<float>(DType::F32, {n}, -1, 1, 8);
  auto hand_out = HostTensor::zeros(DType::F32, {n});
  if (!a.ok() || !b.ok() || !hand_out.ok()) {
    ctx.checks.fail(label + ": input allocation failed");
    return;
  }
  const std::vector<HostTensor> inputs{*a, *b};
  const std::vector<ValueType> types{ValueType{DType::F32, Shape{ShapeExtent::exact(DimExpr::constant(n))}}};
  const SymbolBindings none;
  const OpAttrs attrs = NoAttrs{};
  std::optional<HostTensor> last;
  Variant through_kernel = [&]() -> Status {
    for (int i = 0; i < calls_per_sample; ++i) {
      cpu::KernelCall call{OpKind::Add, attrs, inputs, types, none, &ctx.engine.pool()};
      auto r = cpu::run_kernel(call);
      if (!r.ok()) return std::move(r).error();
      if (i + 1 == calls_per_sample) last = std::move((*r)[0]);
    }
    return ok_status();
  };
  const float* pa = a->data_as<float>();
  const float* pb = b->data_as<float>();
  float* py = hand_out->data_as<float>();
  Variant by_hand = [&]() -> Status {
    for (int i = 0; i < calls_per_sample; ++i) {
      for (int64_t k = 0; k < n; ++k) py[k] = pa[k] + pb[k];
      asm volatile("" : : "r"(py) : "memory");  // keep every call's stores
    }
    return ok_status();
  };
  const std::vector<Variant> variants{through_kernel, by_hand};
  auto samples = run_interleaved(ctx.options.reps(40), variants);
  if (!samples.ok()) {
    ctx.checks.fail(label + ": " + samples.error().to_string());
    return;
  }
  const double kernel_ns = (*samples)[0].pick(ctx.options.statistic) / calls_per_sample * 1e9;
  const double hand_ns = (*samples)[1].pick(ctx.options.statistic) / calls_per_sample * 1e9;
  char note[128];
  std::snprintf(note, sizeof note, "ns per call; by hand into a preallocated buffer %.1f ns (ratio = kernel / hand)",
                hand_ns);
  Figure f{label, kernel_ns, "ns", kernel_ns / hand_ns, ceiling_ns, true, note, true};
  ctx.table.add(std::move(f));
  ctx.checks.check(last && last->bitwise_equal(*hand_out), label + ": result equals the hand loop's");
}

}  // namespace

void bench_small_ops(BenchContext& ctx) {
  bench_add(ctx, 1, 20000, 100.0);
  bench_add(ctx, 1000, 5000, std::nullopt);
}

}  // namespace tenact::bench
