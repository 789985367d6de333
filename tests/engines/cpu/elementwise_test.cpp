// The CPU elementwise kernels: every op over the dtypes it admits against
// NumPy fixtures (tests/fixtures/gen_cpu_elementwise.py), the runtime's own
// decisions (integer division by zero, INT_MIN / -1, negative integer
// powers, signed zeros in maximum/minimum, convert rounding once) against
// hand-derived values, layouts (empty, rank 0, strided and broadcast views)
// and the vectorized f32 functions against a float64 libm reference.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/engines/cpu/kernel_test_support.hpp"
#include "tests/engines/cpu/test_engine.hpp"
#include "core/half.hpp"
#include "core/tensor_io.hpp"
#include "engines/cpu/kernels/dtype_dispatch.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "engines/cpu/kernels/vector_math.hpp"
#include "engines/cpu/kernels/vector_math_via_f64.hpp"
#include "util/worker_pool.hpp"

namespace tenact::cpu {
namespace {

using namespace kernel_fixtures;

// -- helpers ---------------------------------------------------------------------

template <class T>
HostTensor make(DType dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
  auto t = HostTensor::zeros(dtype, std::move(shape));
  REQUIRE(t.ok());
  REQUIRE(static_cast<size_t>(t->element_count()) == values.size());
  if (!values.empty()) std::memcpy(t->data(), values.data(), values.size() * sizeof(T));
  return *t;
}

template <class T>
std::vector<T> values_of(const HostTensor& t) {
  auto dense = t.contiguous();
  REQUIRE(dense.ok());
  std::vector<T> v(static_cast<size_t>(t.element_count()));
  if (!v.empty()) std::memcpy(v.data(), dense->data(), v.size() * sizeof(T));
  return v;
}

Result<std::vector<HostTensor>> run(OpKind kind, std::vector<HostTensor> inputs,
                                    OpAttrs attrs = NoAttrs{}, WorkerPool* pool = nullptr) {
  static const SymbolBindings symbols;
  const std::vector<ValueType> result_types;
  KernelCall call{kind, attrs, inputs, result_types, symbols, pool};
  return run_kernel(call);
}

HostTensor run_one(OpKind kind, std::vector<HostTensor> inputs, OpAttrs attrs = NoAttrs{},
                   WorkerPool* pool = nullptr) {
  auto r = run(kind, std::move(inputs), std::move(attrs), pool);
  INFO((r.ok() ? std::string{} : r.error().to_string()));
  REQUIRE(r.ok());
  REQUIRE(r->size() == 1);
  return r->front();
}

uint64_t ulp_distance(DType t, const std::byte* a, const std::byte* b) {
  switch (t) {
    case DType::F16: {
      uint16_t x, y;
      std::memcpy(&x, a, 2);
      std::memcpy(&y, b, 2);
      return ulp_distance_bits<uint16_t>(x, y, std::isnan(f16::from_bits(x).to_float()),
                                         std::isnan(f16::from_bits(y).to_float()));
    }
    case DType::BF16: {
      uint16_t x, y;
      std::memcpy(&x, a, 2);
      std::memcpy(&y, b, 2);
      return ulp_distance_bits<uint16_t>(x, y, std::isnan(bf16::from_bits(x).to_float()),
                                         std::isnan(bf16::from_bits(y).to_float()));
    }
    case DType::F32: {
      float x, y;
      std::memcpy(&x, a, 4);
      std::memcpy(&y, b, 4);
      return ulp_distance_bits<uint32_t>(std::bit_cast<uint32_t>(x), std::bit_cast<uint32_t>(y),
                                         std::isnan(x), std::isnan(y));
    }
    default: {
      double x, y;
      std::memcpy(&x, a, 8);
      std::memcpy(&y, b, 8);
      return ulp_distance_bits<uint64_t>(std::bit_cast<uint64_t>(x), std::bit_cast<uint64_t>(y),
                                         std::isnan(x), std::isnan(y));
    }
  }
}

bool is_real_float(DType t) { return is_float(t); }

// -- per-op bounds ---------------------------------------------------------------------

/// Ulps allowed between a real result and the correctly rounded reference.
/// 0 = exact: + - * / sqrt are correctly rounded (spec), and every op that
/// is exact by construction (negate, abs, sign, floor, ceil, rounding,
/// conj, maximum, minimum, clamp, remainder, convert, select, compare).
/// The others are the measured worst case over the fixtures (1 ulp for
/// every op and dtype below) or, for the vectorized f32 functions, over the
/// sweeps of vector_math_test.cpp (exp 1, log 1, tanh 2, logistic 3, sine,
/// cosine, expm1, log1p 1), each within the spec's 4 ulps:
///   exponential, log, tanh, logistic f32: vector_math.hpp;
///   sine, cosine, expm1, log1p f32: vector_math_via_f64.hpp;
///   power f32: glibc's powf;
///   exponential, log, tanh, logistic, expm1, log1p f64: vector_math_f64.hpp
///   (errors from the exact value 0.93, 1.21, 2.52, 2.23, 1.88, 1.33 ulps,
///   so 1, 2, 3, 3, 2, 2 from a correctly rounded reference);
///   sine, cosine, power f64: glibc's double functions;
///   rsqrt: f32 through f64 (0 measured), f64 two roundings (1);
///   f16/bf16: f32 result rounded again (1);
///   abs of complex: hypot (1).
uint64_t ulp_bound(const std::string& op, DType t, DType operand) {
  if (op == "abs" && is_complex(operand)) return 1;  // hypot: within 1 ulp
  static const std::map<std::string, int> f32_bounds = {
      {"exponential", 1}, {"log", 1}, {"tanh", 2}, {"logistic", 3}, {"sine", 1},
      {"cosine", 1}, {"exponential_minus_one", 1}, {"log_plus_one", 1}, {"power", 1},
      {"rsqrt", 1}};
  static const std::map<std::string, int> f64_bounds = {
      {"exponential", 1}, {"log", 2}, {"tanh", 3}, {"logistic", 3}, {"sine", 1},
      {"cosine", 1}, {"exponential_minus_one", 2}, {"log_plus_one", 2}, {"power", 1},
      {"rsqrt", 1}};
  const auto& table = t == DType::F64 ? f64_bounds : f32_bounds;
  auto it = table.find(op);
  if (it == table.end()) return 0;
  if (t == DType::F16 || t == DType::BF16) return 1;
  return static_cast<uint64_t>(it->second);
}

/// Norm-wise relative error allowed for complex results, in units of the
/// component type's epsilon: |got - want| <= k * eps * |want|. std::complex
/// multiply/divide and the complex functions are not correctly rounded;
/// k is the measured worst case over the fixtures rounded up.
double complex_bound(const std::string& op) {
  // measured: mul 1.0, div 1.1, exp 1.0, log 1.2, sin 1.3, cos 1.2,
  // tanh 2.0, sqrt 0.9, rsqrt 1.2, expm1 1.9, log1p 1.0, logistic 2.3,
  // power 9.1, sign 0.7 (c64 and c128 alike)
  static const std::map<std::string, double> k = {
      {"multiply", 2}, {"divide", 2}, {"exponential", 2}, {"log", 2}, {"sine", 2},
      {"cosine", 2}, {"tanh", 3}, {"sqrt", 1}, {"rsqrt", 2}, {"exponential_minus_one", 3},
      {"log_plus_one", 2}, {"logistic", 3}, {"power", 12}, {"sign", 1}};
  auto it = k.find(op);
  return it == k.end() ? 0 : it->second;
}

template <class R>
double complex_error(const std::byte* got, const std::byte* want, double& magnitude) {
  std::complex<R> g, w;
  std::memcpy(&g, got, sizeof(g));
  std::memcpy(&w, want, sizeof(w));
  magnitude = std::abs(std::complex<double>(w));
  return std::abs(std::complex<double>(g) - std::complex<double>(w));
}

// -- fixtures ------------------------------------------------------------------------

TEST_CASE("every elementwise op matches NumPy over the dtypes it admits", "[elementwise]") {
  const std::string dir = fixture_dir("cpu_elementwise");
  std::ifstream manifest(dir + "manifest.txt");
  REQUIRE(manifest.good());
  std::string line;
  int cases = 0;
  std::map<std::string, uint64_t> worst_ulps;
  std::map<std::string, double> worst_complex;
  while (std::getline(manifest, line)) {
    if (line.empty()) continue;
    const auto f = split(line, '|');
    REQUIRE(f.size() == 5);
    const std::string& name = f[0];
    INFO("case " << name);
    const auto kind = parse_op_kind(f[1]);
    REQUIRE(kind.has_value());
    OpAttrs attrs = NoAttrs{};
    if (*kind == OpKind::Compare) attrs = CompareAttrs{*parse_compare_direction(f[2])};
    if (*kind == OpKind::Convert) attrs = ConvertAttrs{*parse_dtype(f[2])};
    const DType out_dtype = *parse_dtype(f[4]);
    std::vector<HostTensor> inputs;
    for (size_t k = 0; k < split(f[3], ',').size(); ++k) {
      auto t = read_tensor_file(dir + name + "_in" + std::to_string(k) + ".npy");
      INFO((t.ok() ? std::string{} : t.error().to_string()));
      REQUIRE(t.ok());
      inputs.push_back(*t);
    }
    auto want = read_tensor_file(dir + name + "_out.npy");
    REQUIRE(want.ok());
    const HostTensor got = run_one(*kind, inputs, attrs);
    REQUIRE(got.dtype() == out_dtype);
    REQUIRE(want->dtype() == out_dtype);
    REQUIRE(got.shape() == want->shape());
    const size_t elem = size_of(out_dtype);
    const auto* g = got.data();
    const auto* w = want->data();
    const int64_t n = got.element_count();
    if (is_real_float(out_dtype)) {
      const uint64_t bound = ulp_bound(f[1], out_dtype, inputs[0].dtype());
      uint64_t worst = 0;
      int64_t worst_at = -1;
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t d = ulp_distance(out_dtype, g + i * elem, w + i * elem);
        if (d > worst) worst = d, worst_at = i;
      }
      worst_ulps[f[1] + "/" + std::string{to_string(out_dtype)}] = worst;
      INFO("worst ulp distance " << worst << " at element " << worst_at << ", bound " << bound);
      CHECK(worst <= bound);
    } else if (is_complex(out_dtype)) {
      const double k = complex_bound(f[1]);
      const double eps = out_dtype == DType::C64 ? std::numeric_limits<float>::epsilon()
                                                 : std::numeric_limits<double>::epsilon();
      double worst = 0;
      for (int64_t i = 0; i < n; ++i) {
        double mag = 0;
        const double err = out_dtype == DType::C64
                               ? complex_error<float>(g + i * elem, w + i * elem, mag)
                               : complex_error<double>(g + i * elem, w + i * elem, mag);
        worst = std::max(worst, mag > 0 ? err / (mag * eps) : err / eps);
      }
      worst_complex[name] = worst;
      INFO("worst norm-wise error " << worst << " eps, bound " << k);
      CHECK(worst <= k);
    } else {
      int64_t mismatches = 0;
      int64_t first = -1;
      for (int64_t i = 0; i < n; ++i)
        if (std::memcmp(g + i * elem, w + i * elem, elem) != 0) {
          if (first < 0) first = i;
          ++mismatches;
        }
      INFO("first mismatch at element " << first);
      CHECK(mismatches == 0);
    }
    ++cases;
  }
  CHECK(cases > 400);
  if (std::getenv("TENACT_PRINT_ULPS") != nullptr)  // measuring the bounds above
    for (const auto& [key, ulps] : worst_ulps) std::printf("%s: %llu ulp\n", key.c_str(),
                                                           static_cast<unsigned long long>(ulps));
  if (std::getenv("TENACT_PRINT_ULPS") != nullptr)
    for (const auto& [key, eps] : worst_complex) std::printf("%s: %.2f eps\n", key.c_str(), eps);
}

// -- the runtime's decisions (hand-derived) ------------------------------------------

TEST_CASE("integer division by zero gives all ones and x % 0 gives x", "[elementwise]") {
  auto a = make<int32_t>(DType::I32, {4}, {7, -7, 0, std::numeric_limits<int32_t>::min()});
  auto z = make<int32_t>(DType::I32, {4}, {0, 0, 0, 0});
  CHECK(values_of<int32_t>(run_one(OpKind::Divide, {a, z})) == std::vector<int32_t>{-1, -1, -1, -1});
  CHECK(values_of<int32_t>(run_one(OpKind::Remainder, {a, z})) ==
        std::vector<int32_t>{7, -7, 0, std::numeric_limits<int32_t>::min()});
  auto ua = make<uint8_t>(DType::U8, {2}, {5, 255});
  auto uz = make<uint8_t>(DType::U8, {2}, {0, 0});
  CHECK(values_of<uint8_t>(run_one(OpKind::Divide, {ua, uz})) == std::vector<uint8_t>{255, 255});
  CHECK(values_of<uint8_t>(run_one(OpKind::Remainder, {ua, uz})) == std::vector<uint8_t>{5, 255});
  auto la = make<int64_t>(DType::I64, {1}, {42});
  auto lz = make<int64_t>(DType::I64, {1}, {0});
  CHECK(values_of<int64_t>(run_one(OpKind::Divide, {la, lz})) == std::vector<int64_t>{-1});
  auto wa = make<uint64_t>(DType::U64, {1}, {42});
  auto wz = make<uint64_t>(DType::U64, {1}, {0});
  CHECK(values_of<uint64_t>(run_one(OpKind::Divide, {wa, wz})) ==
        std::vector<uint64_t>{std::numeric_limits<uint64_t>::max()});
}

TEST_CASE("INT_MIN / -1 is INT_MIN and INT_MIN % -1 is 0, never a trap", "[elementwise]") {
  auto a8 = make<int8_t>(DType::I8, {2}, {-128, -128});
  auto b8 = make<int8_t>(DType::I8, {2}, {-1, 2});
  CHECK(values_of<int8_t>(run_one(OpKind::Divide, {a8, b8})) == std::vector<int8_t>{-128, -64});
  CHECK(values_of<int8_t>(run_one(OpKind::Remainder, {a8, b8})) == std::vector<int8_t>{0, 0});
  const int64_t min64 = std::numeric_limits<int64_t>::min();
  auto a = make<int64_t>(DType::I64, {3}, {min64, min64, -7});
  auto b = make<int64_t>(DType::I64, {3}, {-1, -1, 2});
  CHECK(values_of<int64_t>(run_one(OpKind::Divide, {a, b})) == std::vector<int64_t>{min64, min64, -3});
  CHECK(values_of<int64_t>(run_one(OpKind::Remainder, {a, b})) == std::vector<int64_t>{0, 0, -1});
  const int32_t min32 = std::numeric_limits<int32_t>::min();
  auto c = make<int32_t>(DType::I32, {1}, {min32});
  auto d = make<int32_t>(DType::I32, {1}, {-1});
  CHECK(values_of<int32_t>(run_one(OpKind::Divide, {c, d})) == std::vector<int32_t>{min32});
}

TEST_CASE("integer arithmetic wraps in two's complement", "[elementwise]") {
  auto a = make<int8_t>(DType::I8, {4}, {127, -128, 100, -128});
  auto b = make<int8_t>(DType::I8, {4}, {1, -1, 3, 1});
  CHECK(values_of<int8_t>(run_one(OpKind::Add, {a, b})) == std::vector<int8_t>{-128, 127, 103, -127});
  CHECK(values_of<int8_t>(run_one(OpKind::Multiply, {a, b})) ==
        std::vector<int8_t>{127, -128, 44, -128});  // 300 mod 256 = 44; -128 * -1 wraps
  CHECK(values_of<int8_t>(run_one(OpKind::Negate, {a})) == std::vector<int8_t>{-127, -128, -100, -128});
  CHECK(values_of<int8_t>(run_one(OpKind::Abs, {a})) == std::vector<int8_t>{127, -128, 100, -128});
  auto u = make<uint16_t>(DType::U16, {2}, {65535, 3});
  CHECK(values_of<uint16_t>(run_one(OpKind::Multiply, {u, u})) == std::vector<uint16_t>{1, 9});
  CHECK(values_of<uint16_t>(run_one(OpKind::Negate, {u})) == std::vector<uint16_t>{1, 65533});
}

TEST_CASE("an elementwise op keeps its resolved kernel in a KernelKeep, per operand dtypes", "[elementwise][keep]") {
  const OpAttrs attrs = NoAttrs{};
  const std::vector<ValueType> types;
  const SymbolBindings symbols;
  KernelKeep keep;
  // 1.5 + 2.25 = 3.75 and 0.5 + -4 = -3.5, exact in f32 and f64.
  auto add = [&](DType t) {
    const std::vector<HostTensor> inputs = t == DType::F32
        ? std::vector<HostTensor>{tensor_of<float>(t, {2}, {1.5f, 0.5f}), tensor_of<float>(t, {2}, {2.25f, -4.0f})}
        : std::vector<HostTensor>{tensor_of<double>(t, {2}, {1.5, 0.5}), tensor_of<double>(t, {2}, {2.25, -4.0})};
    KernelCall call{OpKind::Add, attrs, inputs, types, symbols, nullptr};
    call.keep = &keep;
    auto r = run_kernel(call);
    REQUIRE(r.ok());
    REQUIRE(r->size() == 1);
    const HostTensor& y = r->front();
    REQUIRE(y.dtype() == t);
    if (t == DType::F32) {
      CHECK(element<float>(y, 0) == 3.75f);
      CHECK(element<float>(y, 1) == -3.5f);
    } else {
      CHECK(element<double>(y, 0) == 3.75);
      CHECK(element<double>(y, 1) == -3.5);
    }
  };
  add(DType::F32);
  REQUIRE(keep.kept);
  const void* first = keep.kept.get();
  add(DType::F32);
  CHECK(keep.kept.get() == first);  // the same dtypes: the kept kernel
  add(DType::F64);                   // other dtypes: resolved again, the right kernel
  CHECK(keep.kept.get() != first);
  add(DType::F64);
}

TEST_CASE("integer power with a negative exponent follows the spec", "[elementwise]") {
  auto base = make<int32_t>(DType::I32, {7}, {1, -1, -1, 0, 2, -3, 5});
  auto ex = make<int32_t>(DType::I32, {7}, {-5, -3, -4, -1, -1, -2, 0});
  CHECK(values_of<int32_t>(run_one(OpKind::Power, {base, ex})) ==
        std::vector<int32_t>{1, -1, 1, 0, 0, 0, 1});
  auto b2 = make<int8_t>(DType::I8, {3}, {2, 3, -2});
  auto e2 = make<int8_t>(DType::I8, {3}, {7, 5, 7});
  // 2^7 = 128 wraps to -128; 3^5 = 243 wraps to -13; (-2)^7 = -128
  CHECK(values_of<int8_t>(run_one(OpKind::Power, {b2, e2})) == std::vector<int8_t>{-128, -13, -128});
}

TEST_CASE("maximum and minimum order signed zeros and propagate NaN", "[elementwise]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto a = make<float>(DType::F32, {5}, {-0.0f, 0.0f, nan, 1.0f, -0.0f});
  auto b = make<float>(DType::F32, {5}, {0.0f, -0.0f, 1.0f, nan, -0.0f});
  auto mx = values_of<float>(run_one(OpKind::Maximum, {a, b}));
  auto mn = values_of<float>(run_one(OpKind::Minimum, {a, b}));
  CHECK((mx[0] == 0 && !std::signbit(mx[0])));
  CHECK((mx[1] == 0 && !std::signbit(mx[1])));
  CHECK((mn[0] == 0 && std::signbit(mn[0])));
  CHECK((mn[1] == 0 && std::signbit(mn[1])));
  CHECK(std::isnan(mx[2]));
  CHECK(std::isnan(mx[3]));
  CHECK(std::isnan(mn[2]));
  CHECK(std::isnan(mn[3]));
  CHECK(std::signbit(mx[4]));
}

// The rule as the format states it, written out by hand: NaN if either is
// NaN (the first operand's NaN when both are); +0 for max(-0, +0) and -0
// for min(-0, +0); otherwise the larger (smaller) value.
template <class T>
void check_max_min_rule(DType dtype) {
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const std::vector<T> specials{T(0), -T(0), T(1), -T(1), T(2.5), -T(1e-3), inf, -inf, nan, -nan,
                                std::numeric_limits<T>::denorm_min(), -std::numeric_limits<T>::denorm_min(),
                                std::numeric_limits<T>::max(), std::numeric_limits<T>::lowest()};
  std::vector<T> a, b;
  for (T x : specials)
    for (T y : specials) a.push_back(x), b.push_back(y);  // 196 pairs: the vector loops and their tails
  const int64_t n = static_cast<int64_t>(a.size());
  auto mx = values_of<T>(run_one(OpKind::Maximum, {make<T>(dtype, {n}, a), make<T>(dtype, {n}, b)}));
  auto mn = values_of<T>(run_one(OpKind::Minimum, {make<T>(dtype, {n}, a), make<T>(dtype, {n}, b)}));
  for (size_t i = 0; i < a.size(); ++i) {
    INFO(to_string(dtype) << " a = " << a[i] << " (sign " << std::signbit(a[i]) << "), b = " << b[i] << " (sign "
                          << std::signbit(b[i]) << ")");
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      CHECK(std::isnan(mx[i]));
      CHECK(std::isnan(mn[i]));
      if (std::isnan(a[i])) CHECK((std::signbit(mx[i]) == std::signbit(a[i]) && std::signbit(mn[i]) == std::signbit(a[i])));
      else CHECK((std::signbit(mx[i]) == std::signbit(b[i]) && std::signbit(mn[i]) == std::signbit(b[i])));
      continue;
    }
    const T larger = a[i] < b[i] ? b[i] : a[i], smaller = a[i] < b[i] ? a[i] : b[i];
    CHECK(mx[i] == larger);
    CHECK(mn[i] == smaller);
    if (a[i] == 0 && b[i] == 0) {
      CHECK(std::signbit(mx[i]) == (std::signbit(a[i]) && std::signbit(b[i])));
      CHECK(std::signbit(mn[i]) == (std::signbit(a[i]) || std::signbit(b[i])));
    }
  }
}

