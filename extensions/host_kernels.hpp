// The host kernels of the built-in module `tenact`: what prepare_host
// returns. A kernel holds the op's checked attributes; each run brings the
// inputs into dense blocks of the computation type (group_loops.hpp),
// splits the work items over HostKernelArgs::parallel, and returns the
// result, dense and row-major, of x's dtype and shape.
//
// Layout, decided by the shape and the axes alone (so the bits of a result
// depend on the input values and shape, never on the input's strides or on
// how the work was split): an input with any strides is read densely
// first (Tensor::contiguous); reduced axes that are one run of x's axes
// (axes of extent 1 aside) are computed in place of x's layout, as rows
// when nothing follows them and as column tiles when at least
// kMinColumns elements do; otherwise x is transposed to kept axes first,
// computed as rows and transposed back. f16 and bf16 are converted to f32
// blocks (exactly), computed in f32 and rounded once into the result.
//
// Memory, beyond the result: a dense copy of a strided input; for f16/bf16
// two f32 blocks of x's size; a transposed layout one more block. Every
// allocation is a Tensor::zeros of the calling thread (the engine's memory
// on an engine thread); none is made on the worker threads.
//
// Errors when a run's inputs do not match what was prepared (count, dtype,
// rank, a scale/bias shape): InputMismatch; allocation: the allocator's.
#pragma once

#include "core/extension.hpp"
#include "extensions/builtin_attrs.hpp"
#include "extensions/group_loops.hpp"

namespace tenact::builtin {

/// The column path needs at least this many elements after the reduced axes
/// (the product of the extents that follow them); fewer go through a
/// transposition to rows, where the vector lanes are full.
inline constexpr int64_t kMinColumns = 8;

/// The kernel of an op check_builtin_op accepted, with the f32 loops of
/// best_loop_isa().
HostExtensionKernel make_host_kernel(BuiltinAttrs attrs);
/// The same with the f32 loops of `isa` (precondition: cpu_runs(isa));
/// for tests, which compare every isa against the baseline bit for bit.
HostExtensionKernel make_host_kernel(BuiltinAttrs attrs, LoopIsa isa);

}  // namespace tenact::builtin
