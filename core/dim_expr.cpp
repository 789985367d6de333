// Dimension expressions: canonical form, parser, printer, evaluator and the
// sign-based decision procedure. The contract is in dim_expr.hpp.
//
// Representation (private to this file):
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
//   overflow int64 or exceed the size limits below: the expression is then
//   "left unfolded" as an atom, and evaluation reports the overflow.
// - Min, Max, Add and Mul keep their operands in ascending node order, so
//   that commuted operands give equal nodes.
// - Each node stores its structural hash, computed once at construction.
//
// Polynomial arithmetic is exact over the integers: B - B is 0 and (B // 0) * 0
// is 0 even though evaluating the unfolded text would fail; canonical
// expressions describe integer-valued functions, and evaluation reports an
// error only for what the canonical form still contains.

#include "core/dim_expr.hpp"

#include <algorithm>
#include <limits>
#include <utility>
#include <variant>

#include "core/checked.hpp"

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

using dim_expr_detail::Kind;
using dim_expr_detail::NodePtr;
using dim_expr_detail::Operands;
using dim_expr_detail::Term;

struct DimExpr::Node {
  Kind kind = Kind::Constant;
  uint64_t hash = 0;
  int64_t value = 0;  // Constant: the value; Sum: the constant term
  // Nodes of the expression written out as a tree (shared atoms counted at
  // each use), saturating: bounds the printed size. See kMaxFoldedWeight.
  uint64_t weight = 1;
  // Symbol: std::string; FloorDiv..Sub: Operands; Sum: the terms.
  std::variant<std::monostate, std::string, Operands, std::vector<Term>> payload;
};

// Friend of DimExpr: wraps nodes built here into values.
struct DimExprAccess {
  static DimExpr wrap(NodePtr node) { return DimExpr(std::move(node)); }
};

namespace {

using Node = DimExpr::Node;
__extension__ typedef __int128 Int128;

// -- limits ---------------------------------------------------------------------

// Text longer than this is rejected before parsing (LimitExceeded).
constexpr size_t kMaxTextLength = 4096;
// Parentheses, min( and max( nested deeper than this are rejected.
constexpr int kMaxNesting = 64;
// Folding that would yield a polynomial with more terms, a monomial of
// higher degree, or a product of more term pairs is left unfolded. These
// bound the memory and time hostile text can make folding spend.
constexpr size_t kMaxTerms = 512;
constexpr size_t kMaxDegree = 64;
constexpr size_t kMaxProductPairs = 16384;
// Multiplying out repeats atoms in every term; a product whose folded form
// would weigh more than this and more than its unfolded form stays unfolded,
// so that the printed size of an expression parsed from text stays bounded.
constexpr uint64_t kMaxFoldedWeight = 4096;

// -- node access ------------------------------------------------------------------

const std::string& name_of(const Node& n) { return *std::get_if<std::string>(&n.payload); }
const Operands& operands_of(const Node& n) { return *std::get_if<Operands>(&n.payload); }
const std::vector<Term>& terms_of(const Node& n) {
  return *std::get_if<std::vector<Term>>(&n.payload);
}

// -- hashing ---------------------------------------------------------------------

uint64_t fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}
uint64_t combine(uint64_t h, uint64_t v) {
  return fmix64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}
uint64_t kind_seed(Kind k) { return fmix64(static_cast<uint64_t>(k) + 0x51ed270b27ULL); }
uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}
uint64_t string_hash(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// -- node construction -------------------------------------------------------------

NodePtr make_constant(int64_t v) {
  if (v == 0) {
    static const NodePtr zero = [] {
      auto n = std::make_shared<Node>();
      n->kind = Kind::Constant;
      n->hash = combine(kind_seed(Kind::Constant), 0);
      return NodePtr(std::move(n));
    }();
    return zero;
  }
  auto n = std::make_shared<Node>();
  n->kind = Kind::Constant;
  n->value = v;
  n->hash = combine(kind_seed(Kind::Constant), static_cast<uint64_t>(v));
  return n;
}

NodePtr make_symbol(std::string name) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Symbol;
  n->hash = combine(kind_seed(Kind::Symbol), string_hash(name));
  n->payload = std::move(name);
  return n;
}

NodePtr make_binary(Kind kind, NodePtr lhs, NodePtr rhs) {
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->hash = combine(combine(kind_seed(kind), lhs->hash), rhs->hash);
  n->weight = saturating_add(1, saturating_add(lhs->weight, rhs->weight));
  n->payload = Operands{std::move(lhs), std::move(rhs)};
  return n;
}

uint64_t terms_weight(const std::vector<Term>& terms) {
  uint64_t w = 1;
  for (const Term& t : terms) {
    w = saturating_add(w, 1);
    for (const NodePtr& a : t.atoms) w = saturating_add(w, a->weight);
  }
  return w;
}

