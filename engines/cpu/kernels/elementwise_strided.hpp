// Reading a strided tensor in row-major order, a run of elements at a time:
// the cursor the elementwise kernels gather non-contiguous operands with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/tensor.hpp"

namespace tenact::cpu {

/// Walks `tensor` in row-major order from a linear element index and copies
/// elements into dense memory. Not thread-safe (one cursor per worker);
/// the tensor must outlive it. Cost: O(count) per gather plus O(rank) per
/// row crossed.
class StridedCursor {
 public:
  StridedCursor(const HostTensor& tensor, int64_t linear);

  /// Copies the next `count` elements to `dst` (dense) and advances.
  /// Precondition: that many elements remain.
  void gather(std::byte* dst, int64_t count);

 private:
  const std::byte* base_;
  size_t element_size_;
  std::vector<int64_t> shape_;
  std::vector<int64_t> strides_;
  std::vector<int64_t> index_;
  int64_t offset_ = 0;  // elements from base_
};

}  // namespace tenact::cpu
