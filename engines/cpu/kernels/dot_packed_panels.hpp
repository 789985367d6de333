// dot_general's PackedPanels variant (KernelVariant::PackedPanels): the f32
// product C[M, N] = A[M, K] · B of a lhs with any strides and a rhs stored
// in panels of 16 columns, the layout a model's weights are packed into
// once (core/tensor_layout.hpp: block [1, 16], axis order [1, 0]; element
// (k, n) at ((n / 16) * K + k) * 16 + n % 16, the columns zero-padded up to
// a multiple of 16). OpenBLAS's sgemm copies B into panels of its own on
// every call; for the small M of batched inference (1 to 64 rows) that copy
// costs about as much as the product, and this kernel skips it.
//
// Summation (docs/program-format.md, "Sums"): every element accumulates its
// K products in f32, in blocks of packed_panels_k_block(K) consecutive k,
// one fused multiply-add per product where the ISA has FMA (AVX2, AVX-512;
// the baseline multiplies and adds). The block sums combine pairwise, in a
// binary counter over the blocks in order (a balanced tree fixed by K
// alone). A product then passes through at most
// k_block + ceil(log2(ceil(K / k_block))) roundings, which the block length
// keeps within 2 * ceil(log2 K) for K >= 2: the spec's bound counted in
// unit roundoffs, half of it in machine epsilons.
//
// ISA: copies for the baseline (SSE2 on x86-64, scalar elsewhere), AVX2 +
// FMA and AVX-512F, chosen at run time (core/cpu_isa.hpp); each computes
// the same tree, but FMA changes the bits of the baseline's separate
// multiply and add, so results are identical for one ISA only.
//
// Threads: the panels are split over the pool when the product is large
// (at least kPackedPanelsTaskMacs multiply-adds per task); every element
// is computed by the same operations whatever the split, so results are
// bitwise identical for any pool and thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "core/cpu_isa.hpp"
#include "core/error.hpp"
#include "core/tensor.hpp"
#include "core/tensor_layout.hpp"
#include "engines/cpu/kernels/kernel.hpp"

namespace tenact::cpu {

/// Columns per panel.
inline constexpr int64_t kPanelColumns = 16;
/// Multiply-adds a parallel task covers at least.
inline constexpr int64_t kPackedPanelsTaskMacs = int64_t{1} << 18;

/// The blocked layout of a [K, N] rhs in panels of 16 columns.
BlockedLayout packed_panels_layout();

/// Products per block of the summation (see the file comment): 4, 8, 16
/// or more, the longest that keeps the rounding count within
/// 2 * ceil(log2 K): 4 for K < 17, 8 up to K = 2048, 16 up to 2^26, ...
int64_t packed_panels_k_block(int64_t k);

/// True when this CPU runs the copy for `isa` (AVX2 also needs FMA).
bool packed_panels_runs(CpuIsa isa);
/// The widest isa packed_panels_runs, decided once per process.
CpuIsa packed_panels_isa();

/// One product: `a` holds row i of A at a + i * lda (its k contiguous),
/// `panels` the packed B (ceil(n / 16) panels of k x 16 floats), `c` the
/// dense row-major [m, n] result. No operand overlaps `c`.
struct PanelProduct {
  const float* a = nullptr;
  int64_t lda = 0;
  const float* panels = nullptr;
  float* c = nullptr;
  int64_t m = 0;
  int64_t k = 0;
  int64_t n = 0;
};

/// Computes `p` with the copy for `isa` (which must be one
/// packed_panels_runs). Errors: ResourceExhausted when the partial sums'
/// scratch cannot be allocated.
Status packed_panels_product(const PanelProduct& p, WorkerPool* pool, CpuIsa isa = packed_panels_isa());

/// The PackedPanels variant of dot_general, called by run_dot_general:
/// a 2-D f32 lhs [M, K] (any strides), a rhs whose shape is the logical
/// [K, N] and whose buffer holds the panels from its offset on (its
/// strides are not read), lhs_contracting [1], rhs_contracting [0], no
/// batching, no conj; operand_layouts, when given, name the panel layout
/// for operand 1. Errors: InputMismatch for anything else (naming it) or
/// a buffer too small for the panels; allocation errors.
Result<std::vector<HostTensor>> run_dot_packed_panels(const KernelCall& call);

}  // namespace tenact::cpu
