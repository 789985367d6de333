#include "stress/stress_programs.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/half.hpp"

namespace tenact::stress {

namespace {

using Json = nlohmann::ordered_json;

// SplitMix64: a job's draws are a function of (seed, index, salt) only.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n == 0 ? 0 : next() % n; }
  int64_t between(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo + 1))); }
  bool chance(double p) { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }
  template <class T> const T& pick(const std::vector<T>& v) { return v[below(v.size())]; }
};

Rng rng_for(uint64_t seed, uint64_t a, uint64_t salt) {
  Rng r{seed ^ (a * 0xD1B54A32D192ED03ull) ^ (salt * 0xABC98388FB8FAC03ull)};
  r.next();
  return r;
}

bool inexact_kind(DType t) { return is_float(t) || is_complex(t); }

// The largest integer below which every integer (and every sum of them) is
// exact in the type (complex: in each component). Integers wrap: no limit.
double exact_limit(DType t) {
  switch (t) {
    case DType::BF16: return 256;
    case DType::F16: return 2048;
    case DType::F32: case DType::C64: return 16777216.0;
    case DType::F64: case DType::C128: return 9007199254740992.0;
    default: return std::numeric_limits<double>::infinity();
  }
}

// The element types a program may have (bool arises inside programs).
const std::vector<DType> kProgramTypes = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64,
                                          DType::I8,  DType::I16, DType::U8,  DType::U16,  DType::U32, DType::U64,
                                          DType::C64, DType::C128, DType::F32, DType::F64, DType::I32,
                                          DType::F16, DType::BF16, DType::F32, DType::F64};

// Square: [N, N]; Vec: [N]; Rect: [M, N] (programs with a second symbol).
enum class Form : uint8_t { Square, Vec, Rect };

// A value of the program being built and what the generator knows of it.
struct Val {
  std::string name;
  Form form = Form::Square;
  DType dtype = DType::F32;
  // Every finite element is an integer of magnitude <= bound (per
  // component); non-finite elements may occur. Sums and products of exact
  // values within exact_limit do not depend on the order of their terms.
  bool exact = false;
  double bound = 0;
  // The ulps its elements may differ from the CPU engine's by.
  uint32_t ulps = 0;
};

Json dims_json(Form f) {
  switch (f) {
    case Form::Square: return Json::array({"N", "N"});
    case Form::Vec: return Json::array({"N"});
    case Form::Rect: return Json::array({"M", "N"});
  }
  return Json::array();
}

// Names: mostly plain, sometimes what the format allows and tools must
// escape ('/', spaces, '..', non-ASCII).
const std::vector<std::string> kOddNames = {"layer1/w", "x y", "..", "é", "a=b", "%41", "-flag", "tab\\t"};

class ProgramBuilder {
 public:
  ProgramBuilder(uint64_t seed, uint32_t index, const GeneratorOptions& o)
      : rng_(rng_for(seed, index, 1)), options_(o) {
    dtype_ = rng_.pick(kProgramTypes);
  }

  struct Built {
    Json program;
    std::vector<uint32_t> output_ulps;
    std::vector<bool> wild_inputs;
    /// Per input: of shape [M, N] (else [N, N]).
    std::vector<bool> rect_inputs;
    DType dtype;
  };

  Built build() {
    const uint32_t max_ops = std::max<uint32_t>(3, options_.max_ops);
    const uint32_t target = static_cast<uint32_t>(rng_.between(3, max_ops));
    const int inputs = static_cast<int>(rng_.between(1, 4));
    for (int i = 0; i < inputs; ++i) add_input(i, false);
    // A second symbol in a third of the programs: an input of shape [M, N]
    // that dots carry through (through_m).
    if (rng_.chance(0.35)) add_input(inputs, true);
    int attempts = 0;
    while (op_count_ < target && attempts++ < 20 * static_cast<int>(target)) {
      // A step may emit several ops (helpers included); one that would pass
      // the target is undone.
      const Json ops = ops_;
      const std::vector<Val> vals = vals_;
      const uint32_t count = op_count_, names = next_name_;
      const bool nonempty = needs_nonempty_;
      step(target);
      if (op_count_ > target) ops_ = ops, vals_ = vals, op_count_ = count, next_name_ = names, needs_nonempty_ = nonempty;
    }
    if (op_count_ == 0) unary_any(pick_square());
    Built b;
    b.dtype = dtype_;
    b.wild_inputs = wild_inputs_;
    b.rect_inputs = rect_inputs_;
    Json outs = Json::array();
    auto add_output = [&](const Val& v) {
      outs.push_back(v.name);
      b.output_ulps.push_back(v.ulps);
    };
    add_output(vals_.back());
    const int extra = static_cast<int>(rng_.below(3));
    for (int i = 0; i < extra; ++i) add_output(rng_.pick(vals_));
    std::string guard_low = needs_nonempty_ ? "N >= 1" : "N >= 0";
    Json guards = Json::array({guard_low, "N <= " + std::to_string(options_.max_n),
                               "N * N <= " + std::to_string(options_.max_n * options_.max_n)});
    if (!rect_.empty())
      guards.insert(guards.end(), {"M >= 0", "M <= " + std::to_string(options_.max_n),
                                   "M * N <= " + std::to_string(options_.max_n * options_.max_n)});
    b.program = Json{{"format", "tenact.program/1"},
                     {"name", "stress"},
                     {"inputs", inputs_},
                     {"guards", guards},
                     {"ops", ops_},
                     {"outputs", outs}};
    return b;
  }

