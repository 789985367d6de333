// Dimension expressions, canonical form: node construction, hashing, the
// total order on nodes, polynomial folding, and the public constructors,
// operators (+ - * floor_div min max) and comparisons. The representation is
// described in dim_expr_node.hpp, the contract in dim_expr.hpp.

#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>

#include "core/dim_expr.hpp"
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
using dim_expr_detail::terms_of;
using dim_expr_detail::to_poly;

namespace {

// -- limits ---------------------------------------------------------------------

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

// `overflow`: this node is made because combining constants overflowed.
NodePtr make_binary(Kind kind, NodePtr lhs, NodePtr rhs, bool overflow = false) {
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->hash = combine(combine(kind_seed(kind), lhs->hash), rhs->hash);
  n->weight = saturating_add(1, saturating_add(lhs->weight, rhs->weight));
  n->overflow = overflow || lhs->overflow || rhs->overflow;
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
    for (const NodePtr& a : t.atoms) {
      h = combine(h, a->hash);
      n->overflow = n->overflow || a->overflow;
    }
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

NodePtr make_commutative(Kind kind, NodePtr a, NodePtr b, bool overflow = false) {
  if (compare(*a, *b) > 0) std::swap(a, b);
  return make_binary(kind, std::move(a), std::move(b), overflow);
}

// A constant, or coef * monomial without a constant term (2, B, 3*B*C).
// An atom is 1 * itself.
bool single_term(const Node& n) {
  return n.kind != Kind::Sum || (n.value == 0 && terms_of(n).size() == 1);
}

// True when either operand's constant arithmetic overflowed: such operands
// are never folded, so that the mark cannot cancel away.
bool either_marked(const NodePtr& a, const NodePtr& b) { return a->overflow || b->overflow; }

// -- polynomial arithmetic -----------------------------------------------------------

NodePtr from_poly(Poly&& p) {
  if (p.terms.empty()) return make_constant(p.constant);
  if (p.constant == 0 && p.terms.size() == 1 && p.terms[0].coef == 1 &&
      p.terms[0].atoms.size() == 1) {
    return p.terms[0].atoms[0];
  }
  return make_sum(p.constant, std::move(p.terms));
}

// A folded polynomial, or none and why folding declined: a constant or
// coefficient outside int64 (overflow), else a result past the size limits.
struct Fold {
  std::optional<Poly> poly;
  bool overflow = false;
};
const Fold kOverflow{std::nullopt, true};
const Fold kTooBig{std::nullopt, false};

// a + sign * b.
Fold add_poly(const Poly& a, const Poly& b, int sign) {
  Int128 c = Int128{a.constant} + Int128{sign} * Int128{b.constant};
  if (!fits_int64(c)) return kOverflow;
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
    if (!fits_int64(coef)) return kOverflow;
    if (coef != 0) r.terms.push_back(Term{static_cast<int64_t>(coef), b.terms[j].atoms});
    ++j;
  }
  if (r.terms.size() > kMaxTerms) return kTooBig;
  return Fold{std::move(r)};
}

Fold mul_poly(const Poly& a, const Poly& b) {
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
  if (fa.size() * fb.size() > kMaxProductPairs) return kTooBig;

  struct Product {
    Int128 coef;
    std::vector<NodePtr> atoms;
  };
  std::vector<Product> products;
  products.reserve(fa.size() * fb.size());
  for (const Factor& x : fa) {
    for (const Factor& y : fb) {
      if (x.atoms->size() + y.atoms->size() > kMaxDegree) return kTooBig;
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
      if (__builtin_add_overflow(coef, products[j].coef, &coef)) return kOverflow;
    }
    if (coef != 0) {
      if (!fits_int64(coef)) return kOverflow;
      if (products[i].atoms.empty()) {
        r.constant = static_cast<int64_t>(coef);
      } else {
        r.terms.push_back(Term{static_cast<int64_t>(coef), std::move(products[i].atoms)});
      }
    }
    i = j;
  }
  if (r.terms.size() > kMaxTerms) return kTooBig;
  return Fold{std::move(r)};
}

// -- min and max ----------------------------------------------------------------------

// min (want_min) or max of two canonical expressions: folds when their
// difference is a constant, else a node with ordered operands.
DimExpr min_or_max(const DimExpr& a, const DimExpr& b, bool want_min) {
  const NodePtr& x = a.node();
  const NodePtr& y = b.node();
  const Kind kind = want_min ? Kind::Min : Kind::Max;
  if (either_marked(x, y)) return DimExprAccess::wrap(make_commutative(kind, x, y));
  if (x->kind == Kind::Constant && y->kind == Kind::Constant) {
    const bool a_smaller = x->value <= y->value;
    return a_smaller == want_min ? a : b;
  }
  if (auto d = (a - b).constant_value()) {
    const bool a_smaller = *d <= 0;
    return a_smaller == want_min ? a : b;
  }
  return DimExprAccess::wrap(make_commutative(kind, x, y));
}

}  // namespace

