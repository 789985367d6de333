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
// - Constant folding that overflows int64 leaves the expression unfolded
//   (evaluation then reports the overflow).
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

  /// Parses the grammar of program-format.md ("B*2 + 1", "min(T, 64)",
  /// "(N + 7) // 8"). Integers may not overflow int64. Errors name the
  /// offending position.
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

  /// Evaluates against concrete symbol values. Errors: UnboundSymbol (names
  /// the symbol), DivisionByZero (names the divisor expression), Overflow.
  Result<int64_t> evaluate(const SymbolBindings& bindings) const;

  /// Replaces symbols that `bindings` holds by their values and re-canonicalizes.
  DimExpr substitute(const SymbolBindings& bindings) const;

  /// Canonical text in the grammar of program-format.md; parse(to_string())
  /// yields an equal expression.
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
