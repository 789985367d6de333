// The CPU reduction kernels (reduce_sum, reduce_sum_squares, reduce_prod,
// reduce_max, reduce_min) against NumPy fixtures (tests/fixtures/
// gen_cpu_reduction.py) for every op x representative dtype x layout, plus
// hand-derived identities, signed zeros, errors and thread-count
// independence.
//
// Tolerances (u = unit roundoff of the accumulation type: 2^-24 for
// f16/bf16/f32/c64 — which accumulate in f32 — and 2^-53 for f64/c128):
// - floating sums of n terms (docs/program-format.md): |ours - exact| <=
//   (2*ceil(log2 n) + E) * u * sum|terms| + the reference's own rounding
//   (half an f64 ulp, math.fsum) + for f16/bf16 the final rounding to the
//   dtype (half an ulp). E counts the roundings in forming one term: 0 for
//   x itself or the exact square of an f16/bf16 value, 1 for a rounded
//   square, 2 for re*re + im*im. Complex sums are bounded per component.
//   This uses the unit roundoff, not machine epsilon (2u): twice stricter
//   than reading "eps" as std::numeric_limits<T>::epsilon().
// - floating products of n terms: each multiply rounds once, so
//   |ours - exact| <= (n - 1) * u * |exact| (real) or (n - 1) * sqrt(5) * u *
//   |exact| (complex, normwise; the bound of one complex multiply), both to
//   first order (x1.01), + half an ulp for f16/bf16.
// - integers, bool, max, min: bitwise (a NaN equals any NaN).
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/engines/cpu/kernel_test_support.hpp"
#include "tests/engines/cpu/test_engine.hpp"
#include "core/half.hpp"
#include "core/tensor_io.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "util/worker_pool.hpp"