TEST_CASE("maximum and minimum follow the rule on every pair of special f32 and f64 values", "[elementwise]") {
  check_max_min_rule<float>(DType::F32);
  check_max_min_rule<double>(DType::F64);
}

TEST_CASE("clamp takes scalar bounds, propagates NaN and gives max when min > max",
          "[elementwise]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto lo = make<double>(DType::F64, {}, {-1.0});
  auto hi = make<double>(DType::F64, {}, {2.0});
  auto x = make<double>(DType::F64, {2, 3}, {-5.0, 0.5, 7.0, nan, -0.0, 2.0});
  auto r = values_of<double>(run_one(OpKind::Clamp, {lo, x, hi}));
  CHECK(r[0] == -1.0);
  CHECK(r[1] == 0.5);
  CHECK(r[2] == 2.0);
  CHECK(std::isnan(r[3]));
  CHECK((r[4] == 0 && std::signbit(r[4])));
  CHECK(r[5] == 2.0);
  auto nan_lo = make<double>(DType::F64, {}, {nan});
  CHECK(std::isnan(values_of<double>(run_one(OpKind::Clamp, {nan_lo, x, hi}))[1]));
  auto big_lo = make<double>(DType::F64, {}, {5.0});
  auto r2 = values_of<double>(run_one(OpKind::Clamp, {big_lo, x, hi}));
  CHECK(r2[0] == 2.0);
  CHECK(r2[2] == 2.0);
  auto zlo = make<double>(DType::F64, {}, {0.0});
  auto r3 = values_of<double>(run_one(OpKind::Clamp, {zlo, x, hi}));
  CHECK((r3[4] == 0 && !std::signbit(r3[4])));  // maximum(-0, +0) = +0
}

