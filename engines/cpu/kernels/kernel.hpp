// The CPU kernels' one entry point: run one op of a semantic program on
// host tensors. Engine-independent (no engine, actor or planning types), so
// the kernels are testable as plain functions.
//
// Contract:
// - Inputs may have any strides (views: transpose, broadcast with stride 0,
//   negative strides); kernels read them through their strides.
// - Kernels write their outputs dense and row-major, of the dtype in
//   `result_types` and the concrete shape computed from the inputs and
//   attributes (dimension expressions in attributes are evaluated against
//   `symbols`): into the call's destination for that result when one is
//   given and fits (the result is then a view of its buffer), else into a
//   new 64-byte aligned tensor (output_tensor()). Extension kernels
//   allocate their own results. A destination overlaps no input.
// - Variants (KernelVariant) a model's plan chose: PackedPanels reads a
//   blocked rhs (dot_packed_panels.hpp); InPlace writes into operand 0.
// - Semantics are docs/program-format.md's (StableHLO where it is silent):
//   every result is rounded to its own dtype; f16/bf16 compute in f32.
// - `pool` may be null (serial). Kernels split work over it only when the
//   work is large enough to pay for it; results never depend on the split
//   (bitwise identical for any thread count), floating sums included.
// - Thread-safety: kernels have no shared mutable state; concurrent calls
//   on disjoint outputs are safe.
#pragma once

#include <optional>
#include <memory>
#include <span>
#include <vector>

#include "core/dim_expr.hpp"
#include "core/error.hpp"
#include "core/extension.hpp"
#include "core/op_attrs.hpp"
#include "core/op_kind.hpp"
#include "core/shape.hpp"
#include "core/tensor.hpp"
#include "core/tensor_layout.hpp"

namespace tenact {
class WorkerPool;  // util/worker_pool.hpp
}  // namespace tenact

namespace tenact::cpu {


/// Which kernel of an op runs: the standard one, or a variant a model's
/// plan chose through a provider (engines/cpu/cpu_providers.hpp).
enum class KernelVariant : uint8_t {
  Standard,
  /// dot_general of a 2-D lhs [M, K] (any strides) and a 2-D f32 rhs [K, N]
  /// stored in panels of 16 columns (operand_layouts[1]: blocked, block
  /// [1, 16], axis order [1, 0]); the rhs tensor's buffer holds the
  /// panels from its offset on.
  PackedPanels,
  /// dynamic_update_slice and scatter writing into operand 0's buffer and
  /// returning operand 0 itself (its storage is the result's): only the
  /// updated elements are written. Operand 0 must be dense row-major.
  InPlace,
};

/// Where a kernel may keep what it worked out for one op of a batch that
/// runs again and again (the CPU engine's caller-thread path), to find it
/// on the op's next run. A kernel checks that what it kept still fits the
/// call (operand dtypes, shapes, strides) before it uses it, and keeps only
/// objects of its own (`owner` names the kernel code, and so the object's
/// type). What depends on the call's symbols may be kept too: the holder
/// drops its keeps whenever the work is run under other symbols (the CPU
/// engine's keeps live in BatchWork::caller_notes). Used by one thread at a
/// time.
struct KernelKeep {
  const void* owner = nullptr;
  std::shared_ptr<void> kept;

  /// What `owner` kept here, or null (nothing, or another kernel's).
  template <class T>
  const T* find(const void* by) const {
    return owner == by ? static_cast<const T*>(kept.get()) : nullptr;
  }
  /// Keeps `made` under `by`, replacing whatever was kept.
  template <class T>
  void keep(const void* by, std::shared_ptr<T> made) {
    owner = by;
    kept = std::move(made);
  }

  /// The result list the runner handed back after the op's last run
  /// (empty, with its capacity): single_result() fills it instead of
  /// allocating one, whatever kernel runs the op.
  std::vector<HostTensor> results;
};

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
  /// Empty, or one per result: a dense host tensor to write that result
  /// into (BatchOp::destinations, made host-addressable by the engine); an
  /// unset one, or one smaller than the result, is ignored and the kernel
  /// allocates as usual (output_tensor()).
  std::span<const HostTensor> destinations{};
  KernelVariant variant{KernelVariant::Standard};
  /// Empty (every operand a plain strided tensor) or one per operand, for
  /// variants that read a blocked operand.
  std::span<const ResolvedTensorLayout> operand_layouts{};
  /// Null, or this op's keep (see KernelKeep).
  KernelKeep* keep = nullptr;
};

/// A dense row-major view of dtype x shape over `destination`'s buffer at
/// its offset, when `destination` has a host-addressable buffer, is dense
/// and holds at least those bytes, and its offset is a whole number of
/// `dtype` elements; nullopt otherwise. The view's bytes are as they were.
std::optional<HostTensor> destination_view(const HostTensor& destination, DType dtype,
                                           std::span<const int64_t> shape);

/// What a kernel writes a result into: destination_view(*destination, ...)
/// when `destination` is not null and it fits, else a new dense tensor
/// from the calling thread's host buffer source. Zero-filled unless `fill`
/// is Unspecified (then the caller writes every element). Errors: those of
/// allocating (sizes over the limit, memory refused).
Result<HostTensor> output_in(const HostTensor* destination, DType dtype, std::span<const int64_t> shape,
                             BufferFill fill);

/// The tensor result `index` of `call` is written into: output_in with
/// call.destinations[index] when there is one. Errors are output_in's,
/// prefixed with the op's name.
Result<HostTensor> output_tensor(const KernelCall& call, size_t index, DType dtype,
                                 std::span<const int64_t> shape, BufferFill fill = BufferFill::Zeroed);

/// `out` as the one-element result list of `call`: the list call.keep holds
/// from the op's last run when there is one (no allocation), else a new one.
std::vector<HostTensor> single_result(const KernelCall& call, HostTensor out);

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