namespace tenact::cpu {
namespace {

using namespace kernel_fixtures;

struct FixtureCase {
  std::string name, op, dtype, dims, view, check;
};

std::vector<FixtureCase> read_reduction_manifest() {
  const std::string dir = fixture_dir("cpu_reduction");
  std::ifstream in(dir + "manifest.txt");
  if (!in) FAIL("missing fixture manifest " << dir << "manifest.txt (run generate_fixtures.py)");
  std::vector<FixtureCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::stringstream ss(line);
    FixtureCase c;
    std::string dims, view, check;
    ss >> c.name >> c.op >> c.dtype >> dims >> view >> check;
    c.dims = dims.substr(5);
    c.view = view.substr(5);
    c.check = check.substr(6);
    cases.push_back(c);
  }
  return cases;
}

bool is_floating(DType t) { return is_float(t) || is_complex(t); }

/// Bitwise equality element by element, except that a NaN (component)
/// equals any NaN.
void check_exact(const HostTensor& got, const HostTensor& want, const std::string& name) {
  INFO(name);
  REQUIRE(got.dtype() == want.dtype());
  REQUIRE(got.shape() == want.shape());
  const size_t width = size_of(got.dtype());
  const int64_t n = got.element_count();
  for (int64_t i = 0; i < n; ++i) {
    INFO("element " << i);
    if (is_floating(got.dtype())) {
      const auto g = value_at(got, i), w = value_at(want, i);
      const bool same_nan = std::isnan(g.real()) == std::isnan(w.real()) &&
                            std::isnan(g.imag()) == std::isnan(w.imag());
      REQUIRE(same_nan);
      if (std::isnan(g.real()) || std::isnan(g.imag())) continue;
    }
    REQUIRE(std::memcmp(got.data() + i * static_cast<int64_t>(width),
                        want.data() + i * static_cast<int64_t>(width), width) == 0);
  }
}

/// Unit roundoff of the type a dtype accumulates in.
double accumulation_u(DType t) {
  return (t == DType::F64 || t == DType::C128) ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
}

bool is_half(DType t) { return t == DType::F16 || t == DType::BF16; }

int ceil_log2(int64_t n) {
  int k = 0;
  while ((int64_t{1} << k) < n) ++k;
  return k;
}

void check_component(double got, double ref, double abs_sum, double bound_factor, DType out,
                     const std::string& what) {
  INFO(what << ": got " << got << ", exact " << ref);
  if (std::isnan(ref)) {
    CHECK(std::isnan(got));
    return;
  }
  if (std::isinf(ref)) {
    CHECK(got == ref);
    return;
  }
  double tol = bound_factor * abs_sum + half_ulp(DType::F64, ref);
  if (is_half(out)) tol += half_ulp(out, std::fabs(ref) + tol);
  CHECK(std::fabs(got - ref) <= tol);
}

void check_sum(const HostTensor& got, const std::string& path, int64_t n, DType in_dtype,
               int extra_roundings, const std::string& name) {
  INFO(name << " (n = " << n << ")");
  const HostTensor ref = load(path + ".ref.npy");
  const HostTensor abs = load(path + ".abs.npy");
  REQUIRE(got.shape() == ref.shape());
  const double u = accumulation_u(in_dtype);
  const double factor = (2.0 * ceil_log2(n) + extra_roundings) * u;
  for (int64_t i = 0; i < got.element_count(); ++i) {
    const auto g = value_at(got, i), r = value_at(ref, i), a = value_at(abs, i);
    check_component(g.real(), r.real(), a.real(), factor, got.dtype(),
                    "element " + std::to_string(i) + " real");
    if (is_complex(got.dtype()))
      check_component(g.imag(), r.imag(), a.imag(), factor, got.dtype(),
                      "element " + std::to_string(i) + " imag");
  }
}

void check_prod(const HostTensor& got, const std::string& path, int64_t n, DType dtype,
                const std::string& name) {
  INFO(name << " (n = " << n << ")");
  const HostTensor ref = load(path + ".ref.npy");
  REQUIRE(got.shape() == ref.shape());
  const double u = accumulation_u(dtype);
  const double per_multiply = is_complex(dtype) ? std::sqrt(5.0) : 1.0;
  for (int64_t i = 0; i < got.element_count(); ++i) {
    const auto g = value_at(got, i), r = value_at(ref, i);
    double tol = 1.01 * static_cast<double>(std::max<int64_t>(n - 1, 0)) * per_multiply * u *
                 std::abs(r);
    if (is_half(dtype)) tol += half_ulp(dtype, std::abs(r) + tol);
    INFO("element " << i << ": got " << g << ", exact " << r);
    CHECK(std::abs(g - r) <= tol);
  }
}

Result<std::vector<HostTensor>> reduce(OpKind kind, const HostTensor& x,
                                       std::vector<int64_t> dims, WorkerPool* pool = nullptr) {
  const OpAttrs attrs = ReduceAttrs{std::move(dims)};
  const DType out = kind == OpKind::ReduceSumSquares ? real_component(x.dtype()) : x.dtype();
  const std::vector<ValueType> types{ValueType{out, {}}};
  const SymbolBindings symbols;
  const KernelCall call{kind, attrs, std::span<const HostTensor>(&x, 1), types, symbols, pool};
  return run_kernel(call);
}

HostTensor reduce_ok(OpKind kind, const HostTensor& x, std::vector<int64_t> dims,
                     WorkerPool* pool = nullptr) {
  auto r = reduce(kind, x, std::move(dims), pool);
  if (!r.ok()) FAIL(r.error().to_string());
  REQUIRE(r.value().size() == 1);
  return r.value()[0];
}

void run_fixture_case(const FixtureCase& c, WorkerPool* pool) {
  INFO("case " << c.name);
  const std::string path = fixture_dir("cpu_reduction") + c.name;
  const HostTensor base = load(path + ".in.npy");
  const HostTensor x = make_view(base, c.view);
  const auto kind = parse_op_kind(c.op);
  REQUIRE(kind.has_value());
  const std::vector<int64_t> dims = parse_ints(c.dims);
  int64_t n = 1;
  for (int64_t d : dims) n *= x.shape()[static_cast<size_t>(d)];
  const HostTensor got = reduce_ok(*kind, x, dims, pool);
  CHECK(got.is_contiguous());
  if (c.check == "exact") {
    check_exact(got, load(path + ".ref.npy"), c.name);
  } else if (c.check.rfind("sum:", 0) == 0) {
    check_sum(got, path, n, x.dtype(), std::stoi(c.check.substr(4)), c.name);
  } else if (c.check == "prod") {
    check_prod(got, path, n, x.dtype(), c.name);
  } else {
    FAIL("unknown check " << c.check);
  }
}

void run_fixture_op(const std::string& op, WorkerPool* pool = nullptr) {
  int count = 0;
  for (const FixtureCase& c : read_reduction_manifest()) {
    if (c.op != op) continue;
    run_fixture_case(c, pool);
    ++count;
  }
  CHECK(count > 50);
}

}  // namespace