 private:
  // -- values -----------------------------------------------------------------
  // An input [N, N] in the pool, or (`rect`) [M, N] kept for through_m.
  void add_input(int i, bool rect) {
    std::string name = rng_.chance(0.15) ? rng_.pick(kOddNames) + std::to_string(i) : "x" + std::to_string(i);
    const Form form = rect ? Form::Rect : Form::Square;
    inputs_.push_back(Json{{"name", name}, {"dtype", std::string(to_string(dtype_))}, {"shape", dims_json(form)}});
    Val v{name, form, dtype_, true, 4, 0};
    bool wild = false;
    if (is_integer(dtype_)) v.bound = std::numeric_limits<double>::infinity();
    else if (is_float(dtype_) && rng_.chance(0.4)) wild = true, v.exact = false;
    wild_inputs_.push_back(wild);
    rect_inputs_.push_back(rect);
    (rect ? rect_ : vals_).push_back(v);
  }

  std::string fresh() { return "v" + std::to_string(next_name_++); }

  const Val& emit(Json op, Val v) {
    v.name = fresh();
    op["out"] = v.name;
    ops_.push_back(std::move(op));
    ++op_count_;
    vals_.push_back(std::move(v));
    return vals_.back();
  }

  Val pick_form(Form f, DType t) {
    std::vector<size_t> c;
    for (size_t i = 0; i < vals_.size(); ++i)
      if (vals_[i].form == f && vals_[i].dtype == t) c.push_back(i);
    if (c.empty()) return {};
    // Recent values more often: programs become chains and DAGs, not stars.
    size_t k = rng_.chance(0.5) ? c.size() - 1 - rng_.below(std::min<size_t>(c.size(), 3)) : rng_.below(c.size());
    return vals_[c[k]];
  }
  Val pick_square() { return pick_form(Form::Square, dtype_); }
  Val pick_vec() { return pick_form(Form::Vec, dtype_); }

  // A scalar-filled constant of the program's type.
  Json scalar_json(double x) const {
    if (is_complex(dtype_)) return Json::array({x, 0.0});
    if (std::isnan(x)) return "nan";
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    if (is_integer(dtype_)) return static_cast<int64_t>(x);
    return x;
  }
  Val constant(Form f, double x, bool exact) {
    Json op{{"op", "constant"}, {"dtype", std::string(to_string(dtype_))}, {"shape", dims_json(f)}, {"value", scalar_json(x)}};
    return emit(op, Val{"", f, dtype_, exact, std::abs(x), 0});
  }
  Val scalar_constant(double x) {
    Json op{{"op", "constant"}, {"dtype", std::string(to_string(dtype_))}, {"shape", Json::array()}, {"value", scalar_json(x)}};
    return emit(op, Val{"", Form::Square, dtype_, true, std::abs(x), 0});  // form unused: not in the pool
  }
  Val index_constant(int64_t i) {
    Json op{{"op", "constant"}, {"dtype", "i32"}, {"shape", Json::array()}, {"value", i}};
    Val v = emit(op, Val{"", Form::Square, DType::I32, true, 0, 0});
    vals_.pop_back();  // scalars stay out of the pool
    return v;
  }

  // clamp(-b, x, b) then round to an integer: an exact value of bound b
  // (floats; NaN stays NaN, infinities become +-b).
  Val exactify(const Val& x, double b) {
    Val lo = scalar_constant(-b);
    vals_.pop_back();
    Val hi = scalar_constant(b);
    vals_.pop_back();
    Val c = emit(Json{{"op", "clamp"}, {"in", {lo.name, x.name, hi.name}}}, Val{"", x.form, dtype_, x.exact, std::min(x.bound, b), x.ulps});
    if (x.exact) return c;
    return emit(Json{{"op", "round_nearest_even"}, {"in", {c.name}}}, Val{"", x.form, dtype_, true, b, x.ulps});
  }
  // Makes `x` exact within `b` where it is not (floats only; nullopt for
  // types it cannot do that for).
  std::optional<Val> within(const Val& x, double b) {
    if (is_integer(dtype_)) return x;
    if (x.ulps > 0) return std::nullopt;  // rounding an approximation: engines may differ by a unit
    if (x.exact && x.bound <= b) return x;
    if (!is_float(dtype_) || b < 1) return std::nullopt;
    return exactify(x, std::floor(b));
  }
  // x + (+0): a zero of either sign becomes +0 (sums may give either).
  Val canonical_zero(const Val& x) {
    if (!inexact_kind(dtype_)) return x;
    Val z = constant(x.form, 0, true);
    return emit(Json{{"op", "add"}, {"in", {x.name, z.name}}}, Val{"", x.form, dtype_, x.exact, x.bound, x.ulps});
  }

  // -- steps --------------------------------------------------------------------
  void step(uint32_t target) {
    const uint32_t left = target - op_count_;
    Val sq = pick_square();
    // A program with a second symbol carries a value through it often.
    if (!rect_.empty() && left >= 3 && rng_.chance(0.15)) return through_m(sq);
    switch (rng_.below(19)) {
      case 0: case 1: case 2: unary_any(sq); break;
      case 3: case 4: case 5: binary(sq, pick_square()); break;
      case 6: if (left >= 2) reduction(sq); break;
      case 7: if (left >= 3) dot(sq, pick_square()); break;
      case 8: layout(sq); break;
      case 9: if (left >= 2) compare_select(sq, pick_square()); break;
      case 10: if (left >= 3) convert_round_trip(sq); break;
      case 11: if (left >= 3) indexing(sq); break;
      case 12: if (left >= 2) vector_use(); break;
      case 13: if (left >= 2) clamp_op(sq); break;
      case 14: source(); break;
      case 15: if (left >= 3) reshape_round_trip(sq); break;
      case 16: if (left >= 4) gather_or_scatter(sq); break;
      case 17: if (left >= 4) shape_ops(sq); break;
      case 18: if (left >= 3) through_m(sq); break;
    }
  }

