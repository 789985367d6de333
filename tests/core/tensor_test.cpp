// Buffers, checked sizes, host tensors and their views. Expected values are
// hand-derived from the definitions (row-major order, strides in elements).
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/checked.hpp"
#include "core/tensor.hpp"

using namespace tenact;

namespace {

// A dense row-major f32 tensor holding `values`.
HostTensor f32_tensor(std::vector<int64_t> shape, const std::vector<float>& values) {
  auto t = HostTensor::zeros(DType::F32, std::move(shape));
  REQUIRE(t.ok());
  REQUIRE(static_cast<size_t>(t->element_count()) == values.size());
  if (!values.empty()) std::memcpy(t->data(), values.data(), values.size() * sizeof(float));
  return *t;
}

// The logical elements of an f32 tensor in row-major order, read through
// its strides by hand (not through for_each_offset).
std::vector<float> elements(const HostTensor& t) {
  std::vector<float> out;
  const auto& shape = t.shape();
  int64_t n = t.element_count();
  const auto* base = reinterpret_cast<const float*>(t.buffer()->data());
  for (int64_t linear = 0; linear < n; ++linear) {
    int64_t rest = linear;
    int64_t off = t.offset();
    for (size_t ax = shape.size(); ax > 0; --ax) {
      off += (rest % shape[ax - 1]) * t.strides()[ax - 1];
      rest /= shape[ax - 1];
    }
    out.push_back(base[off]);
  }
  return out;
}

bool aligned64(const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

}  // namespace

TEST_CASE("Buffer::allocate returns 64-byte aligned zeroed memory of the asked size", "[tensor]") {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{4097}}) {
    auto b = Buffer::allocate(bytes);
    REQUIRE(b.ok());
    CHECK((*b)->size() == bytes);
    CHECK(aligned64((*b)->data()));
    for (size_t i = 0; i < bytes; ++i) REQUIRE((*b)->data()[i] == std::byte{0});
  }
}

TEST_CASE("Buffer::allocate refuses sizes over the 1 TiB limit", "[tensor]") {
  auto b = Buffer::allocate(static_cast<size_t>(kMaxTensorBytes) + 1);
  REQUIRE_FALSE(b.ok());
  CHECK(b.error().code() == ErrorCode::LimitExceeded);
}

TEST_CASE("checked_element_count multiplies dims and rejects negatives and overflow",
          "[tensor]") {
  CHECK(*checked_element_count(std::vector<int64_t>{}) == 1);
  CHECK(*checked_element_count(std::vector<int64_t>{2, 3, 4}) == 24);
  CHECK(*checked_element_count(std::vector<int64_t>{2, 0, 5}) == 0);
  // A zero dim anywhere gives 0 even when the other dims overflow together.
  const int64_t big = int64_t{1} << 40;
  CHECK(*checked_element_count(std::vector<int64_t>{big, big, 0}) == 0);
  CHECK(*checked_element_count(std::vector<int64_t>{0, big, big}) == 0);

  auto neg = checked_element_count(std::vector<int64_t>{2, -1});
  REQUIRE_FALSE(neg.ok());
  CHECK(neg.error().code() == ErrorCode::ShapeMismatch);
  CHECK_THAT(neg.error().message(), Catch::Contains("-1"));

  auto over = checked_element_count(std::vector<int64_t>{int64_t{1} << 62, 4});
  REQUIRE_FALSE(over.ok());
  CHECK(over.error().code() == ErrorCode::Overflow);
}

TEST_CASE("saturating_add and saturating_mul stop at their cap and never wrap", "[tensor]") {
  const uint64_t cap = uint64_t{1} << 63;
  CHECK(saturating_add(2, 3, cap) == 5);
  CHECK(saturating_add(cap - 1, 1, cap) == cap);
  CHECK(saturating_add(cap, cap, cap) == cap);  // 2^64: wraps to 0 unchecked
  CHECK(saturating_add(UINT64_MAX, 1, cap) == cap);
  CHECK(saturating_mul(0, UINT64_MAX, cap) == 0);
  CHECK(saturating_mul(uint64_t{1} << 31, uint64_t{1} << 32, cap) == uint64_t{1} << 63);
  CHECK(saturating_mul(uint64_t{1} << 32, uint64_t{1} << 32, cap) == cap);  // 2^64
  CHECK(saturating_mul(3, 5, 10) == 10);
  static_assert(saturating_add(1, 1, 1) == 1);
}

