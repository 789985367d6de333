// The f32 vector-math functions (vector_math.hpp, vector_math_via_f64.hpp)
// against float64 references from libm rounded once to f32: the worst ulp
// distance over every 251st f32 bit pattern and a dense sweep of each
// function's working range, and the special values the spec and C99 give. bench/vmath_bench --exhaustive
// measures the same bounds over all 2^32 inputs.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "engines/cpu/kernels/vector_math.hpp"
#include "engines/cpu/kernels/vector_math_via_f64.hpp"
#include "tests/engines/cpu/kernel_test_support.hpp"
#include "tests/sweep_step.hpp"

namespace tenact::cpu {
namespace {

using kernel_fixtures::ulp_distance_bits;

// -- vectorized f32 functions over the whole range ----------------------------------

/// Worst ulp distance of fn from the float64 reference rounded to f32,
/// over every `step`-th f32 bit pattern and dense sweeps of [lo, hi].
template <class Fn, class Ref>
uint64_t vmath_sweep(Fn fn, Ref ref, uint32_t step, float lo, float hi, float& worst_x) {
  uint64_t worst = 0;
  auto check = [&](float x) {
    const float want = static_cast<float>(ref(static_cast<double>(x)));
    const float got = fn(x);
    const uint64_t d =
        ulp_distance_bits<uint32_t>(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want),
                                    std::isnan(got), std::isnan(want));
    if (d > worst) worst = d, worst_x = x;
  };
  for (uint64_t b = 0; b <= 0xffffffffull; b += step) check(std::bit_cast<float>(static_cast<uint32_t>(b)));
  // every float in [lo, hi] near zero is covered by the bit sweep; a dense
  // linear sweep covers the working range
  const int points = testing::sweep_points(2'000'000);
  for (int i = 0; i <= points; ++i) check(lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(points));
  return worst;
}

TEST_CASE("vectorized f32 exp, log, tanh and logistic stay within their ulp bounds",
          "[elementwise][vector_math]") {
  constexpr uint32_t kStep = testing::sweep_step(251);  // 17 million bit patterns per function (release)
  float at = 0;
  const uint64_t e = vmath_sweep(vmath::exp_f32, [](double x) { return std::exp(x); }, kStep, -104, 89, at);
  INFO("exp worst at " << at);
  CHECK(e <= 1);
  const uint64_t l = vmath_sweep(vmath::log_f32, [](double x) { return std::log(x); }, kStep, 0, 4, at);
  INFO("log worst at " << at);
  CHECK(l <= 1);
  const uint64_t t = vmath_sweep(vmath::tanh_f32, [](double x) { return std::tanh(x); }, kStep, -10, 10, at);
  INFO("tanh worst at " << at);
  CHECK(t <= 2);
  const uint64_t g = vmath_sweep(vmath::logistic_f32,
                           [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, kStep, -105, 20, at);
  INFO("logistic worst at " << at);
  CHECK(g <= 3);
}

TEST_CASE("vectorized f32 functions get the special values right", "[elementwise][vector_math]") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(vmath::exp_f32(0.0f) == 1.0f);
  CHECK(vmath::exp_f32(-inf) == 0.0f);
  CHECK(vmath::exp_f32(inf) == inf);
  CHECK(vmath::exp_f32(88.8f) == inf);
  CHECK(vmath::exp_f32(88.72f) < inf);
  CHECK(vmath::exp_f32(-103.0f) > 0.0f);  // subnormal result, not flushed
  CHECK(std::isnan(vmath::exp_f32(nan)));
  CHECK(vmath::log_f32(1.0f) == 0.0f);
  CHECK(vmath::log_f32(0.0f) == -inf);
  CHECK(vmath::log_f32(-0.0f) == -inf);
  CHECK(std::isnan(vmath::log_f32(-1.0f)));
  CHECK(vmath::log_f32(inf) == inf);
  CHECK(std::isnan(vmath::log_f32(nan)));
  CHECK(vmath::log_f32(1e-45f) == static_cast<float>(std::log(static_cast<double>(1e-45f))));  // smallest subnormal
  CHECK(vmath::tanh_f32(inf) == 1.0f);
  CHECK(vmath::tanh_f32(-inf) == -1.0f);
  CHECK(std::signbit(vmath::tanh_f32(-0.0f)));
  CHECK(vmath::tanh_f32(-0.0f) == 0.0f);
  CHECK(std::isnan(vmath::tanh_f32(nan)));
  CHECK(vmath::tanh_f32(1e-30f) == 1e-30f);
  CHECK(vmath::logistic_f32(0.0f) == 0.5f);
  CHECK(vmath::logistic_f32(inf) == 1.0f);
  CHECK(vmath::logistic_f32(-inf) == 0.0f);
  CHECK(vmath::logistic_f32(-100.0f) > 0.0f);  // e^-100 is a subnormal f32
  CHECK(std::isnan(vmath::logistic_f32(nan)));
}


TEST_CASE("vectorized f32 sine, cosine, expm1 and log1p stay within 1 ulp",
          "[elementwise][vector_math]") {
  struct Case {
    const char* name;
    float (*fn)(float);
    double (*ref)(double);
    uint32_t step;  // of the bit sweep
    float lo, hi;   // of the dense sweep
  };
  constexpr uint32_t kStep = testing::sweep_step(251);
  const Case cases[] = {
      {"sin", vmath::sin_f32, [](double x) { return std::sin(x); }, kStep, -1e4f, 1e4f},
      {"cos", vmath::cos_f32, [](double x) { return std::cos(x); }, kStep, -1e4f, 1e4f},
      // both sides of the 2^19 limit of the fast reduction (beyond: libm);
      // the dense sweep does the work, the bit sweep is thinned out
      {"sin near 2^19", vmath::sin_f32, [](double x) { return std::sin(x); }, 1u << 20, 5.2e5f, 5.3e5f},
      {"cos near 2^19", vmath::cos_f32, [](double x) { return std::cos(x); }, 1u << 20, 5.2e5f, 5.3e5f},
      {"expm1", vmath::expm1_f32, [](double x) { return std::expm1(x); }, kStep, -20, 89},
      {"log1p", vmath::log1p_f32, [](double x) { return std::log1p(x); }, kStep, -1, 4},
  };
  for (const Case& c : cases) {
    float at = 0;
    const uint64_t worst = vmath_sweep(c.fn, c.ref, c.step, c.lo, c.hi, at);
    INFO(c.name << " worst at " << at);
    CHECK(worst <= 1);
  }
}

TEST_CASE("vectorized f32 sine, cosine, expm1 and log1p get the special values right",
          "[elementwise][vector_math]") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(vmath::sin_f32(0.0f) == 0.0f);
  CHECK(std::signbit(vmath::sin_f32(-0.0f)));
  CHECK(vmath::sin_f32(1e-30f) == 1e-30f);
  CHECK(std::isnan(vmath::sin_f32(inf)));
  CHECK(std::isnan(vmath::sin_f32(-inf)));
  CHECK(std::isnan(vmath::sin_f32(nan)));
  CHECK(vmath::cos_f32(0.0f) == 1.0f);
  CHECK(vmath::cos_f32(-0.0f) == 1.0f);
  CHECK(std::isnan(vmath::cos_f32(inf)));
  CHECK(std::isnan(vmath::cos_f32(nan)));
  // beyond the fast reduction: libm's full one
  CHECK(vmath::sin_f32(1e30f) == std::sin(1e30f));
  CHECK(vmath::cos_f32(-3e38f) == std::cos(-3e38f));
  CHECK(vmath::expm1_f32(0.0f) == 0.0f);
  CHECK(std::signbit(vmath::expm1_f32(-0.0f)));
  CHECK(vmath::expm1_f32(1e-30f) == 1e-30f);
  CHECK(vmath::expm1_f32(-inf) == -1.0f);
  CHECK(vmath::expm1_f32(-50.0f) == -1.0f);
  CHECK(vmath::expm1_f32(inf) == inf);
  CHECK(vmath::expm1_f32(89.0f) == inf);
  CHECK(vmath::expm1_f32(88.7f) < inf);
  CHECK(std::isnan(vmath::expm1_f32(nan)));
  CHECK(vmath::log1p_f32(0.0f) == 0.0f);
  CHECK(std::signbit(vmath::log1p_f32(-0.0f)));
  CHECK(vmath::log1p_f32(1e-30f) == 1e-30f);
  CHECK(vmath::log1p_f32(-1.0f) == -inf);
  CHECK(std::isnan(vmath::log1p_f32(-1.5f)));
  CHECK(std::isnan(vmath::log1p_f32(-inf)));
  CHECK(vmath::log1p_f32(inf) == inf);
  CHECK(vmath::log1p_f32(3e38f) == static_cast<float>(std::log1p(3e38)));
  CHECK(std::isnan(vmath::log1p_f32(nan)));
}

}  // namespace
}  // namespace tenact::cpu