  void unary_any(const Val& x) {
    std::vector<std::string> ops = {"negate"};
    if (is_signed_integer(dtype_) || is_float(dtype_)) ops.insert(ops.end(), {"abs", "sign"});
    if (is_integer(dtype_)) ops.push_back("not");
    if (is_float(dtype_))
      ops.insert(ops.end(), {"exponential", "log", "sine", "cosine", "tanh", "sqrt", "rsqrt", "exponential_minus_one",
                             "log_plus_one", "floor", "ceil", "round_nearest_even", "round_nearest_afz", "logistic"});
    if (inexact_kind(dtype_)) ops.push_back("conj");
    if (is_complex(dtype_)) ops.push_back("exponential");
    const std::string op = rng_.pick(ops);
    Val r{"", x.form, dtype_, x.exact, x.bound, x.ulps};
    if (op == "sign") r.bound = std::min(x.bound, 1.0), r.exact = x.exact || !is_float(dtype_);
    static const std::vector<std::string> kTranscendental = {"exponential", "log", "sine", "cosine", "tanh", "rsqrt",
                                                             "exponential_minus_one", "log_plus_one", "logistic"};
    if (std::find(kTranscendental.begin(), kTranscendental.end(), op) != kTranscendental.end())
      r.exact = false, r.ulps = x.ulps + 4;
    if (op == "sqrt") r.exact = false;
    emit(Json{{"op", op}, {"in", {x.name}}}, r);
  }

  void binary(const Val& a, const Val& b) {
    std::vector<std::string> ops = {"add", "subtract", "multiply", "maximum", "minimum"};
    if (!is_complex(dtype_)) ops.insert(ops.end(), {"divide", "remainder", "power"});
    if (is_complex(dtype_)) ops.push_back("divide");
    if (is_integer(dtype_)) ops.insert(ops.end(), {"and", "or", "xor"});
    const std::string op = rng_.pick(ops);
    Val r{"", a.form, dtype_, a.exact && b.exact, std::max(a.bound, b.bound), std::max(a.ulps, b.ulps)};
    if (r.ulps > 0) r.ulps += 1;
    Val rhs = b;
    const double lim = exact_limit(dtype_);
    if (op == "add" || op == "subtract") r.bound = a.bound + b.bound;
    if (op == "multiply") r.bound = a.bound * b.bound * (is_complex(dtype_) ? 2 : 1);
    if (r.bound > lim) r.exact = false;
    if ((op == "divide" || op == "remainder") && is_integer(dtype_)) {
      // A divisor in [1, 7]: division by zero and INT_MIN / -1 are the
      // runtime's choice, not the spec's.
      Val lo = scalar_constant(1);
      vals_.pop_back();
      Val hi = scalar_constant(7);
      vals_.pop_back();
      rhs = emit(Json{{"op", "clamp"}, {"in", {lo.name, b.name, hi.name}}}, Val{"", b.form, dtype_, true, 7, 0});
    } else if (op == "divide" || op == "remainder") {
      r.exact = false;
      if (is_complex(dtype_)) r.ulps += 4;
    }
    if (op == "power") {
      if (is_integer(dtype_)) {
        rhs = constant(a.form, static_cast<double>(rng_.below(4)), true);
      } else {
        r.exact = false;
        r.ulps = std::max(a.ulps, b.ulps) + 4;
      }
    }
    if (op == "and" || op == "or" || op == "xor") r.bound = std::numeric_limits<double>::infinity();
    emit(Json{{"op", op}, {"in", {a.name, rhs.name}}}, r);
  }

  void reduction(const Val& x) {
    const std::vector<std::string> ops = is_complex(dtype_)
                                             ? std::vector<std::string>{"reduce_sum", "reduce_max", "reduce_min"}
                                             : std::vector<std::string>{"reduce_sum", "reduce_sum_squares", "reduce_prod",
                                                                        "reduce_max", "reduce_min"};
    const std::string op = rng_.pick(ops);
    const double lim = exact_limit(dtype_);
    const double n = options_.max_n;
    std::optional<Val> in = x;
    double bound = x.bound;
    if (op == "reduce_sum") in = within(x, std::min(64.0, lim / n)), bound = in ? in->bound * n : 0;
    if (op == "reduce_sum_squares") in = within(x, std::min(64.0, std::sqrt(lim / n))), bound = in ? in->bound * in->bound * n : 0;
    if (op == "reduce_prod") in = within(x, 1), bound = 1;
    if (!in) return;
    if ((op == "reduce_sum" || op == "reduce_sum_squares") && is_complex(dtype_) && in->bound * n > lim) return;
    if (in->ulps > 0 && op != "reduce_max" && op != "reduce_min") return;  // sums of approximations: no exact bound
    const int64_t axis = static_cast<int64_t>(rng_.below(2));
    Val r{"", Form::Vec, dtype_, in->exact, bound, in->ulps};
    if (is_integer(dtype_)) r.bound = std::numeric_limits<double>::infinity();
    Val red = emit(Json{{"op", op}, {"in", {in->name}}, {"dimensions", {axis}}}, r);
    canonical_zero(red);
  }

  void dot(const Val& a, const Val& b) {
    if (a.ulps > 0 || b.ulps > 0) return;
    if (!options_.float_dots && !is_integer(dtype_)) return;
    const double lim = exact_limit(dtype_);
    const double n = options_.max_n;
    const double each = std::min(64.0, std::sqrt(lim / n / (is_complex(dtype_) ? 2 : 1)));
    auto l = within(a, each);
    auto r = within(b, each);
    if (!l || !r) return;
    if (!is_integer(dtype_) && l->bound * r->bound * n * (is_complex(dtype_) ? 2 : 1) > lim) return;
    const int lc = static_cast<int>(rng_.below(2));
    const int rc = static_cast<int>(rng_.below(2));
    Json op{{"op", "dot_general"}, {"in", {l->name, r->name}}, {"lhs_contracting_dimensions", {lc}},
            {"rhs_contracting_dimensions", {rc}}};
    Val d = emit(op, Val{"", Form::Square, dtype_, true, is_integer(dtype_) ? l->bound : l->bound * r->bound * n * 2, 0});
    canonical_zero(d);
  }

