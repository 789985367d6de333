// The packed-panel f32 product (see dot_packed_panels.hpp). The pragma
// precedes the includes so that the inline loop bodies and the per-ISA
// copies share one setting: O3, and contraction of a*b+c into one FMA
// (the project compiles with -ffp-contract=off elsewhere, where rounding
// every op is the semantics; here the fused product is what the summation
// bound counts on). The baseline target has no FMA, so it multiplies and
// adds.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "fp-contract=fast")
#elif defined(__clang__)
#pragma clang fp contract(fast)
#endif

#include "engines/cpu/kernels/dot_packed_panels.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "engines/cpu/kernels/layout_strided_copy.hpp"
#include "util/worker_pool.hpp"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define TENACT_PANELS_X86 1
#else
#define TENACT_PANELS_X86 0
#endif

namespace tenact::cpu {

namespace {

/// One row of a panel: 16 floats, one zmm (two ymm, four xmm). Aligned to
/// 64 bytes explicitly: the type's default alignment follows the compile
/// target (16 bytes for the baseline), and the AVX-512 copy would assume
/// 64 of memory the baseline code allocated.
typedef float Lanes __attribute__((vector_size(64), aligned(64)));
static_assert(sizeof(Lanes) == kPanelColumns * sizeof(float) && alignof(Lanes) == 64);

int64_t ceil_log2(int64_t x) { return x <= 1 ? 0 : std::bit_width(static_cast<uint64_t>(x - 1)); }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// What every tile of one product reads.
struct Geometry {
  const float* a;
  int64_t lda;
  const float* panels;
  float* c;
  int64_t m, k, n;
  int64_t k_block;
  /// This task's partial sums: levels x (the widest tile) x 16 floats.
  Lanes* stack;
};

/// Rows [row, row + R) by panels [panel, panel + P): each element's block
/// sums pushed on the binary counter `g.stack` (level l holds the sum of
/// 2^l blocks while bit l of the count is set), then folded from the
/// lowest level up. Identical operations per element for any R and P.
template <int R, int P>
[[gnu::always_inline]] inline void tile(const Geometry& g, int64_t row, int64_t panel) {
  constexpr int T = R * P;
  const float* a[R];
  for (int r = 0; r < R; ++r) a[r] = g.a + (row + r) * g.lda;
  const float* b[P];
  for (int p = 0; p < P; ++p) b[p] = g.panels + (panel + p) * g.k * kPanelColumns;
  int64_t blocks = 0;
  for (int64_t k0 = 0; k0 < g.k; k0 += g.k_block, ++blocks) {
    const int64_t k1 = std::min(g.k, k0 + g.k_block);
    Lanes acc[T] = {};
    for (int64_t kk = k0; kk < k1; ++kk) {
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) {
        Lanes row_of_b;
        std::memcpy(&row_of_b, b[p] + kk * kPanelColumns, sizeof row_of_b);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) acc[r * P + p] += row_of_b * a[r][kk];
      }
    }
    int level = 0;
    for (int64_t count = blocks; (count & 1) != 0; count >>= 1, ++level)
      for (int t = 0; t < T; ++t) acc[t] = g.stack[level * T + t] + acc[t];
    for (int t = 0; t < T; ++t) g.stack[level * T + t] = acc[t];
  }
  Lanes sum[T] = {};
  bool first = true;
  for (int level = 0; (blocks >> level) != 0; ++level) {
    if (((blocks >> level) & 1) == 0) continue;
    for (int t = 0; t < T; ++t) sum[t] = first ? g.stack[level * T + t] : g.stack[level * T + t] + sum[t];
    first = false;
  }
  for (int p = 0; p < P; ++p) {
    const int64_t col = (panel + p) * kPanelColumns;
    const auto bytes = static_cast<size_t>(std::min(kPanelColumns, g.n - col)) * sizeof(float);
    for (int r = 0; r < R; ++r) std::memcpy(g.c + (row + r) * g.n + col, &sum[r * P + p], bytes);
  }
}

/// tile<nr, np> for any nr <= R, np <= P.
template <int R, int P>
[[gnu::always_inline]] inline void any_tile(const Geometry& g, int nr, int np, int64_t row, int64_t panel) {
  if constexpr (P > 1) {
    if (np < P) return any_tile<R, P - 1>(g, nr, np, row, panel);
  }
  if constexpr (R > 1) {
    if (nr < R) return any_tile<R - 1, P>(g, nr, np, row, panel);
  }
  tile<R, P>(g, row, panel);
}

/// Panels [p0, p1) of every row, in tiles of at most R rows by P panels
/// (the widest that keep the accumulators in registers).
template <int R, int P>
struct Panels {
  static constexpr int kTile = R * P;
  [[gnu::always_inline]] static void run(const Geometry& g, int64_t p0, int64_t p1) {
    for (int64_t panel = p0; panel < p1; panel += P) {
      const int np = static_cast<int>(std::min<int64_t>(P, p1 - panel));
      for (int64_t row = 0; row < g.m; row += R)
        any_tile<R, P>(g, static_cast<int>(std::min<int64_t>(R, g.m - row)), np, row, panel);
    }
  }
};

