// Retained-bytes accounting: how many bytes a cached planning value keeps
// alive, for the prepare cache's byte budget.
// Logical sizes — the object itself plus what it owns on the heap (vector
// elements, string characters, constant data, dimension-expression nodes
// at an estimated size) — not allocator-exact figures, but deterministic
// and monotone: a value that holds more never counts less.
//
// Every sum and product is checked: overflow is an Overflow error, never a
// wrap. Pure functions; thread-safe. Cost: O(size of the value).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>

#include "core/dim_expr.hpp"
#include "core/error.hpp"
#include "core/op_attrs.hpp"
#include "core/program.hpp"
#include "core/shape.hpp"
#include "engines/engine.hpp"
#include "planning/exec_program.hpp"
#include "planning/input_signature.hpp"
#include "planning/specialization_projection.hpp"

namespace tenact {

/// Estimated heap bytes of one non-constant dimension-expression node.
inline constexpr uint64_t kDimExprNodeBytes = 64;

/// A checked running total. Once a step overflows (or adds an error) the
/// total is that error; later steps are ignored.
class ByteCount {
 public:
  ByteCount& add(uint64_t bytes);
  ByteCount& add(const Result<uint64_t>& bytes);
  /// count × element_size.
  ByteCount& add_array(uint64_t count, uint64_t element_size);
  Result<uint64_t> total() const;

 private:
  uint64_t sum_ = 0;
  std::optional<Error> error_;
};

/// Sum of `values`; Overflow when it does not fit 64 bits.
Result<uint64_t> checked_sum(std::span<const uint64_t> values);
Result<uint64_t> checked_sum(std::initializer_list<uint64_t> values);
/// count × element_size; Overflow when it does not fit 64 bits.
Result<uint64_t> array_bytes(uint64_t count, uint64_t element_size);

/// Heap bytes owned by a value of each kind (the value's own sizeof is
/// counted by whoever holds it, e.g. as a vector element).
Result<uint64_t> dim_expr_retained_bytes(const DimExpr& expr);
Result<uint64_t> dim_exprs_retained_bytes(std::span<const DimExpr> exprs);
Result<uint64_t> shape_retained_bytes(const Shape& shape);
Result<uint64_t> op_attrs_retained_bytes(const OpAttrs& attrs);
Result<uint64_t> input_requirement_retained_bytes(const InputRequirement& requirement);
Result<uint64_t> input_projection_retained_bytes(const InputProjection& projection);

/// Whole values: sizeof plus owned bytes.
Result<uint64_t> semantic_program_retained_bytes(const SemanticProgram& program);
Result<uint64_t> exec_program_retained_bytes(const ExecProgram& program);
Result<uint64_t> requirements_retained_bytes(const SpecializationRequirements& requirements);
Result<uint64_t> projection_retained_bytes(const SpecializationProjection& projection);
/// A signature held while its preparation is in flight.
Result<uint64_t> input_descriptors_retained_bytes(std::span<const InputDescriptor> inputs);

}  // namespace tenact
