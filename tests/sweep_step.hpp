// How densely the numeric sweeps step through f32 bit patterns and ranges. The release
// variant runs each sweep at the stride its test states; the sanitizer
// variants (TENACT_SANITIZED_TESTS, set by tests/CMakeLists.txt) are there
// to catch memory errors, undefined behaviour and races, not rounding, so
// they run the same assertions over 16 times fewer values: the tails, the
// special values and every code path stay covered, and CI's AddressSanitizer
// stage is minutes shorter. CI runs the release variant too, so every value
// the release stride reaches is still checked on every change.
#pragma once

#include <cstdint>

namespace tenact::testing {

#if defined(TENACT_SANITIZED_TESTS)
inline constexpr bool kSanitizedTests = true;
#else
inline constexpr bool kSanitizedTests = false;
#endif

/// The stride to step through bit patterns with: `release_step` in the
/// release variant, 16 * release_step + 1 under a sanitizer (odd when
/// release_step is, so the low mantissa bits still vary).
constexpr uint32_t sweep_step(uint32_t release_step) {
  return kSanitizedTests ? 16 * release_step + 1 : release_step;
}

/// How many points a dense sweep of a range takes: `release_points` in the
/// release variant, a sixteenth of them under a sanitizer.
constexpr int sweep_points(int release_points) { return kSanitizedTests ? release_points / 16 : release_points; }

}  // namespace tenact::testing
