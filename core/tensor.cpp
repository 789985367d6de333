// Buffers, checked sizes and strided host tensors (see core/tensor.hpp).
#include "core/tensor.hpp"

#include <algorithm>
#include <array>

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "core/checked.hpp"

namespace tenact {

namespace {

std::string shape_text(std::span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

// Copies one element of `size` bytes; the switch lets the compiler emit a
// single load/store for the common sizes.
inline void copy_element(std::byte* dst, const std::byte* src, size_t size) {
  switch (size) {
    case 1: std::memcpy(dst, src, 1); break;
    case 2: std::memcpy(dst, src, 2); break;
    case 4: std::memcpy(dst, src, 4); break;
    case 8: std::memcpy(dst, src, 8); break;
    case 16: std::memcpy(dst, src, 16); break;
    default: std::memcpy(dst, src, size); break;
  }
}

// Calls f(offset_a, offset_b) for every element of `shape` in row-major
// order, walking two strided layouts at once. Precondition: no dim is 0.
template <class F>
void for_each_offset_pair(std::span<const int64_t> shape, std::span<const int64_t> sa,
                          int64_t base_a, std::span<const int64_t> sb, int64_t base_b, F&& f) {
  const size_t rank = shape.size();
  std::vector<int64_t> idx(rank, 0);
  int64_t a = base_a;
  int64_t b = base_b;
  while (true) {
    if (!f(a, b)) return;
    size_t ax = rank;
    while (true) {
      if (ax == 0) return;
      --ax;
      if (++idx[ax] < shape[ax]) {
        a += sa[ax];
        b += sb[ax];
        break;
      }
      a -= sa[ax] * (shape[ax] - 1);
      b -= sb[ax] * (shape[ax] - 1);
      idx[ax] = 0;
    }
  }
}

}  // namespace

// -- sizes ---------------------------------------------------------------------

Result<int64_t> checked_element_count(std::span<const int64_t> dims) {
  int64_t count = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0)
      return Error{ErrorCode::ShapeMismatch, "shape " + shape_text(dims) +
                                                 " has a negative dimension " +
                                                 std::to_string(dims[i]) + " at axis " +
                                                 std::to_string(i)};
  }
  // Any zero dim makes the count 0, whatever the order of the others.
  for (auto d : dims)
    if (d == 0) return int64_t{0};
  for (auto d : dims) {
    auto next = checked_mul(count, d);
    if (!next)
      return Error{ErrorCode::Overflow,
                   "element count of shape " + shape_text(dims) + " overflows 64 bits"};
    count = *next;
  }
  return count;
}

Result<uint64_t> checked_byte_size(DType dtype, std::span<const int64_t> dims) {
  TENACT_ASSIGN_OR_RETURN(int64_t count, checked_element_count(dims));
  auto bytes = checked_mul_u(static_cast<uint64_t>(count), size_of(dtype));
  if (!bytes || *bytes > kMaxTensorBytes) {
    std::string need = bytes ? std::to_string(*bytes) + " bytes"
                             : "more than 18446744073709551615 bytes";
    return Error{ErrorCode::LimitExceeded, "shape " + shape_text(dims) + " of " +
                                               std::string(to_string(dtype)) + " needs " +
                                               need + ", over the 1 TiB limit"};
  }
  return *bytes;
}

std::vector<int64_t> row_major_strides(std::span<const int64_t> dims) {
  // Zero dims count as 1 (as NumPy does), so the strides of an empty
  // tensor stay meaningful; they can then overflow only for an empty
  // tensor (a non-empty one has a checked element count), where no
  // element is reached and the overflowing strides are left 0.
  std::vector<int64_t> strides(dims.size(), 0);
  int64_t acc = 1;
  for (size_t i = dims.size(); i > 0; --i) {
    strides[i - 1] = acc;
    auto next = checked_mul(acc, dims[i - 1] == 0 ? 1 : dims[i - 1]);
    if (!next) break;
    acc = *next;
  }
  return strides;
}