  void layout(const Val& x) {
    switch (rng_.below(4)) {
      case 0: emit(Json{{"op", "transpose"}, {"in", {x.name}}, {"permutation", {1, 0}}}, Val{"", Form::Square, dtype_, x.exact, x.bound, x.ulps}); break;
      case 1: emit(Json{{"op", rng_.chance(0.5) ? "tril" : "triu"}, {"in", {x.name}}, {"k", rng_.between(-2, 2)}},
                   Val{"", Form::Square, dtype_, x.exact, x.bound, x.ulps});
              break;
      case 2: {
        Json dims = Json::array();
        if (rng_.chance(0.6)) dims.push_back(0);
        if (dims.empty() || rng_.chance(0.5)) dims.push_back(1);
        emit(Json{{"op", "reverse"}, {"in", {x.name}}, {"dimensions", dims}}, Val{"", Form::Square, dtype_, x.exact, x.bound, x.ulps});
        break;
      }
      case 3: emit(Json{{"op", "extract_diag"}, {"in", {x.name}}}, Val{"", Form::Vec, dtype_, x.exact, x.bound, x.ulps}); break;
    }
  }

  void compare_select(const Val& a, const Val& b) {
    std::vector<std::string> dirs = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    Val p = emit(Json{{"op", "compare"}, {"in", {a.name, b.name}}, {"direction", rng_.pick(dirs)}},
                 Val{"", a.form, DType::Bool, true, 1, 0});
    Val t = pick_square();
    Val f = pick_square();
    emit(Json{{"op", "select"}, {"in", {p.name, t.name, f.name}}},
         Val{"", Form::Square, dtype_, t.exact && f.exact, std::max(t.bound, f.bound), std::max(t.ulps, f.ulps)});
  }

  void clamp_op(const Val& x) {
    if (is_complex(dtype_)) return;
    double lo = static_cast<double>(rng_.between(is_signed_integer(dtype_) || is_float(dtype_) ? -9 : 0, 3));
    double hi = lo + static_cast<double>(rng_.between(0, 9));
    Val l = scalar_constant(lo);
    vals_.pop_back();
    Val h = scalar_constant(hi);
    vals_.pop_back();
    emit(Json{{"op", "clamp"}, {"in", {l.name, x.name, h.name}}},
         Val{"", x.form, dtype_, x.exact, std::min(x.bound, std::max(std::abs(lo), std::abs(hi))), x.ulps});
  }

  void convert_round_trip(const Val& x) {
    std::vector<DType> via = {DType::Bool, DType::I8,  DType::I32, DType::I64, DType::U8,  DType::U32, DType::F16,
                              DType::BF16, DType::F32, DType::F64, DType::C64, DType::C128, DType::U16, DType::I16, DType::U64};
    const DType e = rng_.pick(via);
    if (e == dtype_) return;
    Val mid = emit(Json{{"op", "convert"}, {"in", {x.name}}, {"dtype", std::string(to_string(e))}},
                   Val{"", x.form, e, false, 0, x.ulps});
    vals_.pop_back();  // other types stay out of the pool
    Val r{"", x.form, dtype_, x.exact, x.bound, x.ulps};
    if (e == DType::Bool) r.exact = true, r.bound = 1;
    else if (is_integer(e)) r.exact = true, r.bound = std::min(x.exact ? x.bound : 1e300, 1.9e19);
    else if (x.exact && x.bound > exact_limit(e)) r.exact = false;
    if (is_integer(dtype_)) r.exact = true, r.bound = std::numeric_limits<double>::infinity();
    if (r.bound > exact_limit(dtype_)) r.exact = false;
    emit(Json{{"op", "convert"}, {"in", {mid.name}}, {"dtype", std::string(to_string(dtype_))}}, r);
  }

