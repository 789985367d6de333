// The CPU kernels as providers with tensor contracts
// (engines/tensor_contract.hpp): what the CPU engine and the simulated
// devices, which run the same kernels, declare in
// EngineCapabilities::providers, how their prepare honours a model's
// provider choice, and which kernel variant a prepared op runs.
//
// Providers, in preference order (ids are engine-local):
// - "elementwise": every elementwise op. Dimension symbols d0.. shared by
//   the result and every operand of its rank (a rank-0 operand, select's
//   predicate or clamp's bound, has none).
// - "reduction": operand d0..; the result has the kept axes' symbols.
// - "dot_general.packed_panels": a 2-D f32 dot_general, lhs_contracting
//   [1], rhs_contracting [0], no batching or conj, M from 1 to 64 at the
//   query's symbols; rhs only in panels of 16 columns (KernelVariant::
//   PackedPanels).
// - "dot_general.blas": every dot_general; lhs b<i> (batching), k<i>
//   (contracting), m<j> (free), rhs b<i>, k<i>, n<j>; result [b.., m.., n..].
// - "dynamic_update_slice.in_place", "scatter.in_place": operand 0
//   contiguous, read and written, the result its alias (MustAlias{0};
//   KernelVariant::InPlace).
// - "indexing", "layout": every op of those families (dynamic_update_slice
//   and scatter out of place), extents exact at the query's symbols (an
//   upper bound as its bound; an unknown extent: no contract).
// - "extension": every extension op (the engine's slot for the family is
//   checked when it prepares it); exact extents, the program's dtypes,
//   contiguous operands.
// Element types: a result accepts exactly the query's result dtype; an
// operand every dtype the kernel takes at its position (elementwise ops:
// what find_elementwise_kernel admits there; dot_general and
// reduce_sum_squares: not bool; start indices, gather and scatter indices
// and dynamic_truncate's length: integers; otherwise every dtype).
// Layouts: operands contiguous or strided (a byte-stride symbol per axis,
// "s<operand>.<axis>"), unless said otherwise; results contiguous, Write,
// NoAlias, unless said otherwise.
//
// Thread-safety: the providers' functions are pure; everything here is
// safe from many threads.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "engines/cpu/kernels/kernel.hpp"
#include "engines/engine.hpp"
#include "engines/tensor_contract.hpp"

namespace tenact::cpu {

inline constexpr std::string_view kElementwiseProvider = "elementwise";
inline constexpr std::string_view kReductionProvider = "reduction";
inline constexpr std::string_view kPackedPanelsProvider = "dot_general.packed_panels";
inline constexpr std::string_view kBlasDotProvider = "dot_general.blas";
inline constexpr std::string_view kUpdateSliceInPlaceProvider = "dynamic_update_slice.in_place";
inline constexpr std::string_view kScatterInPlaceProvider = "scatter.in_place";
inline constexpr std::string_view kIndexingProvider = "indexing";
inline constexpr std::string_view kLayoutProvider = "layout";
inline constexpr std::string_view kExtensionProvider = "extension";

/// The largest M (lhs rows) "dot_general.packed_panels" serves.
inline constexpr int64_t kPackedPanelsMaxRows = 64;

/// The providers of the CPU kernels, each needing `value_alignment_bytes`
/// (a power of two) of the values it reads and writes; ops in `lacks` get
/// no contract (a simulated device without those kernels).
OpProviderList cpu_op_providers(uint64_t value_alignment_bytes, std::vector<OpKind> lacks = {});

/// What an engine running the CPU kernels answers a prepare request:
/// with request.provider set, Unsupported naming the engine and provider
/// when `capabilities` has no provider of that id, its contract does not
/// serve the op (ContractQuery from the request, symbols from
/// request.fixed_symbols; a symbol the specialization leaves open counts
/// as 1, its extents being the plan compiler's to check), or an operand
/// layout of the choice (contiguous where none is given) is not one its
/// contract lists; otherwise what answer_host_extension / answer_core_op
/// answer.
PrepareAnswer answer_with_cpu_kernels(const EngineIdentity& engine, const EngineCapabilities& capabilities,
                                      const OpPrepareRequest& request);

/// The kernel variant of `op`'s provider: PackedPanels for
/// "dot_general.packed_panels", InPlace for "*.in_place", else Standard.
KernelVariant kernel_variant_of(const PreparedOp& op);

/// The KernelCall that runs `op` (its extension kernel, variant and
/// operand layouts) on `inputs`, writing into `destinations`.
KernelCall kernel_call_for(const PreparedOp& op, std::span<const HostTensor> inputs, const SymbolBindings& symbols,
                           WorkerPool* pool, std::span<const HostTensor> destinations = {});

}  // namespace tenact::cpu