TEST_CASE("sign keeps signed zeros and NaN, and abs clears the sign of zero", "[elementwise]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto x = make<float>(DType::F32, {5}, {0.0f, -0.0f, nan, -3.0f, 1e-40f});
  auto s = values_of<float>(run_one(OpKind::Sign, {x}));
  CHECK((s[0] == 0 && !std::signbit(s[0])));
  CHECK((s[1] == 0 && std::signbit(s[1])));
  CHECK(std::isnan(s[2]));
  CHECK(s[3] == -1.0f);
  CHECK(s[4] == 1.0f);
  auto a = values_of<float>(run_one(OpKind::Abs, {x}));
  CHECK((a[1] == 0 && !std::signbit(a[1])));
  using C = std::complex<double>;
  auto z = make<C>(DType::C128, {3}, {C(3, 4), C(0, 0), C(1e308, 1e308)});
  auto zs = values_of<C>(run_one(OpKind::Sign, {z}));
  CHECK(zs[0] == C(0.6, 0.8));
  CHECK(zs[1] == C(0, 0));
  CHECK(std::abs(zs[2] - C(std::sqrt(0.5), std::sqrt(0.5))) < 1e-15);  // no overflow
  auto za = run_one(OpKind::Abs, {z});
  CHECK(za.dtype() == DType::F64);
  CHECK(values_of<double>(za)[0] == 5.0);
}

