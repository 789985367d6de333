// The elementwise chain y = tanh(a*b + c) * 0.5 + a over 16M f32, run
// (a) fused by run_program_on_cpu, (b) op by op by the same runner, (c) as
// a hand-written loop over the engine's pool, and (info) as the fused
// region alone, with 0.5 as a rank-0 input instead of a materialised
// constant (on the pool and on the calling thread alone), next to STREAM's
// triad over the same element count on the pool and on one thread: the
// memory bound a streaming loop reaches. (a) and (b) run the same f32 tanh
// tile loop, in the widest instruction set the CPU has
// (elementwise_tiles_vmath.hpp); the note names it.
#include <cmath>
#include <string>
#include <vector>

#include "bench/cpu_bench_sections.hpp"
#include "core/builder.hpp"
#include "reference/cpu_reference_runner.hpp"
#include "engines/cpu/kernels/elementwise_tiles_vmath.hpp"
#include "engines/cpu/kernels/fused_elementwise.hpp"

namespace tenact::bench {

namespace {

constexpr int64_t kChainElements = int64_t{16} * 1024 * 1024;
// 3 reads (a, b, c) and 1 write (y) of f32 per element.
constexpr double kChainBytesPerElement = 16.0;

// The constant comes first: it is a layout op and would split the
// elementwise run if it stood between the multiplies.
Result<SemanticProgram> chain_program() {
  ProgramBuilder b{"tanh_chain"};
  auto a = b.input("a", DType::F32, {"N"});
  auto bb = b.input("b", DType::F32, {"N"});
  auto c = b.input("c", DType::F32, {"N"});
  auto half = b.constant(DType::F32, {"N"}, Scalar::of_float(0.5), "half");
  auto ab = b.binary(OpKind::Multiply, a, bb, "ab");
  auto s = b.binary(OpKind::Add, ab, c, "s");
  auto t = b.unary(OpKind::Tanh, s, "t");
  auto h = b.binary(OpKind::Multiply, t, half, "h");
  auto y = b.binary(OpKind::Add, h, a, "y");
  b.output(y);
  return b.build();
}

// The same five ops as a region over inputs a, b, c, 0.5 (rank 0).
cpu::FusedRegion chain_region() {
  using O = cpu::FusedOperand;
  using cpu::FusedOp;
  cpu::FusedRegion r;
  r.input_dtypes = {DType::F32, DType::F32, DType::F32, DType::F32};
  r.ops = {
      FusedOp{OpKind::Multiply, NoAttrs{}, {O::input(0), O::input(1)}, DType::F32},
      FusedOp{OpKind::Add, NoAttrs{}, {O::op(0), O::input(2)}, DType::F32},
      FusedOp{OpKind::Tanh, NoAttrs{}, {O::op(1)}, DType::F32},
      FusedOp{OpKind::Multiply, NoAttrs{}, {O::op(2), O::input(3)}, DType::F32},
      FusedOp{OpKind::Add, NoAttrs{}, {O::op(3), O::input(0)}, DType::F32},
  };
  r.outputs = {4};
  return r;
}

// The straightforward loop: libm's tanhf per element, no -ffast-math, the
// project's flags (Release: -O3; ISO C++, so no FMA contraction), split
// over the engine's pool like the kernels.
void hand_loop(WorkerPool& pool, const float* a, const float* b, const float* c, float* y) {
  parallel_for(&pool, kChainElements, cpu::kElementwiseGrain, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = std::tanh(a[i] * b[i] + c[i]) * 0.5f + a[i];
  });
}

// STREAM's triad in f32, y = a + 3·b: the bandwidth a streaming loop gets
// on this machine (12 bytes per element: two reads, one write, as STREAM
// counts them). pool == nullptr: the calling thread alone.
constexpr double kTriadBytesPerElement = 12.0;
void triad(WorkerPool* pool, const float* a, const float* b, float* y) {
  auto body = [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = a[i] + 3.0f * b[i];
  };
  if (pool == nullptr) body(0, kChainElements);
  else parallel_for(pool, kChainElements, cpu::kElementwiseGrain, body);
}

Status first_output(Result<std::vector<HostTensor>> r, HostTensor& out) {
  if (!r.ok()) return std::move(r).error();
  out = (*r)[0];
  return ok_status();
}

}  // namespace

