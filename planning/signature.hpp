// Input signatures: what the caller's inputs are, checked against a
// program before any other work (arity, dtypes, ranks, symbol bindings,
// guards and the constraints validation deferred to signature time).
//
// Pure functions; thread-safe. Cost: O(inputs × rank + constraints).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/dim_expr.hpp"
#include "core/error.hpp"
#include "core/program.hpp"
#include "core/tensor.hpp"

namespace tenact {

/// One program input as the caller provides it.
struct InputSignature {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  friend bool operator==(const InputSignature&, const InputSignature&) = default;
};

/// The signature of host tensors.
std::vector<InputSignature> signature_of(std::span<const HostTensor> inputs);

/// Checks `signature` against `program` and returns the value of every
/// symbol. Order of checks: arity; per input dtype and rank; each input
/// dimension against its declared expression (binding symbols at their
/// binding dimension first); then guards and deferred constraints.
/// Errors: InputMismatch naming the input, what was expected and what was
/// given; GuardViolated naming the guard (or the op) and both evaluated
/// sides; DivisionByZero/Overflow from evaluating an expression.
Result<SymbolBindings> bind_signature(const SemanticProgram& program,
                                      std::span<const InputSignature> signature);

/// The concrete shape of a value whose extents are all exact (upper-bound
/// and unknown extents are known only at run time: error).
Result<std::vector<int64_t>> concrete_shape(const Shape& shape, const SymbolBindings& symbols);

}  // namespace tenact