TEST_CASE("compare is false on NaN except NE", "[elementwise]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto a = make<float>(DType::F32, {2}, {nan, 1.0f});
  auto b = make<float>(DType::F32, {2}, {nan, nan});
  const std::vector<std::pair<CompareDirection, std::vector<uint8_t>>> expect = {
      {CompareDirection::EQ, {0, 0}}, {CompareDirection::NE, {1, 1}},
      {CompareDirection::LT, {0, 0}}, {CompareDirection::LE, {0, 0}},
      {CompareDirection::GT, {0, 0}}, {CompareDirection::GE, {0, 0}}};
  for (const auto& [dir, want] : expect) {
    auto r = run_one(OpKind::Compare, {a, b}, CompareAttrs{dir});
    CHECK(r.dtype() == DType::Bool);
    CHECK(values_of<uint8_t>(r) == want);
  }
}

TEST_CASE("convert rounds once from wide integers and saturates into integers",
          "[elementwise]") {
  // 2^60 + 2^52 + 1 is just above a bf16 midpoint: one rounding gives
  // 2^60 + 2^53; rounding through f64 first would tie and give 2^60.
  const int64_t x = (int64_t{1} << 60) + (int64_t{1} << 52) + 1;
  auto bf = run_one(OpKind::Convert, {make<int64_t>(DType::I64, {1}, {x})},
                    ConvertAttrs{DType::BF16});
  CHECK(values_of<uint16_t>(bf)[0] == bf16(static_cast<float>(std::ldexp(1.0, 60) + std::ldexp(1.0, 53))).bits);
  // The same for u64 -> f32: 2^63 + 2^39 + 1 rounds up to 2^63 + 2^40.
  const uint64_t u = (uint64_t{1} << 63) + (uint64_t{1} << 39) + 1;
  auto f = run_one(OpKind::Convert, {make<uint64_t>(DType::U64, {1}, {u})},
                   ConvertAttrs{DType::F32});
  CHECK(values_of<float>(f)[0] == static_cast<float>(std::ldexp(1.0, 63) + std::ldexp(1.0, 40)));
  // f64 -> f16: 1 + 2^-11 + 2^-40 rounds up (through f32 it would tie to 1).
  auto h = run_one(OpKind::Convert,
                   {make<double>(DType::F64, {1}, {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)})},
                   ConvertAttrs{DType::F16});
  CHECK(values_of<uint16_t>(h)[0] == 0x3c01);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto src = make<double>(DType::F64, {6}, {nan, 1e300, -1e300, -2.9, 2.9, -0.5});
  CHECK(values_of<int32_t>(run_one(OpKind::Convert, {src}, ConvertAttrs{DType::I32})) ==
        std::vector<int32_t>{0, std::numeric_limits<int32_t>::max(),
                             std::numeric_limits<int32_t>::min(), -2, 2, 0});
  CHECK(values_of<uint8_t>(run_one(OpKind::Convert, {src}, ConvertAttrs{DType::U8})) ==
        std::vector<uint8_t>{0, 255, 0, 0, 2, 0});
  CHECK(values_of<uint8_t>(run_one(OpKind::Convert, {src}, ConvertAttrs{DType::Bool})) ==
        std::vector<uint8_t>{1, 1, 1, 1, 1, 1});
  auto big = make<int32_t>(DType::I32, {2}, {300, -1});
  CHECK(values_of<uint8_t>(run_one(OpKind::Convert, {big}, ConvertAttrs{DType::U8})) ==
        std::vector<uint8_t>{44, 255});
}

