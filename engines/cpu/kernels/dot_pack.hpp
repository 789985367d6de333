// Packing of dot_general operands: copies one batch's (rows x cols) matrix
// view into a dense row-major buffer, converting (f16/bf16 -> f32, signed
// -> unsigned for wrapping arithmetic) and conjugating on the way.
//
// Contract: reads exactly rows.count() * cols.count() elements through the
// groups' strides; writes dst[0, rows*cols). No allocation.
#pragma once

#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/half.hpp"
#include "engines/cpu/kernels/dot_plan.hpp"
#include "engines/cpu/kernels/dtype_dispatch.hpp"

namespace tenact::cpu::dot {

/// Converts a stored element to the type the product computes in.
template <class Calc, class T> inline Calc to_calc(const T& x, bool conj) {
  if constexpr (is_half_v<T>) {
    return static_cast<Calc>(x.to_float());
  } else if constexpr (is_complex_v<T>) {
    return conj ? std::conj(x) : x;
  } else {
    return static_cast<Calc>(x);
  }
}

/// Walks the positions of an AxisGroup in row-major order, tracking the
/// element offset.
class GroupWalker {
 public:
  explicit GroupWalker(const AxisGroup& g) : g_(g), index_(g.sizes.size(), 0) {}
  int64_t offset() const { return offset_; }
  void next() {
    for (size_t a = g_.sizes.size(); a-- > 0;) {
      offset_ += g_.strides[a];
      if (++index_[a] < g_.sizes[a]) return;
      offset_ -= g_.strides[a] * g_.sizes[a];
      index_[a] = 0;
    }
  }

 private:
  const AxisGroup& g_;
  std::vector<int64_t> index_;
  int64_t offset_ = 0;
};

/// Element offsets of every position of `g`, in row-major order.
inline std::vector<int64_t> group_offsets(const AxisGroup& g) {
  std::vector<int64_t> offsets(static_cast<size_t>(g.count()));
  GroupWalker w(g);
  for (auto& o : offsets) {
    o = w.offset();
    w.next();
  }
  return offsets;
}

template <class Calc, class T>
void pack_matrix(Calc* dst, const T* src, const AxisGroup& rows, const AxisGroup& cols,
                 bool conj) {
  const int64_t r = rows.count();
  const int64_t c = cols.count();
  int64_t cs = 0;
  const bool cols_strided = cols.single_stride(cs);
  GroupWalker row(rows);
  GroupWalker col(cols);  // back at offset 0 after every c steps
  for (int64_t i = 0; i < r; ++i, row.next()) {
    const T* s = src + row.offset();
    Calc* d = dst + i * c;
    if (cols_strided) {
      for (int64_t j = 0; j < c; ++j) d[j] = to_calc<Calc>(s[j * cs], conj);
    } else {
      for (int64_t j = 0; j < c; ++j, col.next()) d[j] = to_calc<Calc>(s[col.offset()], conj);
    }
  }
}

}  // namespace tenact::cpu::dot