// -- HostTensor ----------------------------------------------------------------

constinit const std::vector<int64_t> HostTensor::kNoDims{};

void HostTensor::set_layout(std::vector<int64_t> shape, std::vector<int64_t> strides) {
  if (shape.empty()) {
    layout_.reset();
    return;
  }
  layout_ = std::make_shared<const Layout>(Layout{std::move(shape), std::move(strides)});
}

namespace {
/// The layout of `shape` with `strides` (null when kRowMajor: its
/// row-major strides), shared with the tensors this thread made last with
/// the same layout, else made now. Layouts are immutable, so tensors and
/// views of one layout may share one: a program run again and again makes
/// the same results and broadcast views every run, and then allocates no
/// layout. Dense results (kRowMajor) and strided views keep apart caches
/// (each its own instantiation's thread_locals), so that each sees its
/// layouts in the same order every run: the search starts after the last
/// slot it found or filled, which is then usually the one sought (one
/// comparison, not eight); one cache for both cost mlp B=4 +480
/// instructions per run. A row-major layout is found by its shape alone
/// (no strides worked out on a hit). The dims are compared inline: a call
/// to memcmp per slot cost more than the comparison of a few dims. Cost:
/// a few dim compares; allocations only on a miss.
template <class Layout, bool kRowMajor>
std::shared_ptr<const Layout> recent_layout(std::span<const int64_t> shape, const int64_t* strides) {
  constexpr size_t kRecent = 8;
  thread_local std::array<std::shared_ptr<const Layout>, kRecent> recent;
  thread_local size_t next = 0;  // layouts made so far; the next takes slot next % kRecent
  thread_local size_t start = 0;  // the slot the next search begins at
  auto matches = [&](const Layout* layout) {
    if (layout == nullptr || layout->shape.size() != shape.size()) return false;
    for (size_t d = 0; d < shape.size(); ++d)
      if (layout->shape[d] != shape[d]) return false;
    if constexpr (!kRowMajor)
      for (size_t d = 0; d < shape.size(); ++d)
        if (layout->strides[d] != strides[d]) return false;
    return true;
  };
  // Slot order over the filled slots: the one after the last found or
  // filled, that one itself (a layout made twice in a row), then the rest.
  const size_t filled = std::min(next, kRecent);
  const size_t last = (start + filled - 1) % std::max<size_t>(filled, 1);
  for (size_t k = 0; k < filled; ++k) {
    const size_t slot = k == 0 ? start : k == 1 ? last : (start + k - 1) % filled;
    if (matches(recent[slot].get())) {
      start = (slot + 1) % filled;
      return recent[slot];
    }
  }
  std::vector<int64_t> made_strides;
  if constexpr (kRowMajor)
    made_strides = row_major_strides(shape);
  else
    made_strides.assign(strides, strides + shape.size());
  auto made = std::make_shared<const Layout>(
      Layout{std::vector<int64_t>(shape.begin(), shape.end()), std::move(made_strides)});
  const size_t slot = next++ % kRecent;
  recent[slot] = made;
  start = (slot + 1) % std::min(next, kRecent);
  return made;
}
}  // namespace

std::shared_ptr<const HostTensor::Layout> HostTensor::row_major_layout(std::span<const int64_t> shape) {
  if (shape.empty()) return nullptr;
  return recent_layout<Layout, true>(shape, nullptr);
}

Result<HostTensor> HostTensor::dense(DType dtype, std::span<const int64_t> shape, BufferFill fill) {
  TENACT_ASSIGN_OR_RETURN(uint64_t bytes, checked_byte_size(dtype, shape));
  TENACT_ASSIGN_OR_RETURN(auto buffer, Buffer::allocate(static_cast<size_t>(bytes), fill));
  HostTensor t;
  t.buffer_ = std::move(buffer);
  t.dtype_ = dtype;
  t.layout_ = row_major_layout(shape);
  t.offset_ = 0;
  return t;
}

Result<HostTensor> HostTensor::zeros(DType dtype, std::vector<int64_t> shape) {
  return dense(dtype, shape, BufferFill::Zeroed);
}