  void indexing(const Val& x) {
    switch (rng_.below(5)) {
      case 0: {  // slice off the first row, pad it back with a constant
        needs_nonempty_ = true;
        Val s = emit(Json{{"op", "slice"}, {"in", {x.name}}, {"start_indices", {1, 0}}, {"limit_indices", {"N", "N"}}},
                     Val{"", Form::Square, dtype_, x.exact, x.bound, x.ulps});
        vals_.pop_back();
        Val pv = scalar_constant(2);
        vals_.pop_back();
        emit(Json{{"op", "pad"}, {"in", {s.name, pv.name}}, {"edge_padding_low", {1, 0}}, {"edge_padding_high", {0, 0}}},
             Val{"", Form::Square, dtype_, x.exact, std::max(x.bound, 2.0), x.ulps});
        break;
      }
      case 1: {  // grow by 1 and 2 (interior padding too), shrink back
        Val pv = scalar_constant(0);
        vals_.pop_back();
        Val g = emit(Json{{"op", "pad"}, {"in", {x.name, pv.name}}, {"edge_padding_low", {1, 0}}, {"edge_padding_high", {0, 2}}},
                     Val{"", Form::Square, dtype_, x.exact, x.bound, x.ulps});
        vals_.pop_back();
        Val n = emit(Json{{"op", "negate"}, {"in", {g.name}}}, g);
        vals_.pop_back();
        emit(Json{{"op", "pad"}, {"in", {n.name, pv.name}}, {"edge_padding_low", {-1, 0}}, {"edge_padding_high", {0, -2}}},
             Val{"", Form::Square, dtype_, x.exact, x.bound, x.ulps});
        break;
      }
      case 2: {  // concatenate to [2N, N], take one half back
        Val y = pick_square();
        Val c = emit(Json{{"op", "concatenate"}, {"in", {x.name, y.name}}, {"dimension", 0}},
                     Val{"", Form::Square, dtype_, x.exact && y.exact, std::max(x.bound, y.bound), std::max(x.ulps, y.ulps)});
        vals_.pop_back();
        const bool second = rng_.chance(0.5);
        const Val& from = second ? y : x;
        emit(Json{{"op", "slice"}, {"in", {c.name}}, {"start_indices", {second ? Json("N") : Json(0), 0}},
                  {"limit_indices", {second ? Json("2 * N") : Json("N"), "N"}}},
             Val{"", Form::Square, dtype_, from.exact, from.bound, from.ulps});
        break;
      }
      case 3: {  // one row, picked at a clamped index, broadcast over the rows
        needs_nonempty_ = true;
        Val i = index_constant(rng_.between(-3, static_cast<int64_t>(options_.max_n) + 3));
        Val j = index_constant(0);
        Val row = emit(Json{{"op", "dynamic_slice"}, {"in", {x.name, i.name, j.name}}, {"slice_sizes", {1, "N"}}},
                       Val{"", Form::Square, dtype_, x.exact, x.bound, x.ulps});
        vals_.pop_back();
        emit(Json{{"op", "broadcast_in_dim"}, {"in", {row.name}}, {"shape", {"N", "N"}}, {"broadcast_dimensions", {0, 1}}},
             Val{"", Form::Square, dtype_, x.exact, x.bound, x.ulps});
        break;
      }
      case 4: {  // write a row of another value into x at a clamped index
        needs_nonempty_ = true;
        Val y = pick_square();
        Val i = index_constant(rng_.between(-2, static_cast<int64_t>(options_.max_n) + 2));
        Val z = index_constant(0);
        Val row = emit(Json{{"op", "dynamic_slice"}, {"in", {y.name, z.name, z.name}}, {"slice_sizes", {1, "N"}}},
                       Val{"", Form::Square, dtype_, y.exact, y.bound, y.ulps});
        vals_.pop_back();
        emit(Json{{"op", "dynamic_update_slice"}, {"in", {x.name, row.name, i.name, z.name}}},
             Val{"", Form::Square, dtype_, x.exact && y.exact, std::max(x.bound, y.bound), std::max(x.ulps, y.ulps)});
        break;
      }
    }
  }

  // Uses a vector (a reduction's or a diagonal's): broadcast back over a
  // square, or embed as a diagonal.
  void vector_use() {
    Val v = pick_vec();
    if (v.name.empty()) return;
    if (rng_.chance(0.7)) {
      emit(Json{{"op", "broadcast_in_dim"}, {"in", {v.name}}, {"shape", {"N", "N"}}, {"broadcast_dimensions", {rng_.below(2)}}},
           Val{"", Form::Square, dtype_, v.exact, v.bound, v.ulps});
    } else {
      emit(Json{{"op", "embed_diag"}, {"in", {v.name}}}, Val{"", Form::Square, dtype_, v.exact, v.bound, v.ulps});
    }
  }

  // A fresh source: iota along an axis, or a filled constant (special
  // values included).
  void source() {
    if (rng_.chance(0.5)) {
      emit(Json{{"op", "iota"}, {"dtype", std::string(to_string(dtype_))}, {"shape", {"N", "N"}}, {"iota_dimension", rng_.below(2)}},
           Val{"", Form::Square, dtype_, true, static_cast<double>(options_.max_n), 0});
      return;
    }
    std::vector<double> xs = {0, 1, -1, 3, -7};
    if (is_float(dtype_)) xs.insert(xs.end(), {std::nan(""), INFINITY, -INFINITY, -0.0, 0.5});
    if (is_integer(dtype_) && !is_signed_integer(dtype_)) xs = {0, 1, 3, 7};
    const double x = rng_.pick(xs);
    const bool exact = !std::isfinite(x) || x == std::floor(x);
    constant(Form::Square, x, exact);
  }

  // Row indices i32[N, 1] (kept out of the pool): 0 .. N-1 in order or
  // reversed (`distinct`), doubled (the upper half out of range: gather
  // clamps, scatter skips), or i mod 3 (duplicates; only when !distinct).
  Val row_indices(bool distinct) {
    Val ids = emit(Json{{"op", "iota"}, {"dtype", "i32"}, {"shape", {"N", 1}}, {"iota_dimension", 0}},
                   Val{"", Form::Square, DType::I32, true, 0, 0});
    vals_.pop_back();
    switch (rng_.below(distinct ? 3 : 4)) {
      case 0: break;
      case 1:
        ids = emit(Json{{"op", "reverse"}, {"in", {ids.name}}, {"dimensions", {0}}}, ids);
        vals_.pop_back();
        break;
      case 2:
      case 3: {
        Val k = emit(Json{{"op", "constant"}, {"dtype", "i32"}, {"shape", {"N", 1}}, {"value", distinct ? 2 : 3}}, ids);
        vals_.pop_back();
        ids = emit(Json{{"op", distinct ? "multiply" : "remainder"}, {"in", {ids.name, k.name}}}, ids);
        vals_.pop_back();
        break;
      }
    }
    return ids;
  }

