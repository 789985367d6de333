// Provider tensor contracts: what an engine's kernel for one op instance
// accepts and produces, per operand and result — dimension constraints,
// element types, layouts, access and aliasing — and the providers that
// declare them (EngineCapabilities::providers). The plan compiler
// (planning/model/) unifies contracts with the actual tensors of a model,
// infers the tensors of results where a contract fixes them, and resolves
// each op to one provider; the engine then prepares the op for that
// provider (OpPrepareRequest::provider).
//
// Symbols. A DimensionConstraint::Symbol binds, within one op instance, to
// the first non-zero extent it meets and must agree with every later one;
// a StrideConstraint::Symbol does the same for byte strides. The two are
// separate domains: a dimension symbol and a stride symbol of the same
// name are unrelated.
//
// Contract: plain values; a provider's `contract` and `alignment`
// functions are pure and safe to call from many threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/dim_expr.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/op_attrs.hpp"
#include "core/op_kind.hpp"
#include "core/shape.hpp"
#include "core/tensor_layout.hpp"

namespace tenact {

struct DimensionConstraint {
  enum class Kind : uint8_t { Exact, Range, Symbol };
  Kind kind = Kind::Exact;
  uint64_t value = 0;    // Exact
  uint64_t minimum = 0;  // Range, inclusive
  uint64_t maximum = 0;  // Range, inclusive
  std::string symbol;    // Symbol

  static DimensionConstraint exact(uint64_t v) { return {Kind::Exact, v, 0, 0, {}}; }
  static DimensionConstraint range(uint64_t lo, uint64_t hi) { return {Kind::Range, 0, lo, hi, {}}; }
  static DimensionConstraint named(std::string s) { return {Kind::Symbol, 0, 0, 0, std::move(s)}; }
  friend bool operator==(const DimensionConstraint&, const DimensionConstraint&) = default;
  /// "Exact(4)", "Range{minimum: 1, maximum: 8}", "Symbol(k)".
  std::string to_string() const;
};

struct StrideConstraint {
  enum class Kind : uint8_t { ExactBytes, Symbol };
  Kind kind = Kind::ExactBytes;
  uint64_t bytes = 0;
  std::string symbol;

  static StrideConstraint exact_bytes(uint64_t b) { return {Kind::ExactBytes, b, {}}; }
  static StrideConstraint named(std::string s) { return {Kind::Symbol, 0, std::move(s)}; }
  friend bool operator==(const StrideConstraint&, const StrideConstraint&) = default;
  /// "ExactBytes(16)", "Symbol(row)".
  std::string to_string() const;
};

struct LayoutConstraint {
  enum class Kind : uint8_t { Contiguous, Strided, Blocked };
  Kind kind = Kind::Contiguous;
  std::vector<StrideConstraint> strides;  // Strided: one per axis
  BlockedLayout blocked;                  // Blocked

  static LayoutConstraint contiguous() { return {}; }
  static LayoutConstraint strided(std::vector<StrideConstraint> s) { return {Kind::Strided, std::move(s), {}}; }
  static LayoutConstraint blocked_as(BlockedLayout b) { return {Kind::Blocked, {}, std::move(b)}; }
  friend bool operator==(const LayoutConstraint&, const LayoutConstraint&) = default;
  /// "Contiguous", "Strided[Symbol(s0), ExactBytes(4)]",
  /// "Blocked{block=[1, 16], axis_order=[1, 0]}".
  std::string to_string() const;
};

enum class TensorAccess : uint8_t { Read, Write, ReadWrite };

struct AliasPolicy {
  enum class Kind : uint8_t { NoAlias, MayAlias, MustAlias };
  Kind kind = Kind::NoAlias;
  /// MayAlias / MustAlias: the operand index the result may (must) share
  /// storage with.
  uint32_t input = 0;
  static AliasPolicy none() { return {}; }
  static AliasPolicy may(uint32_t k) { return {Kind::MayAlias, k}; }
  static AliasPolicy must(uint32_t k) { return {Kind::MustAlias, k}; }
  friend bool operator==(const AliasPolicy&, const AliasPolicy&) = default;
  /// "NoAlias", "MayAlias{input: 0}", "MustAlias{input: 0}".
  std::string to_string() const;
};

/// One operand's or result's contract.
struct TensorContract {
  std::vector<DimensionConstraint> dimensions;
  /// Accepted element types, ascending, each once (make() sorts).
  std::vector<DType> element_types;
  /// Accepted layouts, in preference order.
  std::vector<LayoutConstraint> layouts;
  TensorAccess access = TensorAccess::Read;
  AliasPolicy alias;

