// Reading NumPy fixtures in tests: where a unit's fixture files are, the
// fields of a manifest line, loading a fixture array, and building the
// operand view (transposed, sliced, reversed, broadcast) a manifest line
// describes. Used by the CPU kernel tests and the built-in extension tests,
// whose generators (tests/fixtures/gen_*.py) write the same view strings.
// Test-only; every definition is inline so several test files can include
// it (and, in a unity build, share one translation unit).
#pragma once

#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor_io.hpp"

namespace tenact::test_fixtures {

/// The folder of one unit's fixtures ("cpu_layout", ...), with a final '/'.
inline std::string fixture_dir(const std::string& unit) {
  return std::string(TENACT_TEST_DATA_DIR) + "/" + unit + "/";
}

/// The fields of `text` between separators `sep`.
inline std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  return out;
}

/// The integers of a `sep`-separated list ("" is the empty list).
inline std::vector<int64_t> parse_ints(const std::string& text, char sep = ',') {
  std::vector<int64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(std::stoll(item));
  return out;
}

/// The tensor of a fixture file (the test fails when it cannot be read).
inline HostTensor load(const std::string& path) {
  auto t = read_tensor_file(path);
  if (!t.ok()) FAIL("cannot read fixture " << path << ": " << t.error().to_string());
  return std::move(t).value();
}

/// Builds the operand view a manifest line describes from its base array:
/// none, transpose:PERM, slice:START;LIMIT;STRIDES, reverse (rank 1) or
/// broadcast:SHAPE;DIMS.
inline HostTensor make_view(const HostTensor& base, const std::string& view) {
  const auto colon = view.find(':');
  const std::string kind = view.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : view.substr(colon + 1);
  if (kind == "none") return base;
  if (kind == "transpose") return base.transposed(parse_ints(arg));
  if (kind == "slice") {
    auto parts = split(arg, ';');
    REQUIRE(parts.size() == 3);
    return base.sliced(parse_ints(parts[0]), parse_ints(parts[1]), parse_ints(parts[2]));
  }
  if (kind == "reverse") {
    REQUIRE(base.rank() == 1);
    const int64_t n = base.shape()[0];
    auto v = HostTensor::view(base.buffer(), base.dtype(), {n}, {-1}, base.offset() + n - 1);
    REQUIRE(v.ok());
    return v.value();
  }
  if (kind == "broadcast") {
    auto parts = split(arg, ';');
    REQUIRE(parts.size() == 2);
    return base.broadcast_view(parse_ints(parts[0]), parse_ints(parts[1]));
  }
  FAIL("unknown view " << view);
  return base;
}

}  // namespace tenact::test_fixtures