TEST_CASE("convert of complex to bool drops the imaginary part first", "[elementwise]") {
  // re != 0 (spec, as StableHLO); NaN != 0 is true.
  const float nan_f = std::numeric_limits<float>::quiet_NaN();
  const double nan_d = std::numeric_limits<double>::quiet_NaN();
  const std::vector<uint8_t> want{0, 1, 0, 0, 1, 0, 1};
  auto c64 = make<std::complex<float>>(
      DType::C64, {7}, {{0.0f, 1.0f}, {1.0f, 0.0f}, {0.0f, 0.0f}, {-0.0f, 0.0f}, {nan_f, 0.0f},
                        {0.0f, nan_f}, {-2.5f, -7.0f}});
  CHECK(values_of<uint8_t>(run_one(OpKind::Convert, {c64}, ConvertAttrs{DType::Bool})) == want);
  auto c128 = make<std::complex<double>>(
      DType::C128, {7}, {{0.0, 1.0}, {1.0, 0.0}, {0.0, 0.0}, {-0.0, 0.0}, {nan_d, 0.0},
                         {0.0, nan_d}, {-2.5, -7.0}});
  CHECK(values_of<uint8_t>(run_one(OpKind::Convert, {c128}, ConvertAttrs{DType::Bool})) == want);
}

