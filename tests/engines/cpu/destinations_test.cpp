// Kernel results written into destinations (KernelCall::destinations,
// FusedKernel::run's): for each family the result is a view of the
// destination's buffer at its offset (data() equal) holding the values the
// kernel gives without one; a destination too small, not dense or unset is
// ignored (the kernel allocates as usual).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "engines/cpu/kernels/fused_elementwise.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "tests/util/test_pool.hpp"

using namespace tenact;
using namespace tenact::cpu;

namespace destinations_test {

HostTensor ramp(DType dtype, std::vector<int64_t> shape, float scale) {
  HostTensor t = HostTensor::zeros(dtype, std::move(shape)).value();
  for (int64_t i = 0; i < t.element_count(); ++i) {
    const float v = scale * static_cast<float>(i % 13) - 2.0f;
    if (dtype == DType::F32) t.data_as<float>()[i] = v;
    else t.data_as<int32_t>()[i] = static_cast<int32_t>(i % 5);
  }
  return t;
}

/// A destination of `elements` f32 at element offset `offset` of a larger
/// buffer (garbage-filled, so a kernel that skipped an element shows).
HostTensor destination(int64_t elements, int64_t offset = 0) {
  HostTensor arena = HostTensor::zeros(DType::F32, {elements + offset + 8}).value();
  for (int64_t i = 0; i < arena.element_count(); ++i) arena.data_as<float>()[i] = std::nanf("");
  return Tensor::view(arena.buffer(), DType::F32, {elements}, {1}, offset).value();
}

struct Run {
  OpKind kind;
  OpAttrs attrs;
  std::vector<HostTensor> inputs;
  DType result;
};

Result<std::vector<HostTensor>> run(const Run& r, std::span<const HostTensor> destinations) {
  const std::vector<ValueType> types{ValueType{r.result, {}}};
  const SymbolBindings symbols;
  KernelCall call{r.kind, r.attrs, r.inputs, types, symbols, nullptr};
  call.destinations = destinations;
  return run_kernel(call);
}

/// The op into a fitting destination (at an offset), into one too small,
/// and into none: the first is the destination's memory, all are equal.
void check_destinations(const Run& r) {
  const HostTensor plain = run(r, {}).value()[0];
  const int64_t n = plain.element_count();
  const HostTensor fits = destination(n, 4);
  const HostTensor written = run(r, std::vector<HostTensor>{fits}).value()[0];
  CHECK(written.data() == fits.data());
  CHECK(written.buffer() == fits.buffer());
  CHECK(written.bitwise_equal(plain));
  if (n > 0) {
    const HostTensor small = destination(n - 1);
    const HostTensor allocated = run(r, std::vector<HostTensor>{small}).value()[0];
    CHECK(allocated.buffer() != small.buffer());
    CHECK(allocated.bitwise_equal(plain));
  }
  const HostTensor unset;
  CHECK(run(r, std::vector<HostTensor>{unset}).value()[0].bitwise_equal(plain));
}


TEST_CASE("each kernel family writes its result into a destination that fits", "[kernels][destinations]") {
  const HostTensor a = ramp(DType::F32, {4, 8}, 0.5f);
  const HostTensor b = ramp(DType::F32, {4, 8}, -0.25f);
  SECTION("elementwise") { check_destinations({OpKind::Add, NoAttrs{}, {a, b}, DType::F32}); }
  SECTION("reduction") { check_destinations({OpKind::ReduceSum, ReduceAttrs{{1}}, {a}, DType::F32}); }
  SECTION("dot_general") {
    DotGeneralAttrs dims;
    dims.lhs_contracting_dimensions = {1};
    dims.rhs_contracting_dimensions = {1};
    check_destinations({OpKind::DotGeneral, dims, {a, b}, DType::F32});
  }
  SECTION("transpose") { check_destinations({OpKind::Transpose, TransposeAttrs{{1, 0}}, {a}, DType::F32}); }
  SECTION("gather") {
    // Rows 3, 0, 3 of a.
    const GatherAttrs g{.offset_dims = {1}, .collapsed_slice_dims = {0}, .start_index_map = {0},
                        .index_vector_dim = 1, .slice_sizes = {DimExpr::constant(1), DimExpr::constant(8)},
                        .operand_batching_dims = {}, .start_indices_batching_dims = {}};
    HostTensor rows = HostTensor::zeros(DType::I32, {3, 1}).value();
    rows.data_as<int32_t>()[0] = 3;
    rows.data_as<int32_t>()[2] = 3;
    check_destinations({OpKind::Gather, g, {a, rows}, DType::F32});
  }
  SECTION("embed_diag (zero-filled result)") {
    check_destinations({OpKind::EmbedDiag, NoAttrs{}, {ramp(DType::F32, {5}, 1.0f)}, DType::F32});
  }
}

TEST_CASE("a fused region writes its live outputs into their destinations", "[kernels][destinations][fused]") {
  // t0 = a * b, t1 = t0 + c, t2 = tanh(t1); outputs t1, t2 (t0 stays in
  // tiles). 3000 elements: several tiles, and a pool split.
  FusedRegion region;
  region.input_dtypes = {DType::F32, DType::F32, DType::F32};
  region.ops.push_back({OpKind::Multiply, NoAttrs{}, {FusedOperand::input(0), FusedOperand::input(1)}, DType::F32});
  region.ops.push_back({OpKind::Add, NoAttrs{}, {FusedOperand::op(0), FusedOperand::input(2)}, DType::F32});
  region.ops.push_back({OpKind::Tanh, NoAttrs{}, {FusedOperand::op(1)}, DType::F32});
  region.outputs = {1, 2};
  const std::vector<HostTensor> inputs{ramp(DType::F32, {3000}, 0.01f), ramp(DType::F32, {3000}, -0.02f),
                                       ramp(DType::F32, {3000}, 0.3f)};
  auto pool = test_pool(2);
  const std::vector<HostTensor> plain = run_fused_region(region, inputs, pool.get()).value();
  const std::vector<HostTensor> destinations{destination(3000, 16), destination(3000)};
  const std::vector<HostTensor> written = run_fused_region(region, inputs, pool.get(), nullptr, destinations).value();
  REQUIRE(written.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(written[i].data() == destinations[i].data());
    CHECK(written[i].bitwise_equal(plain[i]));
  }
  // One destination too small: that output is allocated, the other written.
  const std::vector<HostTensor> mixed{destination(2999), destination(3000)};
  const std::vector<HostTensor> partly = run_fused_region(region, inputs, nullptr, nullptr, mixed).value();
  CHECK(partly[0].buffer() != mixed[0].buffer());
  CHECK(partly[1].data() == mixed[1].data());
  CHECK(partly[0].bitwise_equal(plain[0]));
  CHECK(partly[1].bitwise_equal(plain[1]));
}

TEST_CASE("destination_view takes dense, large enough, element-aligned destinations only",
          "[kernels][destinations]") {
  const HostTensor dest = destination(10, 1);
  const std::vector<int64_t> shape{2, 5};
  CHECK(destination_view(dest, DType::F32, shape).has_value());
  CHECK(destination_view(dest, DType::I16, std::vector<int64_t>{20}).has_value());  // raw bytes, another dtype
  CHECK_FALSE(destination_view(dest, DType::F32, std::vector<int64_t>{11}).has_value());
  CHECK_FALSE(destination_view(dest, DType::F64, std::vector<int64_t>{2}).has_value());  // offset 4 bytes
  const HostTensor strided = Tensor::view(dest.buffer(), DType::F32, {5}, {2}, 0).value();
  CHECK_FALSE(destination_view(strided, DType::F32, std::vector<int64_t>{2}).has_value());
  CHECK_FALSE(destination_view(HostTensor{}, DType::F32, std::vector<int64_t>{}).has_value());
}

}  // namespace destinations_test
