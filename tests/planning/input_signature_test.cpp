// Input descriptors: layout classes and alignment derived from a tensor's
// strides and address, by hand-worked examples.
#include <catch2/catch.hpp>

#include "planning/input_signature.hpp"

using namespace tenact;

namespace {
LayoutClass cls(std::vector<int64_t> shape, std::vector<int64_t> strides) {
  return layout_class_of(shape, strides);
}
}  // namespace

TEST_CASE("layout classes by hand", "[input_signature]") {
  CHECK(cls({2, 3}, {3, 1}) == LayoutClass::RowMajor);
  CHECK(cls({}, {}) == LayoutClass::RowMajor);
  CHECK(cls({0, 5}, {7, 3}) == LayoutClass::RowMajor);   // empty
  CHECK(cls({1, 4}, {99, 1}) == LayoutClass::RowMajor);  // extent-1 axis ignored
  CHECK(cls({2, 3}, {1, 2}) == LayoutClass::DensePermuted);  // transposed 3x2
  CHECK(cls({2, 3, 4}, {4, 8, 1}) == LayoutClass::DensePermuted);
  CHECK(cls({2, 3}, {0, 1}) == LayoutClass::Strided);    // broadcast
  CHECK(cls({2, 3}, {6, 2}) == LayoutClass::Strided);    // gaps
  CHECK(cls({3}, {-1}) == LayoutClass::Strided);         // reversed
  CHECK(cls({2, 3}, {3}) == LayoutClass::Strided);       // malformed
  CHECK(cls({-1}, {1}) == LayoutClass::Strided);
  CHECK(cls({INT64_MAX, 4}, {4, 1}) == LayoutClass::RowMajor);
  CHECK(cls({4, INT64_MAX}, {1, 4}) == LayoutClass::DensePermuted);
  CHECK(cls({INT64_MAX, 4, 2}, {1, INT64_MAX, 0}) == LayoutClass::Strided);
}

TEST_CASE("alignment is the largest power of two dividing the address", "[input_signature]") {
  CHECK(alignment_log2_of(nullptr) == std::nullopt);
  CHECK(alignment_log2_of(reinterpret_cast<void*>(uintptr_t{0x1000})) == std::optional<uint8_t>{12});
  CHECK(alignment_log2_of(reinterpret_cast<void*>(uintptr_t{0x1004})) == std::optional<uint8_t>{2});
  CHECK(alignment_log2_of(reinterpret_cast<void*>(uintptr_t{1})) == std::optional<uint8_t>{0});
  CHECK(alignment_log2_of(reinterpret_cast<void*>(uintptr_t{1} << 63)) == std::optional<uint8_t>{63});
}

TEST_CASE("describing a host tensor records dtype, shape, placement, strides and alignment",
          "[input_signature]") {
  auto t = HostTensor::zeros(DType::F32, {2, 3});
  REQUIRE(t.ok());
  const Endpoint host{"cpu", "host"};
  InputDescriptor d = describe_input(*t, host);
  CHECK(d.dtype == DType::F32);
  CHECK(d.shape == std::vector<int64_t>{2, 3});
  CHECK(d.strides == std::vector<int64_t>{3, 1});
  CHECK(d.placement == host);
  CHECK(d.layout_class() == LayoutClass::RowMajor);
  REQUIRE(d.alignment_log2.has_value());
  CHECK(*d.alignment_log2 >= 6);  // buffers are 64-byte aligned

  const int64_t perm[] = {1, 0};
  InputDescriptor tr = describe_input(t->transposed(perm), host);
  CHECK(tr.shape == std::vector<int64_t>{3, 2});
  CHECK(tr.layout_class() == LayoutClass::DensePermuted);

  // Starting one f32 in: 64-byte aligned base + 4 bytes.
  const int64_t start[] = {0, 1}, limit[] = {2, 3}, step[] = {1, 1};
  InputDescriptor sl = describe_input(t->sliced(start, limit, step), host);
  CHECK(sl.alignment_log2 == std::optional<uint8_t>{2});
  CHECK(sl.layout_class() == LayoutClass::Strided);

  CHECK(describe_input(HostTensor{}, host).alignment_log2 == std::nullopt);
  CHECK(to_string(sl) == "f32[2, 2] at cpu/host, strides [3, 1] (strided), align 2^2");
}

TEST_CASE("descriptors of several tensors keep their order and give the binding signature",
          "[input_signature]") {
  auto a = HostTensor::zeros(DType::I32, {4});
  auto b = HostTensor::zeros(DType::F64, {1, 2});
  REQUIRE((a.ok() && b.ok()));
  const HostTensor ts[] = {*a, *b};
  auto ds = describe_inputs(ts, Endpoint{"cpu", "host"});
  REQUIRE(ds.size() == 2);
  CHECK(ds[1].dtype == DType::F64);
  auto sig = signature_of(std::span<const InputDescriptor>{ds});
  REQUIRE(sig.size() == 2);
  CHECK(sig[0] == InputSignature{DType::I32, {4}});
  CHECK(sig[1] == InputSignature{DType::F64, {1, 2}});
}
