// The CPU dot_general kernel against NumPy fixtures (tests/fixtures/
// gen_cpu_dot.py): plain, batched, unusual and multiple contracting
// dimensions, transposed/sliced/broadcast views, conj_lhs/conj_rhs on
// complex, f16/bf16, integers; plus zero-size dimensions, errors, the BLAS
// layout decisions and the thread policy.
//
// Tolerance of floating results (u = unit roundoff of the computing type:
// 2^-24 for f16/bf16/f32/c64, which compute in f32, and 2^-53 for
// f64/c128). A dot product of K terms in any summation order, each product
// rounded once (or fused), has |computed - exact| <= gamma_K * sum_k |a_k||b_k|
// with gamma_K = K u / (1 - K u) (Higham, Accuracy and Stability, 3.1);
// a component of a complex dot product is a real dot product of 2K terms,
// so gamma_2K with the per-component sum of |products|. The test checks
//   |ours - ref| <= 1.01 * (G u + G u_ref) * abs + half an ulp (f16/bf16)
// with G = K (real) or 2K (complex), u_ref the reference's own unit
// roundoff (2^-53 for float64, 2^-64 for long double), and the last term
// for the one final rounding of f16/bf16. Integers are exact (wrapping).
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
#include "engines/cpu/kernels/blas_threads.hpp"
#include "engines/cpu/kernels/dot_loops.hpp"
#include "engines/cpu/kernels/dot_plan.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "util/worker_pool.hpp"

namespace tenact::cpu {
namespace {

using namespace kernel_fixtures;

struct DotCase {
  std::string name, dtype, lview, rview, check;
  DotGeneralAttrs attrs;
};

std::string value_of(const std::string& field, const std::string& key) {
  REQUIRE(field.rfind(key + "=", 0) == 0);
  return field.substr(key.size() + 1);
}

std::vector<DotCase> read_dot_manifest() {
  const std::string dir = fixture_dir("cpu_dot");
  std::ifstream in(dir + "manifest.txt");
  if (!in) FAIL("missing fixture manifest " << dir << "manifest.txt (run generate_fixtures.py)");
  std::vector<DotCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::stringstream ss(line);
    std::vector<std::string> f;
    std::string item;
    while (ss >> item) f.push_back(item);
    REQUIRE(f.size() == 10);
    DotCase c;
    c.name = f[0];
    c.dtype = f[1];
    c.attrs.lhs_batching_dimensions = parse_ints(value_of(f[2], "lb"));
    c.attrs.rhs_batching_dimensions = parse_ints(value_of(f[3], "rb"));
    c.attrs.lhs_contracting_dimensions = parse_ints(value_of(f[4], "lc"));
    c.attrs.rhs_contracting_dimensions = parse_ints(value_of(f[5], "rc"));
    const std::string conj = value_of(f[6], "conj");
    c.attrs.conj_lhs = conj[0] == '1';
    c.attrs.conj_rhs = conj[1] == '1';
    c.lview = value_of(f[7], "lview");
    c.rview = value_of(f[8], "rview");
    c.check = value_of(f[9], "check");
    cases.push_back(c);
  }
  return cases;
}

Result<std::vector<HostTensor>> run_dot(const HostTensor& lhs, const HostTensor& rhs,
                                    const DotGeneralAttrs& attrs, WorkerPool* pool = nullptr) {
  const OpAttrs op_attrs = attrs;
  const std::vector<HostTensor> inputs{lhs, rhs};
  const std::vector<ValueType> types{ValueType{lhs.dtype(), {}}};
  const SymbolBindings symbols;
  const KernelCall call{OpKind::DotGeneral, op_attrs, inputs, types, symbols, pool};
  return run_kernel(call);
}

HostTensor dot_ok(const HostTensor& lhs, const HostTensor& rhs, const DotGeneralAttrs& attrs,
                  WorkerPool* pool = nullptr) {
  auto r = run_dot(lhs, rhs, attrs, pool);
  if (!r.ok()) FAIL(r.error().to_string());
  REQUIRE(r.value().size() == 1);
  return r.value()[0];
}

int64_t contraction_length(const HostTensor& lhs, const DotGeneralAttrs& attrs) {
  int64_t k = 1;
  for (int64_t a : attrs.lhs_contracting_dimensions) k *= lhs.shape()[static_cast<size_t>(a)];
  return k;
}

void check_gemm(const HostTensor& got, const std::string& path, int64_t k,
                const std::string& name) {
  const HostTensor ref = load(path + ".ref.npy");
  const HostTensor abs = load(path + ".abs.npy");
  REQUIRE(got.shape() == ref.shape());
  const DType dt = got.dtype();
  const bool cplx = is_complex(dt);
  const bool wide = dt == DType::F64 || dt == DType::C128;
  const double u = wide ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  const double u_ref = wide ? std::ldexp(1.0, -64) : std::ldexp(1.0, -53);
  const double g = static_cast<double>(cplx ? 2 * k : k);
  const bool half = dt == DType::F16 || dt == DType::BF16;
  auto check = [&](double ours, double exact, double abs_sum, const char* part, int64_t i) {
    double tol = 1.01 * (g * u + g * u_ref) * abs_sum;
    if (half) tol += half_ulp(dt, std::fabs(exact) + tol);
    INFO(name << " element " << i << " " << part << ": got " << ours << ", exact " << exact
              << ", tolerance " << tol);
    CHECK(std::fabs(ours - exact) <= tol);
  };
  for (int64_t i = 0; i < got.element_count(); ++i) {
    const auto o = value_at(got, i), r = value_at(ref, i), a = value_at(abs, i);
    check(o.real(), r.real(), a.real(), "real", i);
    if (cplx) check(o.imag(), r.imag(), a.imag(), "imag", i);
  }
}

void run_case(const DotCase& c, WorkerPool* pool) {
  INFO("case " << c.name);
  const std::string path = fixture_dir("cpu_dot") + c.name;
  const HostTensor lhs = make_view(load(path + ".lhs.npy"), c.lview);
  const HostTensor rhs = make_view(load(path + ".rhs.npy"), c.rview);
  const HostTensor got = dot_ok(lhs, rhs, c.attrs, pool);
  CHECK(got.is_contiguous());
  CHECK(got.dtype() == lhs.dtype());
  if (c.check == "exact") {
    CHECK(got.bitwise_equal(load(path + ".ref.npy")));
  } else {
    REQUIRE(c.check == "gemm");
    check_gemm(got, path, contraction_length(lhs, c.attrs), c.name);
  }
}

DotGeneralAttrs matmul_attrs() {
  DotGeneralAttrs a;
  a.lhs_contracting_dimensions = {1};
  a.rhs_contracting_dimensions = {0};
  return a;
}

}  // namespace