// Accumulators per ISA: 16 zmm of 32 (4 rows x 4 panels); 12 ymm of 16
// (3 x 2 panels of two ymm each); 8 xmm of 16 (2 rows x 1 panel).
using Avx512Panels = Panels<4, 4>;
using Avx2Panels = Panels<3, 2>;
using BaselinePanels = Panels<2, 1>;
constexpr int kWidestTile = 16;

using PanelsFn = void (*)(const Geometry&, int64_t, int64_t);

void panels_baseline(const Geometry& g, int64_t p0, int64_t p1) { BaselinePanels::run(g, p0, p1); }

#if TENACT_PANELS_X86
__attribute__((target("avx2,fma"))) void panels_avx2(const Geometry& g, int64_t p0, int64_t p1) {
  Avx2Panels::run(g, p0, p1);
}

#if defined(__clang__)
#define TENACT_PANELS_AVX512_TARGET "avx512f"
#else
#define TENACT_PANELS_AVX512_TARGET "avx512f,prefer-vector-width=512"
#endif
__attribute__((target(TENACT_PANELS_AVX512_TARGET))) void panels_avx512(const Geometry& g, int64_t p0,
                                                                        int64_t p1) {
  Avx512Panels::run(g, p0, p1);
}
#endif

struct IsaCopy {
  PanelsFn fn;
  int panels_per_tile;
};

IsaCopy copy_for(CpuIsa isa) {
  switch (isa) {
#if TENACT_PANELS_X86
    case CpuIsa::Avx512: return {&panels_avx512, 4};
    case CpuIsa::Avx2: return {&panels_avx2, 2};
#endif
    default: return {&panels_baseline, 1};
  }
}

/// Aligned scratch for one task's partial sums (held as floats: a
/// template argument drops Lanes' alignment attribute).
struct ScratchDeleter {
  void operator()(float* p) const { ::operator delete[](p, std::align_val_t{alignof(Lanes)}); }
};
using Scratch = std::unique_ptr<float[], ScratchDeleter>;

Scratch new_scratch(size_t lanes) {
  void* p = ::operator new[](lanes * sizeof(Lanes), std::align_val_t{alignof(Lanes)}, std::nothrow);
  return Scratch{static_cast<float*>(p)};
}

Error mismatch(const std::string& what) {
  return Error{ErrorCode::InputMismatch, "dot_general (packed panels): " + what};
}

std::string shape_text(const HostTensor& t) {
  std::string s = "[";
  for (size_t i = 0; i < t.rank(); ++i) s += (i ? ", " : "") + std::to_string(t.shape()[i]);
  return s + "]";
}

/// The attributes the variant serves (see run_dot_packed_panels).
Status check_attrs(const KernelCall& call) {
  const auto* attrs = std::get_if<DotGeneralAttrs>(&call.attrs);
  if (attrs == nullptr)
    return Error{ErrorCode::Internal, "dot_general: the attributes are not dot_general attributes"};
  if (attrs->lhs_contracting_dimensions != std::vector<int64_t>{1} ||
      attrs->rhs_contracting_dimensions != std::vector<int64_t>{0} ||
      !attrs->lhs_batching_dimensions.empty() || !attrs->rhs_batching_dimensions.empty() || attrs->conj_lhs ||
      attrs->conj_rhs)
    return mismatch("serves lhs_contracting [1], rhs_contracting [0], no batching and no conj");
  if (call.operand_layouts.size() > 1 &&
      (call.operand_layouts[1].kind != ResolvedTensorLayout::Kind::Blocked ||
       call.operand_layouts[1].blocked != packed_panels_layout()))
    return mismatch("operand 1 is " + call.operand_layouts[1].to_string() + ", not panels of 16 columns (" +
                    packed_panels_layout().to_string() + ")");
  return ok_status();
}

}  // namespace

BlockedLayout packed_panels_layout() { return BlockedLayout{{1, static_cast<uint64_t>(kPanelColumns)}, {1, 0}}; }

int64_t packed_panels_k_block(int64_t k) {
  const int64_t limit = 2 * ceil_log2(k);
  int64_t block = 4;
  while (block < (int64_t{1} << 20) && 2 * block + ceil_log2(ceil_div(k, 2 * block)) <= limit) block *= 2;
  return block;
}

bool packed_panels_runs(CpuIsa isa) {
#if TENACT_PANELS_X86
  if (isa == CpuIsa::Avx2) {
    __builtin_cpu_init();
    return cpu_runs(isa) && __builtin_cpu_supports("fma");
  }
#endif
  return cpu_runs(isa);
}