TEST_CASE("convert of complex to a real type converts the real part alone", "[elementwise]") {
  // Within range as np.real(x).astype(T); outside it, and for NaN, the
  // spec's float -> integer rule: truncate toward zero, saturate, NaN -> 0.
  const double nan_d = std::numeric_limits<double>::quiet_NaN();
  auto c128 = make<std::complex<double>>(
      DType::C128, {8}, {{2.9, 5.0}, {-2.9, -1.0}, {0.1, 1e300}, {1e300, 1.0}, {-1e300, 0.0},
                         {nan_d, 3.0}, {300.7, 9.0}, {-0.0, -4.0}});
  CHECK(values_of<int32_t>(run_one(OpKind::Convert, {c128}, ConvertAttrs{DType::I32})) ==
        std::vector<int32_t>{2, -2, 0, std::numeric_limits<int32_t>::max(),
                             std::numeric_limits<int32_t>::min(), 0, 300, 0});
  CHECK(values_of<uint8_t>(run_one(OpKind::Convert, {c128}, ConvertAttrs{DType::U8})) ==
        std::vector<uint8_t>{2, 0, 0, 255, 0, 0, 255, 0});
  const std::vector<float> f = values_of<float>(run_one(OpKind::Convert, {c128}, ConvertAttrs{DType::F32}));
  REQUIRE(f.size() == 8);
  CHECK(f[0] == 2.9f);
  CHECK(f[1] == -2.9f);
  CHECK(f[2] == 0.1f);  // one rounding of 0.1 (double) to float
  CHECK(f[3] == std::numeric_limits<float>::infinity());
  CHECK(f[4] == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(f[5]));
  CHECK(f[6] == 300.7f);
  CHECK((f[7] == 0.0f && std::signbit(f[7])));
  auto c64 = make<std::complex<float>>(DType::C64, {4},
                                       {{2.9f, 5.0f}, {-300.5f, 1.0f}, {0.0f, 1.0f}, {255.9f, -1.0f}});
  CHECK(values_of<int32_t>(run_one(OpKind::Convert, {c64}, ConvertAttrs{DType::I32})) ==
        std::vector<int32_t>{2, -300, 0, 255});
  CHECK(values_of<uint8_t>(run_one(OpKind::Convert, {c64}, ConvertAttrs{DType::U8})) ==
        std::vector<uint8_t>{2, 0, 0, 255});
  CHECK(values_of<float>(run_one(OpKind::Convert, {c64}, ConvertAttrs{DType::F32})) ==
        std::vector<float>{2.9f, -300.5f, 0.0f, 255.9f});
}