Result<HostTensor> HostTensor::for_overwrite(DType dtype, std::vector<int64_t> shape) {
  return dense(dtype, shape, BufferFill::Unspecified);
}

Result<HostTensor> HostTensor::view(std::shared_ptr<Buffer> buffer, DType dtype,
                                    std::vector<int64_t> shape, std::vector<int64_t> strides,
                                    int64_t offset) {
  auto describe = [&] {
    return "view of shape " + shape_text(shape) + " with strides " + shape_text(strides) +
           " at offset " + std::to_string(offset);
  };
  if (buffer == nullptr)
    return Error{ErrorCode::InvalidAttribute, describe() + " has no buffer"};
  if (shape.size() != strides.size())
    return Error{ErrorCode::ShapeMismatch, describe() + ": shape and strides differ in rank"};
  TENACT_ASSIGN_OR_RETURN(int64_t count, checked_element_count(shape));
  const uint64_t elem = size_of(dtype);
  const uint64_t capacity = buffer->size() / elem;  // whole elements in the buffer
  if (offset < 0 || static_cast<uint64_t>(offset) > capacity)
    return Error{ErrorCode::ShapeMismatch, describe() + " starts outside the buffer of " +
                                               std::to_string(capacity) + " elements"};
  if (count > 0) {
    // Lowest and highest reachable element offsets, with checked arithmetic.
    int64_t lo = offset;
    int64_t hi = offset;
    for (size_t i = 0; i < shape.size(); ++i) {
      auto reach = checked_mul(strides[i], shape[i] - 1);
      std::optional<int64_t> next = std::nullopt;
      if (reach) next = *reach < 0 ? checked_add(lo, *reach) : checked_add(hi, *reach);
      if (!next)
        return Error{ErrorCode::Overflow, describe() + ": element offsets overflow 64 bits"};
      (*reach < 0 ? lo : hi) = *next;
    }
    if (lo < 0 || static_cast<uint64_t>(hi) >= capacity)
      return Error{ErrorCode::ShapeMismatch,
                   describe() + " reaches elements " + std::to_string(lo) + " to " +
                       std::to_string(hi) + ", outside the buffer of " +
                       std::to_string(capacity) + " elements"};
  }
  HostTensor t;
  t.buffer_ = std::move(buffer);
  t.dtype_ = dtype;
  t.set_layout(std::move(shape), std::move(strides));
  t.offset_ = offset;
  return t;
}

int64_t HostTensor::element_count() const {
  const std::vector<int64_t>& shape = this->shape();
  for (auto d : shape)
    if (d == 0) return 0;  // the other dims' product may not fit int64
  int64_t n = 1;
  for (auto d : shape) n *= d;  // a non-empty shape was checked when the tensor was made
  return n;
}

bool HostTensor::is_contiguous() const {
  const std::vector<int64_t>& shape = this->shape();
  const std::vector<int64_t>& strides = this->strides();
  int64_t expected = 1;
  for (auto d : shape)
    if (d == 0) return true;
  for (size_t i = shape.size(); i > 0; --i) {
    const int64_t d = shape[i - 1];
    if (d != 1 && strides[i - 1] != expected) return false;
    expected *= d;
  }
  return true;
}

std::byte* HostTensor::data() const {
  if (!buffer_) return nullptr;
  return buffer_->data() + static_cast<size_t>(offset_) * size_of(dtype_);
}

HostTensor HostTensor::transposed(std::span<const int64_t> permutation) const {
  HostTensor t = *this;
  std::vector<int64_t> shape = this->shape(), strides = this->strides();
  for (size_t i = 0; i < permutation.size(); ++i) {
    shape[i] = this->shape()[static_cast<size_t>(permutation[i])];
    strides[i] = this->strides()[static_cast<size_t>(permutation[i])];
  }
  t.set_layout(std::move(shape), std::move(strides));
  return t;
}