CpuIsa packed_panels_isa() {
  static const CpuIsa best = packed_panels_runs(CpuIsa::Avx512) ? CpuIsa::Avx512
                             : packed_panels_runs(CpuIsa::Avx2) ? CpuIsa::Avx2
                                                                : CpuIsa::Baseline;
  return best;
}

Status packed_panels_product(const PanelProduct& p, WorkerPool* pool, CpuIsa isa) {
  if (p.m <= 0 || p.n <= 0) return ok_status();
  if (p.k <= 0) {
    for (int64_t i = 0; i < p.m; ++i) std::fill_n(p.c + i * p.n, p.n, 0.0f);
    return ok_status();
  }
  const IsaCopy copy = copy_for(isa);
  const int64_t k_block = packed_panels_k_block(p.k);
  const auto levels = static_cast<size_t>(std::bit_width(static_cast<uint64_t>(ceil_div(p.k, k_block))));
  const int64_t panels = ceil_div(p.n, kPanelColumns);
  const int64_t panel_macs = p.m * p.k * kPanelColumns;
  // Whole tiles of panels per task, each task worth kPackedPanelsTaskMacs.
  const int64_t grain =
      ceil_div(std::max<int64_t>(1, kPackedPanelsTaskMacs / panel_macs), copy.panels_per_tile) * copy.panels_per_tile;
  std::atomic<bool> failed{false};
  parallel_for(pool, panels, grain, [&](int64_t p0, int64_t p1) {
    Scratch stack = new_scratch(levels * kWidestTile);
    if (!stack) {
      failed.store(true);
      return;
    }
    copy.fn(Geometry{p.a, p.lda, p.panels, p.c, p.m, p.k, p.n, k_block, reinterpret_cast<Lanes*>(stack.get())}, p0,
            p1);
  });
  if (failed.load())
    return Error{ErrorCode::ResourceExhausted, "dot_general (packed panels): out of memory for the partial sums"};
  return ok_status();
}

Result<std::vector<HostTensor>> run_dot_packed_panels(const KernelCall& call) {
  TENACT_TRY(check_attrs(call));
  if (call.inputs.size() != 2) return mismatch("takes 2 operands, got " + std::to_string(call.inputs.size()));
  const HostTensor& lhs = call.inputs[0];
  const HostTensor& rhs = call.inputs[1];
  if (lhs.dtype() != DType::F32 || rhs.dtype() != DType::F32 ||
      (!call.result_types.empty() && call.result_types[0].dtype != DType::F32))
    return mismatch("takes f32 operands and result, got " + std::string{to_string(lhs.dtype())} + " and " +
                    std::string{to_string(rhs.dtype())});
  if (lhs.rank() != 2 || rhs.rank() != 2 || lhs.shape()[1] != rhs.shape()[0])
    return mismatch("needs lhs [M, K] and rhs [K, N], got " + shape_text(lhs) + " and " + shape_text(rhs));
  const int64_t m = lhs.shape()[0], k = lhs.shape()[1], n = rhs.shape()[1];
  const int64_t panels = ceil_div(n, kPanelColumns);
  const bool any = m > 0 && n > 0 && k > 0;
  if (any) {
    const auto need = static_cast<uint64_t>(panels) * static_cast<uint64_t>(k) * kPanelColumns * sizeof(float);
    const auto start = static_cast<uint64_t>(rhs.offset()) * sizeof(float);
    if (!rhs.buffer() || !rhs.is_host() || rhs.buffer()->size() < start || rhs.buffer()->size() - start < need)
      return mismatch("operand 1's buffer holds " +
                      std::to_string(rhs.buffer() ? rhs.buffer()->size() - std::min(rhs.buffer()->size(), start) : 0) +
                      " bytes from its offset, the panels of [" + std::to_string(k) + ", " + std::to_string(n) +
                      "] need " + std::to_string(need));
  }
  TENACT_ASSIGN_OR_RETURN(HostTensor out, output_tensor(call, 0, DType::F32, std::vector<int64_t>{m, n},
                                                        k > 0 ? BufferFill::Unspecified : BufferFill::Zeroed));
  if (any) {
    // A lhs whose k axis is not contiguous is copied dense first (M x K,
    // small next to the product).
    std::vector<float> dense;
    const float* a = lhs.data_as<const float>();
    int64_t lda = lhs.strides()[0];
    if (lhs.strides()[1] != 1 && m > 0) {
      try {
        dense.resize(static_cast<size_t>(m * k));
      } catch (const std::bad_alloc&) {
        return Error{ErrorCode::ResourceExhausted, "dot_general (packed panels): out of memory for a dense lhs"};
      }
      copy_to_dense(lhs, reinterpret_cast<std::byte*>(dense.data()), call.pool);
      a = dense.data();
      lda = k;
    }
    TENACT_TRY(packed_panels_product(PanelProduct{a, lda, rhs.data_as<const float>(), out.data_as<float>(), m, k, n},
                                     call.pool));
  }
  return single_result(call, std::move(out));
}

}  // namespace tenact::cpu