  /// Validates: at least one element type and one layout, ranges with
  /// minimum <= maximum, non-empty symbol names, a stride per axis, valid
  /// blocked layouts of this rank. Errors: InvalidPlan naming the part.
  static Result<TensorContract> make(std::vector<DimensionConstraint> dimensions,
                                     std::vector<DType> element_types,
                                     std::vector<LayoutConstraint> layouts, TensorAccess access,
                                     AliasPolicy alias);
  bool accepts(DType dtype) const;
  friend bool operator==(const TensorContract&, const TensorContract&) = default;
};

/// The contracts of one op instance: one per operand, one per result.
struct OpContract {
  std::vector<TensorContract> operands;
  std::vector<TensorContract> results;
};

/// What a provider is asked about one op of a program: its kind and
/// attributes, its operands' and results' types as the program infers them
/// (ranks and dtypes are exact; extents are expressions over the program's
/// symbols), and the symbols' values for the model's input tensors.
struct ContractQuery {
  OpKind kind = OpKind::Add;
  const OpAttrs* attrs = nullptr;
  std::span<const ValueType> operands;
  std::span<const ValueType> results;
  const SymbolBindings* symbols = nullptr;
};

/// How a provider's values sit in storage, for its alignment evidence: per
/// operand and result, the byte offset of the value within its resource.
struct AlignmentQuery {
  std::span<const uint64_t> operand_offsets;
  std::span<const uint64_t> result_offsets;
};

/// One kernel of an engine for one kind of op, with its contract.
struct OpProvider {
  /// Unique within its engine ("dot_general.blas"); the catalog qualifies
  /// it with the engine id ("cpu/dot_general.blas").
  std::string id;
  /// What it offers, ascending: the op family ("dot_general",
  /// "elementwise", ...) and properties ("strided_operands",
  /// "blocked_weights", "in_place").
  std::vector<std::string> capabilities;
  /// The contract for an op instance, nullopt when the provider does not
  /// serve it (another op kind, a dtype its kernel lacks).
  std::function<std::optional<OpContract>(const ContractQuery&)> contract;
  /// The byte alignment it needs of the values it reads and writes (a power
  /// of two), given where they sit; empty: `value_alignment_bytes` always.
  std::function<uint64_t(const AlignmentQuery&)> alignment;
  uint64_t value_alignment_bytes = 64;

  bool has_capability(std::string_view capability) const;
  uint64_t alignment_for(const AlignmentQuery& query) const {
    return alignment ? alignment(query) : value_alignment_bytes;
  }
};

using OpProviderList = std::shared_ptr<const std::vector<OpProvider>>;

/// Which provider a model's plan chose for an op, and the layouts of the
/// op's operands there: what the engine prepares the op for (and echoes in
/// its PreparedOp). Two choices are equal when their ids and layouts are.
struct ProviderChoice {
  /// The engine-local provider id (OpProvider::id).
  std::string id;
  /// One per operand.
  std::vector<ResolvedTensorLayout> operand_layouts;
  friend bool operator==(const ProviderChoice&, const ProviderChoice&) = default;
  /// "dot_general.packed_panels (operand 1 blocked{...})".
  std::string to_string() const;
};

}  // namespace tenact
