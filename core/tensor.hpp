// Host tensors: an owning, 64-byte aligned buffer plus dtype, shape, element
// strides and an element offset. Views (transpose, broadcast, slice) share
// the buffer without copying.
//
// Contract: a HostTensor is a value type; copies share the buffer (shallow).
// Writers own synchronisation: the runtime writes a tensor only before it
// is published to another thread. Strides are in elements and may be 0
// (broadcast) or negative (reverse); `offset` is in elements from the start
// of the buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/dtype.hpp"
#include "core/error.hpp"

namespace tenact {

inline constexpr size_t kTensorAlignment = 64;
/// Largest tensor the runtime agrees to describe or allocate (1 TiB): a
/// declared shape above it is an error, not an allocation attempt.
inline constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;

/// An owning, aligned, zero-initialized byte buffer.
///
/// Buffers of kMappedBufferBytes or more come straight from mmap (zero
/// pages, no memset; transparent huge pages requested), so a kernel's first
/// write faults them in on its own threads instead of a single-threaded
/// memset paying for every page first. Smaller ones come from
/// aligned_alloc and are zero-filled.
class Buffer {
 public:
  /// Allocates `bytes` (0 allowed). Errors: LimitExceeded above
  /// kMaxTensorBytes; ResourceExhausted when the allocation fails.
  static Result<std::shared_ptr<Buffer>> allocate(size_t bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  Buffer(std::byte* data, size_t size, size_t mapped_bytes)
      : data_(data), size_(size), mapped_bytes_(mapped_bytes) {}
  std::byte* data_;
  size_t size_;
  size_t mapped_bytes_;  // non-zero: the length to munmap
};

/// 32 MiB: below it glibc's dynamic mmap threshold (which grows up to
/// 32 MiB) lets repeated allocations reuse warm heap pages, cheaper than
/// faulting in fresh mapped pages per call (measured: a 1 MiB threshold
/// cost dot_general 512x512 a quarter of its time in page faults).
inline constexpr size_t kMappedBufferBytes = size_t{32} << 20;

/// Product of dims with overflow and negativity checks. Errors name `what`.
Result<int64_t> checked_element_count(std::span<const int64_t> dims);
/// Bytes of a dense tensor, checked against kMaxTensorBytes.
Result<uint64_t> checked_byte_size(DType dtype, std::span<const int64_t> dims);
/// Row-major element strides of `dims`.
std::vector<int64_t> row_major_strides(std::span<const int64_t> dims);

class HostTensor {
 public:
  HostTensor() = default;

  /// A new dense row-major tensor, zero-filled.
  static Result<HostTensor> zeros(DType dtype, std::vector<int64_t> shape);
  /// A view over an existing buffer. Precondition: every reachable element
  /// lies inside the buffer (checked; error otherwise).
  static Result<HostTensor> view(std::shared_ptr<Buffer> buffer, DType dtype,
                                 std::vector<int64_t> shape, std::vector<int64_t> strides,
                                 int64_t offset);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  const std::vector<int64_t>& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  size_t rank() const { return shape_.size(); }
  int64_t element_count() const;
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }

  /// True when elements are dense, row-major, starting at offset.
  bool is_contiguous() const;
  /// Pointer to the element at `offset` (the first logical element).
  std::byte* data() const;
  template <class T> T* data_as() const { return reinterpret_cast<T*>(data()); }

  // -- views (no copy) ---------------------------------------------------------
  HostTensor transposed(std::span<const int64_t> permutation) const;
  /// Broadcast to `shape`, `dims[i]` naming the result axis of input axis i.
  HostTensor broadcast_view(std::vector<int64_t> shape, std::span<const int64_t> dims) const;
  /// Strided slice [start, limit) with step `step` per axis (all valid).
  HostTensor sliced(std::span<const int64_t> start, std::span<const int64_t> limit,
                    std::span<const int64_t> step) const;

  /// A dense row-major copy (or this tensor itself when already contiguous).
  Result<HostTensor> contiguous() const;
  /// Always a fresh dense copy.
  Result<HostTensor> clone() const;

  /// Bitwise equality of dtype, shape and every element (NaN payloads
  /// included), regardless of layout.
  bool bitwise_equal(const HostTensor& other) const;

 private:
  std::shared_ptr<Buffer> buffer_;
  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  std::vector<int64_t> strides_;
  int64_t offset_ = 0;
};

/// Calls f(linear_index, element_offset_in_elements) for every element of a
/// strided shape in row-major order. O(n) with no allocation per element.
template <class F>
void for_each_offset(std::span<const int64_t> shape, std::span<const int64_t> strides,
                     int64_t base, F&& f) {
  const size_t rank = shape.size();
  for (auto d : shape)
    if (d == 0) return;
  std::vector<int64_t> idx(rank, 0);
  int64_t off = base;
  int64_t linear = 0;
  while (true) {
    f(linear++, off);
    size_t ax = rank;
    while (ax > 0) {
      --ax;
      if (++idx[ax] < shape[ax]) { off += strides[ax]; break; }
      off -= strides[ax] * (shape[ax] - 1);
      idx[ax] = 0;
      if (ax == 0) return;
    }
    if (rank == 0) return;
  }
}

}  // namespace tenact