TEST_CASE("a bool byte other than 0 or 1 reads as true", "[elementwise]") {
  auto a = make<uint8_t>(DType::Bool, {3}, {0, 2, 255});
  CHECK(values_of<uint8_t>(run_one(OpKind::Not, {a})) == std::vector<uint8_t>{1, 0, 0});
  auto t = make<int16_t>(DType::I16, {3}, {10, 20, 30});
  auto f = make<int16_t>(DType::I16, {3}, {-1, -2, -3});
  CHECK(values_of<int16_t>(run_one(OpKind::Select, {a, t, f})) == std::vector<int16_t>{-1, 20, 30});
}

// -- layouts -----------------------------------------------------------------------

TEST_CASE("empty tensors give empty results", "[elementwise]") {
  auto a = make<float>(DType::F32, {3, 0}, {});
  auto r = run_one(OpKind::Add, {a, a});
  CHECK(r.shape() == std::vector<int64_t>{3, 0});
  CHECK(r.dtype() == DType::F32);
  auto c = run_one(OpKind::Convert, {make<int8_t>(DType::I8, {0}, {})}, ConvertAttrs{DType::C128});
  CHECK(c.shape() == std::vector<int64_t>{0});
  CHECK(c.dtype() == DType::C128);
}

TEST_CASE("rank-0 operands give a rank-0 result", "[elementwise]") {
  auto a = make<double>(DType::F64, {}, {2.0});
  auto b = make<double>(DType::F64, {}, {3.0});
  auto r = run_one(OpKind::Power, {a, b});
  CHECK(r.rank() == 0);
  CHECK(values_of<double>(r) == std::vector<double>{8.0});
  auto p = make<uint8_t>(DType::Bool, {}, {0});
  CHECK(values_of<double>(run_one(OpKind::Select, {p, a, b})) == std::vector<double>{3.0});
}

TEST_CASE("strided, transposed, reversed and broadcast operands are read through their strides",
          "[elementwise]") {
  // a = [[0, 1, 2], [3, 4, 5]]; a^T = [[0, 3], [1, 4], [2, 5]]
  std::vector<int32_t> av(6);
  for (int i = 0; i < 6; ++i) av[static_cast<size_t>(i)] = i;
  auto a = make<int32_t>(DType::I32, {2, 3}, av);
  const std::vector<int64_t> perm{1, 0};
  auto at = a.transposed(perm);
  auto b = make<int32_t>(DType::I32, {3, 2}, {10, 20, 30, 40, 50, 60});
  CHECK(values_of<int32_t>(run_one(OpKind::Add, {at, b})) ==
        std::vector<int32_t>{10, 23, 31, 44, 52, 65});
  // broadcast of a row [7, 8] to [3, 2]
  auto row = make<int32_t>(DType::I32, {2}, {7, 8});
  const std::vector<int64_t> dims{1};
  auto rb = row.broadcast_view({3, 2}, dims);
  CHECK(values_of<int32_t>(run_one(OpKind::Multiply, {rb, b})) ==
        std::vector<int32_t>{70, 160, 210, 320, 350, 480});
  // a scalar broadcast to [3, 2] (all strides 0)
  auto s = make<int32_t>(DType::I32, {}, {5});
  auto sb = s.broadcast_view({3, 2}, std::vector<int64_t>{});
  CHECK(values_of<int32_t>(run_one(OpKind::Subtract, {b, sb})) ==
        std::vector<int32_t>{5, 15, 25, 35, 45, 55});
  // reversed: strides -1 over [10..60]
  auto rev = HostTensor::view(b.buffer(), DType::I32, {6}, {-1}, 5);
  REQUIRE(rev.ok());
  CHECK(values_of<int32_t>(run_one(OpKind::Negate, {*rev})) ==
        std::vector<int32_t>{-60, -50, -40, -30, -20, -10});
  // every other element of a column-major 4x5
  std::vector<float> big(40);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i);
  auto bt = make<float>(DType::F32, {40}, big);
  auto v = HostTensor::view(bt.buffer(), DType::F32, {4, 5}, {2, 8}, 1);
  REQUIRE(v.ok());
  auto r = values_of<float>(run_one(OpKind::Sqrt, {*v}));
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j)
      CHECK(r[static_cast<size_t>(i * 5 + j)] == std::sqrt(static_cast<float>(1 + 2 * i + 8 * j)));
}

