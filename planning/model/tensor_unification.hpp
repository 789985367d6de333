// Unification of a provider's tensor contract (engines/tensor_contract.hpp)
// with actual tensors, and inference of a result's tensor from a contract:
// the part of the plan compiler (model_plan.hpp) that decides whether a
// provider's contract fits a node. Internal to planning/model/ and its tests.
//
// Symbols: a dimension symbol binds, within one node, the first non-zero
// extent it meets and must equal every later one; a stride symbol does the
// same for byte strides. The two domains are separate: a dimension symbol
// and a stride symbol of the same name never constrain each other. A
// symbol never binds 0 (an extent or stride of 0 violates it).
//
// Layouts: a tensor fits the first layout constraint of the contract it
// matches (contiguous with contiguous; strided with strided of equal rank,
// exact strides equal and stride symbols binding; blocked with blocked of
// equal block and axis order); a stride symbol binds only when its layout
// matches as a whole.
//
// Pure; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/tensor_layout.hpp"
#include "engines/tensor_contract.hpp"

namespace tenact {

/// The symbols one node's contracts have bound so far.
struct TensorSymbols {
  std::map<std::string, uint64_t, std::less<>> dimensions;
  std::map<std::string, uint64_t, std::less<>> strides;
};

/// Binds `symbol` to `value` in `symbols`, or checks it against its
/// binding. False for a value of 0 or a different binding.
bool bind_symbol(std::map<std::string, uint64_t, std::less<>>& symbols, std::string_view symbol, uint64_t value);

/// Unifies `contract` with `tensor`, value `value` being operand or result
/// `ordinal` ("input" or "output": `role`) of node `node`. Errors
/// (InvalidPlan): "node `N` input[0] `v` rank or dtype differs from its
/// operation contract: actual rank=.. dtype=.., expected rank=..
/// dtypes=[..]", "... dimension[1]=7 violates `Range{minimum: 1, maximum:
/// 4}`", "... layout contiguous differs from its operation contract [..]".
Status unify_tensor(const TensorContract& contract, const ResolvedTensorSpec& tensor, TensorSymbols& symbols,
                    std::string_view node, std::string_view role, size_t ordinal, std::string_view value);

/// The tensor `contract` fixes for a result of node `node` at `symbols`.
/// Errors (InvalidPlan): "node `N` output dtype is ambiguous; provide an
/// explicit tensor" (not exactly one dtype), "... output range is
/// ambiguous ..." (a range of several extents), "... output layout is
/// ambiguous ..." (not exactly one layout), "node `N` output symbol `s` is
/// unresolved; provide an explicit tensor", "node `N` stride symbol `s` is
/// unresolved"; those of ResolvedTensorSpec::make.
Result<ResolvedTensorSpec> infer_tensor(const TensorContract& contract, const TensorSymbols& symbols,
                                        std::string_view node);

}  // namespace tenact
