// Dimension expressions, semantics: evaluation, substitution, symbol
// queries and the sign-based decision procedure behind decide(). Canonical
// form and operators are in dim_expr_algebra.cpp, text in
// dim_expr_parse.cpp and dim_expr_print.cpp; the representation is described
// in dim_expr_node.hpp, the contract in dim_expr.hpp.

#include "core/dim_expr.hpp"

#include <algorithm>
#include <utility>

#include "core/checked.hpp"
#include "core/dim_expr_node.hpp"

namespace tenact {

using dim_expr_detail::Int128;
using dim_expr_detail::Kind;
using dim_expr_detail::Node;
using dim_expr_detail::NodePtr;
using dim_expr_detail::Operands;
using dim_expr_detail::Poly;
using dim_expr_detail::Term;
using dim_expr_detail::fits_int64;
using dim_expr_detail::floor_divide;
using dim_expr_detail::name_of;
using dim_expr_detail::operands_of;
using dim_expr_detail::quoted;
using dim_expr_detail::render;
using dim_expr_detail::terms_of;
using dim_expr_detail::to_poly;

namespace {

// -- evaluation ------------------------------------------------------------------------

// Where and why evaluation failed; the message is built once, at the top.
struct EvalFailure {
  ErrorCode code = ErrorCode::Internal;
  const Node* at = nullptr;
};

// Allocation-free. Sums accumulate in 128 bits so that only a result (or an
// atom's operand) outside int64 is an overflow, not an intermediate term.
bool eval(const Node& n, const SymbolBindings& bindings, int64_t& out, EvalFailure& fail) {
  switch (n.kind) {
    case Kind::Constant:
      out = n.value;
      return true;
    case Kind::Symbol: {
      auto it = bindings.find(std::string_view(name_of(n)));
      if (it == bindings.end()) {
        fail = {ErrorCode::UnboundSymbol, &n};
        return false;
      }
      out = it->second;
      return true;
    }
    case Kind::Sum: {
      Int128 acc = n.value;
      bool overflow = false;
      for (const Term& t : terms_of(n)) {
        Int128 product = t.coef;
        bool product_overflow = false;
        bool zero = false;
        for (const NodePtr& atom : t.atoms) {
          int64_t v = 0;
          if (!eval(*atom, bindings, v, fail)) return false;
          if (v == 0) zero = true;
          if (!product_overflow && __builtin_mul_overflow(product, Int128{v}, &product)) {
            product_overflow = true;
          }
        }
        if (zero) continue;
        if (product_overflow || __builtin_add_overflow(acc, product, &acc)) overflow = true;
      }
      if (overflow || !fits_int64(acc)) {
        fail = {ErrorCode::Overflow, &n};
        return false;
      }
      out = static_cast<int64_t>(acc);
      return true;
    }
    default:
      break;
  }
  const Operands& ops = operands_of(n);
  int64_t a = 0, b = 0;
  if (!eval(*ops.lhs, bindings, a, fail)) return false;
  if (!eval(*ops.rhs, bindings, b, fail)) return false;
  std::optional<int64_t> r;
  switch (n.kind) {
    case Kind::FloorDiv:
      if (b == 0) {
        fail = {ErrorCode::DivisionByZero, &n};
        return false;
      }
      r = floor_divide(a, b);
      break;
    case Kind::Min:
      r = std::min(a, b);
      break;
    case Kind::Max:
      r = std::max(a, b);
      break;
    case Kind::Add:
      r = checked_add(a, b);
      break;
    case Kind::Sub:
      r = checked_sub(a, b);
      break;
    case Kind::Mul:
      r = checked_mul(a, b);
      break;
    default:
      break;
  }
  if (!r) {
    fail = {ErrorCode::Overflow, &n};
    return false;
  }
  out = *r;
  return true;
}

// -- traversal ---------------------------------------------------------------------------

template <class Visit>
void for_each_symbol(const Node& n, const Visit& visit) {
  switch (n.kind) {
    case Kind::Constant:
      return;
    case Kind::Symbol:
      visit(name_of(n));
      return;
    case Kind::Sum:
      for (const Term& t : terms_of(n)) {
        for (const NodePtr& a : t.atoms) for_each_symbol(*a, visit);
      }
      return;
    default:
      for_each_symbol(*operands_of(n).lhs, visit);
      for_each_symbol(*operands_of(n).rhs, visit);
      return;
  }
}

bool mentions_any(const Node& n, const SymbolBindings& bindings) {
  bool found = false;
  for_each_symbol(n, [&](const std::string& name) {
    if (!found && bindings.find(std::string_view(name)) != bindings.end()) found = true;
  });
  return found;
}

// -- sign analysis for decide() ------------------------------------------------------------

bool known_non_negative(const Node& n);

// True when every term has a non-negative coefficient and only atoms known to
// be non-negative, and the constant is at least `min_constant`.
bool polynomial_at_least(const Node& n, int64_t min_constant) {
  if (n.value < min_constant) return false;
  for (const Term& t : terms_of(n)) {
    if (t.coef < 0) return false;
    for (const NodePtr& a : t.atoms) {
      if (!known_non_negative(*a)) return false;
    }
  }
  return true;
}

// True when the value is >= 1 for every non-negative value of the symbols.
bool known_positive(const Node& n) {
  switch (n.kind) {
    case Kind::Constant:
      return n.value >= 1;
    case Kind::Sum:
      return polynomial_at_least(n, 1);
    default:
      return false;
  }
}

// True when the value is >= 0 (and defined) for every non-negative value of
// the symbols. Sound, not complete.
bool known_non_negative(const Node& n) {
  switch (n.kind) {
    case Kind::Constant:
      return n.value >= 0;
    case Kind::Symbol:
      return true;
    case Kind::Sum:
      return polynomial_at_least(n, 0);
    case Kind::FloorDiv:
      return known_non_negative(*operands_of(n).lhs) && known_positive(*operands_of(n).rhs);
    case Kind::Min:
    case Kind::Add:
    case Kind::Mul:
      return known_non_negative(*operands_of(n).lhs) && known_non_negative(*operands_of(n).rhs);
    case Kind::Max:
      return known_non_negative(*operands_of(n).lhs) || known_non_negative(*operands_of(n).rhs);
    case Kind::Sub:
      return false;
  }
  return false;
}

}  // namespace

// -- DimExpr --------------------------------------------------------------------------------

bool DimExpr::is_constant() const { return node_->kind == Kind::Constant; }

std::optional<int64_t> DimExpr::constant_value() const {
  if (node_->kind != Kind::Constant) return std::nullopt;
  return node_->value;
}

std::optional<std::string> DimExpr::as_symbol() const {
  if (node_->kind != Kind::Symbol) return std::nullopt;
  return name_of(*node_);
}

std::vector<std::string> DimExpr::symbols() const {
  std::vector<std::string> names;
  for_each_symbol(*node_, [&](const std::string& name) { names.push_back(name); });
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

Status DimExpr::check_constants() const {
  if (!node_->overflow) return ok_status();
  // Descend to the node where constant arithmetic overflowed: marked, with
  // no marked operand.
  const Node* at = node_.get();
  for (bool descended = true; descended;) {
    descended = false;
    auto visit = [&](const NodePtr& child) {
      if (!descended && child->overflow) {
        at = child.get();
        descended = true;
      }
    };
    if (at->kind == Kind::Sum) {
      for (const Term& t : terms_of(*at)) for (const NodePtr& a : t.atoms) visit(a);
    } else if (at->kind != Kind::Constant && at->kind != Kind::Symbol) {
      visit(operands_of(*at).lhs);
      visit(operands_of(*at).rhs);
    }
  }
  std::string message =
      "dimension expression " + quoted(render(*node_)) + ": constant arithmetic overflows int64";
  if (at != node_.get()) message += " in " + quoted(render(*at));
  return Error{ErrorCode::Overflow, std::move(message)};
}

Result<int64_t> DimExpr::evaluate(const SymbolBindings& bindings) const {
  int64_t value = 0;
  EvalFailure fail;
  if (eval(*node_, bindings, value, fail)) return value;

  const std::string whole = quoted(render(*node_));
  switch (fail.code) {
    case ErrorCode::UnboundSymbol:
      return Error{fail.code, "symbol '" + name_of(*fail.at) +
                                  "' has no value (in dimension expression " + whole + ")"};
    case ErrorCode::DivisionByZero:
      return Error{fail.code, "dimension expression " + whole + " divides by zero: divisor " +
                                  quoted(render(*operands_of(*fail.at).rhs)) + " is 0"};
    default: {
      std::string message = "dimension expression " + whole + " overflows int64";
      if (fail.at != node_.get()) message += " in " + quoted(render(*fail.at));
      std::string values;
      for (const std::string& name : symbols()) {
        auto it = bindings.find(std::string_view(name));
        if (it == bindings.end()) continue;
        if (!values.empty()) values += ", ";
        values += name + "=" + std::to_string(it->second);
      }
      if (!values.empty()) message += " with " + values;
      return Error{ErrorCode::Overflow, std::move(message)};
    }
  }
}

DimExpr DimExpr::substitute(const SymbolBindings& bindings) const {
  if (bindings.empty() || !mentions_any(*node_, bindings)) return *this;
  const Node& n = *node_;
  switch (n.kind) {
    case Kind::Constant:
      return *this;
    case Kind::Symbol:
      return constant(bindings.find(std::string_view(name_of(n)))->second);
    case Kind::Sum: {
      DimExpr sum = constant(n.value);
      for (const Term& t : terms_of(n)) {
        DimExpr product = constant(t.coef);
        for (const NodePtr& atom : t.atoms) product = product * DimExpr(atom).substitute(bindings);
        sum = sum + product;
      }
      return sum;
    }
    default:
      break;
  }
  const DimExpr a = DimExpr(operands_of(n).lhs).substitute(bindings);
  const DimExpr b = DimExpr(operands_of(n).rhs).substitute(bindings);
  switch (n.kind) {
    case Kind::FloorDiv:
      return floor_div(a, b);
    case Kind::Min:
      return min(a, b);
    case Kind::Max:
      return max(a, b);
    case Kind::Add:
      return a + b;
    case Kind::Sub:
      return a - b;
    default:
      return a * b;
  }
}

// -- relations and guards -----------------------------------------------------------------

std::string_view to_string(Relation r) noexcept {
  switch (r) {
    case Relation::Eq:
      return "==";
    case Relation::Le:
      return "<=";
    case Relation::Ge:
      return ">=";
  }
  return "?";
}

Decision decide(const DimExpr& lhs, Relation rel, const DimExpr& rhs) {
  const DimExpr d = lhs - rhs;
  if (auto c = d.constant_value()) {
    bool holds = rel == Relation::Eq ? *c == 0 : rel == Relation::Le ? *c <= 0 : *c >= 0;
    return holds ? Decision::Holds : Decision::Fails;
  }
  // d = constant + sum of coef * monomial. With every atom known to be >= 0,
  // each monomial is >= 0, so the coefficient signs bound d by its constant.
  const Poly p = to_poly(d.node());
  bool all_non_negative = true;
  bool all_non_positive = true;
  for (const Term& t : p.terms) {
    for (const NodePtr& atom : t.atoms) {
      if (!known_non_negative(*atom)) return Decision::Depends;
    }
    if (t.coef > 0) all_non_positive = false;
    if (t.coef < 0) all_non_negative = false;
  }
  const int64_t c = p.constant;
  const bool always_positive = all_non_negative && c > 0;  // d >= c > 0
  const bool always_negative = all_non_positive && c < 0;  // d <= c < 0
  switch (rel) {
    case Relation::Eq:
      // A non-constant polynomial is not zero for every value of the symbols.
      return always_positive || always_negative ? Decision::Fails : Decision::Depends;
    case Relation::Le:
      if (all_non_positive && c <= 0) return Decision::Holds;
      return always_positive ? Decision::Fails : Decision::Depends;
    case Relation::Ge:
      if (all_non_negative && c >= 0) return Decision::Holds;
      return always_negative ? Decision::Fails : Decision::Depends;
  }
  return Decision::Depends;
}

}  // namespace tenact
