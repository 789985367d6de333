#include "engines/cpu/kernels/layout_strided_copy.hpp"

#include <algorithm>
#include <cstring>

#include "engines/cpu/kernels/element_bytes.hpp"
#include "util/worker_pool.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tenact::cpu {

namespace {

using Axis = CopyPlan::Axis;


// Tile edge of the blocked transpose, in elements: a 32 x 32 tile of 16-byte
// elements is 16 KiB, so one source tile and its destination rows stay in L1.
constexpr int64_t kTile = 32;
// Block edge of the transpose's work items, in bytes along a row: a block
// of 256 x 256 f32 touches 256 source and 256 destination pages, 1 KiB in
// each, which the second-level TLB and the L2 cache hold.
constexpr int64_t kBlockBytes = 1024;
// Rows longer than this are cut into segments when the outer iteration alone
// cannot feed the pool.
constexpr int64_t kRowSplit = 16384;
// Work per parallel chunk, in elements.
constexpr int64_t kChunkElements = 1 << 16;

// Copies a tile: dst[j * dj + i] = src[i * si + j] for i < ib, j < jb.
template <class T>
inline void transpose_tile(std::byte* dst, int64_t dj, const std::byte* src, int64_t si,
                           int64_t ib, int64_t jb) {
  constexpr auto sz = static_cast<int64_t>(sizeof(T));
  int64_t j = 0;
#if defined(__SSE2__)
  if constexpr (sizeof(T) == 4) {
    // 4 x 4 blocks through SSE registers: four 16-byte loads along j, four
    // 16-byte stores along i.
    for (; j + 4 <= jb; j += 4) {
      int64_t i = 0;
      for (; i + 4 <= ib; i += 4) {
        const std::byte* s = src + (i * si + j) * sz;
        __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
        __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + si * sz));
        __m128i r2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 2 * si * sz));
        __m128i r3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 3 * si * sz));
        __m128i t0 = _mm_unpacklo_epi32(r0, r1);
        __m128i t1 = _mm_unpacklo_epi32(r2, r3);
        __m128i t2 = _mm_unpackhi_epi32(r0, r1);
        __m128i t3 = _mm_unpackhi_epi32(r2, r3);
        std::byte* d = dst + (j * dj + i) * sz;
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm_unpacklo_epi64(t0, t1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + dj * sz), _mm_unpackhi_epi64(t0, t1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * dj * sz), _mm_unpacklo_epi64(t2, t3));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 3 * dj * sz), _mm_unpackhi_epi64(t2, t3));
      }
      for (; i < ib; ++i)
        for (int64_t jj = j; jj < j + 4; ++jj)
          store_element<T>(dst + (jj * dj + i) * sz, load_element<T>(src + (i * si + jj) * sz));
    }
  } else if constexpr (sizeof(T) == 8) {
    for (; j + 2 <= jb; j += 2) {
      int64_t i = 0;
      for (; i + 2 <= ib; i += 2) {
        const std::byte* s = src + (i * si + j) * sz;
        __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
        __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + si * sz));
        std::byte* d = dst + (j * dj + i) * sz;
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm_unpacklo_epi64(r0, r1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + dj * sz), _mm_unpackhi_epi64(r0, r1));
      }
      for (; i < ib; ++i)
        for (int64_t jj = j; jj < j + 2; ++jj)
          store_element<T>(dst + (jj * dj + i) * sz, load_element<T>(src + (i * si + jj) * sz));
    }
  }
#endif
  for (; j < jb; ++j) {
    std::byte* row = dst + j * dj * sz;
    const std::byte* col = src + j * sz;
    for (int64_t i = 0; i < ib; ++i) store_element<T>(row + i * sz, load_element<T>(col + i * si * sz));
  }
}