TEST_CASE("reduce_sum matches NumPy for every dtype and layout", "[reduction]") {
  run_fixture_op("reduce_sum");
}
TEST_CASE("reduce_sum_squares matches NumPy for every dtype and layout", "[reduction]") {
  run_fixture_op("reduce_sum_squares");
}
TEST_CASE("reduce_prod matches NumPy for every dtype and layout", "[reduction]") {
  run_fixture_op("reduce_prod");
}
TEST_CASE("reduce_max matches NumPy for every dtype and layout", "[reduction]") {
  run_fixture_op("reduce_max");
}
TEST_CASE("reduce_min matches NumPy for every dtype and layout", "[reduction]") {
  run_fixture_op("reduce_min");
}

TEST_CASE("reductions on a worker pool match NumPy", "[reduction]") {
  auto pool_holder = test_pool(3);
  WorkerPool& pool = *pool_holder;
  for (const FixtureCase& c : read_reduction_manifest())
    if (c.name.find("long") != std::string::npos || c.name.find("nan") != std::string::npos)
      run_fixture_case(c, &pool);
}

TEST_CASE("reduction results are bitwise independent of the thread count", "[reduction]") {
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
      {"long_all", {0}}, {"long_run", {1}}, {"long_rows", {0}}, {"long_mixed", {0, 2}}};
  auto pool1_holder = test_pool(1), pool2_holder = test_pool(2), pool5_holder = test_pool(5);
  WorkerPool &pool1 = *pool1_holder, &pool2 = *pool2_holder, &pool5 = *pool5_holder;
  for (const char* dtype : {"f32", "f64", "f16", "c64"}) {
    for (const auto& [tag, dims] : shapes) {
      const std::string name = std::string("reduce_sum_") + dtype + "_" + tag;
      INFO(name);
      const HostTensor x = load(fixture_dir("cpu_reduction") + name + ".in.npy");
      for (OpKind kind : {OpKind::ReduceSum, OpKind::ReduceSumSquares, OpKind::ReduceMax}) {
        const HostTensor serial = reduce_ok(kind, x, dims, nullptr);
        for (WorkerPool* pool : {&pool1, &pool2, &pool5})
          CHECK(reduce_ok(kind, x, dims, pool).bitwise_equal(serial));
      }
    }
  }
}

