// dot_general's PackedPanels variant (dot_packed_panels.hpp) against an f64
// reference computed here and against the standard (OpenBLAS) kernel, each
// within the spec's sum bound (docs/program-format.md, "Sums"):
//   |computed - exact| <= max(2 * ceil(log2 K), 1) * eps * sum_k |a_k b_k|
// per element, eps = 2^-23 (f32). The floor of 1 covers K = 1, where the
// one product is rounded once (at most half an eps). The f64 reference
// carries K * 2^-53 * sum |a b| of its own, far inside the slack. Also:
// every ISA copy the CPU runs, strided lhs, the thread split (bitwise the
// same with and without a pool) and the errors of a call the variant does
// not serve.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/tensor_layout.hpp"
#include "engines/cpu/kernels/dot_packed_panels.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "tests/util/test_pool.hpp"
#include "util/worker_pool.hpp"

using namespace tenact;
using namespace tenact::cpu;

namespace packed_panels_test {

HostTensor uniform(std::vector<int64_t> shape, uint32_t seed) {
  HostTensor t = HostTensor::zeros(DType::F32, std::move(shape)).value();
  std::mt19937 rng{seed};
  std::uniform_real_distribution<float> dist{-1.0f, 1.0f};
  for (int64_t i = 0; i < t.element_count(); ++i) t.data_as<float>()[i] = dist(rng);
  return t;
}

/// The rhs as the variant reads it: logical [K, N] over the panels' buffer.
HostTensor panels_of(const HostTensor& b) {
  const HostTensor packed = pack_blocked(b, packed_panels_layout()).value();
  return Tensor::view(packed.buffer(), DType::F32, b.shape(), row_major_strides(b.shape()), packed.offset()).value();
}

DotGeneralAttrs matmul() {
  DotGeneralAttrs d;
  d.lhs_contracting_dimensions = {1};
  d.rhs_contracting_dimensions = {0};
  return d;
}

Result<std::vector<HostTensor>> dot(const HostTensor& a, const HostTensor& b, KernelVariant variant,
                                    WorkerPool* pool = nullptr, DotGeneralAttrs dims = matmul()) {
  const OpAttrs attrs = dims;
  const std::vector<HostTensor> inputs{a, b};
  const std::vector<ValueType> types{ValueType{a.dtype(), {}}};
  const SymbolBindings symbols;
  std::vector<ResolvedTensorLayout> layouts;
  if (variant == KernelVariant::PackedPanels) {
    const std::vector<uint64_t> dims_b(b.shape().begin(), b.shape().end());
    layouts = {ResolvedTensorLayout::contiguous(),
               ResolvedTensorLayout::blocked_for(packed_panels_layout(), dims_b).value()};
  }
  KernelCall call{OpKind::DotGeneral, attrs, inputs, types, symbols, pool};
  call.variant = variant;
  call.operand_layouts = layouts;
  return run_kernel(call);
}

/// Checks `got` [M, N] against the f64 product of a and b (dense).
void check_within_sum_bound(const HostTensor& got, const HostTensor& a, const HostTensor& b, const char* what) {
  const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  REQUIRE(got.shape() == std::vector<int64_t>{m, n});
  const double ceil_log2 = k <= 1 ? 0.0 : std::ceil(std::log2(static_cast<double>(k)));
  const double factor = std::max(2.0 * ceil_log2, 1.0) * std::ldexp(1.0, -23);
  const float* pa = a.data_as<float>();
  const float* pb = b.data_as<float>();
  int64_t bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double exact = 0, magnitude = 0;
      for (int64_t x = 0; x < k; ++x) {
        const double term = static_cast<double>(pa[i * k + x]) * static_cast<double>(pb[x * n + j]);
        exact += term;
        magnitude += std::fabs(term);
      }
      const double err = std::fabs(static_cast<double>(got.data_as<float>()[i * n + j]) - exact);
      if (err > factor * magnitude) {
        if (bad++ == 0) FAIL_CHECK(what << ": element (" << i << ", " << j << ") off by " << err << " > " << factor * magnitude);
      }
    }
  CHECK(bad == 0);
}


TEST_CASE("packed panels stay within the sum bound, like the standard dot", "[dot_general][packed_panels]") {
  for (int64_t m : {1, 3, 16, 64})
    for (int64_t k : {1, 7, 784})
      for (int64_t n : {1, 15, 16, 33, 128}) {
        CAPTURE(m, k, n);
        const HostTensor a = uniform({m, k}, static_cast<uint32_t>(m * 1000 + k));
        const HostTensor b = uniform({k, n}, static_cast<uint32_t>(k * 1000 + n + 7));
        const HostTensor packed = dot(a, panels_of(b), KernelVariant::PackedPanels).value()[0];
        const HostTensor standard = dot(a, b, KernelVariant::Standard).value()[0];
        check_within_sum_bound(packed, a, b, "packed panels");
        check_within_sum_bound(standard, a, b, "standard");
        // Every ISA copy this CPU runs.
        for (CpuIsa isa : {CpuIsa::Baseline, CpuIsa::Avx2, CpuIsa::Avx512}) {
          if (!packed_panels_runs(isa)) continue;
          CAPTURE(to_string(isa));
          HostTensor c = HostTensor::zeros(DType::F32, {m, n}).value();
          const HostTensor b_panels = panels_of(b);
          REQUIRE(packed_panels_product(PanelProduct{a.data_as<float>(), k, b_panels.data_as<float>(),
                                                     c.data_as<float>(), m, k, n},
                                        nullptr, isa)
                      .ok());
          check_within_sum_bound(c, a, b, "ISA copy");
        }
      }
}

