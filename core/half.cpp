#include "core/half.hpp"

#include <cmath>
#include <limits>

namespace tenact {
namespace half_detail {

float round_long_double(long double v, int mant_bits, int emin, float max_finite) {
  if (std::isnan(v))
    return std::signbit(v) ? -std::numeric_limits<float>::quiet_NaN()
                           : std::numeric_limits<float>::quiet_NaN();
  if (std::isinf(v) || v == 0) return static_cast<float>(v);
  int e = 0;
  std::frexp(v, &e);  // v = m * 2^e, 0.5 <= |m| < 1: leading bit has weight 2^(e-1)
  int lead = e - 1 < emin ? emin : e - 1;
  // quantum: weight of the last kept significand bit
  long double scaled = std::ldexp(v, mant_bits - 1 - lead);  // exact: power of two
  long double rounded = std::nearbyint(scaled);               // ties to even (default mode)
  long double r = std::ldexp(rounded, lead - (mant_bits - 1));
  if (std::fabs(r) > static_cast<long double>(max_finite))
    return v < 0 ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  return static_cast<float>(r);  // exact
}

namespace {
constexpr float kF16Max = 65504.0f;
constexpr float kBf16Max = 3.38953138925153547590470800371487866880e38f;
float to_f16_value(long double v) { return round_long_double(v, 11, -14, kF16Max); }
float to_bf16_value(long double v) { return round_long_double(v, 8, -126, kBf16Max); }
}  // namespace
}  // namespace half_detail

using namespace half_detail;

f16::f16(double v) : bits(float_to_f16_bits(to_f16_value(v))) {}
f16::f16(int64_t v) : bits(float_to_f16_bits(to_f16_value(static_cast<long double>(v)))) {}
f16::f16(uint64_t v) : bits(float_to_f16_bits(to_f16_value(static_cast<long double>(v)))) {}
bf16::bf16(double v) : bits(float_to_bf16_bits(to_bf16_value(v))) {}
bf16::bf16(int64_t v) : bits(float_to_bf16_bits(to_bf16_value(static_cast<long double>(v)))) {}
bf16::bf16(uint64_t v) : bits(float_to_bf16_bits(to_bf16_value(static_cast<long double>(v)))) {}

}  // namespace tenact