TEST_CASE("reducing an empty axis gives the identity of each op", "[reduction]") {
  const double inf = std::numeric_limits<double>::infinity();
  for (DType dtype : kAllDTypes) {
    INFO("dtype " << to_string(dtype));
    auto x = HostTensor::zeros(dtype, {2, 0, 3});
    REQUIRE(x.ok());
    // Expected identities, hand-derived from docs/program-format.md.
    struct Expect {
      OpKind kind;
      std::complex<double> value;
    };
    std::vector<Expect> expects;
    const bool is_b = dtype == DType::Bool;
    double lowest = 0, highest = 0;
    switch (dtype) {
      case DType::Bool: lowest = 0; highest = 1; break;
      case DType::I8: lowest = -128; highest = 127; break;
      case DType::I16: lowest = -32768; highest = 32767; break;
      case DType::I32: lowest = -2147483648.0; highest = 2147483647.0; break;
      case DType::I64: lowest = -9223372036854775808.0; highest = 9223372036854775807.0; break;
      case DType::U8: lowest = 0; highest = 255; break;
      case DType::U16: lowest = 0; highest = 65535; break;
      case DType::U32: lowest = 0; highest = 4294967295.0; break;
      case DType::U64: lowest = 0; highest = 18446744073709551615.0; break;
      default: lowest = -inf; highest = inf; break;
    }
    const bool cplx = is_complex(dtype);
    expects.push_back({OpKind::ReduceSum, 0.0});
    expects.push_back({OpKind::ReduceProd, 1.0});
    expects.push_back({OpKind::ReduceMax, cplx ? std::complex<double>(-inf, -inf) : lowest});
    expects.push_back({OpKind::ReduceMin, cplx ? std::complex<double>(inf, inf) : highest});
    if (!is_b) expects.push_back({OpKind::ReduceSumSquares, 0.0});
    for (const Expect& e : expects) {
      INFO("op " << to_string(e.kind));
      const HostTensor r = reduce_ok(e.kind, x.value(), {1});
      REQUIRE(r.shape() == std::vector<int64_t>{2, 3});
      for (int64_t i = 0; i < 6; ++i) CHECK(value_at(r, i) == e.value);
    }
    // Exact integer identities (the doubles above round 64-bit extremes).
    if (dtype == DType::I64) {
      CHECK(element<int64_t>(reduce_ok(OpKind::ReduceMax, x.value(), {1}), 0) == INT64_MIN);
      CHECK(element<int64_t>(reduce_ok(OpKind::ReduceMin, x.value(), {1}), 0) == INT64_MAX);
    }
    if (dtype == DType::U64)
      CHECK(element<uint64_t>(reduce_ok(OpKind::ReduceMin, x.value(), {1}), 0) == UINT64_MAX);
  }
}

TEST_CASE("reducing to an empty result gives an empty tensor", "[reduction]") {
  auto x = HostTensor::zeros(DType::F32, {0, 4});
  REQUIRE(x.ok());
  const HostTensor r = reduce_ok(OpKind::ReduceSum, x.value(), {1});
  CHECK(r.shape() == std::vector<int64_t>{0});
  CHECK(r.element_count() == 0);
  const HostTensor all = reduce_ok(OpKind::ReduceMax, x.value(), {0, 1});
  CHECK(all.shape().empty());
  CHECK(element<float>(all, 0) == -std::numeric_limits<float>::infinity());
}