TEST_CASE("dot_general matches NumPy for every dtype and layout", "[dot_general]") {
  int count = 0;
  for (const DotCase& c : read_dot_manifest()) {
    run_case(c, nullptr);
    ++count;
  }
  CHECK(count > 100);
}

TEST_CASE("dot_general on a worker pool matches NumPy and the serial bits", "[dot_general]") {
  auto pool_holder = test_pool(3);
  WorkerPool& pool = *pool_holder;
  for (const DotCase& c : read_dot_manifest()) {
    run_case(c, &pool);
    if (c.name.rfind("batched", 0) == 0) {
      INFO("case " << c.name);
      const std::string path = fixture_dir("cpu_dot") + c.name;
      const HostTensor lhs = make_view(load(path + ".lhs.npy"), c.lview);
      const HostTensor rhs = make_view(load(path + ".rhs.npy"), c.rview);
      CHECK(dot_ok(lhs, rhs, c.attrs, &pool).bitwise_equal(dot_ok(lhs, rhs, c.attrs, nullptr)));
    }
  }
}

TEST_CASE("dot_general gives hand-computed products", "[dot_general]") {
  const auto attrs = matmul_attrs();
  const HostTensor a = tensor_of<float>(DType::F32, {2, 2}, {1, 2, 3, 4});
  const HostTensor b = tensor_of<float>(DType::F32, {2, 2}, {5, 6, 7, 8});
  const HostTensor c = dot_ok(a, b, attrs);
  CHECK(c.shape() == std::vector<int64_t>{2, 2});
  CHECK(element<float>(c, 0) == 19.0f);
  CHECK(element<float>(c, 1) == 22.0f);
  CHECK(element<float>(c, 2) == 43.0f);
  CHECK(element<float>(c, 3) == 50.0f);
  const HostTensor ai = tensor_of<int32_t>(DType::I32, {2, 2}, {1, 2, 3, 4});
  const HostTensor bi = tensor_of<int32_t>(DType::I32, {2, 2}, {5, 6, 7, 8});
  CHECK(element<int32_t>(dot_ok(ai, bi, attrs), 3) == 50);
  // conj_lhs: conj(1+2i) * (3-i) = (1-2i)(3-i) = 1 - 7i.
  DotGeneralAttrs conj_attrs;
  conj_attrs.lhs_contracting_dimensions = {0};
  conj_attrs.rhs_contracting_dimensions = {0};
  conj_attrs.conj_lhs = true;
  const HostTensor z1 = tensor_of<std::complex<double>>(DType::C128, {1}, {{1, 2}});
  const HostTensor z2 = tensor_of<std::complex<double>>(DType::C128, {1}, {{3, -1}});
  CHECK(element<std::complex<double>>(dot_ok(z1, z2, conj_attrs), 0) ==
        std::complex<double>(1, -7));
}

