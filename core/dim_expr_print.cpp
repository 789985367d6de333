// Dimension expressions, text: the canonical rendering (DimExpr::to_string)
// and the quoting used in error messages. Rendered text is in the grammar of
// docs/program-format.md and parses back to an equal expression.

#include <limits>
#include <string>
#include <string_view>

#include "core/dim_expr.hpp"
#include "core/dim_expr_node.hpp"

namespace tenact {
namespace dim_expr_detail {
namespace {

// How loosely a printed form binds: Sum has a top-level + or -, Product a
// top-level * or //, Atom neither (number, symbol, call, parentheses).
enum class Level : uint8_t { Sum, Product, Atom };

Level level_of(const Node& n) {
  switch (n.kind) {
    case Kind::Constant:
      return n.value >= 0 ? Level::Atom : Level::Sum;
    case Kind::Symbol:
    case Kind::Min:
    case Kind::Max:
      return Level::Atom;
    case Kind::FloorDiv:
    case Kind::Mul:
      return Level::Product;
    case Kind::Add:
    case Kind::Sub:
      return Level::Sum;
    case Kind::Sum: {
      const auto& terms = terms_of(n);
      if (n.value != 0 || terms.size() > 1 || terms[0].coef < 0) return Level::Sum;
      return Level::Product;
    }
  }
  return Level::Sum;
}

void render(const Node& n, std::string& out, Level min_level);

// coef*a*b for a positive coefficient (1 is not printed).
void render_term(int64_t coef, const std::vector<NodePtr>& atoms, std::string& out) {
  if (coef != 1) {
    out += std::to_string(coef);
    out += '*';
  }
  if (coef == 1 && atoms.size() == 1) {
    render(*atoms[0], out, Level::Product);
    return;
  }
  for (size_t i = 0; i < atoms.size(); ++i) {
    if (i > 0) out += '*';
    render(*atoms[i], out, Level::Atom);
  }
}

// " - |coef|*m"; INT64_MIN is printed as " - 9223372036854775807*m - m" so that
// every literal fits int64 when parsed back.
void render_subtracted_term(int64_t coef, const std::vector<NodePtr>& atoms, std::string& out) {
  out += " - ";
  if (coef == std::numeric_limits<int64_t>::min()) {
    render_term(std::numeric_limits<int64_t>::max(), atoms, out);
    out += " - ";
    render_term(1, atoms, out);
    return;
  }
  render_term(-coef, atoms, out);
}

void render_subtracted_constant(int64_t c, std::string& out) {
  if (c == std::numeric_limits<int64_t>::min()) {
    out += " - 9223372036854775807 - 1";
    return;
  }
  out += " - ";
  out += std::to_string(-c);
}

// Positive terms first, then subtracted ones, then the constant; a sum with
// no positive term starts with its constant when positive, else with "0".
void render_sum(const Node& n, std::string& out) {
  const auto& terms = terms_of(n);
  bool first = true;
  for (const Term& t : terms) {
    if (t.coef <= 0) continue;
    if (!first) out += " + ";
    first = false;
    render_term(t.coef, t.atoms, out);
  }
  bool constant_done = n.value == 0;
  if (first && n.value > 0) {
    out += std::to_string(n.value);
    first = false;
    constant_done = true;
  }
  for (const Term& t : terms) {
    if (t.coef >= 0) continue;
    if (first) out += '0';
    first = false;
    render_subtracted_term(t.coef, t.atoms, out);
  }
  if (!constant_done) {
    if (n.value > 0) {
      out += " + ";
      out += std::to_string(n.value);
    } else {
      render_subtracted_constant(n.value, out);
    }
  }
}

void render(const Node& n, std::string& out, Level min_level) {
  const bool parenthesize = level_of(n) < min_level;
  if (parenthesize) out += '(';
  switch (n.kind) {
    case Kind::Constant:
      if (n.value >= 0) {
        out += std::to_string(n.value);
      } else {
        out += '0';
        render_subtracted_constant(n.value, out);
      }
      break;
    case Kind::Symbol:
      out += name_of(n);
      break;
    case Kind::Min:
    case Kind::Max:
      out += n.kind == Kind::Min ? "min(" : "max(";
      render(*operands_of(n).lhs, out, Level::Sum);
      out += ", ";
      render(*operands_of(n).rhs, out, Level::Sum);
      out += ')';
      break;
    case Kind::FloorDiv:
    case Kind::Mul:
      render(*operands_of(n).lhs, out, Level::Product);
      out += n.kind == Kind::FloorDiv ? " // " : "*";
      render(*operands_of(n).rhs, out, Level::Atom);
      break;
    case Kind::Add:
    case Kind::Sub:
      render(*operands_of(n).lhs, out, Level::Sum);
      out += n.kind == Kind::Add ? " + " : " - ";
      render(*operands_of(n).rhs, out, Level::Product);
      break;
    case Kind::Sum:
      render_sum(n, out);
      break;
  }
  if (parenthesize) out += ')';
}

}  // namespace

std::string render(const Node& n) {
  std::string out;
  render(n, out, Level::Sum);
  return out;
}

// 'text' for messages: at most 80 characters, non-printable bytes escaped.
std::string quoted(std::string_view text) {
  constexpr size_t kShown = 80;
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < kShown; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (text.size() > kShown) out += "...";
  out += '\'';
  return out;
}

}  // namespace dim_expr_detail

std::string DimExpr::to_string() const { return dim_expr_detail::render(*node_); }

}  // namespace tenact