TEST_CASE("packed panels read a lhs of any strides", "[dot_general][packed_panels]") {
  const int64_t m = 5, k = 37, n = 40;
  const HostTensor a = uniform({m, k}, 11);
  const HostTensor b = uniform({k, n}, 12);
  const HostTensor b_panels = panels_of(b);
  const HostTensor dense = dot(a, b_panels, KernelVariant::PackedPanels).value()[0];
  // The same lhs transposed in memory ([K, M] viewed as [M, K]: k not
  // contiguous) and as rows of a wider matrix (k contiguous, row stride 50).
  HostTensor at = HostTensor::zeros(DType::F32, {k, m}).value();
  HostTensor wide = HostTensor::zeros(DType::F32, {m, 50}).value();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t x = 0; x < k; ++x) {
      at.data_as<float>()[x * m + i] = a.data_as<float>()[i * k + x];
      wide.data_as<float>()[i * 50 + x + 3] = a.data_as<float>()[i * k + x];
    }
  const std::vector<int64_t> perm{1, 0};
  const HostTensor transposed = at.transposed(perm);
  const HostTensor rows = wide.sliced(std::vector<int64_t>{0, 3}, std::vector<int64_t>{m, 3 + k},
                                      std::vector<int64_t>{1, 1});
  REQUIRE(transposed.strides() == std::vector<int64_t>{1, m});
  REQUIRE(rows.strides() == std::vector<int64_t>{50, 1});
  for (const HostTensor* lhs : {&transposed, &rows}) {
    const HostTensor got = dot(*lhs, b_panels, KernelVariant::PackedPanels).value()[0];
    check_within_sum_bound(got, a, b, "strided lhs");
    CHECK(got.bitwise_equal(dense));  // the same sums in the same order
  }
}

TEST_CASE("packed panels give the same bits with and without a pool", "[dot_general][packed_panels]") {
  auto pool = test_pool(4);
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{64, 784, 1024}, {1, 4096, 1024}, {7, 300, 2000}}) {
    CAPTURE(m, k, n);
    const HostTensor a = uniform({m, k}, 21);
    const HostTensor b = panels_of(uniform({k, n}, 22));
    const HostTensor serial = dot(a, b, KernelVariant::PackedPanels, nullptr).value()[0];
    const HostTensor split = dot(a, b, KernelVariant::PackedPanels, pool.get()).value()[0];
    CHECK(std::memcmp(serial.data(), split.data(), static_cast<size_t>(m * n) * sizeof(float)) == 0);
  }
}

TEST_CASE("the summation blocks keep a product within 2 ceil(log2 K) roundings", "[dot_general][packed_panels]") {
  CHECK(packed_panels_k_block(784) == 8);
  CHECK(packed_panels_k_block(4096) == 16);
  for (int64_t k = 2; k <= 70000; k += (k < 5000 ? 1 : 997)) {
    const int64_t block = packed_panels_k_block(k);
    const auto log2_ceil = [](int64_t x) { return x <= 1 ? 0 : static_cast<int64_t>(std::ceil(std::log2(static_cast<double>(x)))); };
    const int64_t blocks = (k + block - 1) / block;
    const int64_t roundings = std::min(block, k) + log2_ceil(blocks);
    INFO("K = " << k << ", block " << block);
    CHECK(roundings <= 2 * log2_ceil(k));
  }
}

TEST_CASE("packed panels refuse what the variant does not serve", "[dot_general][packed_panels]") {
  const HostTensor a = uniform({2, 20}, 1);
  const HostTensor b = uniform({20, 24}, 2);
  const HostTensor b_panels = panels_of(b);
  // Panels cut short: a [20, 24] rhs needs 2 panels of 20 x 16 floats.
  const HostTensor short_buffer = Tensor::view(uniform({20 * 24}, 3).buffer(), DType::F32, {20, 24}, {24, 1}, 0).value();
  CHECK(dot(a, short_buffer, KernelVariant::PackedPanels).error().code() == ErrorCode::InputMismatch);
  DotGeneralAttrs transposed_rhs;
  transposed_rhs.lhs_contracting_dimensions = {1};
  transposed_rhs.rhs_contracting_dimensions = {1};
  CHECK(dot(a, b_panels, KernelVariant::PackedPanels, nullptr, transposed_rhs).error().code() ==
        ErrorCode::InputMismatch);
  const HostTensor a64 = HostTensor::zeros(DType::F64, {2, 20}).value();
  const HostTensor b64 = HostTensor::zeros(DType::F64, {20, 24}).value();
  CHECK(dot(a64, b64, KernelVariant::PackedPanels).error().code() == ErrorCode::InputMismatch);
  // K = 0: zeros.
  const HostTensor empty_a = HostTensor::zeros(DType::F32, {3, 0}).value();
  const HostTensor empty_b = HostTensor::zeros(DType::F32, {0, 5}).value();
  const HostTensor zeros = dot(empty_a, empty_b, KernelVariant::PackedPanels).value()[0];
  REQUIRE(zeros.shape() == std::vector<int64_t>{3, 5});
  for (int64_t i = 0; i < 15; ++i) CHECK(zeros.data_as<float>()[i] == 0.0f);
}

}  // namespace packed_panels_test