  // gather of rows of x at row_indices; or scatter of the rows of another
  // value into x there (replace, add, multiply, max, min: an element is
  // updated at most once unless the update replaces, whose order is fixed).
  void gather_or_scatter(const Val& x) {
    needs_nonempty_ = true;  // a gathered row is a slice of size 1 on axis 0
    if (rng_.chance(0.5)) {
      Val ids = row_indices(false);
      emit(Json{{"op", "gather"}, {"in", {x.name, ids.name}}, {"offset_dims", {1}}, {"collapsed_slice_dims", {0}},
                {"start_index_map", {0}}, {"index_vector_dim", 1}, {"slice_sizes", {1, "N"}}},
           Val{"", Form::Square, dtype_, x.exact, x.bound, x.ulps});
      return;
    }
    std::vector<std::string> kinds = {"replace", "add", "maximum", "minimum"};
    if (!is_complex(dtype_)) kinds.push_back("multiply");  // complex products: zero signs unspecified
    std::string kind = rng_.pick(kinds);
    const Val y = pick_square();
    Val ids = row_indices(kind != "replace");
    Val r{"", Form::Square, dtype_, x.exact && y.exact, std::max(x.bound, y.bound), std::max(x.ulps, y.ulps)};
    if (kind == "add") r.bound = x.bound + y.bound;
    if (kind == "multiply") r.bound = x.bound * y.bound;
    if ((kind == "add" || kind == "multiply") && r.ulps > 0) r.ulps += 1;
    if (r.bound > exact_limit(dtype_)) r.exact = false;
    if (kind == "maximum") kind = "max";
    if (kind == "minimum") kind = "min";
    emit(Json{{"op", "scatter"}, {"in", {x.name, ids.name, y.name}}, {"update_window_dims", {1}},
              {"inserted_window_dims", {0}}, {"scatter_dims_to_operand_dims", {0}}, {"index_vector_dim", 1},
              {"update", kind}},
         r);
  }

  // shape_of (N, converted and broadcast, added to x), or dynamic_truncate
  // of x along an axis (a length clamped to it) padded back to x's shape
  // with zeros by pad_to_match.
  void shape_ops(const Val& x) {
    if (rng_.chance(0.5)) {
      Val shape = emit(Json{{"op", "shape_of"}, {"in", {x.name}}}, Val{"", Form::Vec, DType::I64, true, 0, 0});
      vals_.pop_back();
      Val first = emit(Json{{"op", "slice"}, {"in", {shape.name}}, {"start_indices", {0}}, {"limit_indices", {1}}}, shape);
      vals_.pop_back();
      Val as_type = emit(Json{{"op", "convert"}, {"in", {first.name}}, {"dtype", std::string(to_string(dtype_))}}, shape);
      vals_.pop_back();
      const auto n = static_cast<double>(options_.max_n);
      Val filled = emit(Json{{"op", "broadcast_in_dim"}, {"in", {as_type.name}}, {"shape", {"N", "N"}},
                             {"broadcast_dimensions", {0}}},
                        Val{"", Form::Square, dtype_, true, n, 0});
      Val r{"", Form::Square, dtype_, x.exact, x.bound + n, x.ulps > 0 ? x.ulps + 1 : 0};
      if (r.bound > exact_limit(dtype_)) r.exact = false;
      emit(Json{{"op", "add"}, {"in", {x.name, filled.name}}}, r);
      return;
    }
    Val length = index_constant(rng_.between(-1, static_cast<int64_t>(options_.max_n) + 1));
    Val cut = emit(Json{{"op", "dynamic_truncate"}, {"in", {x.name, length.name}}, {"dimension", rng_.below(2)}}, x);
    vals_.pop_back();  // its extent is known only at run time
    if (rng_.chance(0.5)) {
      cut = emit(Json{{"op", "negate"}, {"in", {cut.name}}}, cut);
      vals_.pop_back();
    }
    emit(Json{{"op", "pad_to_match"}, {"in", {cut.name, x.name}}}, Val{"", Form::Square, dtype_, x.exact, x.bound, x.ulps});
  }

  // x : [N, N] carried through the second symbol: b = a . x ([M, N]), then
  // a^T . b ([N, N], a sum over M), with a an [M, N] input; operands made
  // exact so that neither sum depends on its order.
  void through_m(const Val& x) {
    if (rect_.empty() || x.ulps > 0) return;
    if (!options_.float_dots && !is_integer(dtype_)) return;
    const double lim = exact_limit(dtype_);
    const double n = options_.max_n;
    const double c = is_complex(dtype_) ? 2 : 1;
    // |a| <= e and |x| <= e: |b| <= e^2 n c and |a^T b| <= e^3 n^2 c^2.
    const double each = std::min(8.0, std::floor(std::cbrt(lim / (n * n * c * c))));
    if (!is_integer(dtype_) && each < 1) return;
    auto a = within(rect_.front(), each);
    auto r = within(x, each);
    if (!a || !r) return;
    const bool ints = is_integer(dtype_);
    const double inf = std::numeric_limits<double>::infinity();
    Val b = emit(Json{{"op", "dot_general"}, {"in", {a->name, r->name}}, {"lhs_contracting_dimensions", {1}},
                      {"rhs_contracting_dimensions", {0}}},
                 Val{"", Form::Rect, dtype_, true, ints ? inf : a->bound * r->bound * n * c, 0});
    vals_.pop_back();
    Val d = emit(Json{{"op", "dot_general"}, {"in", {a->name, b.name}}, {"lhs_contracting_dimensions", {0}},
                      {"rhs_contracting_dimensions", {0}}},
                 Val{"", Form::Square, dtype_, true, ints ? inf : a->bound * b.bound * n * c, 0});
    canonical_zero(d);
  }