TEST_CASE("integer dot_general wraps", "[dot_general]") {
  DotGeneralAttrs attrs;
  attrs.lhs_contracting_dimensions = {0};
  attrs.rhs_contracting_dimensions = {0};
  const HostTensor a = tensor_of<int8_t>(DType::I8, {2}, {100, 100});
  CHECK(element<int8_t>(dot_ok(a, a, attrs), 0) == 32);  // 20000 mod 256
  const HostTensor u = tensor_of<uint16_t>(DType::U16, {1}, {65535});
  CHECK(element<uint16_t>(dot_ok(u, u, attrs), 0) == 1);  // (2^16 - 1)^2 mod 2^16
}

TEST_CASE("dot_general with an empty contraction gives zeros", "[dot_general]") {
  const auto attrs = matmul_attrs();
  for (DType dt : {DType::F32, DType::F64, DType::C64, DType::F16, DType::BF16, DType::I32,
                   DType::U8}) {
    INFO("dtype " << to_string(dt));
    auto a = HostTensor::zeros(dt, {3, 0});
    auto b = HostTensor::zeros(dt, {0, 4});
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    const HostTensor c = dot_ok(a.value(), b.value(), attrs);
    REQUIRE(c.shape() == std::vector<int64_t>{3, 4});
    auto zeros = HostTensor::zeros(dt, {3, 4});
    REQUIRE(zeros.ok());
    CHECK(c.bitwise_equal(zeros.value()));
  }
}

TEST_CASE("dot_general with an empty free or batch dimension gives an empty result",
          "[dot_general]") {
  const auto attrs = matmul_attrs();
  auto a = HostTensor::zeros(DType::F32, {0, 5});
  auto b = HostTensor::zeros(DType::F32, {5, 4});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(dot_ok(a.value(), b.value(), attrs).shape() == std::vector<int64_t>{0, 4});
  DotGeneralAttrs batched;
  batched.lhs_batching_dimensions = {0};
  batched.rhs_batching_dimensions = {0};
  batched.lhs_contracting_dimensions = {2};
  batched.rhs_contracting_dimensions = {1};
  auto x = HostTensor::zeros(DType::I64, {0, 3, 2});
  auto y = HostTensor::zeros(DType::I64, {0, 2, 5});
  REQUIRE(x.ok());
  REQUIRE(y.ok());
  CHECK(dot_ok(x.value(), y.value(), batched).shape() == std::vector<int64_t>{0, 3, 5});
}