// One item: a segment of the inner row, or one tile column of a transpose.
template <class T>
inline void run_item(const CopyPlan& p, std::byte* dst, const std::byte* src, int64_t blk) {
  constexpr auto sz = static_cast<int64_t>(sizeof(T));
  if (p.kind == CopyPlan::Kind::Transpose) {
    // Item = one block of block x block elements (blocks along i vary
    // fastest), walked in L1-sized tiles.
    const int64_t iblocks = (p.inner.extent + p.block - 1) / p.block;
    const int64_t j0 = (blk / iblocks) * p.block;
    const int64_t i0 = (blk % iblocks) * p.block;
    const int64_t j1 = std::min(j0 + p.block, p.tile.extent);
    const int64_t i1 = std::min(i0 + p.block, p.inner.extent);
    for (int64_t jt = j0; jt < j1; jt += kTile) {
      const int64_t jb = std::min(kTile, j1 - jt);
      std::byte* d = dst + jt * p.tile.dst * sz;
      const std::byte* s = src + jt * sz;  // tile.src == 1
      for (int64_t it = i0; it < i1; it += kTile) {
        const int64_t ib = std::min(kTile, i1 - it);
        transpose_tile<T>(d + it * sz, p.tile.dst, s + it * p.inner.src * sz, p.inner.src, ib, jb);
      }
    }
    return;
  }
  const int64_t start = blk * p.block;
  const int64_t len = std::min(p.block, p.inner.extent - start);
  switch (p.kind) {
    case CopyPlan::Kind::Rows:
      std::memcpy(dst + start * sz, src + start * sz, static_cast<size_t>(len * sz));
      break;
    case CopyPlan::Kind::Fill: {
      const T v = load_element<T>(src);
      std::byte* d = dst + start * sz;
      for (int64_t i = 0; i < len; ++i) store_element<T>(d + i * sz, v);
      break;
    }
    case CopyPlan::Kind::Strided: {
      const int64_t ds = p.inner.dst * sz;
      const int64_t ss = p.inner.src * sz;
      std::byte* d = dst + start * ds;
      const std::byte* s = src + start * ss;
      for (int64_t i = 0; i < len; ++i) store_element<T>(d + i * ds, load_element<T>(s + i * ss));
      break;
    }
    case CopyPlan::Kind::Empty:
    case CopyPlan::Kind::Transpose:
      break;
  }
}

// Items [begin, end): item = outer_index * blocks + block_index. The outer
// multi-index is decoded once, then advanced like an odometer.
template <class T>
void run_items(const CopyPlan& p, std::byte* dst, const std::byte* src, int64_t begin,
               int64_t end) {
  constexpr auto sz = static_cast<int64_t>(sizeof(T));
  const size_t n = p.outer.size();
  int64_t small[16];
  std::vector<int64_t> large;
  int64_t* idx = small;
  if (n > 16) {
    large.resize(n);
    idx = large.data();
  }
  int64_t blk = begin % p.blocks;
  int64_t rest = begin / p.blocks;
  int64_t doff = 0;
  int64_t soff = 0;
  for (size_t k = n; k-- > 0;) {
    idx[k] = rest % p.outer[k].extent;
    rest /= p.outer[k].extent;
    doff += idx[k] * p.outer[k].dst;
    soff += idx[k] * p.outer[k].src;
  }
  for (int64_t item = begin; item < end; ++item) {
    run_item<T>(p, dst + doff * sz, src + soff * sz, blk);
    if (++blk < p.blocks) continue;
    blk = 0;
    for (size_t k = n; k-- > 0;) {
      const Axis& a = p.outer[k];
      doff += a.dst;
      soff += a.src;
      if (++idx[k] < a.extent) break;
      doff -= a.dst * a.extent;
      soff -= a.src * a.extent;
      idx[k] = 0;
    }
  }
}

}  // namespace

int64_t CopyPlan::elements_per_item() const {
  if (kind == Kind::Transpose)
    return std::min(block, tile.extent) * std::min(block, inner.extent);
  return std::min(block, inner.extent);
}

CopyPlan make_copy_plan(std::span<const int64_t> shape, std::span<const int64_t> dst_strides,
                        std::span<const int64_t> src_strides, size_t elem, bool split_rows) {
  CopyPlan p;
  p.elem = elem;
  std::vector<Axis> axes;
  axes.reserve(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return p;  // Empty
    if (shape[i] == 1) continue;
    Axis a{shape[i], dst_strides[i], src_strides[i]};
    if (!axes.empty()) {
      Axis& m = axes.back();
      if (m.dst == a.dst * a.extent && m.src == a.src * a.extent) {
        m = Axis{m.extent * a.extent, a.dst, a.src};
        continue;
      }
    }
    axes.push_back(a);
  }
  if (!axes.empty()) {
    p.inner = axes.back();
    axes.pop_back();
  } else {
    p.inner = Axis{1, 1, 1};
  }
  if (p.inner.dst == 1 && p.inner.src == 1) {
    p.kind = CopyPlan::Kind::Rows;
  } else if (p.inner.dst == 1 && p.inner.src == 0) {
    p.kind = CopyPlan::Kind::Fill;
  } else {
    p.kind = CopyPlan::Kind::Strided;
    if (p.inner.dst == 1 && p.inner.extent >= 2) {
      // The source's unit-stride axis, innermost first: transposing it with
      // the destination's inner axis turns both sides into short rows.
      for (size_t k = axes.size(); k-- > 0;) {
        if (axes[k].src == 1 && axes[k].extent >= 2) {
          p.kind = CopyPlan::Kind::Transpose;
          p.tile = axes[k];
          axes.erase(axes.begin() + static_cast<std::ptrdiff_t>(k));
          break;
        }
      }
    }
  }
  p.outer = std::move(axes);
  p.outer_count = 1;
  for (const Axis& a : p.outer) p.outer_count *= a.extent;
  if (p.kind == CopyPlan::Kind::Transpose) {
    p.block = std::max<int64_t>(kTile, kBlockBytes / static_cast<int64_t>(elem));
    p.blocks = ((p.tile.extent + p.block - 1) / p.block) * ((p.inner.extent + p.block - 1) / p.block);
  } else if (split_rows && p.outer_count < 64 && p.inner.extent > 2 * kRowSplit) {
    p.block = kRowSplit;
    p.blocks = (p.inner.extent + kRowSplit - 1) / kRowSplit;
  } else {
    p.block = p.inner.extent;
    p.blocks = 1;
  }
  return p;
}