void bench_elementwise_chain(BenchContext& ctx) {
  const std::string label = "chain tanh(a*b+c)*0.5+a";
  auto program = chain_program();
  if (!program.ok()) {
    ctx.checks.fail(label + ": program: " + program.error().to_string());
    return;
  }
  auto a = uniform_tensor<float>(DType::F32, {kChainElements}, -2.0, 2.0, 11);
  auto b = uniform_tensor<float>(DType::F32, {kChainElements}, -2.0, 2.0, 12);
  auto c = uniform_tensor<float>(DType::F32, {kChainElements}, -2.0, 2.0, 13);
  auto hand_out = HostTensor::zeros(DType::F32, {kChainElements});
  auto half = HostTensor::zeros(DType::F32, {});
  auto kernel = cpu::FusedKernel::compile(chain_region());
  if (!a.ok() || !b.ok() || !c.ok() || !hand_out.ok() || !half.ok()) {
    ctx.checks.fail(label + ": input allocation failed");
    return;
  }
  if (!kernel.ok()) {
    ctx.checks.fail(label + ": region: " + kernel.error().to_string());
    return;
  }
  *half->data_as<float>() = 0.5f;
  const std::vector<HostTensor> inputs{*a, *b, *c};
  const std::vector<HostTensor> region_inputs{*a, *b, *c, *half};
  const cpu::CpuRunOptions fused{.fuse_elementwise = true};
  const cpu::CpuRunOptions op_by_op{.fuse_elementwise = false};
  cpu::CpuEngine& engine = ctx.engine;
  // Results come from memory with the CPU engine's allocation policy (its
  // default size-class cache), as they do on the engine's own threads:
  // run_program_on_cpu and FusedKernel::run allocate from the calling
  // thread's source.
  auto results_memory =
      HostBufferSource::create(Endpoint{"bench", "host"}, cpu::default_cpu_host_cache());
  HostBufferScope results_scope(results_memory.get());

  // Results and statistics of one run each, before timing.
  HostTensor y_fused, y_ops, y_region;
  cpu::CpuRunStats fused_stats, ops_stats;
  Status st = first_output(cpu::run_program_on_cpu(*program, inputs, engine, fused, &fused_stats),
                           y_fused);
  if (st.ok())
    st = first_output(cpu::run_program_on_cpu(*program, inputs, engine, op_by_op, &ops_stats), y_ops);
  if (st.ok()) st = first_output(kernel->run(region_inputs, &engine.pool()), y_region);
  if (!st.ok()) {
    ctx.checks.fail(label + ": " + st.error().to_string());
    return;
  }
  hand_loop(engine.pool(), a->data_as<float>(), b->data_as<float>(), c->data_as<float>(),
            hand_out->data_as<float>());
  ctx.checks.check(fused_stats.regions_run == 1 && fused_stats.ops_fused == 5 &&
                       fused_stats.kernels_run == 0,
                   "chain fused run: " + std::to_string(fused_stats.regions_run) + " region of " +
                       std::to_string(fused_stats.ops_fused) + " ops + " +
                       std::to_string(fused_stats.kernels_run) +
                       " kernels (the splat constant is a rank-0 region input)");
  ctx.checks.check(ops_stats.regions_run == 0 && ops_stats.kernels_run == 6,
                   "chain op-by-op run: " + std::to_string(ops_stats.kernels_run) + " kernels");
  ctx.checks.check(y_fused.bitwise_equal(y_ops), "chain fused and op-by-op outputs bitwise equal");
  ctx.checks.check(y_fused.bitwise_equal(y_region),
                   "chain fused region alone (rank-0 0.5) bitwise equal to the fused runner");
  double max_diff = 0;
  const float* yf = y_fused.data_as<float>();
  const float* yh = hand_out->data_as<float>();
  for (int64_t i = 0; i < kChainElements; ++i)
    max_diff = std::max(max_diff, static_cast<double>(std::abs(yf[i] - yh[i])));
  // |y| < 3; a few ulp of tanh stay far below 1e-5.
  ctx.checks.check(max_diff <= 1e-5, "chain fused vs hand loop (libm tanhf): max |diff| " +
                                         std::to_string(max_diff) + " <= 1e-5");
  y_fused = y_ops = y_region = HostTensor{};

  const Variant variants[] = {
      [&]() -> Status {
        auto r = cpu::run_program_on_cpu(*program, inputs, engine, fused);
        return r.ok() ? ok_status() : Status{std::move(r).error()};
      },
      [&]() -> Status {
        auto r = cpu::run_program_on_cpu(*program, inputs, engine, op_by_op);
        return r.ok() ? ok_status() : Status{std::move(r).error()};
      },
      [&]() -> Status {
        hand_loop(engine.pool(), a->data_as<float>(), b->data_as<float>(), c->data_as<float>(),
                  hand_out->data_as<float>());
        return ok_status();
      },
      [&]() -> Status {
        auto r = kernel->run(region_inputs, &engine.pool());
        return r.ok() ? ok_status() : Status{std::move(r).error()};
      },
      [&]() -> Status {
        auto r = kernel->run(region_inputs, nullptr);
        return r.ok() ? ok_status() : Status{std::move(r).error()};
      },
      [&]() -> Status {
        triad(&engine.pool(), a->data_as<float>(), b->data_as<float>(), hand_out->data_as<float>());
        return ok_status();
      },
      [&]() -> Status {
        triad(nullptr, a->data_as<float>(), b->data_as<float>(), hand_out->data_as<float>());
        return ok_status();
      },
  };
  auto samples = run_interleaved(ctx.options.reps(11), variants);
  if (!samples.ok()) {
    ctx.checks.fail(label + ": " + samples.error().to_string());
    return;
  }
  const double bytes = kChainBytesPerElement * static_cast<double>(kChainElements);
  auto gbps = [&](size_t i) { return bytes / (*samples)[i].pick(ctx.options.statistic) / kGB; };
  const double g_fused = gbps(0), g_ops = gbps(1), g_hand = gbps(2), g_region = gbps(3);
  const double g_region_1 = gbps(4);
  const double triad_bytes = kTriadBytesPerElement * static_cast<double>(kChainElements);
  auto triad_gbps = [&](size_t i) {
    return triad_bytes / (*samples)[i].pick(ctx.options.statistic) / kGB;
  };
  const double g_triad = triad_gbps(5), g_triad_1 = triad_gbps(6);
  char note[96];
  const std::string isa{cpu::ew::to_string(cpu::ew::best_vmath_isa())};
  std::snprintf(note, sizeof note, "vs op-by-op runner %.2f GB/s (f32 tanh loop: %s)", g_ops,
                isa.c_str());
  ctx.table.add({"chain fused runner / op-by-op", g_fused, "GB/s", g_fused / g_ops, 2.5, false, note});
  std::snprintf(note, sizeof note, "vs hand loop (libm tanhf, pool) %.2f GB/s", g_hand);
  ctx.table.add({"chain fused runner / hand loop", g_fused, "GB/s", g_fused / g_hand, 0.8, false, note});
  ctx.table.add({"chain fused region alone (info)", g_region, "GB/s", g_region / g_hand,
                 std::nullopt, false, "0.5 as rank-0 input; ratio vs hand loop"});
  std::snprintf(note, sizeof note, "vs STREAM triad f32, pool threads, %.2f GB/s", g_triad);
  ctx.table.add({"chain fused runner / triad", g_fused, "GB/s", g_fused / g_triad, 0.7, false, note});
  std::snprintf(note, sizeof note, "region alone vs STREAM triad f32, one thread, %.2f GB/s",
                g_triad_1);
  ctx.table.add({"chain fused, one thread / triad", g_region_1, "GB/s", g_region_1 / g_triad_1, 0.7,
                 false, note});
}

}  // namespace tenact::bench