TEST_CASE("small reductions give hand-computed values", "[reduction]") {
  const HostTensor x = tensor_of<float>(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const HostTensor s0 = reduce_ok(OpKind::ReduceSum, x, {0});
  CHECK(s0.shape() == std::vector<int64_t>{3});
  CHECK(element<float>(s0, 0) == 5.0f);
  CHECK(element<float>(s0, 1) == 7.0f);
  CHECK(element<float>(s0, 2) == 9.0f);
  const HostTensor s1 = reduce_ok(OpKind::ReduceSumSquares, x, {1});
  CHECK(element<float>(s1, 0) == 14.0f);
  CHECK(element<float>(s1, 1) == 77.0f);
  const HostTensor p = reduce_ok(OpKind::ReduceProd, x, {1, 0});
  CHECK(p.shape().empty());
  CHECK(element<float>(p, 0) == 720.0f);
  const HostTensor z = tensor_of<std::complex<float>>(DType::C64, {2}, {{3, 4}, {1, -2}});
  const HostTensor zs = reduce_ok(OpKind::ReduceSumSquares, z, {0});
  CHECK(zs.dtype() == DType::F32);
  CHECK(element<float>(zs, 0) == 30.0f);  // 9 + 16 + 1 + 4
  const HostTensor zp = reduce_ok(OpKind::ReduceProd, z, {0});
  CHECK(element<std::complex<float>>(zp, 0) == std::complex<float>(11, -2));  // (3+4i)(1-2i)
  // Complex order is lexicographic: (1, 5) < (2, -1) < (2, 0).
  const HostTensor zc =
      tensor_of<std::complex<double>>(DType::C128, {3}, {{2, -1}, {1, 5}, {2, 0}});
  CHECK(element<std::complex<double>>(reduce_ok(OpKind::ReduceMax, zc, {0}), 0) ==
        std::complex<double>(2, 0));
  CHECK(element<std::complex<double>>(reduce_ok(OpKind::ReduceMin, zc, {0}), 0) ==
        std::complex<double>(1, 5));
}

TEST_CASE("integer sums and products wrap", "[reduction]") {
  const HostTensor x = tensor_of<int8_t>(DType::I8, {3}, {100, 100, 100});
  CHECK(element<int8_t>(reduce_ok(OpKind::ReduceSum, x, {0}), 0) == 44);  // 300 - 256
  CHECK(element<int8_t>(reduce_ok(OpKind::ReduceProd, x, {0}), 0) == 64);  // 10^6 mod 256
  const HostTensor u = tensor_of<uint16_t>(DType::U16, {2}, {65535, 65535});
  CHECK(element<uint16_t>(reduce_ok(OpKind::ReduceProd, u, {0}), 0) == 1);  // (-1)^2 mod 2^16
  CHECK(element<uint16_t>(reduce_ok(OpKind::ReduceSumSquares, u, {0}), 0) == 2);
  CHECK(element<uint16_t>(reduce_ok(OpKind::ReduceSum, u, {0}), 0) == 65534);
}

TEST_CASE("reduce_max and reduce_min order -0 below +0", "[reduction]") {
  for (std::vector<float> v : {std::vector<float>{-0.0f, 0.0f}, std::vector<float>{0.0f, -0.0f}}) {
    const HostTensor x = tensor_of<float>(DType::F32, {2}, v);
    const float mx = element<float>(reduce_ok(OpKind::ReduceMax, x, {0}), 0);
    const float mn = element<float>(reduce_ok(OpKind::ReduceMin, x, {0}), 0);
    CHECK(mx == 0.0f);
    CHECK_FALSE(std::signbit(mx));
    CHECK(mn == 0.0f);
    CHECK(std::signbit(mn));
  }
  const HostTensor negs = tensor_of<double>(DType::F64, {2}, {-0.0, -0.0});
  CHECK(std::signbit(element<double>(reduce_ok(OpKind::ReduceMax, negs, {0}), 0)));
}

TEST_CASE("reductions over no axes map each element", "[reduction]") {
  const HostTensor x = tensor_of<int32_t>(DType::I32, {2, 2}, {1, -2, 3, -4});
  const HostTensor s = reduce_ok(OpKind::ReduceSum, x, {});
  CHECK(s.bitwise_equal(x));
  const HostTensor q = reduce_ok(OpKind::ReduceSumSquares, x, {});
  CHECK(element<int32_t>(q, 1) == 4);
  CHECK(element<int32_t>(q, 3) == 16);
  const HostTensor scalar = tensor_of<double>(DType::F64, {}, {2.5});
  CHECK(element<double>(reduce_ok(OpKind::ReduceProd, scalar, {}), 0) == 2.5);
}

TEST_CASE("reductions reject bad axes and bool sums of squares", "[reduction]") {
  auto x = HostTensor::zeros(DType::F32, {2, 3});
  REQUIRE(x.ok());
  auto out_of_range = reduce(OpKind::ReduceSum, x.value(), {2});
  REQUIRE_FALSE(out_of_range.ok());
  CHECK(out_of_range.error().code() == ErrorCode::InvalidAttribute);
  CHECK(out_of_range.error().message().find("reduce_sum") != std::string::npos);
  auto negative = reduce(OpKind::ReduceMax, x.value(), {-1});
  REQUIRE_FALSE(negative.ok());
  CHECK(negative.error().code() == ErrorCode::InvalidAttribute);
  auto twice = reduce(OpKind::ReduceMin, x.value(), {1, 1});
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.error().code() == ErrorCode::InvalidAttribute);
  auto b = HostTensor::zeros(DType::Bool, {4});
  REQUIRE(b.ok());
  auto squares = reduce(OpKind::ReduceSumSquares, b.value(), {0});
  REQUIRE_FALSE(squares.ok());
  CHECK(squares.error().code() == ErrorCode::TypeMismatch);
}

}  // namespace tenact::cpu
