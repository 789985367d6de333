// Reading a strided tensor in row-major order, a run of elements at a time:
// the cursor the elementwise kernels gather non-contiguous operands with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/tensor.hpp"

namespace tenact::cpu {

/// Walks `tensor` in row-major order from a linear element index and copies
/// elements into dense memory. Not thread-safe (one cursor per worker);
/// the tensor must outlive it (the cursor reads its shape and strides in
/// place). Cost: O(count) per gather plus O(rank) per row crossed; no
/// allocation up to rank kInlineRank.
class StridedCursor {
 public:
  StridedCursor(const HostTensor& tensor, int64_t linear);

  /// Copies the next `count` elements to `dst` (dense) and advances.
  /// Precondition: that many elements remain.
  void gather(std::byte* dst, int64_t count);

  static constexpr size_t kInlineRank = 8;

 private:
  int64_t* index() { return shape_.size() <= kInlineRank ? inline_index_ : heap_index_.data(); }

  const std::byte* base_;
  size_t element_size_;
  std::span<const int64_t> shape_;
  std::span<const int64_t> strides_;
  int64_t inline_index_[kInlineRank] = {};
  std::vector<int64_t> heap_index_;  // used past kInlineRank axes
  int64_t offset_ = 0;  // elements from base_
};

}  // namespace tenact::cpu