  void reshape_round_trip(const Val& x) {
    Val flat = emit(Json{{"op", "reshape"}, {"in", {x.name}}, {"shape", {"N * N"}}}, Val{"", Form::Vec, dtype_, x.exact, x.bound, x.ulps});
    vals_.pop_back();
    Val r = flat;
    if (rng_.chance(0.5)) {
      r = emit(Json{{"op", "negate"}, {"in", {flat.name}}}, flat);
      vals_.pop_back();
    }
    emit(Json{{"op", "reshape"}, {"in", {r.name}}, {"shape", {"N", "N"}}}, Val{"", Form::Square, dtype_, x.exact, x.bound, x.ulps});
  }

  Rng rng_;
  GeneratorOptions options_;
  DType dtype_;
  Json inputs_ = Json::array();
  Json ops_ = Json::array();
  std::vector<Val> vals_;
  std::vector<bool> wild_inputs_;
  std::vector<bool> rect_inputs_;
  /// Inputs [M, N], outside the pool.
  std::vector<Val> rect_;
  uint32_t op_count_ = 0;
  uint32_t next_name_ = 0;
  bool needs_nonempty_ = false;
};

// -- inputs -------------------------------------------------------------------

template <class F> F float_special(Rng& r, bool wild) {
  using L = std::numeric_limits<F>;
  if (!wild) {
    // Rare enough that most sums over a row see none.
    const uint64_t k = r.below(200);
    if (k < 1) return L::quiet_NaN();
    if (k < 2) return L::infinity();
    if (k < 3) return -L::infinity();
    if (k < 13) return F(-0.0);
    return F(static_cast<double>(r.between(-4, 4)));
  }
  switch (r.below(14)) {
    case 0: return L::quiet_NaN();
    case 1: return L::infinity();
    case 2: return -L::infinity();
    case 3: return F(-0.0);
    case 4: return L::denorm_min();
    case 5: return -L::denorm_min() * F(3);
    case 6: return L::min();
    case 7: return L::max();
    case 8: return L::lowest();
    case 9: return F(0.5);
    case 10: return F(1.0) / F(3.0);
    default: return F(static_cast<double>(r.between(-100000, 100000)) / 64.0);
  }
}

// One element in the dtype's own encoding.
void set_element(HostTensor& t, int64_t i, Rng& r, bool wild) {
  auto ints = [&](auto* p, auto lo, auto hi) {
    using T = std::remove_pointer_t<decltype(p)>;
    switch (r.below(8)) {
      case 0: p[i] = lo; break;
      case 1: p[i] = hi; break;
      case 2: p[i] = static_cast<T>(r.next()); break;
      default: p[i] = static_cast<T>(r.between(-4, 4)); break;
    }
  };
  switch (t.dtype()) {
    case DType::I8: ints(t.data_as<int8_t>(), INT8_MIN, INT8_MAX); break;
    case DType::I16: ints(t.data_as<int16_t>(), INT16_MIN, INT16_MAX); break;
    case DType::I32: ints(t.data_as<int32_t>(), INT32_MIN, INT32_MAX); break;
    case DType::I64: ints(t.data_as<int64_t>(), INT64_MIN, INT64_MAX); break;
    case DType::U8: ints(t.data_as<uint8_t>(), uint8_t{0}, UINT8_MAX); break;
    case DType::U16: ints(t.data_as<uint16_t>(), uint16_t{0}, UINT16_MAX); break;
    case DType::U32: ints(t.data_as<uint32_t>(), 0u, UINT32_MAX); break;
    case DType::U64: ints(t.data_as<uint64_t>(), uint64_t{0}, UINT64_MAX); break;
    case DType::F32: t.data_as<float>()[i] = float_special<float>(r, wild); break;
    case DType::F64: t.data_as<double>()[i] = float_special<double>(r, wild); break;
    case DType::F16: {
      // f16's own extremes: 65504, 2^-24 (subnormal), 2^-14.
      double v = float_special<float>(r, false);
      if (wild) {
        const double kF16[] = {65504.0, -65504.0, 0x1.0p-24, -0x1.0p-24 * 5, 0x1.0p-14, 0.1, 1e5};
        v = r.chance(0.5) ? kF16[r.below(7)] : float_special<float>(r, true);
      }
      t.data_as<f16>()[i] = f16(v);
      break;
    }
    case DType::BF16: t.data_as<bf16>()[i] = bf16(static_cast<double>(float_special<float>(r, wild))); break;
    case DType::C64: t.data_as<std::complex<float>>()[i] = {float_special<float>(r, false), float_special<float>(r, false)}; break;
    case DType::C128: t.data_as<std::complex<double>>()[i] = {float_special<double>(r, false), float_special<double>(r, false)}; break;
    case DType::Bool: t.data_as<uint8_t>()[i] = static_cast<uint8_t>(r.below(2)); break;
  }
}

uint64_t ulp_distance(double a, double b, DType t) {
  // Maps each value to an integer ordered like the reals, in the type's
  // own encoding, and subtracts.
  int64_t x = 0, y = 0;
  if (t == DType::F64 || t == DType::C128) {
    int64_t ba, bb;
    std::memcpy(&ba, &a, 8);
    std::memcpy(&bb, &b, 8);
    x = ba < 0 ? -(ba & INT64_MAX) : ba;
    y = bb < 0 ? -(bb & INT64_MAX) : bb;
  } else if (t == DType::F32 || t == DType::C64) {
    float fa = static_cast<float>(a), fb = static_cast<float>(b);
    int32_t ba, bb;
    std::memcpy(&ba, &fa, 4);
    std::memcpy(&bb, &fb, 4);
    x = static_cast<int32_t>(ba) < 0 ? -static_cast<int64_t>(ba & 0x7fffffff) : ba;
    y = static_cast<int32_t>(bb) < 0 ? -static_cast<int64_t>(bb & 0x7fffffff) : bb;
  } else {
    const uint16_t ba = t == DType::F16 ? f16(a).bits : bf16(a).bits;
    const uint16_t bb = t == DType::F16 ? f16(b).bits : bf16(b).bits;
    x = (ba & 0x8000) ? -static_cast<int64_t>(ba & 0x7fff) : ba;
    y = (bb & 0x8000) ? -static_cast<int64_t>(bb & 0x7fff) : bb;
  }
  return x > y ? static_cast<uint64_t>(x - y) : static_cast<uint64_t>(y - x);
}

