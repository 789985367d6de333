// The per-instruction-set copies of the f32 vector-math tile loops (exp,
// log, tanh, logistic, sine, cosine, expm1, log1p;
// elementwise_tiles_vmath.hpp): every copy this CPU runs gives the baseline
// (SSE2) copy's bits on every 193rd f32 bit pattern (sparser under a
// sanitizer), the special values and
// every length up to a few vectors (tails, masked epilogues); and the kernel finder hands out the widest copy. The oracle is
// the baseline copy itself: the contract under test is "same bits at every
// width", the accuracy of those bits is elementwise_test.cpp's
// "[vector_math]" and vector_math_test.cpp.
#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "engines/cpu/kernels/elementwise_kernels.hpp"
#include "engines/cpu/kernels/elementwise_tiles_vmath.hpp"
#include "tests/sweep_step.hpp"

namespace tenact::cpu {
namespace {

using ew::VmathIsa;

constexpr OpKind kVmathOps[] = {OpKind::Exponential, OpKind::Log,    OpKind::Tanh,
                                OpKind::Logistic,    OpKind::Sine,   OpKind::Cosine,
                                OpKind::ExponentialMinusOne, OpKind::LogPlusOne};
constexpr VmathIsa kWideIsas[] = {VmathIsa::Avx2, VmathIsa::Avx512};

std::vector<float> apply(TileFn fn, const std::vector<float>& x, size_t offset, size_t n) {
  std::vector<float> out(n);
  const std::byte* operands[1] = {reinterpret_cast<const std::byte*>(x.data() + offset)};
  fn(operands, reinterpret_cast<std::byte*>(out.data()), static_cast<int64_t>(n));
  return out;
}

/// Elements whose bit patterns differ (NaN payloads included).
int64_t bit_differences(const std::vector<float>& a, const std::vector<float>& b) {
  int64_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i)
    differ += std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i]);
  return differ;
}

TEST_CASE("every vector-math copy this CPU runs gives the baseline copy's bits",
          "[elementwise][vector_math][isa]") {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> specials = {0.0f,   -0.0f,  inf,     -inf,   std::numeric_limits<float>::quiet_NaN(),
                                 1e-45f, -1e-45f, 1e-38f, 88.72f, 88.8f,
                                 -103.9f, -104.0f, -105.0f, 0.625f, -0.625f,
                                 9.99f,  10.0f,  -10.0f, 1.0f,   -1.0f};
  specials.push_back(std::bit_cast<float>(0xffc00001u));  // negative NaN with a payload
  int runs_checked = 0;
  for (VmathIsa isa : kWideIsas) {
    if (!ew::cpu_runs(isa)) {
      WARN("this CPU does not run " << ew::to_string(isa) << ": that copy is not checked here");
      continue;
    }
    for (OpKind kind : kVmathOps) {
      INFO(to_string(kind) << " " << ew::to_string(isa));
      const TileFn base = ew::vmath_f32_tile(kind, VmathIsa::Baseline);
      const TileFn wide = ew::vmath_f32_tile(kind, isa);
      REQUIRE(base != nullptr);
      REQUIRE(wide != nullptr);
      REQUIRE(wide != base);
      // every 193rd bit pattern, in blocks of 65536 (22 million values;
      // sparser under a sanitizer, tests/sweep_step.hpp)
      constexpr uint64_t kStep = testing::sweep_step(193);
      constexpr size_t kBlock = 65536;
      std::vector<float> x(kBlock);
      int64_t differ = 0;
      for (uint64_t b = 0; b <= 0xffffffffull;) {
        size_t n = 0;
        for (; n < kBlock && b <= 0xffffffffull; ++n, b += kStep)
          x[n] = std::bit_cast<float>(static_cast<uint32_t>(b));
        differ += bit_differences(apply(wide, x, 0, n), apply(base, x, 0, n));
      }
      CHECK(differ == 0);
      CHECK(bit_differences(apply(wide, specials, 0, specials.size()),
                            apply(base, specials, 0, specials.size())) == 0);
      // every length 0..70 at offsets 0..3 (partial vectors, unaligned starts)
      std::vector<float> ramp(80);
      for (size_t i = 0; i < ramp.size(); ++i)
        ramp[i] = (static_cast<float>(i) - 40.0f) * 0.173f;
      int64_t tail_differ = 0;
      for (size_t offset = 0; offset < 4; ++offset)
        for (size_t n = 0; n <= 70; ++n)
          tail_differ += bit_differences(apply(wide, ramp, offset, n), apply(base, ramp, offset, n));
      CHECK(tail_differ == 0);
      ++runs_checked;
    }
  }
  // on x86-64 with AVX2 (every CPU this project benchmarks on) at least one
  // wide copy ran; elsewhere the check above is vacuous, which the WARN says
  if (ew::cpu_runs(VmathIsa::Avx2)) CHECK(runs_checked >= 8);
}

TEST_CASE("the kernel finder hands out the widest vector-math copy the CPU runs",
          "[elementwise][vector_math][isa]") {
  const VmathIsa best = ew::best_vmath_isa();
  CHECK(ew::cpu_runs(best));
  if (ew::cpu_runs(VmathIsa::Avx512)) CHECK(best == VmathIsa::Avx512);
  else if (ew::cpu_runs(VmathIsa::Avx2)) CHECK(best == VmathIsa::Avx2);
  else CHECK(best == VmathIsa::Baseline);
  const DType f32[1] = {DType::F32};
  for (OpKind kind : kVmathOps) {
    auto k = find_elementwise_kernel(kind, NoAttrs{}, f32);
    REQUIRE(k.ok());
    CHECK(k->fn == ew::vmath_f32_tile(kind, best));
  }
  // other ops and other dtypes keep their generic loops
  CHECK(ew::vmath_f32_tile(OpKind::Sqrt, best) == nullptr);
  const DType f64[1] = {DType::F64};
  auto t64 = find_elementwise_kernel(OpKind::Tanh, NoAttrs{}, f64);
  REQUIRE(t64.ok());
  for (VmathIsa isa : {VmathIsa::Baseline, VmathIsa::Avx2, VmathIsa::Avx512})
    CHECK(t64->fn != ew::vmath_f32_tile(OpKind::Tanh, isa));
}

}  // namespace
}  // namespace tenact::cpu
