#include "engines/cpu/kernels/elementwise_strided.hpp"

#include <algorithm>
#include <cstring>

#include "engines/cpu/kernels/dtype_dispatch.hpp"
#include "engines/cpu/kernels/layout_strided_copy.hpp"

namespace tenact::cpu {

StridedCursor::StridedCursor(const HostTensor& tensor, int64_t linear)
    : base_(tensor.data()),
      element_size_(size_of(tensor.dtype())),
      shape_(tensor.shape()),
      strides_(tensor.strides()) {
  if (shape_.size() > kInlineRank) heap_index_.assign(shape_.size(), 0);
  int64_t* idx = index();
  for (size_t ax = shape_.size(); ax > 0; --ax) {
    const int64_t extent = shape_[ax - 1];
    if (extent == 0) return;
    idx[ax - 1] = linear % extent;
    linear /= extent;
    offset_ += idx[ax - 1] * strides_[ax - 1];
  }
}

void StridedCursor::gather(std::byte* dst, int64_t count) {
  if (shape_.empty()) {  // rank 0: the one element, repeated
    for (int64_t i = 0; i < count; ++i)
      std::copy_n(base_, element_size_, dst + static_cast<size_t>(i) * element_size_);
    return;
  }
  int64_t* idx = index();
  const size_t last = shape_.size() - 1;
  while (count > 0) {
    const int64_t run = std::min(count, shape_[last] - idx[last]);
    const int64_t step = strides_[last];
    const std::byte* from = base_ + static_cast<size_t>(offset_) * element_size_;
    if (step == 1) {  // a contiguous row (a broadcast along outer axes)
      std::memcpy(dst, from, static_cast<size_t>(run) * element_size_);
    } else if (step == 0) {  // one element along the row
      fill_elements(dst, run, from, element_size_, nullptr);
    } else {
      auto copy_run = [&](auto tag) {
        using Word = typename decltype(tag)::type;
        const Word* src = reinterpret_cast<const Word*>(base_) + offset_;
        Word* out = reinterpret_cast<Word*>(dst);
        for (int64_t i = 0; i < run; ++i) out[i] = src[i * step];
      };
      switch (element_size_) {
        case 1: copy_run(TypeTag<uint8_t>{}); break;
        case 2: copy_run(TypeTag<uint16_t>{}); break;
        case 4: copy_run(TypeTag<uint32_t>{}); break;
        case 8: copy_run(TypeTag<uint64_t>{}); break;
        default: copy_run(TypeTag<Bytes16>{}); break;
      }
    }
    dst += static_cast<size_t>(run) * element_size_;
    count -= run;
    // Advance to the next row (carry through the outer axes).
    offset_ += run * step;
    idx[last] += run;
    size_t ax = last;
    while (idx[ax] == shape_[ax] && ax > 0) {
      offset_ -= idx[ax] * strides_[ax];
      idx[ax] = 0;
      --ax;
      ++idx[ax];
      offset_ += strides_[ax];
    }
  }
}

}  // namespace tenact::cpu
