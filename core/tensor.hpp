// Tensors: a buffer (core/buffer.hpp: owned by an engine in one of its
// storage classes, or unowned host memory) plus dtype, shape, element
// strides and an element offset. Views (transpose, broadcast, slice) share
// the buffer without copying.
//
// A Tensor may live in device memory: its data() is then a device address,
// for that device's kernels and copies only. HostTensor names a Tensor whose
// buffer the host can address (is_host()): what the CPU kernels, .npy and
// JSON I/O take and make. The engine interface, transfers and the runtime
// pass Tensors and never touch their elements.
//
// Contract: a Tensor is a value type; copies share the buffer (shallow).
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

#include "core/buffer.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"

namespace tenact {

/// Product of dims with overflow and negativity checks. Errors name `what`.
Result<int64_t> checked_element_count(std::span<const int64_t> dims);
/// Bytes of a dense tensor, checked against kMaxTensorBytes.
Result<uint64_t> checked_byte_size(DType dtype, std::span<const int64_t> dims);
/// Row-major element strides of `dims`.
std::vector<int64_t> row_major_strides(std::span<const int64_t> dims);

class Tensor {
 public:
  Tensor() = default;

  /// A new dense row-major host tensor, zero-filled, in memory from the
  /// calling thread's host buffer source (Buffer::allocate).
  static Result<Tensor> zeros(DType dtype, std::vector<int64_t> shape);
  /// The same without the zero fill (BufferFill::Unspecified): its elements
  /// hold unspecified bytes until written. For a result its producer
  /// writes in full before anyone reads it.
  static Result<Tensor> for_overwrite(DType dtype, std::vector<int64_t> shape);
  /// zeros (fill Zeroed) or for_overwrite (Unspecified) of a shape the
  /// caller keeps: no shape is copied when this thread made a tensor of that
  /// shape recently (row_major_layout), so a kernel making the same shapes
  /// run after run allocates only the buffer.
  static Result<Tensor> dense(DType dtype, std::span<const int64_t> shape, BufferFill fill);
  /// A view over an existing buffer. Precondition: every reachable element
  /// lies inside the buffer (checked; error otherwise).
  static Result<Tensor> view(std::shared_ptr<Buffer> buffer, DType dtype,
                                 std::vector<int64_t> shape, std::vector<int64_t> strides,
                                 int64_t offset);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return layout_ ? layout_->shape : kNoDims; }
  const std::vector<int64_t>& strides() const { return layout_ ? layout_->strides : kNoDims; }
  int64_t offset() const { return offset_; }
  size_t rank() const { return shape().size(); }
  int64_t element_count() const;
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  /// Where its buffer lives (Endpoint::unowned_host() without a buffer).
  Endpoint endpoint() const { return buffer_ ? buffer_->endpoint() : Endpoint::unowned_host(); }
  /// True when the host can address its elements (or it has no buffer).
  bool is_host() const { return buffer_ == nullptr || buffer_->host_addressable(); }

  /// True when elements are dense, row-major, starting at offset.
  bool is_contiguous() const;
  /// Address of the element at `offset` (the first logical element): a
  /// host pointer only when is_host().
  std::byte* data() const;
  template <class T> T* data_as() const { return reinterpret_cast<T*>(data()); }

  // -- views (no copy) ---------------------------------------------------------
  Tensor transposed(std::span<const int64_t> permutation) const;
  /// Broadcast to `shape`, `dims[i]` naming the result axis of input axis i
  /// (unchecked: the caller has checked that the operand broadcasts). A
  /// view made again on this thread with the same shape and strides shares
  /// the layout made before (no allocation; see strided_layout).
  Tensor broadcast_view(std::span<const int64_t> shape, std::span<const int64_t> dims) const;
  Tensor broadcast_view(const std::vector<int64_t>& shape, std::span<const int64_t> dims) const {
    return broadcast_view(std::span<const int64_t>(shape), dims);
  }
  /// Strided slice [start, limit) with step `step` per axis (all valid).
  Tensor sliced(std::span<const int64_t> start, std::span<const int64_t> limit,
                    std::span<const int64_t> step) const;

  // -- host tensors only (is_host()) --------------------------------------------
  /// A dense row-major copy (or this tensor itself when already contiguous).
  Result<Tensor> contiguous() const;
  /// Always a fresh dense copy, from the calling thread's host buffer source.
  Result<Tensor> clone() const;
  /// Writes the elements, dense and row-major, to `destination` (host
  /// memory of at least element_count() * size_of(dtype()) bytes).
  /// Errors: Internal without a buffer or when not is_host().
  Status copy_to_dense(std::byte* destination) const;

  /// Bitwise equality of dtype, shape and every element (NaN payloads
  /// included), regardless of layout.
  bool bitwise_equal(const Tensor& other) const;

 private:

  /// Shape and strides, immutable and shared by copies: copying a Tensor
  /// costs reference counts, not two vectors. Null for rank 0 (and for an
  /// empty Tensor): both are then kNoDims.
  struct Layout {
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;
  };
  static constinit const std::vector<int64_t> kNoDims;
  void set_layout(std::vector<int64_t> shape, std::vector<int64_t> strides);
  /// The row-major layout of `shape` (null for rank 0): one this thread
  /// made recently for the same shape, else a new one. Cost: a few shape
  /// compares; allocations only on a miss.
  static std::shared_ptr<const Layout> row_major_layout(std::span<const int64_t> shape);
  /// The layout of `shape` and `strides` (null for rank 0): one of the few
  /// this thread made last with both the same, else a new one.
  static std::shared_ptr<const Layout> strided_layout(std::span<const int64_t> shape,
                                                      std::span<const int64_t> strides);

  std::shared_ptr<Buffer> buffer_;
  std::shared_ptr<const Layout> layout_;
  DType dtype_ = DType::F32;
  int64_t offset_ = 0;
};

/// A Tensor whose buffer the host can address (see the file comment).
using HostTensor = Tensor;

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