TEST_CASE("checked_byte_size enforces the 1 TiB limit with a message naming the need",
          "[tensor]") {
  CHECK(*checked_byte_size(DType::C128, std::vector<int64_t>{3, 5}) == 240);
  CHECK(*checked_byte_size(DType::Bool, std::vector<int64_t>{}) == 1);
  // exactly 2^40 bytes is allowed, one element more is not
  CHECK(*checked_byte_size(DType::F32, std::vector<int64_t>{int64_t{1} << 38}) ==
        (uint64_t{1} << 40));
  auto over = checked_byte_size(DType::F32, std::vector<int64_t>{(int64_t{1} << 38) + 1});
  REQUIRE_FALSE(over.ok());
  CHECK(over.error().code() == ErrorCode::LimitExceeded);

  auto big = checked_byte_size(DType::F32, std::vector<int64_t>{1000000, 1000000});
  REQUIRE_FALSE(big.ok());
  CHECK(big.error().code() == ErrorCode::LimitExceeded);
  CHECK(big.error().message() ==
        "shape [1000000, 1000000] of f32 needs 4000000000000 bytes, over the 1 TiB limit");

  // elements fit int64 but bytes do not fit uint64
  auto wrap = checked_byte_size(DType::C128, std::vector<int64_t>{int64_t{1} << 60});
  REQUIRE_FALSE(wrap.ok());
  CHECK(wrap.error().code() == ErrorCode::LimitExceeded);
}

TEST_CASE("row_major_strides are suffix products", "[tensor]") {
  CHECK(row_major_strides(std::vector<int64_t>{2, 3, 4}) == std::vector<int64_t>{12, 4, 1});
  CHECK(row_major_strides(std::vector<int64_t>{}).empty());
  CHECK(row_major_strides(std::vector<int64_t>{5}) == std::vector<int64_t>{1});
  // zero dims count as 1; an empty shape whose other dims overflow gets no UB
  CHECK(row_major_strides(std::vector<int64_t>{3, 0, 2}) == std::vector<int64_t>{2, 2, 1});
  const int64_t big = int64_t{1} << 40;
  auto s = row_major_strides(std::vector<int64_t>{0, big, big, big});
  CHECK(s[3] == 1);
  CHECK(s[2] == big);
}

TEST_CASE("zeros makes a dense aligned zero-filled row-major tensor", "[tensor]") {
  auto t = HostTensor::zeros(DType::F64, {2, 3});
  REQUIRE(t.ok());
  CHECK(t->dtype() == DType::F64);
  CHECK(t->shape() == std::vector<int64_t>{2, 3});
  CHECK(t->strides() == std::vector<int64_t>{3, 1});
  CHECK(t->offset() == 0);
  CHECK(t->rank() == 2);
  CHECK(t->element_count() == 6);
  CHECK(t->is_contiguous());
  CHECK(aligned64(t->data()));
  CHECK(t->buffer()->size() == 48);
  for (int i = 0; i < 6; ++i) CHECK(t->data_as<double>()[i] == 0.0);

  auto scalar = HostTensor::zeros(DType::I8, {});
  REQUIRE(scalar.ok());
  CHECK(scalar->element_count() == 1);
  CHECK(scalar->buffer()->size() == 1);
}

TEST_CASE("dense tensors made in a repeating order of shapes get their own shapes and share layouts",
          "[tensor]") {
  // Shapes and row-major strides by hand. A cycle of 3 shapes, one shape
  // twice in a row, and a cycle of 9 (more than the 8 layouts a thread
  // keeps): every tensor has its shape and strides; within the short
  // cycles, tensors of one shape share one layout (the same dims object).
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cycle3 = {
      {{4, 32}, {32, 1}}, {{32}, {1}}, {{4, 10}, {10, 1}}};
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> twice = {
      {{7}, {1}}, {{7}, {1}}, {{2, 7}, {7, 1}}};
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cycle9;
  for (int64_t k = 1; k <= 9; ++k) cycle9.push_back({{k, 3}, {3, 1}});
  using Order = std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>;
  for (const Order* order : {&cycle3, &twice, static_cast<const Order*>(&cycle9)}) {
    std::vector<HostTensor> first;
    for (int pass = 0; pass < 4; ++pass) {
      for (size_t i = 0; i < order->size(); ++i) {
        auto t = HostTensor::dense(DType::F32, (*order)[i].first, BufferFill::Unspecified);
        REQUIRE(t.ok());
        CHECK(t->shape() == (*order)[i].first);
        CHECK(t->strides() == (*order)[i].second);
        if (pass == 0) first.push_back(*t);
        else if (order->size() <= 8) CHECK(t->shape().data() == first[i].shape().data());
      }
    }
  }
}

