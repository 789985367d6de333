// Dimension expressions, text in: the recursive-descent parser behind
// DimExpr::parse and the guard parser parse_guard. Both bound the work hostile
// text can cause (length and nesting limits below).

#include <string>
#include <string_view>
#include <utility>

#include "core/checked.hpp"
#include "core/dim_expr.hpp"
#include "core/dim_expr_node.hpp"

namespace tenact {

using dim_expr_detail::quoted;

namespace {

// -- limits ---------------------------------------------------------------------

// Text longer than this is rejected before parsing (LimitExceeded).
constexpr size_t kMaxTextLength = 4096;
// Parentheses, min( and max( nested deeper than this are rejected.
constexpr int kMaxNesting = 64;

// -- parsing -------------------------------------------------------------------------------

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_symbol_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool is_symbol_char(char c) { return is_symbol_start(c) || is_digit(c); }

constexpr const char* kExpectedFactor = "a number, symbol, min(, max( or (";

// Recursive descent over the grammar of docs/program-format.md; folds as it goes
// through the public operators, so parse(text) equals the value built from
// the same operations. Nesting is bounded by kMaxNesting.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<DimExpr> parse_all() {
    TENACT_ASSIGN_OR_RETURN(DimExpr e, parse_expr());
    skip_space();
    if (pos_ != text_.size()) return expected("+, -, *, // or the end of the expression");
    return e;
  }

 private:
  Error error(ErrorCode code, const std::string& what, const std::string& hint = "") const {
    return Error{code, "dimension expression " + quoted(text_) + ": " + what + " at position " +
                           std::to_string(pos_) + hint};
  }
  Error expected(const std::string& what, const std::string& hint = "") const {
    return error(ErrorCode::Parse, "expected " + what, hint);
  }

  // `result` is lhs OP rhs, OP written at `op_pos`: an error when combining
  // their constants overflowed int64 (the operands were checked before).
  Result<DimExpr> checked(DimExpr result, const DimExpr& lhs, std::string_view op,
                          const DimExpr& rhs, size_t op_pos) const {
    if (!result.node()->overflow) return result;
    return Error{ErrorCode::Overflow,
                 "dimension expression " + quoted(text_) +
                     ": constant arithmetic overflows int64 at position " + std::to_string(op_pos) +
                     " (" + quoted(lhs.to_string()) + " " + std::string(op) + " " +
                     quoted(rhs.to_string()) + ")"};
  }

  void skip_space() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  }
  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  Result<DimExpr> parse_expr() {
    TENACT_ASSIGN_OR_RETURN(DimExpr acc, parse_term());
    for (;;) {
      skip_space();
      const size_t op_pos = pos_;
      if (at('+')) {
        ++pos_;
        TENACT_ASSIGN_OR_RETURN(DimExpr rhs, parse_term());
        TENACT_ASSIGN_OR_RETURN(acc, checked(acc + rhs, acc, "+", rhs, op_pos));
      } else if (at('-')) {
        ++pos_;
        TENACT_ASSIGN_OR_RETURN(DimExpr rhs, parse_term());
        TENACT_ASSIGN_OR_RETURN(acc, checked(acc - rhs, acc, "-", rhs, op_pos));
      } else {
        return acc;
      }
    }
  }

  Result<DimExpr> parse_term() {
    TENACT_ASSIGN_OR_RETURN(DimExpr acc, parse_factor());
    for (;;) {
      skip_space();
      const size_t op_pos = pos_;
      if (at('*')) {
        ++pos_;
        TENACT_ASSIGN_OR_RETURN(DimExpr rhs, parse_factor());
        TENACT_ASSIGN_OR_RETURN(acc, checked(acc * rhs, acc, "*", rhs, op_pos));
      } else if (at('/')) {
        ++pos_;
        if (!at('/')) return expected("'//' (floor division)");
        ++pos_;
        TENACT_ASSIGN_OR_RETURN(DimExpr rhs, parse_factor());
        // A divisor that folds to the constant 0 fails for every value of
        // the symbols: reject it when the text is read, not at evaluation.
        if (rhs.constant_value() == 0)
          return error(ErrorCode::DivisionByZero, "floor division by '" + rhs.to_string() + "', which is always 0");
        TENACT_ASSIGN_OR_RETURN(acc,
                                checked(DimExpr::floor_div(acc, rhs), acc, "//", rhs, op_pos));
      } else {
        return acc;
      }
    }
  }

  Status enter_nesting() {
    if (++depth_ > kMaxNesting) {
      return error(ErrorCode::LimitExceeded, "parentheses, min( and max( nest deeper than " +
                                                 std::to_string(kMaxNesting) + " levels");
    }
    return ok_status();
  }

  Status expect_char(char c, const char* what) {
    skip_space();
    if (!at(c)) return expected(what);
    ++pos_;
    return ok_status();
  }

  Result<DimExpr> parse_factor() {
    skip_space();
    if (pos_ == text_.size()) return expected(kExpectedFactor);
    const char c = text_[pos_];
    if (is_digit(c)) return parse_integer();
    if (is_symbol_start(c)) {
      const size_t start = pos_;
      while (pos_ < text_.size() && is_symbol_char(text_[pos_])) ++pos_;
      std::string_view name = text_.substr(start, pos_ - start);
      if (name != "min" && name != "max") return DimExpr::symbol(std::string(name));
      skip_space();
      if (!at('(')) {
        return expected("( after '" + std::string(name) +
                        "' (min and max are functions, not symbols)");
      }
      ++pos_;
      TENACT_TRY(enter_nesting());
      TENACT_ASSIGN_OR_RETURN(DimExpr a, parse_expr());
      TENACT_TRY(expect_char(',', "+, -, *, // or ,"));
      TENACT_ASSIGN_OR_RETURN(DimExpr b, parse_expr());
      TENACT_TRY(expect_char(')', "+, -, *, // or )"));
      --depth_;
      return name == "min" ? DimExpr::min(a, b) : DimExpr::max(a, b);
    }
    if (c == '(') {
      ++pos_;
      TENACT_TRY(enter_nesting());
      TENACT_ASSIGN_OR_RETURN(DimExpr e, parse_expr());
      TENACT_TRY(expect_char(')', "+, -, *, // or )"));
      --depth_;
      return e;
    }
    if (c == '-') {
      return expected(kExpectedFactor, " (there is no unary minus; write 0 - x)");
    }
    return expected(kExpectedFactor);
  }

  Result<DimExpr> parse_integer() {
    const size_t start = pos_;
    int64_t value = 0;
    bool overflow = false;
    while (pos_ < text_.size() && is_digit(text_[pos_])) {
      if (!overflow) {
        auto v = checked_mul(value, 10);
        if (v) v = checked_add(*v, text_[pos_] - '0');
        if (v) {
          value = *v;
        } else {
          overflow = true;
        }
      }
      ++pos_;
    }
    if (overflow) {
      return Error{ErrorCode::Overflow,
                   "dimension expression " + quoted(text_) + ": integer literal " +
                       quoted(text_.substr(start, pos_ - start)) + " at position " +
                       std::to_string(start) + " does not fit in int64"};
    }
    return DimExpr::constant(value);
  }

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
};

