// Dimension expressions: integers, symbols, + - * // (floor division), min,
// max; kept in a canonical form so that structurally equal values compare
// equal (B*1 is B, 2+3 is 5, B+B is 2*B, B*2 is 2*B).
//
// Contract:
// - Immutable values with shared, reference-counted nodes: copying is O(1)
//   and safe to share across threads.
// - Canonical form: a sum of terms coef * (product of atoms) + constant,
//   terms ordered by a total order on atoms; an atom is a symbol or a
//   floor division / min / max node whose operands are themselves canonical.
//   Constant subexpressions fold (2*3 is 6, min(2, 5) is 2, 7//2 is 3).
//   Folding never divides by a constant zero at construction: `B // 0` stays
//   a node and is an error when evaluated.
// - Constant arithmetic is decided when the expression is built. Folding
//   combines constants: the constant terms and the coefficients of like terms
//   of a sum, the coefficients of a product by a constant, the coefficient of
//   a product of two single terms (9223372036854775807*B times 2*C), a
//   constant // a constant. Where such a combination does not fit int64
//   ("9223372036854775807 + 1", "4611686018427387904*2",
//   "B*9223372036854775807*2", "min(9223372036854775807 + 1, 3)") the
//   expression's constant arithmetic overflows: parse() rejects it, and an
//   expression built through the operators keeps a mark that
//   check_constants() reports and that no later operation removes.
// - What overflows only for some values of the symbols is left to
//   evaluate(): a sum or product whose value leaves int64
//   ("9223372036854775807 + B", "B*B"), and a product of factors of several
//   terms whose expansion would ("(B - 2)*(9223372036854775807*B)" is
//   -9223372036854775807 at B = 1), which stays unfolded.
// - Symbols denote non-negative integers (they are dimensions); decide()
//   uses that.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace tenact {

/// Concrete values of the symbols, by name.
using SymbolBindings = std::map<std::string, int64_t, std::less<>>;

class DimExpr {
 public:
  struct Node;  // opaque; defined in dim_expr.cpp

  /// The constant 0.
  DimExpr();
  static DimExpr constant(int64_t value);
  static DimExpr symbol(std::string name);

  /// Parses the grammar of docs/program-format.md ("B*2 + 1", "min(T, 64)",
  /// "(N + 7) // 8"). Integers, and the constant arithmetic of the
  /// expression (see above), may not overflow int64 (Overflow). Errors name
  /// the offending position.
  static Result<DimExpr> parse(std::string_view text);

  friend DimExpr operator+(const DimExpr& a, const DimExpr& b);
  friend DimExpr operator-(const DimExpr& a, const DimExpr& b);
  friend DimExpr operator*(const DimExpr& a, const DimExpr& b);
  static DimExpr floor_div(const DimExpr& a, const DimExpr& b);
  static DimExpr min(const DimExpr& a, const DimExpr& b);
  static DimExpr max(const DimExpr& a, const DimExpr& b);

  bool is_constant() const;
  /// The value when is_constant(), nullopt otherwise.
  std::optional<int64_t> constant_value() const;
  /// The name when the expression is exactly one symbol.
  std::optional<std::string> as_symbol() const;
  /// Every symbol the expression mentions, sorted, without duplicates.
  std::vector<std::string> symbols() const;

  /// Ok, or an Overflow error when the expression's constant arithmetic did
  /// not fit int64 while it was built (see above); the message names the
  /// expression and the part that overflowed. parse() never returns such an
  /// expression; the operators may.
  Status check_constants() const;

  /// Evaluates against concrete symbol values. Errors: UnboundSymbol (names
  /// the symbol), DivisionByZero (names the divisor expression), Overflow.
  Result<int64_t> evaluate(const SymbolBindings& bindings) const;

  /// Replaces symbols that `bindings` holds by their values and re-canonicalizes.
  DimExpr substitute(const SymbolBindings& bindings) const;

  /// Canonical text in the grammar of docs/program-format.md; parse(to_string())
  /// yields an equal expression when check_constants() is ok.
  std::string to_string() const;

  /// Structural equality of canonical forms (hence semantic for polynomials).
  friend bool operator==(const DimExpr& a, const DimExpr& b);
  friend bool operator!=(const DimExpr& a, const DimExpr& b) { return !(a == b); }
  /// A total order on canonical forms (for sorting and map keys).
  friend bool operator<(const DimExpr& a, const DimExpr& b);
  /// Hash consistent with ==.
  uint64_t hash() const;

  const std::shared_ptr<const Node>& node() const { return node_; }

 private:
  explicit DimExpr(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  std::shared_ptr<const Node> node_;
  friend struct DimExprAccess;
};

enum class Relation : uint8_t { Eq, Le, Ge };
std::string_view to_string(Relation r) noexcept;

enum class Decision : uint8_t { Holds, Fails, Depends };

/// Decides `lhs REL rhs` for every non-negative value of the symbols:
/// Holds if true for all, Fails if false for all, Depends otherwise (or when
/// the procedure cannot tell: it is sound, not complete — it answers Holds
/// or Fails only when certain).
Decision decide(const DimExpr& lhs, Relation rel, const DimExpr& rhs);

/// Parses a guard "EXPR REL EXPR" (REL one of == <= >=).
struct GuardExpr {
  DimExpr lhs;
  Relation rel = Relation::Eq;
  DimExpr rhs;
};
Result<GuardExpr> parse_guard(std::string_view text);

}  // namespace tenact