bool close(double e, double a, DType t, uint32_t ulps) {
  if (std::isnan(e) || std::isnan(a)) return std::isnan(e) && std::isnan(a);
  if (ulps == 0 || std::isinf(e) || std::isinf(a)) {
    if (e != a) return false;
    return std::signbit(e) == std::signbit(a);
  }
  return ulp_distance(e, a, t) <= ulps;
}

// One key per line, and one input or op per line: a program a person can
// read and edit when replaying a failure.
std::string readable(const Json& program) {
  std::string out = "{\n";
  size_t k = 0;
  for (auto it = program.begin(); it != program.end(); ++it, ++k) {
    out += "  " + Json(it.key()).dump() + ": ";
    if (it->is_array() && !it->empty() && (*it)[0].is_object()) {
      out += "[\n";
      for (size_t i = 0; i < it->size(); ++i) out += "    " + (*it)[i].dump() + (i + 1 < it->size() ? ",\n" : "\n");
      out += "  ]";
    } else {
      out += it->dump();
    }
    out += k + 1 < program.size() ? ",\n" : "\n";
  }
  return out + "}\n";
}

}  // namespace

std::string generate_program_json(uint64_t seed, uint32_t program_index, const GeneratorOptions& options) {
  return readable(ProgramBuilder(seed, program_index, options).build().program);
}

Result<GeneratedJob> generate_job(uint64_t seed, uint64_t index, const GeneratorOptions& options) {
  Rng r = rng_for(seed, index, 2);
  GeneratedJob job;
  job.program_index = static_cast<uint32_t>(r.below(std::max<uint32_t>(1, options.programs)));
  auto built = ProgramBuilder(seed, job.program_index, options).build();
  job.program_json = readable(built.program);
  job.output_ulps = built.output_ulps;
  const bool nonempty = built.program["guards"][0] == "N >= 1";
  const int64_t max_n = std::min<int64_t>(64, options.max_n);
  // Small sizes (0 and 1 included) as often as large ones.
  job.n = r.chance(0.3) ? r.between(nonempty ? 1 : 0, std::min<int64_t>(3, max_n)) : r.between(nonempty ? 1 : 0, max_n);
  const bool has_m = std::find(built.rect_inputs.begin(), built.rect_inputs.end(), true) != built.rect_inputs.end();
  if (has_m) job.m = r.chance(0.3) ? r.between(0, std::min<int64_t>(3, max_n)) : r.between(0, max_n);
  for (size_t k = 0; k < built.wild_inputs.size(); ++k) {
    const int64_t rows = built.rect_inputs[k] ? job.m : job.n;
    auto t = Tensor::zeros(built.dtype, {rows, job.n});
    if (!t.ok()) return t.error().with_context("stress job " + std::to_string(index) + ": an input");
    for (int64_t i = 0; i < rows * job.n; ++i) set_element(*t, i, r, built.wild_inputs[k]);
    job.inputs.push_back(std::move(*t));
  }
  return job;
}

bool results_match(const HostTensor& expected, const HostTensor& actual, uint32_t ulps, std::string* why) {
  auto fail = [&](std::string text) {
    if (why) *why = std::move(text);
    return false;
  };
  if (expected.dtype() != actual.dtype()) return fail("dtype " + std::string(to_string(actual.dtype())) + ", expected " + std::string(to_string(expected.dtype())));
  if (expected.shape() != actual.shape()) return fail("shape differs from the CPU engine's");
  auto e = expected.contiguous();
  auto a = actual.contiguous();
  if (!e.ok() || !a.ok()) return fail("cannot read the results");
  const int64_t count = e->element_count();
  const DType t = e->dtype();
  auto at = [&](const HostTensor& x, int64_t i, int part) -> double {
    switch (t) {
      case DType::F32: return x.data_as<float>()[i];
      case DType::F64: return x.data_as<double>()[i];
      case DType::F16: return x.data_as<f16>()[i].to_float();
      case DType::BF16: return x.data_as<bf16>()[i].to_float();
      case DType::C64: return part ? x.data_as<std::complex<float>>()[i].imag() : x.data_as<std::complex<float>>()[i].real();
      case DType::C128: return part ? x.data_as<std::complex<double>>()[i].imag() : x.data_as<std::complex<double>>()[i].real();
      default: return 0;
    }
  };
  const size_t width = size_of(t);
  for (int64_t i = 0; i < count; ++i) {
    if (is_integer(t) || t == DType::Bool) {
      if (std::memcmp(e->data() + i * width, a->data() + i * width, width) != 0)
        return fail("element " + std::to_string(i) + " differs bit for bit");
      continue;
    }
    for (int part = 0; part < (is_complex(t) ? 2 : 1); ++part) {
      const double x = at(*e, i, part), y = at(*a, i, part);
      if (!close(x, y, t, ulps)) {
        char text[160];
        std::snprintf(text, sizeof text, "element %lld%s: %.17g, the CPU engine gives %.17g (%u ulps allowed)",
                      static_cast<long long>(i), is_complex(t) ? (part ? " (imaginary)" : " (real)") : "", y, x, ulps);
        return fail(text);
      }
    }
  }
  return true;
}

}  // namespace tenact::stress