bool is_relation_char(char c) { return c == '<' || c == '>' || c == '=' || c == '!'; }

}  // namespace

Result<DimExpr> DimExpr::parse(std::string_view text) {
  if (text.size() > kMaxTextLength) {
    return Error{ErrorCode::LimitExceeded,
                 "dimension expression " + quoted(text) + " is " + std::to_string(text.size()) +
                     " characters long; the limit is " + std::to_string(kMaxTextLength)};
  }
  return Parser(text).parse_all();
}

Result<GuardExpr> parse_guard(std::string_view text) {
  auto fail = [&](ErrorCode code, const std::string& what) {
    return Error{code, "guard " + quoted(text) + ": " + what};
  };
  if (text.size() > 2 * kMaxTextLength) {
    return fail(ErrorCode::LimitExceeded, "it is " + std::to_string(text.size()) +
                                              " characters long; the limit is " +
                                              std::to_string(2 * kMaxTextLength));
  }
  // Every maximal run of < > = ! must be exactly one of ==, <=, >=, and there
  // must be exactly one such run.
  size_t relation_at = std::string_view::npos;
  Relation relation = Relation::Eq;
  for (size_t i = 0; i < text.size();) {
    if (!is_relation_char(text[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && is_relation_char(text[end])) ++end;
    const std::string_view run = text.substr(i, end - i);
    Relation r;
    if (run == "==") {
      r = Relation::Eq;
    } else if (run == "<=") {
      r = Relation::Le;
    } else if (run == ">=") {
      r = Relation::Ge;
    } else {
      return fail(ErrorCode::Parse, quoted(run) + " at position " + std::to_string(i) +
                                        " is not a relation; expected ==, <= or >=");
    }
    if (relation_at != std::string_view::npos) {
      return fail(ErrorCode::Parse, "a second relation " + quoted(run) + " at position " +
                                        std::to_string(i) + "; a guard has exactly one");
    }
    relation_at = i;
    relation = r;
    i = end;
  }
  if (relation_at == std::string_view::npos) {
    return fail(ErrorCode::Parse, "expected a relation: ==, <= or >=");
  }
  const std::string context = "guard " + quoted(text);
  auto lhs = DimExpr::parse(text.substr(0, relation_at));
  if (!lhs.ok()) return lhs.error().with_context(context);
  auto rhs = DimExpr::parse(text.substr(relation_at + 2));
  if (!rhs.ok()) return rhs.error().with_context(context);
  return GuardExpr{std::move(*lhs), relation, std::move(*rhs)};
}

}  // namespace tenact