// -- DimExpr --------------------------------------------------------------------------------

DimExpr::DimExpr() : node_(make_constant(0)) {}

DimExpr DimExpr::constant(int64_t value) { return DimExpr(make_constant(value)); }

DimExpr DimExpr::symbol(std::string name) { return DimExpr(make_symbol(std::move(name))); }

DimExpr operator+(const DimExpr& a, const DimExpr& b) {
  const NodePtr& x = a.node();
  const NodePtr& y = b.node();
  if (y->kind == Kind::Constant && y->value == 0) return a;
  if (x->kind == Kind::Constant && x->value == 0) return b;
  if (either_marked(x, y)) return DimExprAccess::wrap(make_commutative(Kind::Add, x, y));
  Fold sum = add_poly(to_poly(x), to_poly(y), +1);
  return DimExprAccess::wrap(sum.poly ? from_poly(std::move(*sum.poly))
                                      : make_commutative(Kind::Add, x, y, sum.overflow));
}

DimExpr operator-(const DimExpr& a, const DimExpr& b) {
  const NodePtr& x = a.node();
  const NodePtr& y = b.node();
  if (y->kind == Kind::Constant && y->value == 0) return a;
  if (either_marked(x, y)) return DimExprAccess::wrap(make_binary(Kind::Sub, x, y));
  Fold difference = add_poly(to_poly(x), to_poly(y), -1);
  return DimExprAccess::wrap(difference.poly ? from_poly(std::move(*difference.poly))
                                             : make_binary(Kind::Sub, x, y, difference.overflow));
}

DimExpr operator*(const DimExpr& a, const DimExpr& b) {
  const NodePtr& x = a.node();
  const NodePtr& y = b.node();
  if (y->kind == Kind::Constant && y->value == 1) return a;
  if (x->kind == Kind::Constant && x->value == 1) return b;
  if (either_marked(x, y)) return DimExprAccess::wrap(make_commutative(Kind::Mul, x, y));
  Fold product = mul_poly(to_poly(x), to_poly(y));
  if (product.poly) {
    const uint64_t folded = terms_weight(product.poly->terms);
    if (folded > kMaxFoldedWeight && folded > saturating_add(saturating_add(x->weight, y->weight), 1)) {
      product.poly.reset();
    }
  }
  // A product by a constant, or of two single terms, only multiplies
  // coefficients: its overflow is constant arithmetic. The expansion of
  // longer factors may overflow where their product does not
  // ((B - 2)*(9223372036854775807*B) at B = 1): it stays unfolded and
  // unmarked, for evaluation to decide.
  const bool by_constant = x->kind == Kind::Constant || y->kind == Kind::Constant;
  const bool overflow = product.overflow && (by_constant || (single_term(*x) && single_term(*y)));
  return DimExprAccess::wrap(product.poly ? from_poly(std::move(*product.poly))
                                          : make_commutative(Kind::Mul, x, y, overflow));
}

DimExpr DimExpr::floor_div(const DimExpr& a, const DimExpr& b) {
  const NodePtr& x = a.node_;
  const NodePtr& y = b.node_;
  if (either_marked(x, y)) return DimExpr(make_binary(Kind::FloorDiv, x, y));
  if (y->kind == Kind::Constant && y->value != 0) {
    const int64_t d = y->value;
    if (x->kind == Kind::Constant) {
      if (auto q = floor_divide(x->value, d)) return constant(*q);
      return DimExpr(make_binary(Kind::FloorDiv, x, y, /*overflow=*/true));  // INT64_MIN // -1
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

DimExpr DimExpr::min(const DimExpr& a, const DimExpr& b) { return min_or_max(a, b, true); }
DimExpr DimExpr::max(const DimExpr& a, const DimExpr& b) { return min_or_max(a, b, false); }

bool operator==(const DimExpr& a, const DimExpr& b) { return equal(*a.node_, *b.node_); }

bool operator<(const DimExpr& a, const DimExpr& b) { return compare(*a.node_, *b.node_) < 0; }

uint64_t DimExpr::hash() const { return node_->hash; }

}  // namespace tenact