void run_copy_items(const CopyPlan& plan, std::byte* dst, const std::byte* src, int64_t begin,
                    int64_t end) {
  if (plan.kind == CopyPlan::Kind::Empty || begin >= end) return;
  switch (plan.elem) {
    case 1: run_items<uint8_t>(plan, dst, src, begin, end); break;
    case 2: run_items<uint16_t>(plan, dst, src, begin, end); break;
    case 4: run_items<uint32_t>(plan, dst, src, begin, end); break;
    case 8: run_items<uint64_t>(plan, dst, src, begin, end); break;
    case 16: run_items<Bytes16>(plan, dst, src, begin, end); break;
    default: break;  // no such dtype
  }
}

void run_copy_plan(const CopyPlan& plan, std::byte* dst, const std::byte* src, WorkerPool* pool) {
  const int64_t n = plan.items();
  if (n == 0) return;
  const int64_t per_item = std::max<int64_t>(1, plan.elements_per_item());
  const int64_t grain = std::max<int64_t>(1, kChunkElements / per_item);
  if (pool == nullptr || n < 2 * grain) {
    run_copy_items(plan, dst, src, 0, n);
    return;
  }
  parallel_for(pool, n, grain,
               [&](int64_t begin, int64_t end) { run_copy_items(plan, dst, src, begin, end); });
}

void strided_copy(std::span<const int64_t> shape, std::byte* dst,
                  std::span<const int64_t> dst_strides, const std::byte* src,
                  std::span<const int64_t> src_strides, size_t elem, WorkerPool* pool) {
  run_copy_plan(make_copy_plan(shape, dst_strides, src_strides, elem, pool != nullptr), dst, src,
                pool);
}

void copy_to_dense(const HostTensor& src, std::byte* dst, WorkerPool* pool) {
  const std::vector<int64_t> dense = row_major_strides(src.shape());
  strided_copy(src.shape(), dst, dense, src.data(), src.strides(), size_of(src.dtype()), pool);
}

namespace {
template <class T>
void fill_typed(std::byte* dst, int64_t begin, int64_t end, const std::byte* value) {
  const T v = load_element<T>(value);
  for (int64_t i = begin; i < end; ++i) store_element<T>(dst + i * static_cast<int64_t>(sizeof(T)), v);
}
}  // namespace

void fill_elements(std::byte* dst, int64_t count, const std::byte* value, size_t elem,
                   WorkerPool* pool) {
  if (count <= 0) return;
  bool uniform = true;
  for (size_t b = 1; b < elem; ++b) uniform = uniform && value[b] == value[0];
  auto fill_range = [&](int64_t begin, int64_t end) {
    if (uniform) {
      std::memset(dst + begin * static_cast<int64_t>(elem), std::to_integer<int>(value[0]),
                  static_cast<size_t>(end - begin) * elem);
      return;
    }
    switch (elem) {
      case 2: fill_typed<uint16_t>(dst, begin, end, value); break;
      case 4: fill_typed<uint32_t>(dst, begin, end, value); break;
      case 8: fill_typed<uint64_t>(dst, begin, end, value); break;
      case 16: fill_typed<Bytes16>(dst, begin, end, value); break;
      default: break;
    }
  };
  const int64_t grain = 4 * kChunkElements;
  if (pool == nullptr || count < 2 * grain) {
    fill_range(0, count);
    return;
  }
  parallel_for(pool, count, grain, fill_range);
}

}  // namespace tenact::cpu
