// vector_math.hpp's erf_f32 against a double-precision reference
// (std::erf, rounded to float: the correctly rounded result but for
// doubles within 2^-29 relative of a float midpoint, far rarer than the
// sample). The header documents 1.44 ulps (distance <= 1 from the
// correctly rounded result), measured over every f32 of |x| <= 4.5; this
// asserts that distance over every 97th bit pattern and a dense sweep of
// [-6, 6], and the special values.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "engines/cpu/kernels/vector_math.hpp"
#include "tests/sweep_step.hpp"

namespace tenact {
namespace {

using cpu::vmath::erf_f32;

/// Position of f on the line of floats (-0 and +0 both 0), for distances.
int64_t float_order(float f) {
  const int32_t i = std::bit_cast<int32_t>(f);
  return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : i;
}

/// The largest distance between erf_f32(x) and the rounded reference.
struct Sweep {
  int64_t worst = 0;
  float worst_x = 0;
  int64_t points = 0;
  void add(float x) {
    if (std::isnan(x)) return;
    const float want = static_cast<float>(std::erf(static_cast<double>(x)));
    const int64_t d = std::llabs(float_order(erf_f32(x)) - float_order(want));
    ++points;
    if (d > worst) {
      worst = d;
      worst_x = x;
    }
  }
};

TEST_CASE("erf_f32 is within 1 ulp of the correctly rounded erf", "[vector_math][extensions]") {
  Sweep s;
  // every 97th bit pattern and 4M points of [-6, 6] (sparser under a
  // sanitizer, tests/sweep_step.hpp)
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += testing::sweep_step(97))
    s.add(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  constexpr int kDense = testing::sweep_points(1 << 22);
  for (int i = 0; i <= kDense; ++i) s.add(-6.0f + 12.0f * static_cast<float>(i) / kDense);
  INFO("worst distance " << s.worst << " at x = " << s.worst_x << " over " << s.points << " points");
  CHECK(s.points > (testing::kSanitizedTests ? 2'900'000 : 48'000'000));
  CHECK(s.worst <= 1);
}

TEST_CASE("erf_f32 is odd, keeps -0 and NaN, and reaches +-1", "[vector_math][extensions]") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(erf_f32(inf) == 1.0f);
  CHECK(erf_f32(-inf) == -1.0f);
  CHECK(erf_f32(4.0f) == 1.0f);
  CHECK(erf_f32(-1e30f) == -1.0f);
  CHECK(erf_f32(0.0f) == 0.0f);
  CHECK_FALSE(std::signbit(erf_f32(0.0f)));
  CHECK(erf_f32(-0.0f) == 0.0f);
  CHECK(std::signbit(erf_f32(-0.0f)));
  CHECK(std::isnan(erf_f32(std::numeric_limits<float>::quiet_NaN())));
  const float tiny = std::numeric_limits<float>::denorm_min();
  CHECK(erf_f32(tiny) == tiny);  // 2/sqrt(pi) * 2^-149 rounds to 2^-149
  for (float x : {1e-20f, 0.3f, 0.92f, 1.5f, 3.0f})
    CHECK(erf_f32(-x) == -erf_f32(x));
}

}  // namespace
}  // namespace tenact
