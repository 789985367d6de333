// Blocked layouts (core/tensor_layout.hpp), the storage of packed weights:
// element offsets derived by hand from the file comment's definition,
// padding zeros, a 3-D layout whose axis order differs from the logical
// one, pack / unpack round trips (strided sources included) and the
// layouts that are refused.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "core/tensor_layout.hpp"

using namespace tenact;

namespace blocked_layout_test {

HostTensor numbered(DType dtype, std::vector<int64_t> shape) {
  HostTensor t = HostTensor::zeros(dtype, std::move(shape)).value();
  for (int64_t i = 0; i < t.element_count(); ++i) t.data_as<float>()[i] = static_cast<float>(i + 1);
  return t;
}

uint64_t offset_of(const BlockedLayout& l, std::vector<uint64_t> dims, std::vector<uint64_t> index) {
  return blocked_element_offset(l, dims, index);
}


TEST_CASE("panels of 16 columns of a [3, 20] tensor: offsets by hand, zero padding", "[tensor_layout]") {
  const BlockedLayout panels{{1, 16}, {1, 0}};
  const std::vector<uint64_t> dims{3, 20};
  // Padded to [3, 32]: two panels of 3 rows x 16 values; (k, n) at
  // ((n / 16) * 3 + k) * 16 + n % 16.
  CHECK(blocked_padded_dims(panels, dims).value() == std::vector<uint64_t>{3, 32});
  CHECK(offset_of(panels, dims, {0, 0}) == 0);
  CHECK(offset_of(panels, dims, {0, 15}) == 15);
  CHECK(offset_of(panels, dims, {1, 0}) == 16);
  CHECK(offset_of(panels, dims, {2, 15}) == 47);
  CHECK(offset_of(panels, dims, {0, 16}) == 48);
  CHECK(offset_of(panels, dims, {1, 17}) == 65);
  CHECK(offset_of(panels, dims, {2, 19}) == 83);

  // Element (k, n) holds 20 * k + n + 1.
  const HostTensor dense = numbered(DType::F32, {3, 20});
  const HostTensor packed = pack_blocked(dense, panels).value();
  REQUIRE(packed.shape() == std::vector<int64_t>{96});
  const float* p = packed.data_as<float>();
  CHECK(p[0] == 1.0f);
  CHECK(p[15] == 16.0f);
  CHECK(p[16] == 21.0f);   // (1, 0)
  CHECK(p[47] == 56.0f);   // (2, 15)
  CHECK(p[48] == 17.0f);   // (0, 16)
  CHECK(p[65] == 38.0f);   // (1, 17)
  CHECK(p[83] == 60.0f);   // (2, 19)
  // Columns 20..31 of the second panel are padding: zeros.
  for (int64_t k = 0; k < 3; ++k)
    for (int64_t c = 4; c < 16; ++c) CHECK(p[(3 + k) * 16 + c] == 0.0f);

  const ResolvedTensorLayout resolved = ResolvedTensorLayout::blocked_for(panels, dims).value();
  CHECK(resolved.zero_fill_physical_dims == std::vector<uint64_t>{32, 3});  // in axis order
  CHECK(ResolvedTensorSpec::make({3, 20}, DType::F32, resolved).value().minimum_storage_bytes().value() == 384);
  CHECK(ResolvedTensorLayout::blocked_for(panels, std::vector<uint64_t>{3, 32}).value().zero_fill_physical_dims.empty());
}

TEST_CASE("a 3-D blocked layout stores tiles and their elements in its axis order", "[tensor_layout]") {
  // dims [5, 3, 4], blocks [2, 1, 3], axis order [2, 0, 1]: padded [6, 3, 6],
  // a grid of [3, 3, 2] tiles of 6 elements. Tile t at
  // ((t2 * 3 + t0) * 3 + t1) * 6, element w within it at (w2 * 2 + w0).
  const BlockedLayout l{{2, 1, 3}, {2, 0, 1}};
  const std::vector<uint64_t> dims{5, 3, 4};
  CHECK(blocked_padded_dims(l, dims).value() == std::vector<uint64_t>{6, 3, 6});
  CHECK(offset_of(l, dims, {0, 0, 0}) == 0);
  CHECK(offset_of(l, dims, {1, 0, 0}) == 1);
  CHECK(offset_of(l, dims, {0, 0, 1}) == 2);
  CHECK(offset_of(l, dims, {1, 0, 2}) == 5);
  CHECK(offset_of(l, dims, {0, 1, 0}) == 6);
  CHECK(offset_of(l, dims, {2, 0, 0}) == 18);
  CHECK(offset_of(l, dims, {0, 0, 3}) == 54);
  CHECK(offset_of(l, dims, {3, 1, 3}) == 79);
  CHECK(offset_of(l, dims, {4, 2, 3}) == 102);

  const HostTensor dense = numbered(DType::F32, {5, 3, 4});  // (i, j, k) holds 12i + 4j + k + 1
  const HostTensor packed = pack_blocked(dense, l).value();
  REQUIRE(packed.element_count() == 108);
  const float* p = packed.data_as<float>();
  CHECK(p[5] == 15.0f);    // (1, 0, 2)
  CHECK(p[79] == 44.0f);   // (3, 1, 3)
  CHECK(p[102] == 60.0f);  // (4, 2, 3)
  // (4, ., .) pads axis 0 to 6: tile row t0 = 2 holds i = 4 at w0 = 0 and
  // zeros at w0 = 1, e.g. offset 102 + 1.
  CHECK(p[103] == 0.0f);
  int zeros = 0;
  for (int64_t i = 0; i < 108; ++i) zeros += p[i] == 0.0f;
  CHECK(zeros == 108 - 60);

  const HostTensor back = unpack_blocked(packed, l, dims).value();
  CHECK(back.bitwise_equal(dense));
}

TEST_CASE("pack_blocked reads strided sources and unpack_blocked inverts it", "[tensor_layout]") {
  std::mt19937 rng{7};
  std::uniform_real_distribution<float> dist{-1.0f, 1.0f};
  HostTensor base = HostTensor::zeros(DType::F32, {17, 40}).value();
  for (int64_t i = 0; i < base.element_count(); ++i) base.data_as<float>()[i] = dist(rng);
  const std::vector<int64_t> perm{1, 0};
  const HostTensor transposed = base.transposed(perm);  // [40, 17], strides [1, 40]
  for (const BlockedLayout& l : {BlockedLayout{{1, 16}, {1, 0}}, BlockedLayout{{8, 4}, {0, 1}},
                                 BlockedLayout{{3, 5}, {1, 0}}}) {
    for (const HostTensor* source : std::initializer_list<const HostTensor*>{&base, &transposed}) {
      const std::vector<uint64_t> dims(source->shape().begin(), source->shape().end());
      const HostTensor packed = pack_blocked(*source, l).value();
      const HostTensor back = unpack_blocked(packed, l, dims).value();
      CHECK(back.is_contiguous());
      CHECK(back.bitwise_equal(*source));
    }
  }
}

TEST_CASE("blocked layouts that are not one positive block per axis and a permutation are refused",
          "[tensor_layout]") {
  const HostTensor t = numbered(DType::F32, {3, 20});
  const std::vector<uint64_t> dims{3, 20};
  for (const BlockedLayout& bad : {BlockedLayout{{16}, {0}}, BlockedLayout{{1, 0}, {1, 0}},
                                   BlockedLayout{{1, 16}, {0, 0}}, BlockedLayout{{1, 16}, {1, 2}},
                                   BlockedLayout{{1, 16}, {1}}}) {
    CAPTURE(bad.to_string());
    CHECK(check_blocked_layout(bad, 2).error().code() == ErrorCode::InvalidPlan);
    CHECK(pack_blocked(t, bad).error().code() == ErrorCode::InvalidPlan);
    CHECK(ResolvedTensorLayout::blocked_for(bad, dims).error().code() == ErrorCode::InvalidPlan);
  }
  // Storage smaller than the padded tensor.
  const HostTensor small = numbered(DType::F32, {95});
  CHECK(unpack_blocked(small, BlockedLayout{{1, 16}, {1, 0}}, dims).error().code() == ErrorCode::InputMismatch);
}

}  // namespace blocked_layout_test
