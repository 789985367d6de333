// The numerical loops of the built-in module `tenact`, on dense blocks of
// the computation type (f32 and f64), vectorized and compiled once per x86
// vector width, picked at run time. host_kernels.cpp brings
// every operand into such a block (dtype, strides, axis order) and splits
// the work items over threads.
//
// A block is [outer, n, inner] dense row-major: group (o, j) is the n
// elements x[(o*n + k)*inner + j], k = 0..n-1, reduced together (softmax's
// axis; a norm's `dimensions`, flattened). inner == 1: one work item per
// group, a contiguous row; inner > 1: one item per (o, tile of
// kColumnTile columns), the columns computed side by side.
//
// Contract (what makes every split and every instruction set give the
// same bits):
// - each group's result depends on its n inputs (and scale/bias) only: the
//   summation tree is fixed by n and by the path (inner == 1 or not);
// - rows: a leaf is <= kLeaf contiguous terms in kLanes lanes (lane j adds
//   terms j, j + kLanes, ... in order), the lanes then combined pairwise;
//   leaves (from the row's start, kLeaf apart) combine by a binary counter,
//   a balanced pairwise tree. A term passes through at most 7 + 4 +
//   ceil(log2 leaves) roundings, within 2·ceil(log2 n) for every n >= 2;
// - columns: a leaf is 4 consecutive k added in order (3 roundings), the
//   leaves combined by a binary counter: 3 + ceil(log2 ceil(n/4)) <=
//   2·ceil(log2 n);
// - only IEEE-rounded + - * / sqrt, the vector_math.hpp (f32) and
//   vector_math_f64.hpp / vector_math_erf_f64.hpp (f64) functions and
//   integer selects; no FMA contraction (the .cpp is compiled with
//   fp-contract=off), so a vector lane and a scalar tail round alike.
// Every formula is evaluated as docs/program-format.md writes it: `/` and
// sqrt are real divisions and square roots, the mean is sum / n, the
// variance the mean of squared deviations.
//
// Thread-safety: the functions write only y of the items they are given.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/cpu_isa.hpp"

namespace tenact::builtin {

inline constexpr int kLanes = 16;
inline constexpr int64_t kLeaf = 128;      // kLanes x 8 terms
inline constexpr int64_t kChunk = 2048;    // terms buffered per step of a row pass
inline constexpr int64_t kColumnTile = 64;

template <class T>
struct GroupBlock {
  const T* x = nullptr;
  /// Distinct from x (the loops take x and y as non-aliasing).
  T* y = nullptr;
  int64_t outer = 0, n = 0, inner = 1;
  /// layer_norm / rms_norm: n elements each, by k (null when not given).
  const T* scale = nullptr;
  const T* bias = nullptr;
  /// epsilon rounded to T.
  T epsilon = 0;
};

/// The number of work items of a block (see the file comment).
inline int64_t group_items(int64_t outer, int64_t inner) {
  return inner == 1 ? outer : outer * ((inner + kColumnTile - 1) / kColumnTile);
}

/// Runs items [begin, end) of the block.
template <class T>
using GroupFn = void (*)(const GroupBlock<T>& block, int64_t begin, int64_t end);
/// y[i] = f(x[i]) for i in [0, n); x and y distinct.
template <class T>
using MapFn = void (*)(const T* x, T* y, int64_t n);

template <class T>
struct LoopTable {
  GroupFn<T> softmax, log_softmax, layer_norm, rms_norm;
  MapFn<T> gelu_erf, gelu_tanh;
};

/// The x86 vector widths the f32 loops are compiled for (core/cpu_isa.hpp).
using LoopIsa = CpuIsa;
using ::tenact::cpu_runs;
using ::tenact::to_string;
/// The widest isa cpu_runs, decided once per process.
inline LoopIsa best_loop_isa() { return best_cpu_isa(); }

/// The f32 and f64 loops compiled for `isa` (precondition: cpu_runs(isa)).
/// Every table gives the bits of the baseline one of its type.
const LoopTable<float>& f32_loops(LoopIsa isa);
const LoopTable<double>& f64_loops(LoopIsa isa);

}  // namespace tenact::builtin
