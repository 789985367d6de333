// Internal to the dimension-expression implementation: the node
// representation and the helpers that core/dim_expr*.cpp share. Include only
// from core/dim_expr*.cpp; the public contract is in dim_expr.hpp.
//
// Representation (private to core/dim_expr*.cpp):
// - Every DimExpr points to an immutable Node of one Kind: Constant (value),
//   Symbol (name), Sum (a polynomial), or one of the atom kinds FloorDiv,
//   Min, Max, Add, Sub, Mul with two canonical operands.
// - A Sum is constant + sum of coef * monomial; a monomial is a non-empty list
//   of atoms sorted by node order (an atom repeats for a power). Terms are
//   sorted by monomial order (higher degree first, then atom by atom),
//   coefficients are non-zero and monomials distinct.
// - Normal form: a polynomial without terms is a Constant node, and 0 + 1*x
//   for an atom x is the node x itself. Structural equality of nodes is
//   therefore equality of canonical forms.
// - Add, Sub and Mul nodes exist only where folding into a polynomial would
//   overflow int64 or exceed the size limits (dim_expr_algebra.cpp), or where
//   an operand's constant arithmetic overflowed: the expression is then "left
//   unfolded" as an atom, and evaluation reports any overflow.
// - Node::overflow marks constant arithmetic that does not fit int64: a node
//   made because combining constants overflowed (a constant term or a
//   coefficient of a sum, a coefficient scaled by a constant factor or
//   multiplied by another single term's, a constant // a constant), and
//   every node above one. Folding never takes a
//   marked operand apart, so the mark survives every later operation
//   ((9223372036854775807 + 1)*0 stays marked); see DimExpr::check_constants.
// - Min, Max, Add and Mul keep their operands in ascending node order, so
//   that commuted operands give equal nodes.
// - Each node stores its structural hash, computed once at construction.
//
// Polynomial arithmetic is exact over the integers: B - B is 0 and (B // 0) * 0
// is 0 even though evaluating the unfolded text would fail; canonical
// expressions describe integer-valued functions, and evaluation reports an
// error only for what the canonical form still contains.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/dim_expr.hpp"

namespace tenact {
namespace dim_expr_detail {

// The declaration order is the node order used for canonical forms: symbols
// first, constants last (so "min(T, 64)" prints its symbol first).
enum class Kind : uint8_t { Symbol, FloorDiv, Min, Max, Mul, Add, Sub, Sum, Constant };

using NodePtr = std::shared_ptr<const DimExpr::Node>;

struct Term {
  int64_t coef = 0;
  std::vector<NodePtr> atoms;  // non-empty, sorted by node order
};

struct Operands {
  NodePtr lhs;
  NodePtr rhs;
};

}  // namespace dim_expr_detail

struct DimExpr::Node {
  using Kind = dim_expr_detail::Kind;
  using Operands = dim_expr_detail::Operands;
  using Term = dim_expr_detail::Term;

  Kind kind = Kind::Constant;
  uint64_t hash = 0;
  int64_t value = 0;  // Constant: the value; Sum: the constant term
  // Nodes of the expression written out as a tree (shared atoms counted at
  // each use), saturating: bounds the printed size. See kMaxFoldedWeight.
  uint64_t weight = 1;
  // Constant arithmetic overflowed here or below (see the representation notes).
  bool overflow = false;
  // Symbol: std::string; FloorDiv..Sub: Operands; Sum: the terms.
  std::variant<std::monostate, std::string, Operands, std::vector<Term>> payload;
};

// Friend of DimExpr: wraps nodes built here into values.
struct DimExprAccess {
  static DimExpr wrap(dim_expr_detail::NodePtr node) { return DimExpr(std::move(node)); }
};

namespace dim_expr_detail {

using Node = DimExpr::Node;
__extension__ typedef __int128 Int128;

// -- node access ------------------------------------------------------------------

// Each accessor requires the node to be of a kind that holds that payload
// (see Node::payload).
inline const std::string& name_of(const Node& n) { return *std::get_if<std::string>(&n.payload); }
inline const Operands& operands_of(const Node& n) { return *std::get_if<Operands>(&n.payload); }
inline const std::vector<Term>& terms_of(const Node& n) {
  return *std::get_if<std::vector<Term>>(&n.payload);
}

// -- polynomials ------------------------------------------------------------------

// A Sum's content: constant + terms, terms in canonical order (see above).
struct Poly {
  int64_t constant = 0;
  std::vector<Term> terms;
};

inline bool fits_int64(Int128 v) {
  return v >= std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max();
}

// The polynomial a node denotes; an atom x is 0 + 1*x.
inline Poly to_poly(const NodePtr& n) {
  switch (n->kind) {
    case Kind::Constant:
      return Poly{n->value, {}};
    case Kind::Sum:
      return Poly{n->value, terms_of(*n)};
    default:
      return Poly{0, {Term{1, {n}}}};
  }
}

// Python's //: rounds toward negative infinity. nullopt for a zero divisor or
// INT64_MIN // -1.
inline std::optional<int64_t> floor_divide(int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  if (a == std::numeric_limits<int64_t>::min() && b == -1) return std::nullopt;
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

// -- text (dim_expr_print.cpp) ----------------------------------------------------

// The canonical text of a node (what DimExpr::to_string() returns).
std::string render(const Node& n);

// 'text' for messages: at most 80 characters, non-printable bytes escaped.
std::string quoted(std::string_view text);

}  // namespace dim_expr_detail
}  // namespace tenact
