// Helpers shared by the CPU kernel tests that check kernels against NumPy
// fixtures (tests/fixtures/gen_cpu_*.py): where a unit's fixtures are,
// reading manifest fields, loading a
// fixture array, building the operand view a manifest line describes, an
// element as a complex double, half an ulp of a dtype, the ulp distance
// of two bit patterns, and dense tensors from
// literal values. Also declares the layout and indexing fixture harness,
// defined in layout_test.cpp (same test binary). Test-only; every definition
// here is inline so several test files can include it (and, in a unity
// build, share one translation unit).
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/half.hpp"
#include "core/tensor_io.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "tests/support/fixture_tensors.hpp"

namespace tenact::cpu::kernel_fixtures {

// Fixture files and operand views (tests/support/fixture_tensors.hpp).
using test_fixtures::fixture_dir;
using test_fixtures::load;
using test_fixtures::make_view;
using test_fixtures::parse_ints;
using test_fixtures::split;

/// Distance in units in the last place between two values of one real
/// format (ordered bit patterns); 0 when both are NaN, huge when one is.
template <class Bits>
inline uint64_t ulp_distance_bits(Bits a, Bits b, bool a_nan, bool b_nan) {
  if (a_nan || b_nan) return a_nan && b_nan ? 0 : std::numeric_limits<uint64_t>::max();
  using S = std::make_signed_t<Bits>;
  constexpr Bits sign = Bits(1) << (sizeof(Bits) * 8 - 1);
  auto ordered = [](Bits x) -> int64_t {
    return (x & sign) ? -static_cast<int64_t>(static_cast<S>(x & ~sign)) : static_cast<int64_t>(x);
  };
  const int64_t d = ordered(a) - ordered(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

/// Element i of a dense tensor as a complex double (bool/int as numbers).
inline std::complex<double> value_at(const HostTensor& t, int64_t i) {
  const std::byte* p = t.data() + i * static_cast<int64_t>(size_of(t.dtype()));
  auto get = [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t.dtype()) {
    case DType::Bool: return static_cast<double>(get(uint8_t{}));
    case DType::I8: return static_cast<double>(get(int8_t{}));
    case DType::I16: return static_cast<double>(get(int16_t{}));
    case DType::I32: return static_cast<double>(get(int32_t{}));
    case DType::I64: return static_cast<double>(get(int64_t{}));
    case DType::U8: return static_cast<double>(get(uint8_t{}));
    case DType::U16: return static_cast<double>(get(uint16_t{}));
    case DType::U32: return static_cast<double>(get(uint32_t{}));
    case DType::U64: return static_cast<double>(get(uint64_t{}));
    case DType::F16: return static_cast<double>(f16::from_bits(get(uint16_t{})).to_float());
    case DType::BF16: return static_cast<double>(bf16::from_bits(get(uint16_t{})).to_float());
    case DType::F32: return static_cast<double>(get(float{}));
    case DType::F64: return get(double{});
    case DType::C64: {
      auto c = get(std::complex<float>{});
      return {c.real(), c.imag()};
    }
    case DType::C128: return get(std::complex<double>{});
  }
  return 0.0;
}

/// Half an ulp of the dtype (of its real component) at magnitude |x|
/// (subnormal spacing below the normal range).
inline double half_ulp(DType t, double x) {
  int precision = 53, emin = -1022;
  switch (real_component(t)) {
    case DType::F16: precision = 11; emin = -14; break;
    case DType::BF16: precision = 8; emin = -126; break;
    case DType::F32: precision = 24; emin = -126; break;
    default: break;
  }
  int e = 0;
  std::frexp(std::fabs(x), &e);  // |x| = f * 2^e, f in [0.5, 1)
  const int binade = std::max(e - 1, emin);
  return std::ldexp(1.0, binade - precision + 1) / 2;
}

/// A dense tensor of `shape` holding `values` (row-major).
template <class T>
HostTensor tensor_of(DType dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
  auto t = HostTensor::zeros(dtype, std::move(shape));
  REQUIRE(t.ok());
  REQUIRE(static_cast<size_t>(t.value().element_count()) == values.size());
  if (!values.empty()) std::memcpy(t.value().data(), values.data(), values.size() * sizeof(T));
  return t.value();
}

/// Element i of a dense tensor of T.
template <class T>
T element(const HostTensor& t, int64_t i) {
  T v;
  std::memcpy(&v, t.data() + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

// The fixture harness of the layout and indexing kernels, defined in
// layout_test.cpp: a case's attributes by key, readers of them, and
// check_fixture_op, which runs every case of one op.
using FixtureAttrs = std::map<std::string, std::string>;
using AttrsBuilder = std::function<OpAttrs(const FixtureAttrs&)>;
std::vector<int64_t> fixture_ints(const FixtureAttrs& attrs, const std::string& key);
int64_t fixture_int(const FixtureAttrs& attrs, const std::string& key);
std::vector<DimExpr> fixture_dims(const FixtureAttrs& attrs, const std::string& key);
Scalar fixture_scalar(const FixtureAttrs& attrs, const std::string& key);
void check_fixture_op(const std::string& unit, const std::string& op, const AttrsBuilder& build);

}  // namespace tenact::cpu::kernel_fixtures
