// The CPU kernels' one entry point: run one op of a semantic program on
// host tensors. Engine-independent (no engine, actor or planning types), so
// the kernels are testable as plain functions.
//
// Contract:
// - Inputs may have any strides (views: transpose, broadcast with stride 0,
//   negative strides); kernels read them through their strides.
// - Kernels allocate their outputs: dense, row-major, 64-byte aligned, of
//   the dtype in `result_types` and the concrete shape computed from the
//   inputs and attributes (dimension expressions in attributes are
//   evaluated against `symbols`).
// - Semantics are docs/program-format.md's (StableHLO where it is silent):
//   every result is rounded to its own dtype; f16/bf16 compute in f32.
// - `pool` may be null (serial). Kernels split work over it only when the
//   work is large enough to pay for it; results never depend on the split
//   (bitwise identical for any thread count), floating sums included.
// - Thread-safety: kernels have no shared mutable state; concurrent calls
//   on disjoint outputs are safe.
#pragma once

#include <span>
#include <vector>

#include "core/dim_expr.hpp"
#include "core/error.hpp"
#include "core/extension.hpp"
#include "core/op_attrs.hpp"
#include "core/op_kind.hpp"
#include "core/shape.hpp"
#include "core/tensor.hpp"

namespace tenact {
class WorkerPool;  // util/worker_pool.hpp
}  // namespace tenact

namespace tenact::cpu {


struct KernelCall {
  OpKind kind;
  const OpAttrs& attrs;
  std::span<const HostTensor> inputs;
  /// The program's inferred result types (dtype authoritative; shapes may
  /// be symbolic or upper bounds — the kernel computes concrete ones).
  std::span<const ValueType> result_types;
  const SymbolBindings& symbols;
  WorkerPool* pool = nullptr;
  /// For an extension op: its family's prepared host kernel (the engine's
  /// plan holds it); run_kernel calls it with `pool` as its HostParallel.
  const HostExtensionKernel* extension = nullptr;
};

/// Runs one op. Errors: Unsupported for an op/dtype the CPU kernels do not
/// implement (never expected for core ops), InputMismatch when input shapes
/// disagree with what the op needs at run time, ExecutionFailed on
/// allocation failure.
Result<std::vector<HostTensor>> run_kernel(const KernelCall& call);

// Family entry points (one file each), called by run_kernel.
Result<std::vector<HostTensor>> run_elementwise(const KernelCall& call);
Result<std::vector<HostTensor>> run_layout(const KernelCall& call);
Result<std::vector<HostTensor>> run_reduction(const KernelCall& call);
Result<std::vector<HostTensor>> run_indexing(const KernelCall& call);
Result<std::vector<HostTensor>> run_dot_general(const KernelCall& call);

}  // namespace tenact::cpu