HostTensor HostTensor::broadcast_view(std::span<const int64_t> shape, std::span<const int64_t> dims) const {
  HostTensor t;
  t.buffer_ = buffer_;
  t.dtype_ = dtype_;
  t.offset_ = offset_;
  // The strides on the stack up to rank 8 (a region reads its absorbed
  // broadcasts through such a view on every run).
  constexpr size_t kInlineRank = 8;
  std::array<int64_t, kInlineRank> inline_strides{};
  std::vector<int64_t> many;
  std::span<int64_t> strides{inline_strides.data(), std::min(shape.size(), kInlineRank)};
  if (shape.size() > kInlineRank) {
    many.assign(shape.size(), 0);
    strides = many;
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    const auto out_axis = static_cast<size_t>(dims[i]);
    if (this->shape()[i] == shape[out_axis]) strides[out_axis] = this->strides()[i];
  }
  t.layout_ = strided_layout(shape, strides);
  return t;
}

std::shared_ptr<const HostTensor::Layout> HostTensor::strided_layout(std::span<const int64_t> shape,
                                                                     std::span<const int64_t> strides) {
  if (shape.empty()) return nullptr;
  return recent_layout<Layout, false>(shape, strides.data());
}

HostTensor HostTensor::sliced(std::span<const int64_t> start, std::span<const int64_t> limit,
                              std::span<const int64_t> step) const {
  HostTensor t = *this;
  std::vector<int64_t> shape = this->shape(), strides = this->strides();
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t extent = limit[i] > start[i] ? (limit[i] - start[i] + step[i] - 1) / step[i] : 0;
    shape[i] = extent;
    if (extent > 0) t.offset_ += start[i] * strides[i];
    strides[i] *= step[i];
  }
  t.set_layout(std::move(shape), std::move(strides));
  return t;
}

Result<HostTensor> HostTensor::contiguous() const {
  if (is_contiguous() && buffer_) return *this;
  return clone();
}

Result<HostTensor> HostTensor::clone() const {
  if (!buffer_) return Error{ErrorCode::Internal, "clone of a tensor that has no buffer"};
  TENACT_ASSIGN_OR_RETURN(HostTensor out, zeros(dtype_, shape()));
  TENACT_TRY(copy_to_dense(out.buffer_->data()));
  return out;
}

Status HostTensor::copy_to_dense(std::byte* dst) const {
  if (!buffer_) return Error{ErrorCode::Internal, "copy of a tensor that has no buffer"};
  if (!buffer_->host_addressable())
    return Error{ErrorCode::Internal, "host copy of a tensor in " + buffer_->endpoint().to_string() +
                                          " memory, which the host cannot address"};
  const int64_t n = element_count();
  if (n == 0) return Status{};
  const size_t elem = size_of(dtype_);
  const std::byte* src = buffer_->data();
  if (is_contiguous()) {
    std::memcpy(dst, src + static_cast<size_t>(offset_) * elem, static_cast<size_t>(n) * elem);
    return Status{};
  }
  for_each_offset(shape(), strides(), offset_, [&](int64_t linear, int64_t off) {
    copy_element(dst + static_cast<size_t>(linear) * elem, src + static_cast<size_t>(off) * elem,
                 elem);
  });
  return Status{};
}

bool HostTensor::bitwise_equal(const HostTensor& other) const {
  if (dtype_ != other.dtype_ || shape() != other.shape()) return false;
  if (!buffer_ || !other.buffer_) return !buffer_ && !other.buffer_;
  for (auto d : shape())
    if (d == 0) return true;
  const size_t elem = size_of(dtype_);
  const std::byte* a = buffer_->data();
  const std::byte* b = other.buffer_->data();
  bool equal = true;
  for_each_offset_pair(shape(), strides(), offset_, other.strides(), other.offset_,
                       [&](int64_t oa, int64_t ob) {
                         equal = std::memcmp(a + static_cast<size_t>(oa) * elem,
                                             b + static_cast<size_t>(ob) * elem, elem) == 0;
                         return equal;
                       });
  return equal;
}

}  // namespace tenact
