// f16 and bf16 conversions (core/half.hpp) against NumPy's float16 and an
// exact rational rounding (tests/fixtures/gen_half.py); NaN and a few
// landmarks by hand.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/half.hpp"

using namespace tenact;

namespace {

const nlohmann::json& cases() {
  static const nlohmann::json data = [] {
    const std::string path = std::string(TENACT_TEST_DATA_DIR) + "/half/half_cases.json";
    std::ifstream in(path);
    INFO("missing " << path << "; run tests/fixtures/generate_fixtures.py");
    REQUIRE(in.good());
    std::ostringstream ss;
    ss << in.rdbuf();
    return nlohmann::json::parse(ss.str());
  }();
  return data;
}

uint64_t hex(const nlohmann::json& j) { return std::stoull(j.get<std::string>(), nullptr, 16); }

double f64_of(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}
float f32_of(uint64_t bits) {
  auto b = static_cast<uint32_t>(bits);
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Runs `convert` over one fixture list and reports every mismatch (up to a
// few, in hex) in one assertion.
template <class Convert>
void check_list(const char* name, Convert&& convert) {
  const auto& list = cases().at(name);
  REQUIRE(list.size() > 100);
  size_t mismatches = 0;
  std::ostringstream report;
  for (const auto& c : list) {
    const uint16_t expected = static_cast<uint16_t>(hex(c[1]));
    const uint16_t got = convert(c[0].get<std::string>());
    if (got != expected) {
      if (++mismatches <= 10)
        report << c[0].get<std::string>() << ": got " << std::hex << got << ", expected "
               << expected << std::dec << "\n";
    }
  }
  INFO(name << ": " << mismatches << " of " << list.size() << " differ\n" << report.str());
  CHECK(mismatches == 0);
}

bool is_quiet_nan_f16(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x0200) != 0; }
bool is_quiet_nan_bf16(uint16_t h) { return (h & 0x7f80) == 0x7f80 && (h & 0x0040) != 0; }

}  // namespace

TEST_CASE("f16 from double rounds once, as NumPy's float64 -> float16", "[half]") {
  check_list("f64_to_f16", [](const std::string& in) {
    return f16(f64_of(std::stoull(in, nullptr, 16))).bits;
  });
}

TEST_CASE("f16 from float matches NumPy's float32 -> float16", "[half]") {
  check_list("f32_to_f16", [](const std::string& in) {
    return f16(f32_of(std::stoull(in, nullptr, 16))).bits;
  });
}

TEST_CASE("bf16 from double rounds once to nearest even", "[half]") {
  check_list("f64_to_bf16", [](const std::string& in) {
    return bf16(f64_of(std::stoull(in, nullptr, 16))).bits;
  });
}

TEST_CASE("bf16 from float rounds to nearest even", "[half]") {
  check_list("f32_to_bf16", [](const std::string& in) {
    return bf16(f32_of(std::stoull(in, nullptr, 16))).bits;
  });
}

TEST_CASE("f16 and bf16 from 64-bit integers round once, without going through double",
          "[half]") {
  check_list("i64_to_f16",
             [](const std::string& in) { return f16(static_cast<int64_t>(std::stoll(in))).bits; });
  check_list("u64_to_f16", [](const std::string& in) {
    return f16(static_cast<uint64_t>(std::stoull(in))).bits;
  });
  check_list("i64_to_bf16",
             [](const std::string& in) { return bf16(static_cast<int64_t>(std::stoll(in))).bits; });
  check_list("u64_to_bf16", [](const std::string& in) {
    return bf16(static_cast<uint64_t>(std::stoull(in))).bits;
  });
}

TEST_CASE("f16 to float is exact for all 65536 bit patterns, as in NumPy", "[half]") {
  const auto& list = cases().at("f16_to_f32");
  REQUIRE(list.size() == 65536);
  size_t mismatches = 0;
  std::ostringstream report;
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto expected = static_cast<uint32_t>(hex(list[h]));
    const uint32_t got = std::bit_cast<uint32_t>(f16::from_bits(static_cast<uint16_t>(h)).to_float());
    if (got != expected && ++mismatches <= 10)
      report << std::hex << h << ": got " << got << ", expected " << expected << std::dec << "\n";
  }
  INFO(report.str());
  CHECK(mismatches == 0);
}

TEST_CASE("bf16 to float shifts the bits into the high half", "[half]") {
  for (uint32_t h = 0; h < 65536; ++h)
    REQUIRE(std::bit_cast<uint32_t>(bf16::from_bits(static_cast<uint16_t>(h)).to_float()) == (h << 16));
}

TEST_CASE("NaN converts to a quiet NaN in f16 and bf16", "[half]") {
  const double dnan = std::numeric_limits<double>::quiet_NaN();
  const float fnan = std::numeric_limits<float>::quiet_NaN();
  float snan;
  const uint32_t snan_bits = 0x7f800001;  // signalling, payload in the low bit only
  std::memcpy(&snan, &snan_bits, 4);
  CHECK(is_quiet_nan_f16(f16(dnan).bits));
  CHECK(is_quiet_nan_f16(f16(fnan).bits));
  CHECK(is_quiet_nan_f16(f16(snan).bits));
  CHECK(is_quiet_nan_f16(f16(-fnan).bits));
  CHECK((f16(-fnan).bits & 0x8000) != 0);  // the float path keeps the sign
  CHECK(is_quiet_nan_bf16(bf16(dnan).bits));
  CHECK(is_quiet_nan_bf16(bf16(fnan).bits));
  CHECK(is_quiet_nan_bf16(bf16(snan).bits));
  CHECK(std::isnan(f16(dnan).to_float()));
  CHECK(std::isnan(bf16(snan).to_float()));
}

TEST_CASE("f16 landmarks: max finite, overflow threshold, smallest subnormal", "[half]") {
  CHECK(f16(65504.0f).bits == 0x7bff);
  CHECK(f16(65519.99f).bits == 0x7bff);
  CHECK(f16(65520.0f).bits == 0x7c00);
  CHECK(f16(65520.0).bits == 0x7c00);
  CHECK(f16(-65520.0).bits == 0xfc00);
  CHECK(f16(0x1p-24).bits == 0x0001);
  CHECK(f16(0x1p-25).bits == 0x0000);          // tie to even: zero
  CHECK(f16(0x1p-25 * 1.000001).bits == 0x0001);
  CHECK(f16(-0.0f).bits == 0x8000);
  CHECK(f16(std::numeric_limits<double>::infinity()).bits == 0x7c00);
  CHECK(f16(int64_t{65519}).bits == 0x7bff);
  CHECK(f16(int64_t{65520}).bits == 0x7c00);
  CHECK(bf16(3.3961775292304957e38).bits == 0x7f80);  // halfway above max: inf
  CHECK(bf16(3.3895313892515355e38).bits == 0x7f7f);  // max finite
}