TEST_CASE("a large op split over the pool gives the serial bits", "[elementwise]") {
  const int64_t n = 300'001;  // several grains, an uneven tail
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = std::sin(static_cast<float>(i)) * 9.0f;
  auto a = make<float>(DType::F32, {n}, x);
  auto serial = run_one(OpKind::Tanh, {a});
  auto pool_holder = test_pool(3);
  WorkerPool& pool = *pool_holder;
  auto parallel = run_one(OpKind::Tanh, {a}, NoAttrs{}, &pool);
  CHECK(serial.bitwise_equal(parallel));
  // transposed (gathered per tile) too
  auto m = make<float>(DType::F32, {547, 548}, std::vector<float>(x.begin(), x.begin() + 547 * 548));
  const std::vector<int64_t> perm{1, 0};
  auto mt = m.transposed(perm);
  CHECK(run_one(OpKind::Exponential, {mt}).bitwise_equal(
      run_one(OpKind::Exponential, {mt}, NoAttrs{}, &pool)));
}

TEST_CASE("the vectorized loop and a scalar call of the same function agree bit for bit",
          "[elementwise][vector_math]") {
  std::vector<float> x(1003);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = (static_cast<float>(i) - 501.0f) * 0.0371f + (i % 7 == 0 ? 80.0f : 0.0f);
  x[3] = -0.0f;
  x[4] = std::numeric_limits<float>::quiet_NaN();
  x[5] = std::numeric_limits<float>::infinity();
  x[6] = 6e5f;     // sine/cosine beyond the fast reduction (libm's)
  x[8] = -1.0f;    // log1p -> -inf
  x[9] = -2.5f;    // log1p -> NaN
  x[10] = -1e30f;
  auto a = make<float>(DType::F32, {1003}, x);
  const std::vector<std::pair<OpKind, float (*)(float)>> fns = {
      {OpKind::Exponential, vmath::exp_f32},         {OpKind::Log, vmath::log_f32},
      {OpKind::Tanh, vmath::tanh_f32},               {OpKind::Logistic, vmath::logistic_f32},
      {OpKind::Sine, vmath::sin_f32},                {OpKind::Cosine, vmath::cos_f32},
      {OpKind::ExponentialMinusOne, vmath::expm1_f32}, {OpKind::LogPlusOne, vmath::log1p_f32}};
  for (const auto& [kind, fn] : fns) {
    auto got = values_of<float>(run_one(kind, {a}));
    int64_t differ = 0;
    for (size_t i = 0; i < x.size(); ++i)
      differ += std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(fn(x[i]));
    INFO(to_string(kind));
    CHECK(differ == 0);
  }
}

// -- errors ------------------------------------------------------------------------

TEST_CASE("ops reject dtypes outside their type set and mismatched operands", "[elementwise]") {
  auto u = make<uint8_t>(DType::U8, {1}, {1});
  auto r = run(OpKind::Abs, {u});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::TypeMismatch);
  CHECK_THAT(r.error().message(), Catch::Contains("abs") && Catch::Contains("u8"));
  auto bl = make<uint8_t>(DType::Bool, {1}, {1});
  CHECK(run(OpKind::Subtract, {bl, bl}).error().code() == ErrorCode::TypeMismatch);
  CHECK(run(OpKind::Exponential, {u}).error().code() == ErrorCode::TypeMismatch);
  auto c = make<std::complex<float>>(DType::C64, {1}, {{1, 1}});
  CHECK(run(OpKind::Remainder, {c, c}).error().code() == ErrorCode::TypeMismatch);
  CHECK(run(OpKind::Floor, {c}).error().code() == ErrorCode::TypeMismatch);
  auto f2 = make<float>(DType::F32, {2}, {1, 2});
  auto f3 = make<float>(DType::F32, {3}, {1, 2, 3});
  auto s = run(OpKind::Add, {f2, f3});
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code() == ErrorCode::InputMismatch);
  CHECK_THAT(s.error().message(), Catch::Contains("[2]") && Catch::Contains("[3]"));
  auto d = make<double>(DType::F64, {2}, {1, 2});
  CHECK(run(OpKind::Add, {f2, d}).error().code() == ErrorCode::InputMismatch);
  CHECK(run(OpKind::Add, {f2}).error().code() == ErrorCode::InputMismatch);
  auto p3 = make<uint8_t>(DType::Bool, {3}, {1, 0, 1});
  CHECK(run(OpKind::Select, {p3, f2, f2}).error().code() == ErrorCode::InputMismatch);
  CHECK(run(OpKind::Clamp, {f3, f2, f2}).error().code() == ErrorCode::InputMismatch);
}

}  // namespace
}  // namespace tenact::cpu