NodePtr make_sum(int64_t constant, std::vector<Term> terms) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Sum;
  n->value = constant;
  n->weight = terms_weight(terms);
  uint64_t h = combine(kind_seed(Kind::Sum), static_cast<uint64_t>(constant));
  for (const Term& t : terms) {
    h = combine(h, static_cast<uint64_t>(t.coef));
    h = combine(h, t.atoms.size());
    for (const NodePtr& a : t.atoms) h = combine(h, a->hash);
  }
  n->hash = h;
  n->payload = std::move(terms);
  return n;
}

// -- order and equality -----------------------------------------------------------

int compare(const Node& a, const Node& b);

template <class T>
int three_way(const T& x, const T& y) {
  return x < y ? -1 : (y < x ? 1 : 0);
}

// Higher degree first, then atom by atom.
int compare_monomial(const std::vector<NodePtr>& a, const std::vector<NodePtr>& b) {
  if (a.size() != b.size()) return a.size() > b.size() ? -1 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    if (int c = compare(*a[i], *b[i])) return c;
  }
  return 0;
}

// The total order on canonical nodes; 0 exactly when structurally equal.
int compare(const Node& a, const Node& b) {
  if (&a == &b) return 0;
  if (a.kind != b.kind) return three_way(a.kind, b.kind);
  switch (a.kind) {
    case Kind::Constant:
      return three_way(a.value, b.value);
    case Kind::Symbol: {
      int c = name_of(a).compare(name_of(b));
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case Kind::Sum: {
      if (int c = three_way(a.value, b.value)) return c;
      const auto& ta = terms_of(a);
      const auto& tb = terms_of(b);
      if (int c = three_way(ta.size(), tb.size())) return c;
      for (size_t i = 0; i < ta.size(); ++i) {
        if (int c = compare_monomial(ta[i].atoms, tb[i].atoms)) return c;
        if (int c = three_way(ta[i].coef, tb[i].coef)) return c;
      }
      return 0;
    }
    default: {
      const Operands& oa = operands_of(a);
      const Operands& ob = operands_of(b);
      if (int c = compare(*oa.lhs, *ob.lhs)) return c;
      return compare(*oa.rhs, *ob.rhs);
    }
  }
}

bool equal(const Node& a, const Node& b) {
  if (&a == &b) return true;
  if (a.kind != b.kind || a.hash != b.hash) return false;
  return compare(a, b) == 0;
}

bool node_less(const NodePtr& a, const NodePtr& b) { return compare(*a, *b) < 0; }

NodePtr make_commutative(Kind kind, NodePtr a, NodePtr b) {
  if (compare(*a, *b) > 0) std::swap(a, b);
  return make_binary(kind, std::move(a), std::move(b));
}

// -- polynomial arithmetic -----------------------------------------------------------

struct Poly {
  int64_t constant = 0;
  std::vector<Term> terms;
};

bool fits_int64(Int128 v) {
  return v >= std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max();
}

Poly to_poly(const NodePtr& n) {
  switch (n->kind) {
    case Kind::Constant:
      return Poly{n->value, {}};
    case Kind::Sum:
      return Poly{n->value, terms_of(*n)};
    default:
      return Poly{0, {Term{1, {n}}}};
  }
}

NodePtr from_poly(Poly&& p) {
  if (p.terms.empty()) return make_constant(p.constant);
  if (p.constant == 0 && p.terms.size() == 1 && p.terms[0].coef == 1 &&
      p.terms[0].atoms.size() == 1) {
    return p.terms[0].atoms[0];
  }
  return make_sum(p.constant, std::move(p.terms));
}

// a + sign * b, or nullopt when a coefficient overflows or the result is too big.
std::optional<Poly> add_poly(const Poly& a, const Poly& b, int sign) {
  Int128 c = Int128{a.constant} + Int128{sign} * Int128{b.constant};
  if (!fits_int64(c)) return std::nullopt;
  Poly r;
  r.constant = static_cast<int64_t>(c);
  r.terms.reserve(a.terms.size() + b.terms.size());
  size_t i = 0, j = 0;
  while (i < a.terms.size() || j < b.terms.size()) {
    int order = i == a.terms.size()   ? 1
                : j == b.terms.size() ? -1
                                      : compare_monomial(a.terms[i].atoms, b.terms[j].atoms);
    if (order < 0) {
      r.terms.push_back(a.terms[i++]);
      continue;
    }
    Int128 coef = Int128{sign} * Int128{b.terms[j].coef};
    if (order == 0) coef += a.terms[i++].coef;
    if (!fits_int64(coef)) return std::nullopt;
    if (coef != 0) r.terms.push_back(Term{static_cast<int64_t>(coef), b.terms[j].atoms});
    ++j;
  }
  if (r.terms.size() > kMaxTerms) return std::nullopt;
  return r;
}

std::optional<Poly> mul_poly(const Poly& a, const Poly& b) {
  static const std::vector<NodePtr> kNoAtoms;
  struct Factor {
    int64_t coef;
    const std::vector<NodePtr>* atoms;
  };
  auto factors_of = [](const Poly& p) {
    std::vector<Factor> f;
    f.reserve(p.terms.size() + 1);
    for (const Term& t : p.terms) f.push_back({t.coef, &t.atoms});
    if (p.constant != 0) f.push_back({p.constant, &kNoAtoms});
    return f;
  };
  std::vector<Factor> fa = factors_of(a);
  std::vector<Factor> fb = factors_of(b);
  if (fa.size() * fb.size() > kMaxProductPairs) return std::nullopt;

  struct Product {
    Int128 coef;
    std::vector<NodePtr> atoms;
  };
  std::vector<Product> products;
  products.reserve(fa.size() * fb.size());
  for (const Factor& x : fa) {
    for (const Factor& y : fb) {
      if (x.atoms->size() + y.atoms->size() > kMaxDegree) return std::nullopt;
      Product p{Int128{x.coef} * Int128{y.coef}, {}};
      p.atoms.reserve(x.atoms->size() + y.atoms->size());
      std::merge(x.atoms->begin(), x.atoms->end(), y.atoms->begin(), y.atoms->end(),
                 std::back_inserter(p.atoms), node_less);
      products.push_back(std::move(p));
    }
  }
  std::stable_sort(products.begin(), products.end(), [](const Product& x, const Product& y) {
    return compare_monomial(x.atoms, y.atoms) < 0;
  });

  Poly r;
  for (size_t i = 0; i < products.size();) {
    Int128 coef = 0;
    size_t j = i;
    for (; j < products.size() && compare_monomial(products[i].atoms, products[j].atoms) == 0;
         ++j) {
      if (__builtin_add_overflow(coef, products[j].coef, &coef)) return std::nullopt;
    }
    if (coef != 0) {
      if (!fits_int64(coef)) return std::nullopt;
      if (products[i].atoms.empty()) {
        r.constant = static_cast<int64_t>(coef);
      } else {
        r.terms.push_back(Term{static_cast<int64_t>(coef), std::move(products[i].atoms)});
      }
    }
    i = j;
  }
  if (r.terms.size() > kMaxTerms) return std::nullopt;
  return r;
}

// Python's //: rounds toward negative infinity. nullopt for a zero divisor or
// INT64_MIN // -1.
std::optional<int64_t> floor_divide(int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  if (a == std::numeric_limits<int64_t>::min() && b == -1) return std::nullopt;
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

// -- printing --------------------------------------------------------------------------

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

// -- parsing -------------------------------------------------------------------------------

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_symbol_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool is_symbol_char(char c) { return is_symbol_start(c) || is_digit(c); }

constexpr const char* kExpectedFactor = "a number, symbol, min(, max( or (";

// Recursive descent over the grammar of program-format.md; folds as it goes
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

  void skip_space() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  }
  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  Result<DimExpr> parse_expr() {
    TENACT_ASSIGN_OR_RETURN(DimExpr acc, parse_term());
    for (;;) {
      skip_space();
      if (at('+')) {
        ++pos_;
        TENACT_ASSIGN_OR_RETURN(DimExpr rhs, parse_term());
        acc = acc + rhs;
      } else if (at('-')) {
        ++pos_;
        TENACT_ASSIGN_OR_RETURN(DimExpr rhs, parse_term());
        acc = acc - rhs;
      } else {
        return acc;
      }
    }
  }

  Result<DimExpr> parse_term() {
    TENACT_ASSIGN_OR_RETURN(DimExpr acc, parse_factor());
    for (;;) {
      skip_space();
      if (at('*')) {
        ++pos_;
        TENACT_ASSIGN_OR_RETURN(DimExpr rhs, parse_factor());
        acc = acc * rhs;
      } else if (at('/')) {
        ++pos_;
        if (!at('/')) return expected("'//' (floor division)");
        ++pos_;
        TENACT_ASSIGN_OR_RETURN(DimExpr rhs, parse_factor());
        // A divisor that folds to the constant 0 fails for every value of
        // the symbols: reject it when the text is read, not at evaluation.
        if (rhs.constant_value() == 0)
          return error(ErrorCode::DivisionByZero, "floor division by '" + rhs.to_string() + "', which is always 0");
        acc = DimExpr::floor_div(acc, rhs);
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

// -- DimExpr --------------------------------------------------------------------------------

DimExpr::DimExpr() : node_(make_constant(0)) {}

DimExpr DimExpr::constant(int64_t value) { return DimExpr(make_constant(value)); }

DimExpr DimExpr::symbol(std::string name) { return DimExpr(make_symbol(std::move(name))); }

Result<DimExpr> DimExpr::parse(std::string_view text) {
  if (text.size() > kMaxTextLength) {
    return Error{ErrorCode::LimitExceeded,
                 "dimension expression " + quoted(text) + " is " + std::to_string(text.size()) +
                     " characters long; the limit is " + std::to_string(kMaxTextLength)};
  }
  return Parser(text).parse_all();
}

DimExpr operator+(const DimExpr& a, const DimExpr& b) {
  const NodePtr& x = a.node();
  const NodePtr& y = b.node();
  if (y->kind == Kind::Constant && y->value == 0) return a;
  if (x->kind == Kind::Constant && x->value == 0) return b;
  auto sum = add_poly(to_poly(x), to_poly(y), +1);
  return DimExprAccess::wrap(sum ? from_poly(std::move(*sum)) : make_commutative(Kind::Add, x, y));
}

DimExpr operator-(const DimExpr& a, const DimExpr& b) {
  const NodePtr& x = a.node();
  const NodePtr& y = b.node();
  if (y->kind == Kind::Constant && y->value == 0) return a;
  auto difference = add_poly(to_poly(x), to_poly(y), -1);
  return DimExprAccess::wrap(difference ? from_poly(std::move(*difference))
                                        : make_binary(Kind::Sub, x, y));
}

DimExpr operator*(const DimExpr& a, const DimExpr& b) {
  const NodePtr& x = a.node();
  const NodePtr& y = b.node();
  if (y->kind == Kind::Constant && y->value == 1) return a;
  if (x->kind == Kind::Constant && x->value == 1) return b;
  auto product = mul_poly(to_poly(x), to_poly(y));
  if (product) {
    const uint64_t folded = terms_weight(product->terms);
    if (folded > kMaxFoldedWeight && folded > saturating_add(saturating_add(x->weight, y->weight), 1)) {
      product.reset();
    }
  }
  return DimExprAccess::wrap(product ? from_poly(std::move(*product))
                                     : make_commutative(Kind::Mul, x, y));
}

DimExpr DimExpr::floor_div(const DimExpr& a, const DimExpr& b) {
  const NodePtr& x = a.node_;
  const NodePtr& y = b.node_;
  if (y->kind == Kind::Constant && y->value != 0) {
    const int64_t d = y->value;
    if (x->kind == Kind::Constant) {
      if (auto q = floor_divide(x->value, d)) return constant(*q);
    } else {
      // Exact when the divisor divides every coefficient and the constant.
      Poly p = to_poly(x);
      auto divides = [d](int64_t v) {
        return v % d == 0 && !(v == std::numeric_limits<int64_t>::min() && d == -1);
      };
      bool exact = divides(p.constant);
      for (const Term& t : p.terms) exact = exact && divides(t.coef);
      if (exact) {
        p.constant /= d;
        for (Term& t : p.terms) t.coef /= d;
        return DimExpr(from_poly(std::move(p)));
      }
    }
  }
  return DimExpr(make_binary(Kind::FloorDiv, x, y));
}

namespace {

// min (want_min) or max of two canonical expressions: folds when their
// difference is a constant, else a node with ordered operands.
DimExpr min_or_max(const DimExpr& a, const DimExpr& b, bool want_min) {
  const NodePtr& x = a.node();
  const NodePtr& y = b.node();
  if (x->kind == Kind::Constant && y->kind == Kind::Constant) {
    const bool a_smaller = x->value <= y->value;
    return a_smaller == want_min ? a : b;
  }
  if (auto d = (a - b).constant_value()) {
    const bool a_smaller = *d <= 0;
    return a_smaller == want_min ? a : b;
  }
  return DimExprAccess::wrap(make_commutative(want_min ? Kind::Min : Kind::Max, x, y));
}

}  // namespace

DimExpr DimExpr::min(const DimExpr& a, const DimExpr& b) { return min_or_max(a, b, true); }
DimExpr DimExpr::max(const DimExpr& a, const DimExpr& b) { return min_or_max(a, b, false); }

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

std::string DimExpr::to_string() const { return render(*node_); }

bool operator==(const DimExpr& a, const DimExpr& b) { return equal(*a.node_, *b.node_); }

bool operator<(const DimExpr& a, const DimExpr& b) { return compare(*a.node_, *b.node_) < 0; }

uint64_t DimExpr::hash() const { return node_->hash; }

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