TEST_CASE("an empty tensor may have other dims whose product overflows", "[tensor]") {
  const int64_t big = int64_t{1} << 40;
  auto t = HostTensor::zeros(DType::F32, {big, big, 0});
  REQUIRE(t.ok());
  CHECK(t->element_count() == 0);
  CHECK(t->is_contiguous());
  auto c = t->clone();
  REQUIRE(c.ok());
  CHECK(c->bitwise_equal(*t));
}

TEST_CASE("zeros rejects negative and oversized shapes without allocating", "[tensor]") {
  auto neg = HostTensor::zeros(DType::F32, {3, -2});
  REQUIRE_FALSE(neg.ok());
  CHECK(neg.error().code() == ErrorCode::ShapeMismatch);

  const auto start = std::chrono::steady_clock::now();
  auto huge = HostTensor::zeros(DType::F32, {1000000, 1000000});
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.error().code() == ErrorCode::LimitExceeded);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
}

TEST_CASE("view accepts only layouts whose every element lies in the buffer", "[tensor]") {
  auto buf = Buffer::allocate(24);  // six f32 elements
  REQUIRE(buf.ok());
  auto ok = [&](std::vector<int64_t> shape, std::vector<int64_t> strides, int64_t offset) {
    return HostTensor::view(*buf, DType::F32, std::move(shape), std::move(strides), offset).ok();
  };
  CHECK(ok({2, 3}, {3, 1}, 0));
  CHECK_FALSE(ok({2, 3}, {3, 1}, 1));     // last element would be 6
  CHECK(ok({3, 2}, {1, 3}, 0));           // column-major: reaches 0..5
  CHECK(ok({3}, {-1}, 2));                // 2, 1, 0
  CHECK_FALSE(ok({3}, {-1}, 1));          // reaches -1
  CHECK(ok({2, 3}, {-3, -1}, 5));         // fully reversed
  CHECK(ok({100}, {0}, 5));               // broadcast of element 5
  CHECK_FALSE(ok({100}, {0}, 6));
  CHECK(ok({0, 3}, {3, 1}, 6));           // nothing reachable, offset at the end
  CHECK_FALSE(ok({0, 3}, {3, 1}, 7));
  CHECK_FALSE(ok({0, 3}, {3, 1}, -1));
  CHECK(ok({}, {}, 5));                   // rank 0: element 5
  CHECK_FALSE(ok({}, {}, 6));
  CHECK_FALSE(ok({2, 3}, {3}, 0));        // rank mismatch
  CHECK_FALSE(ok({2, -3}, {3, 1}, 0));    // negative dim
  CHECK_FALSE(ok({3, 3}, {int64_t{1} << 62, 1}, 0));  // offsets overflow

  auto as_f64 = HostTensor::view(*buf, DType::F64, {3}, {1}, 0);
  CHECK(as_f64.ok());
  CHECK_FALSE(HostTensor::view(*buf, DType::F64, {4}, {1}, 0).ok());
  CHECK_FALSE(HostTensor::view(nullptr, DType::F32, {1}, {1}, 0).ok());

  auto v = HostTensor::view(*buf, DType::F32, {2}, {2}, 1);
  REQUIRE(v.ok());
  CHECK(v->data() == (*buf)->data() + 4);
}

