#include "planning/signature.hpp"

namespace tenact {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) { return to_string(shape); }

std::string given(const InputSignature& s) {
  return std::string{to_string(s.dtype)} + shape_text(s.shape);
}

std::string relation_symbol(Relation rel) { return std::string{to_string(rel)}; }

bool holds(int64_t lhs, Relation rel, int64_t rhs) {
  switch (rel) {
    case Relation::Eq: return lhs == rhs;
    case Relation::Le: return lhs <= rhs;
    case Relation::Ge: return lhs >= rhs;
  }
  return false;
}

}  // namespace

std::vector<InputSignature> signature_of(std::span<const HostTensor> inputs) {
  std::vector<InputSignature> out;
  out.reserve(inputs.size());
  for (const auto& t : inputs) out.push_back(InputSignature{t.dtype(), t.shape()});
  return out;
}

Result<SymbolBindings> bind_signature(const SemanticProgram& program,
                                      std::span<const InputSignature> signature) {
  const auto& inputs = program.inputs();
  if (signature.size() != inputs.size())
    return Error{ErrorCode::InputMismatch, "program expects " + std::to_string(inputs.size()) +
                                               " inputs, got " + std::to_string(signature.size())};
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueInfo& v = program.value(inputs[i]);
    const InputSignature& s = signature[i];
    if (s.dtype != v.type.dtype || s.shape.size() != v.type.rank())
      return Error{ErrorCode::InputMismatch, "input '" + v.name + "' expects " +
                                                 v.type.to_string() + ", got " + given(s)};
    for (int64_t d : s.shape)
      if (d < 0)
        return Error{ErrorCode::InputMismatch, "input '" + v.name + "' has a negative dimension: " + given(s)};
  }
  SymbolBindings symbols;
  for (const SymbolSource& src : program.symbols())
    symbols.emplace(src.symbol, signature[src.input].shape[src.axis]);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueInfo& v = program.value(inputs[i]);
    for (size_t ax = 0; ax < v.type.rank(); ++ax) {
      auto expected = v.type.shape[ax].expr.evaluate(symbols);
      if (!expected.ok()) return expected.error().with_context("input '" + v.name + "' axis " + std::to_string(ax));
      const int64_t actual = signature[i].shape[ax];
      if (*expected != actual) {
        // "expected 8" for a constant extent; "expected N = 3 (N bound by
        // input 'y' axis 0)" or "expected 2*N = 6" for a symbolic one.
        const DimExpr& declared = v.type.shape[ax].expr;
        std::string want = std::to_string(*expected);
        if (!declared.constant_value()) {
          want = declared.to_string() + " = " + want;
          if (auto sym = declared.as_symbol())
            for (const SymbolSource& src : program.symbols())
              if (src.symbol == *sym)
                want += " (" + *sym + " bound by input '" + program.value(inputs[src.input]).name +
                        "' axis " + std::to_string(src.axis) + ")";
        }
        return Error{ErrorCode::InputMismatch,
                     "input '" + v.name + "' axis " + std::to_string(ax) + " is " + std::to_string(actual) +
                         ", expected " + want + ": the program declares " + v.type.to_string() +
                         ", got " + given(signature[i])};
      }
    }
  }
  for (const Constraint& c : program.constraints()) {
    auto lhs = c.lhs.evaluate(symbols);
    if (!lhs.ok()) return lhs.error().with_context(c.origin);
    auto rhs = c.rhs.evaluate(symbols);
    if (!rhs.ok()) return rhs.error().with_context(c.origin);
    if (!holds(*lhs, c.rel, *rhs))
      return Error{ErrorCode::GuardViolated,
                   c.origin + " does not hold: " + c.lhs.to_string() + " " + relation_symbol(c.rel) + " " +
                       c.rhs.to_string() + " evaluates to " + std::to_string(*lhs) + " " +
                       relation_symbol(c.rel) + " " + std::to_string(*rhs) +
                       (c.what == "the guard holds" ? "" : " (" + c.what + ")")};
  }
  return symbols;
}

Result<std::vector<int64_t>> concrete_shape(const Shape& shape, const SymbolBindings& symbols) {
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (size_t ax = 0; ax < shape.size(); ++ax) {
    if (!shape[ax].is_exact())
      return Error{ErrorCode::Unsupported, "axis " + std::to_string(ax) + " (" + shape[ax].to_string() +
                                               ") is known only at run time"};
    TENACT_ASSIGN_OR_RETURN(int64_t v, shape[ax].expr.evaluate(symbols));
    if (v < 0)
      return Error{ErrorCode::ShapeMismatch, "axis " + std::to_string(ax) + " (" +
                                                 shape[ax].expr.to_string() + ") evaluates to " +
                                                 std::to_string(v)};
    out.push_back(v);
  }
  return out;
}

}  // namespace tenact