TEST_CASE("dot_general rejects bad operands and attributes", "[dot_general]") {
  auto a = HostTensor::zeros(DType::F32, {2, 3});
  auto b = HostTensor::zeros(DType::F32, {4, 5});
  auto d = HostTensor::zeros(DType::F64, {3, 5});
  auto t = HostTensor::zeros(DType::Bool, {2, 2});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(d.ok());
  REQUIRE(t.ok());
  auto mismatch = run_dot(a.value(), b.value(), matmul_attrs());
  REQUIRE_FALSE(mismatch.ok());
  CHECK(mismatch.error().code() == ErrorCode::InputMismatch);
  CHECK(mismatch.error().message().find("dot_general") != std::string::npos);
  auto dtypes = run_dot(a.value(), d.value(), matmul_attrs());
  REQUIRE_FALSE(dtypes.ok());
  CHECK(dtypes.error().code() == ErrorCode::TypeMismatch);
  auto boolean = run_dot(t.value(), t.value(), matmul_attrs());
  REQUIRE_FALSE(boolean.ok());
  CHECK(boolean.error().code() == ErrorCode::TypeMismatch);
  DotGeneralAttrs range = matmul_attrs();
  range.lhs_contracting_dimensions = {2};
  auto e = HostTensor::zeros(DType::F32, {3, 5});
  REQUIRE(e.ok());
  auto out_of_range = run_dot(a.value(), e.value(), range);
  REQUIRE_FALSE(out_of_range.ok());
  CHECK(out_of_range.error().code() == ErrorCode::InvalidAttribute);
  DotGeneralAttrs twice;
  twice.lhs_batching_dimensions = {0};
  twice.rhs_batching_dimensions = {0};
  twice.lhs_contracting_dimensions = {0};
  twice.rhs_contracting_dimensions = {1};
  auto sq = HostTensor::zeros(DType::F32, {2, 2});
  REQUIRE(sq.ok());
  auto repeated = run_dot(sq.value(), sq.value(), twice);
  REQUIRE_FALSE(repeated.ok());
  CHECK(repeated.error().code() == ErrorCode::InvalidAttribute);
  DotGeneralAttrs lengths = matmul_attrs();
  lengths.rhs_contracting_dimensions = {0, 1};
  auto uneven = run_dot(sq.value(), sq.value(), lengths);
  REQUIRE_FALSE(uneven.ok());
  CHECK(uneven.error().code() == ErrorCode::InvalidAttribute);
}

TEST_CASE("BLAS-friendly operand layouts are passed without packing", "[dot_general]") {
  // A row-major (4 x 6) matrix: as stored, ld 6.
  AxisGroup rows{{4}, {6}}, cols{{6}, {1}};
  BlasOperand op = blas_operand(rows, cols);
  CHECK(op.direct);
  CHECK_FALSE(op.transposed);
  CHECK(op.ld == 6);
  // Its transpose (6 x 4) view: transposed, ld 6.
  op = blas_operand(AxisGroup{{6}, {1}}, AxisGroup{{4}, {6}});
  CHECK(op.direct);
  CHECK(op.transposed);
  CHECK(op.ld == 6);
  // Rows of a wider buffer (a column slice): as stored with ld 10.
  op = blas_operand(AxisGroup{{4}, {10}}, AxisGroup{{6}, {1}});
  CHECK(op.direct);
  CHECK(op.ld == 10);
  // Two free axes that merge into one stride: (2, 3) x 5 row-major.
  op = blas_operand(AxisGroup{{2, 3}, {15, 5}}, AxisGroup{{5}, {1}});
  CHECK(op.direct);
  CHECK(op.ld == 5);
  // Column stride 2 (a strided slice) or a broadcast: packed.
  CHECK_FALSE(blas_operand(AxisGroup{{4}, {12}}, AxisGroup{{6}, {2}}).direct);
  CHECK_FALSE(blas_operand(AxisGroup{{4}, {0}}, AxisGroup{{6}, {1}}).direct);
  // Two contracting axes out of memory order: packed.
  CHECK_FALSE(blas_operand(AxisGroup{{5}, {12}}, AxisGroup{{3, 4}, {1, 3}}).direct);
  // A single row: any row stride, ld >= its length.
  op = blas_operand(AxisGroup{{1}, {0}}, AxisGroup{{7}, {1}});
  CHECK(op.direct);
  CHECK(op.ld == 7);
}