TEST_CASE("for_each_offset visits rank 0 once, empty shapes never, in row-major order",
          "[tensor]") {
  std::vector<std::pair<int64_t, int64_t>> seen;
  auto record = [&](int64_t linear, int64_t off) { seen.emplace_back(linear, off); };

  for_each_offset(std::vector<int64_t>{}, std::vector<int64_t>{}, 7, record);
  CHECK(seen == std::vector<std::pair<int64_t, int64_t>>{{0, 7}});

  seen.clear();
  for_each_offset(std::vector<int64_t>{2, 0, 3}, std::vector<int64_t>{0, 3, 1}, 0, record);
  CHECK(seen.empty());

  seen.clear();
  for_each_offset(std::vector<int64_t>{2, 3}, std::vector<int64_t>{1, 2}, 10, record);
  CHECK(seen == std::vector<std::pair<int64_t, int64_t>>{
                    {0, 10}, {1, 12}, {2, 14}, {3, 11}, {4, 13}, {5, 15}});

  seen.clear();
  for_each_offset(std::vector<int64_t>{3}, std::vector<int64_t>{-1}, 2, record);
  CHECK(seen == std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {1, 1}, {2, 0}});

  seen.clear();
  for_each_offset(std::vector<int64_t>{2, 1, 2}, std::vector<int64_t>{0, 5, 1}, 0, record);
  CHECK(seen == std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {1, 1}, {2, 0}, {3, 1}});
}

TEST_CASE("transposed permutes shape and strides without copying", "[tensor]") {
  HostTensor t = f32_tensor({2, 3}, {0, 1, 2, 3, 4, 5});
  const std::vector<int64_t> perm{1, 0};
  HostTensor tt = t.transposed(perm);
  CHECK(tt.shape() == std::vector<int64_t>{3, 2});
  CHECK(tt.strides() == std::vector<int64_t>{1, 3});
  CHECK(tt.buffer() == t.buffer());
  CHECK_FALSE(tt.is_contiguous());
  CHECK(elements(tt) == std::vector<float>{0, 3, 1, 4, 2, 5});

  HostTensor cube = f32_tensor({2, 1, 3}, {0, 1, 2, 3, 4, 5});
  const std::vector<int64_t> perm3{2, 0, 1};
  HostTensor c = cube.transposed(perm3);
  CHECK(c.shape() == std::vector<int64_t>{3, 2, 1});
  CHECK(elements(c) == std::vector<float>{0, 3, 1, 4, 2, 5});
}

TEST_CASE("broadcast_view uses stride 0 on new and stretched axes", "[tensor]") {
  HostTensor row = f32_tensor({3}, {1, 2, 3});
  const std::vector<int64_t> dims1{1};
  HostTensor b = row.broadcast_view({2, 3}, dims1);
  CHECK(b.shape() == std::vector<int64_t>{2, 3});
  CHECK(b.strides() == std::vector<int64_t>{0, 1});
  CHECK(elements(b) == std::vector<float>{1, 2, 3, 1, 2, 3});

  HostTensor col = f32_tensor({3, 1}, {1, 2, 3});
  const std::vector<int64_t> dims2{0, 1};
  HostTensor c = col.broadcast_view({3, 2}, dims2);
  CHECK(c.strides()[1] == 0);
  CHECK(elements(c) == std::vector<float>{1, 1, 2, 2, 3, 3});

  // input axis 0 lands on result axis 1 of three
  HostTensor d = row.broadcast_view({2, 3, 2}, dims1);
  CHECK(d.strides() == std::vector<int64_t>{0, 1, 0});
  CHECK(elements(d) == std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});

  HostTensor s = f32_tensor({}, {7});
  HostTensor e = s.broadcast_view({2, 2}, std::vector<int64_t>{});
  CHECK(elements(e) == std::vector<float>{7, 7, 7, 7});
}

