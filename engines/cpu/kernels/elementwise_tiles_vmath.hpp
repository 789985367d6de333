// The f32 tile loops of exp, log, tanh and logistic (vector_math.hpp) and
// of sine, cosine, expm1 and log1p (vector_math_via_f64.hpp), the f64 ones
// of exp, log, tanh, logistic, expm1 and log1p (vector_math_f64.hpp) and
// of sine and cosine (vector_math_trig_f64.hpp), and
// the f32/f64 arithmetic, maximum and minimum loops,
// compiled once per x86 vector width and picked at run time: the baseline
// build is SSE2 (4 lanes), and these loops are compute-bound (tanh: ~2.5 ns
// per element on SSE2, ~4x less with 16 lanes), so they are the ones worth
// a wider copy.
//
// Contract: every variant computes exactly the bits of the baseline loop
// (and of a scalar call of the vmath function). The functions use only
// IEEE-rounded add, sub, mul, div, f32 <-> f64 conversions, 32- and
// 64-bit integer ops and bitwise selects,
// which give the same result at any vector width; the translation unit is
// compiled with fp-contract=off, because AVX-512F brings FMA instructions
// and g++ contracts a*b+c into them by default in C++ (even with
// -std=c++20). Tests compare every variant the CPU runs against the
// baseline, bit for bit.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/cpu_isa.hpp"
#include "core/op_kind.hpp"
#include "engines/cpu/kernels/elementwise_kernels.hpp"

namespace tenact::cpu::ew {

/// The instruction sets the loops are compiled for (core/cpu_isa.hpp).
using VmathIsa = CpuIsa;
using ::tenact::cpu_runs;
using ::tenact::to_string;

/// The widest isa cpu_runs, decided once per process.
inline VmathIsa best_vmath_isa() { return best_cpu_isa(); }

/// The f32 tile loop of `kind` (Exponential, Log, Tanh, Logistic,
/// ExponentialMinusOne, LogPlusOne, Sine or Cosine) compiled for `isa`;
/// nullptr for any other op. Calling a variant the CPU does not run
/// (cpu_runs false) is undefined behaviour.
TileFn vmath_f32_tile(OpKind kind, VmathIsa isa);

/// The f64 tile loop of `kind` (Exponential, Log, Tanh, Logistic,
/// ExponentialMinusOne, LogPlusOne, Sine or Cosine; vector_math_f64.hpp,
/// vector_math_trig_f64.hpp) compiled for `isa`; nullptr for any other op.
TileFn vmath_f64_tile(OpKind kind, VmathIsa isa);

/// The f32 or f64 tile loop of `kind` (Add, Subtract, Multiply, Divide,
/// Maximum or Minimum) compiled for `isa` (Avx2 or Avx512), with the bits
/// of binary_tile<Op, T> but for the payload of a NaN made from two NaNs
/// (the Binary loops of elementwise_tiles_vmath.cpp); nullptr for
/// any other op, dtype or isa. Calling a variant the CPU does not run is
/// undefined behaviour.
TileFn binary_float_tile(OpKind kind, DType t, VmathIsa isa);

}  // namespace tenact::cpu::ew