TEST_CASE("the product without BLAS computes the rows it is given", "[dot_general]") {
  // (2 x 3) * (3 x 2), hand-computed; rows computed in two calls.
  const std::vector<double> a{1, 2, 3, 4, 5, 6};
  const std::vector<double> b{7, 8, 9, 10, 11, 12};
  std::vector<double> c(4, -1.0);
  dot::gemm_rows(a.data(), b.data(), c.data(), 2, 3, 1, 2);
  CHECK(c[0] == -1.0);  // row 0 untouched
  CHECK(c[2] == 139.0);  // 4*7 + 5*9 + 6*11
  CHECK(c[3] == 154.0);  // 4*8 + 5*10 + 6*12
  dot::gemm_rows(a.data(), b.data(), c.data(), 2, 3, 0, 1);
  CHECK(c[0] == 58.0);
  CHECK(c[1] == 64.0);
  // Complex, and a k larger than one block (k = 600 > kLoopBlockK).
  const int64_t k = 600;
  std::vector<std::complex<double>> x(k, {1.0, 1.0}), y(k, {0.5, -1.0});
  std::complex<double> z{};
  dot::gemm_rows(x.data(), y.data(), &z, 1, k, 0, 1);
  CHECK(z == std::complex<double>(1.5 * k, -0.5 * k));  // (1+i)(0.5-i) = 1.5 - 0.5i
}

TEST_CASE("dot_general keeps its plan in a KernelKeep and plans again when the operands' layout changes",
          "[dot_general][keep]") {
  // a = [[1, 2, 3], [4, 5, 6]], b = [[1, 0], [0, 1], [1, 1]]:
  // a b = [[4, 5], [10, 11]] by hand.
  const HostTensor a = tensor_of<float>(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const HostTensor b = tensor_of<float>(DType::F32, {3, 2}, {1, 0, 0, 1, 1, 1});
  // The same a, stored transposed: a view of shape [2, 3] with strides [1, 2].
  const HostTensor stored = tensor_of<float>(DType::F32, {3, 2}, {1, 4, 2, 5, 3, 6});
  auto a_view = HostTensor::view(stored.buffer(), DType::F32, {2, 3}, {1, 2}, 0);
  REQUIRE(a_view.ok());
  DotGeneralAttrs attrs;
  attrs.lhs_contracting_dimensions = {1};
  attrs.rhs_contracting_dimensions = {0};
  const OpAttrs op_attrs = attrs;
  const std::vector<ValueType> types{ValueType{DType::F32, {}}};
  const SymbolBindings symbols;
  KernelKeep keep;
  auto run = [&](const HostTensor& lhs) {
    const std::vector<HostTensor> inputs{lhs, b};
    KernelCall call{OpKind::DotGeneral, op_attrs, inputs, types, symbols, nullptr};
    call.keep = &keep;
    auto r = run_kernel(call);
    REQUIRE(r.ok());
    REQUIRE(r->size() == 1);
    const HostTensor& c = (*r)[0];
    REQUIRE(c.shape() == std::vector<int64_t>{2, 2});
    CHECK(element<float>(c, 0) == 4.0f);
    CHECK(element<float>(c, 1) == 5.0f);
    CHECK(element<float>(c, 2) == 10.0f);
    CHECK(element<float>(c, 3) == 11.0f);
  };
  run(a);
  REQUIRE(keep.kept);
  const void* first = keep.kept.get();
  run(a);
  CHECK(keep.kept.get() == first);  // same shapes and strides: the kept plan
  run(*a_view);
  CHECK(keep.kept.get() != first);  // other strides: planned again
  // Something another kernel kept is not taken for a dot's plan.
  KernelKeep foreign;
  static const char other_owner = 0;
  foreign.owner = &other_owner;
  foreign.kept = std::make_shared<int>(7);
  const std::vector<HostTensor> inputs{a, b};
  KernelCall call{OpKind::DotGeneral, op_attrs, inputs, types, symbols, nullptr};
  call.keep = &foreign;
  auto r = run_kernel(call);
  REQUIRE(r.ok());
  CHECK(element<float>((*r)[0], 3) == 11.0f);
  CHECK(foreign.owner != &other_owner);
}

TEST_CASE("BLAS thread count is clamped to the processors", "[dot_general]") {
  const int before = blas_threads();
  CHECK(set_blas_threads(0) == 1);
  CHECK(blas_threads() == 1);
  const int most = set_blas_threads(1 << 20);
  CHECK(most >= 1);
  CHECK(most <= 1 << 20);
  set_blas_threads(before);
  CHECK(blas_threads() == before);
}

}  // namespace tenact::cpu