TEST_CASE("broadcast views of one shape and strides share a layout, others and rank 9 get their own", "[tensor]") {
  HostTensor row = f32_tensor({3}, {1, 2, 3});
  const std::vector<int64_t> onto_cols{1}, onto_rows{0};
  const std::vector<int64_t> wide{2, 3}, tall{3, 2};
  HostTensor a = row.broadcast_view(std::span<const int64_t>(wide), onto_cols);
  HostTensor b = row.broadcast_view(std::span<const int64_t>(wide), onto_cols);
  CHECK(a.strides().data() == b.strides().data());  // the same layout object: none allocated for b
  HostTensor c = row.broadcast_view(std::span<const int64_t>(tall), onto_rows);
  CHECK(c.strides() == std::vector<int64_t>{1, 0});
  CHECK(elements(c) == std::vector<float>{1, 1, 2, 2, 3, 3});
  CHECK(elements(a) == std::vector<float>{1, 2, 3, 1, 2, 3});  // unchanged by the views made after it

  // Rank 9 (past the strides kept on the stack): axis 0 onto result axis 8.
  const std::vector<int64_t> nine{1, 1, 1, 1, 1, 1, 1, 2, 3};
  const std::vector<int64_t> last{8};
  HostTensor d = row.broadcast_view(nine, last);
  CHECK(d.strides() == std::vector<int64_t>{0, 0, 0, 0, 0, 0, 0, 0, 1});
  CHECK(elements(d) == std::vector<float>{1, 2, 3, 1, 2, 3});
}

TEST_CASE("sliced takes start up to limit with a step on every axis", "[tensor]") {
  HostTensor t = f32_tensor({10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto slice1 = [&](const HostTensor& x, int64_t s, int64_t l, int64_t st) {
    const std::vector<int64_t> a{s}, b{l}, c{st};
    return x.sliced(a, b, c);
  };
  CHECK(elements(slice1(t, 1, 8, 3)) == std::vector<float>{1, 4, 7});
  CHECK(elements(slice1(t, 2, 3, 5)) == std::vector<float>{2});
  CHECK(slice1(t, 4, 4, 1).shape() == std::vector<int64_t>{0});
  CHECK(slice1(t, 10, 10, 1).shape() == std::vector<int64_t>{0});
  CHECK(elements(slice1(t, 0, 10, 1)) == elements(t));

  HostTensor m = f32_tensor({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  const std::vector<int64_t> start{1, 1}, limit{3, 4}, step{1, 2};
  HostTensor s = m.sliced(start, limit, step);
  CHECK(s.shape() == std::vector<int64_t>{2, 2});
  CHECK(elements(s) == std::vector<float>{5, 7, 9, 11});
  // a slice of a transposed view composes
  const std::vector<int64_t> perm{1, 0};
  HostTensor mt = m.transposed(perm);  // 4 x 3
  const std::vector<int64_t> s2{1, 0}, l2{4, 3}, st2{2, 2};
  CHECK(elements(mt.sliced(s2, l2, st2)) == std::vector<float>{1, 9, 3, 11});
}

TEST_CASE("is_contiguous ignores strides of size-1 axes and empty tensors", "[tensor]") {
  auto buf = Buffer::allocate(64);
  REQUIRE(buf.ok());
  CHECK(HostTensor::view(*buf, DType::F32, {2, 1, 3}, {3, 99, 1}, 0)->is_contiguous());
  CHECK(HostTensor::view(*buf, DType::F32, {1, 3}, {0, 1}, 2)->is_contiguous());
  CHECK(HostTensor::view(*buf, DType::F32, {0, 3}, {7, 7}, 0)->is_contiguous());
  CHECK_FALSE(HostTensor::view(*buf, DType::F32, {2, 3}, {4, 1}, 0)->is_contiguous());
  CHECK_FALSE(HostTensor::view(*buf, DType::F32, {3}, {-1}, 2)->is_contiguous());
  CHECK_FALSE(HostTensor::view(*buf, DType::F32, {3}, {0}, 2)->is_contiguous());
}

TEST_CASE("contiguous returns the tensor itself when dense and a copy otherwise", "[tensor]") {
  HostTensor t = f32_tensor({2, 3}, {0, 1, 2, 3, 4, 5});
  auto same = t.contiguous();
  REQUIRE(same.ok());
  CHECK(same->buffer() == t.buffer());

  const std::vector<int64_t> perm{1, 0};
  auto copy = t.transposed(perm).contiguous();
  REQUIRE(copy.ok());
  CHECK(copy->buffer() != t.buffer());
  CHECK(copy->is_contiguous());
  CHECK(copy->strides() == std::vector<int64_t>{2, 1});
  std::vector<float> raw(copy->data_as<float>(), copy->data_as<float>() + 6);
  CHECK(raw == std::vector<float>{0, 3, 1, 4, 2, 5});

  // reversed view through a negative stride
  auto rev = HostTensor::view(t.buffer(), DType::F32, {3}, {-2}, 5);
  REQUIRE(rev.ok());
  auto rc = rev->contiguous();
  REQUIRE(rc.ok());
  CHECK(std::vector<float>(rc->data_as<float>(), rc->data_as<float>() + 3) ==
        std::vector<float>{5, 3, 1});
}

TEST_CASE("clone always copies into a fresh buffer", "[tensor]") {
  HostTensor t = f32_tensor({2}, {1, 2});
  auto c = t.clone();
  REQUIRE(c.ok());
  CHECK(c->buffer() != t.buffer());
  c->data_as<float>()[0] = 9;
  CHECK(t.data_as<float>()[0] == 1);

  auto empty = HostTensor::zeros(DType::C128, {0, 5});
  REQUIRE(empty.ok());
  auto ec = empty->clone();
  REQUIRE(ec.ok());
  CHECK(ec->shape() == std::vector<int64_t>{0, 5});

  CHECK_FALSE(HostTensor{}.clone().ok());  // no buffer: an error, not a crash
}

TEST_CASE("bitwise_equal compares dtype, shape and element bits across layouts", "[tensor]") {
  HostTensor a = f32_tensor({2, 2}, {1, 2, 3, 4});
  HostTensor at = f32_tensor({2, 2}, {1, 3, 2, 4});
  const std::vector<int64_t> perm{1, 0};
  CHECK(a.bitwise_equal(at.transposed(perm)));
  CHECK_FALSE(a.bitwise_equal(at));
  CHECK_FALSE(a.bitwise_equal(f32_tensor({4}, {1, 2, 3, 4})));

  auto as_i32 = HostTensor::view(a.buffer(), DType::I32, {2, 2}, {2, 1}, 0);
  REQUIRE(as_i32.ok());
  CHECK_FALSE(a.bitwise_equal(*as_i32));  // same bytes, other dtype

  uint32_t nan1 = 0x7fc00000, nan2 = 0x7fc00001;
  float f1, f2;
  std::memcpy(&f1, &nan1, 4);
  std::memcpy(&f2, &nan2, 4);
  CHECK(f32_tensor({1}, {f1}).bitwise_equal(f32_tensor({1}, {f1})));
  CHECK_FALSE(f32_tensor({1}, {f1}).bitwise_equal(f32_tensor({1}, {f2})));
  CHECK_FALSE(f32_tensor({1}, {0.0f}).bitwise_equal(f32_tensor({1}, {-0.0f})));

  auto e1 = HostTensor::zeros(DType::F32, {0, 3});
  auto e2 = HostTensor::zeros(DType::F32, {0, 3});
  CHECK(e1->bitwise_equal(*e2));

  HostTensor bcast = f32_tensor({}, {5}).broadcast_view({3}, std::vector<int64_t>{});
  CHECK(bcast.bitwise_equal(f32_tensor({3}, {5, 5, 5})));
  CHECK_FALSE(bcast.bitwise_equal(f32_tensor({3}, {5, 5, 6})));
}

TEST_CASE("copies of a tensor share its buffer", "[tensor]") {
  HostTensor t = f32_tensor({2}, {1, 2});
  HostTensor u = t;
  u.data_as<float>()[1] = 8;
  CHECK(t.data_as<float>()[1] == 8);
}

TEST_CASE("large buffers come zero-filled and 64-byte aligned from the mapped path", "[tensor]") {
  for (size_t bytes : {tenact::kMappedBufferBytes - 1, tenact::kMappedBufferBytes, tenact::kMappedBufferBytes + (size_t{3} << 20)}) {
    INFO(bytes);
    auto b = tenact::Buffer::allocate(bytes);
    REQUIRE(b.ok());
    CHECK(reinterpret_cast<uintptr_t>((*b)->data()) % tenact::kTensorAlignment == 0);
    CHECK((*b)->size() == bytes);
    bool all_zero = true;
    for (size_t i = 0; i < bytes; i += 4093) all_zero = all_zero && (*b)->data()[i] == std::byte{0};
    all_zero = all_zero && (*b)->data()[bytes - 1] == std::byte{0};
    CHECK(all_zero);
    (*b)->data()[bytes - 1] = std::byte{7};  // writable to the end
  }
}
