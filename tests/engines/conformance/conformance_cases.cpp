// The op x dtype x layout matrix: the op table (from docs/program-format.md)
// and, per op, a small program that applies it to operands in a layout,
// with several outputs where the op has variants (attributes, directions,
// update modes), and its inputs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

#include "core/half.hpp"
#include "core/program_json.hpp"
#include "tests/engines/conformance/conformance.hpp"

namespace tenact::conformance {

namespace {

using Dims = std::vector<int64_t>;

// -- dtype sets, as the spec words them -------------------------------------------------

std::vector<DType> dtypes_where(bool (*keep)(DType)) {
  std::vector<DType> out;
  for (DType t : kAllDTypes)
    if (keep(t)) out.push_back(t);
  return out;
}
bool any_type(DType) { return true; }
bool numeric(DType t) { return !is_bool(t); }  // every integer, floating and complex type
bool integer_or_float(DType t) { return is_integer(t) || is_float(t); }
bool signed_float_complex(DType t) { return is_signed_integer(t) || is_float(t) || is_complex(t); }
bool float_or_complex(DType t) { return is_float(t) || is_complex(t); }
bool floating(DType t) { return is_float(t); }
bool bool_or_integer(DType t) { return is_bool(t) || is_integer(t); }

constexpr DType kIntegerTypes[] = {DType::I8, DType::I16, DType::I32, DType::I64,
                                   DType::U8, DType::U16, DType::U32, DType::U64};

/// The index dtype a case uses: every integer type in turn over the data
/// dtypes, so that each index kernel path is met.
DType index_dtype_for(DType data) { return kIntegerTypes[static_cast<size_t>(data) % 8]; }

// -- JSON text ---------------------------------------------------------------------

std::string ints(const Dims& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string real_json(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

double load_real(DType t, const std::byte* at) {
  switch (t) {
    case DType::F16: { uint16_t b; std::memcpy(&b, at, 2); return half_detail::f16_bits_to_float(b); }
    case DType::BF16: { uint16_t b; std::memcpy(&b, at, 2); return half_detail::bf16_bits_to_float(b); }
    case DType::F32: { float f; std::memcpy(&f, at, 4); return f; }
    case DType::F64: { double d; std::memcpy(&d, at, 8); return d; }
    default: return 0;
  }
}

/// One element of a dense host tensor as the program format writes it.
std::string element_json(DType t, const std::byte* at) {
  if (is_bool(t)) return std::to_integer<int>(*at) ? "true" : "false";
  if (is_float(t)) return real_json(load_real(t, at));
  if (is_complex(t)) {
    const DType c = real_component(t);
    return "[" + real_json(load_real(c, at)) + ", " + real_json(load_real(c, at + size_of(c))) + "]";
  }
  uint64_t bits = 0;
  std::memcpy(&bits, at, std::min(size_of(t), sizeof bits));
  if (is_unsigned_integer(t)) return std::to_string(bits);
  const int shift = 64 - static_cast<int>(size_of(t)) * 8;
  return std::to_string(static_cast<int64_t>(bits << shift) >> shift);
}

std::string tensor_values_json(const Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.element_count(); ++i)
    s += (i ? ", " : "") + element_json(t.dtype(), t.data() + static_cast<size_t>(i) * size_of(t.dtype()));
  return s + "]";
}

/// A scalar of `t` as a JSON value, for splat constants and attributes.
std::string scalar_json(DType t, int which) {
  if (is_bool(t)) return which % 2 ? "true" : "false";
  if (is_unsigned_integer(t)) return which % 2 ? "7" : std::to_string(static_cast<uint64_t>(1) << (size_of(t) * 8 - 1));
  if (is_signed_integer(t)) return which % 2 ? "-7" : "3";
  if (is_float(t)) return which % 2 ? "\"-inf\"" : "-1.5";
  return which % 2 ? "[\"nan\", -0.0]" : "[1.5, -2]";
}

uint64_t hash_text(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

// -- building one case ---------------------------------------------------------------

class Builder {
 public:
  Builder(OpKind kind, DType dtype, Layout layout) : kind_(kind), dtype_(dtype), layout_(layout) {
    seed_ = hash_text(std::string{tenact::to_string(kind)} + "/" + std::string{tenact::to_string(dtype)} + "/" +
                      to_string(layout));
  }

  Layout layout() const { return layout_; }
  bool empty() const { return layout_ == Layout::Empty; }
  /// `shape` for the layout: its first axis 0 when the case is empty.
  Dims dims(Dims shape) const {
    if (empty() && !shape.empty()) shape[0] = 0;
    return shape;
  }

  /// A program input holding `value`.
  std::string input(Tensor value) {
    const std::string name = "x" + std::to_string(inputs_.size());
    input_decls_.push_back("{\"name\": " + quoted(name) + ", \"dtype\": " +
                           quoted(std::string{tenact::to_string(value.dtype())}) + ", \"shape\": " +
                           ints(value.shape()) + "}");
    inputs_.push_back(std::move(value));
    return name;
  }
  /// A random dense input.
  std::string input(DType t, Dims shape, int special_every = 3) {
    return input(random_tensor(t, std::move(shape), next_seed(), special_every));
  }
  /// An integer scalar input.
  std::string scalar(DType t, int64_t value) { return input(integer_tensor(t, {}, {value})); }

  /// An operand of `shape` as the layout has it reach the op. `slot` 0, 2,
  /// ... are in the layout; odd slots are contiguous inputs (so that binary
  /// ops meet a strided or broadcast operand beside a dense one).
  std::string operand(DType t, const Dims& shape, int slot, int special_every = 3) {
    const size_t rank = shape.size();
    Layout l = slot % 2 ? Layout::Contiguous : layout_;
    if (l == Layout::Transposed && rank < 2) l = Layout::Sliced;
    if (rank == 0 || l == Layout::Contiguous || l == Layout::Empty) return input(t, shape, special_every);
    if (l == Layout::Transposed) {
      Dims reversed(shape.rbegin(), shape.rend()), permutation;
      for (size_t i = rank; i-- > 0;) permutation.push_back(static_cast<int64_t>(i));
      const std::string x = input(t, reversed, special_every);
      return op("transpose", {x}, "\"permutation\": " + ints(permutation));
    }
    if (l == Layout::Sliced) {
      Dims bigger = shape, start(rank, 1), strides(rank, 1);
      for (size_t i = 0; i + 1 < rank; ++i) bigger[i] = shape[i] + 1;
      bigger[rank - 1] = 2 * shape[rank - 1] + 1;
      strides[rank - 1] = 2;
      const std::string x = input(t, bigger, special_every);
      return op("slice", {x}, "\"start_indices\": " + ints(start) + ", \"limit_indices\": " + ints(bigger) +
                                  ", \"strides\": " + ints(strides));
    }
    // Broadcast: the first axis is added by broadcast_in_dim.
    Dims smaller(shape.begin() + 1, shape.end()), mapped;
    for (size_t i = 1; i < rank; ++i) mapped.push_back(static_cast<int64_t>(i));
    const std::string x = input(t, smaller, special_every);
    return op("broadcast_in_dim", {x}, "\"shape\": " + ints(shape) + ", \"broadcast_dimensions\": " + ints(mapped));
  }

  /// Appends an op; returns its result's name.
  std::string op(const std::string& name, const std::vector<std::string>& in, const std::string& attrs = "") {
    const std::string out = "v" + std::to_string(ops_.size());
    std::string text = "{\"op\": " + quoted(name);
    if (!in.empty()) {
      text += ", \"in\": [";
      for (size_t i = 0; i < in.size(); ++i) text += (i ? ", " : "") + quoted(in[i]);
      text += "]";
    }
    text += ", \"out\": " + quoted(out);
    if (!attrs.empty()) text += ", " + attrs;
    ops_.push_back(text + "}");
    return out;
  }
  std::string op_under_test(const std::vector<std::string>& in, const std::string& attrs = "") {
    return op(std::string{tenact::to_string(kind_)}, in, attrs);
  }

  void output(const std::string& value, Accuracy accuracy) {
    outputs_.push_back(value);
    accuracies_.push_back(accuracy);
  }

  Case finish(std::optional<DType> to = std::nullopt) {
    Case c;
    c.kind = kind_;
    c.op = std::string{tenact::to_string(kind_)};
    c.dtype = dtype_;
    c.to = to;
    c.layout = layout_;
    std::string json = "{\"format\": \"tenact.program/1\", \"name\": " + quoted(c.label()) + ",\n \"inputs\": [";
    for (size_t i = 0; i < input_decls_.size(); ++i) json += (i ? ",\n  " : "") + input_decls_[i];
    json += "],\n \"ops\": [";
    for (size_t i = 0; i < ops_.size(); ++i) json += (i ? ",\n  " : "") + ops_[i];
    json += "],\n \"outputs\": [";
    for (size_t i = 0; i < outputs_.size(); ++i) json += (i ? ", " : "") + quoted(outputs_[i]);
    json += "]}";
    c.json = std::move(json);
    c.inputs = std::move(inputs_);
    c.outputs = std::move(outputs_);
    c.accuracies = std::move(accuracies_);
    return c;
  }

 private:
  uint64_t next_seed() { return seed_ + 7919 * ++seeds_; }

  OpKind kind_;
  DType dtype_;
  Layout layout_;
  uint64_t seed_ = 0;
  uint64_t seeds_ = 0;
  std::vector<std::string> input_decls_;
  std::vector<Tensor> inputs_;
  std::vector<std::string> ops_;
  std::vector<std::string> outputs_;
  std::vector<Accuracy> accuracies_;
};

// -- what the spec promises ------------------------------------------------------------

bool is_unary(OpKind k) {
  switch (k) {
    case OpKind::Negate: case OpKind::Abs: case OpKind::Sign: case OpKind::Exponential: case OpKind::Log:
    case OpKind::Sine: case OpKind::Cosine: case OpKind::Tanh: case OpKind::Sqrt: case OpKind::Rsqrt:
    case OpKind::ExponentialMinusOne: case OpKind::LogPlusOne: case OpKind::Conj: case OpKind::Floor:
    case OpKind::Ceil: case OpKind::RoundNearestEven: case OpKind::RoundNearestAfz: case OpKind::Logistic:
    case OpKind::Not: return true;
    default: return false;
  }
}

bool is_binary(OpKind k) {
  switch (k) {
    case OpKind::Add: case OpKind::Subtract: case OpKind::Multiply: case OpKind::Divide: case OpKind::Remainder:
    case OpKind::Maximum: case OpKind::Minimum: case OpKind::Power: case OpKind::And: case OpKind::Or:
    case OpKind::Xor: return true;
    default: return false;
  }
}

bool is_reduction(OpKind k) { return family_of(k) == OpFamily::Reduction; }

/// The accuracy class of an elementwise op's result on `t`.
Accuracy elementwise_accuracy(OpKind k, DType t) {
  if (!is_float(t) && !is_complex(t)) return Accuracy::Exact;  // integer and bool arithmetic is exact
  switch (k) {
    case OpKind::Exponential: case OpKind::Log: case OpKind::Sine: case OpKind::Cosine: case OpKind::Tanh:
    case OpKind::Rsqrt: case OpKind::ExponentialMinusOne: case OpKind::LogPlusOne: case OpKind::Logistic:
    case OpKind::Power: return Accuracy::Approximate;
    // Correctly rounded on real floats; not one rounding on complex ones.
    case OpKind::Multiply: case OpKind::Divide: case OpKind::Sqrt: case OpKind::Abs: case OpKind::Sign:
      return is_complex(t) ? Accuracy::Approximate : Accuracy::Exact;
    default: return Accuracy::Exact;
  }
}

Accuracy sum_or_exact(DType t) { return is_float(t) || is_complex(t) ? Accuracy::Sum : Accuracy::Exact; }
Accuracy product_or_exact(DType t) { return is_float(t) || is_complex(t) ? Accuracy::Product : Accuracy::Exact; }

// -- one program per op --------------------------------------------------------------

const char* kDirections[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};

/// Builds the case of `kind` on `d` (for convert, to `to`).
Case build(OpKind kind, DType d, Layout layout, DType to = DType::F32) {
  Builder b(kind, d, layout);
  const Accuracy acc = elementwise_accuracy(kind, d);
  const DType it = index_dtype_for(d);
  const bool signed_index = is_signed_integer(it);
  if (is_unary(kind)) {
    const std::string x = b.operand(d, b.dims({4, 6}), 0);
    b.output(b.op_under_test({x}), acc);
    return b.finish();
  }
  if (is_binary(kind)) {
    const Dims s = b.dims({4, 6});
    const std::string x = b.operand(d, s, 0), y = b.operand(d, s, 1), x2 = b.operand(d, s, 2);
    b.output(b.op_under_test({x, y}), acc);
    b.output(b.op_under_test({x, x2}), acc);
    return b.finish();
  }
  if (is_reduction(kind)) {
    const std::string x = b.operand(d, b.dims({3, 4, 5}), 0, 12);
    const Accuracy r = kind == OpKind::ReduceSum || kind == OpKind::ReduceSumSquares ? sum_or_exact(d)
                       : kind == OpKind::ReduceProd                                   ? product_or_exact(d)
                                                                                      : Accuracy::Exact;
    for (const Dims& axes : {Dims{0}, Dims{1}, Dims{2}, Dims{0, 2}, Dims{0, 1, 2}, Dims{}})
      b.output(b.op_under_test({x}, "\"dimensions\": " + ints(axes)), r);
    return b.finish();
  }
  switch (kind) {
    case OpKind::Compare: {
      const Dims s = b.dims({4, 6});
      const std::string x = b.operand(d, s, 0), y = b.operand(d, s, 1);
      for (const char* dir : kDirections)
        b.output(b.op_under_test({x, y}, "\"direction\": " + quoted(dir)), Accuracy::Exact);
      b.output(b.op_under_test({x, x}, "\"direction\": \"EQ\""), Accuracy::Exact);
      b.output(b.op_under_test({x, x}, "\"direction\": \"GE\""), Accuracy::Exact);
      return b.finish();
    }
    case OpKind::Select: {
      const Dims s = b.dims({4, 6});
      const std::string p = b.operand(DType::Bool, s, 0), t = b.operand(d, s, 1), f = b.operand(d, s, 2);
      b.output(b.op_under_test({p, t, f}), Accuracy::Exact);
      const std::string scalar_pred = b.input(DType::Bool, {});
      b.output(b.op_under_test({scalar_pred, t, f}), Accuracy::Exact);
      return b.finish();
    }
    case OpKind::Clamp: {
      const Dims s = b.dims({4, 6});
      const std::string lo = b.operand(d, s, 0), x = b.operand(d, s, 1), hi = b.operand(d, s, 2);
      b.output(b.op_under_test({lo, x, hi}), Accuracy::Exact);
      const std::string slo = b.input(d, {}), shi = b.input(d, {});
      b.output(b.op_under_test({slo, x, shi}), Accuracy::Exact);
      return b.finish();
    }
    case OpKind::Convert: {
      const std::string x = b.operand(d, b.dims({4, 6}), 0);
      b.output(b.op_under_test({x}, "\"dtype\": " + quoted(std::string{tenact::to_string(to)})), Accuracy::Exact);
      return b.finish(to);
    }
    case OpKind::Transpose: {
      const std::string x = b.operand(d, b.dims({2, 3, 4}), 0);
      b.output(b.op_under_test({x}, "\"permutation\": [1, 2, 0]"), Accuracy::Exact);
      b.output(b.op_under_test({x}, "\"permutation\": [0, 2, 1]"), Accuracy::Exact);
      return b.finish();
    }
    case OpKind::Reshape: {
      const Dims s = b.dims({4, 6});
      const std::string x = b.operand(d, s, 0);
      b.output(b.op_under_test({x}, "\"shape\": " + ints({s[1], s[0]})), Accuracy::Exact);
      b.output(b.op_under_test({x}, "\"shape\": " + ints({s[0] * s[1]})), Accuracy::Exact);
      b.output(b.op_under_test({x}, "\"shape\": " + ints({s[0], 2, 3})), Accuracy::Exact);
      return b.finish();
    }
    case OpKind::BroadcastInDim: {
      const Dims s = b.dims({4, 6});
      const std::string x = b.operand(d, s, 0);
      b.output(b.op_under_test({x}, "\"shape\": " + ints({3, s[0], s[1]}) + ", \"broadcast_dimensions\": [1, 2]"),
               Accuracy::Exact);
      b.output(b.op_under_test({x}, "\"shape\": " + ints({s[1], 2, s[0]}) + ", \"broadcast_dimensions\": [2, 0]"),
               Accuracy::Exact);
      const std::string row = b.input(d, {1, 6});
      b.output(b.op_under_test({row}, "\"shape\": " + ints({s[0], 6}) + ", \"broadcast_dimensions\": [0, 1]"),
               Accuracy::Exact);
      return b.finish();
    }
    case OpKind::Constant: {
      const Dims s = b.dims({4, 6});
      const Tensor value = random_tensor(d, s, hash_text("constant") + static_cast<uint64_t>(d));
      const std::string type = "\"dtype\": " + quoted(std::string{tenact::to_string(d)});
      b.output(b.op("constant", {}, type + ", \"shape\": " + ints(s) + ", \"value\": " + tensor_values_json(value)),
               Accuracy::Exact);
      b.output(b.op("constant", {}, type + ", \"shape\": " + ints(b.dims({3, 5})) + ", \"value\": " + scalar_json(d, 1)),
               Accuracy::Exact);
      b.output(b.op("constant", {}, type + ", \"shape\": [], \"value\": " + scalar_json(d, 0)), Accuracy::Exact);
      return b.finish();
    }
    case OpKind::Iota: {
      const std::string type = "\"dtype\": " + quoted(std::string{tenact::to_string(d)});
      const Dims s = b.dims({4, 6});
      b.output(b.op("iota", {}, type + ", \"shape\": " + ints(s) + ", \"iota_dimension\": 0"), Accuracy::Exact);
      b.output(b.op("iota", {}, type + ", \"shape\": " + ints(s) + ", \"iota_dimension\": 1"), Accuracy::Exact);
      b.output(b.op("iota", {}, type + ", \"shape\": " + ints(b.dims({5})) + ", \"iota_dimension\": 0"),
               Accuracy::Exact);
      return b.finish();
    }
    case OpKind::ExtractDiag: {
      b.output(b.op_under_test({b.operand(d, b.dims({3, 4, 4}), 0)}), Accuracy::Exact);
      return b.finish();
    }
    case OpKind::EmbedDiag: {
      b.output(b.op_under_test({b.operand(d, b.dims({3, 4}), 0)}), Accuracy::Exact);
      return b.finish();
    }
    case OpKind::Tril:
    case OpKind::Triu: {
      const std::string x = b.operand(d, b.dims({4, 6}), 0);
      for (int k : {-1, 0, 2}) b.output(b.op_under_test({x}, "\"k\": " + std::to_string(k)), Accuracy::Exact);
      return b.finish();
    }
    case OpKind::Slice: {
      const Dims s = b.dims({6, 8});
      const std::string x = b.operand(d, s, 0);
      const int64_t a0 = std::min<int64_t>(1, s[0]), l0 = std::max<int64_t>(a0, s[0] - 1);
      b.output(b.op_under_test({x}, "\"start_indices\": " + ints({a0, 2}) + ", \"limit_indices\": " + ints({l0, 7})),
               Accuracy::Exact);
      b.output(b.op_under_test({x}, "\"start_indices\": [0, 1], \"limit_indices\": " + ints({s[0], 8}) +
                                        ", \"strides\": [2, 3]"),
               Accuracy::Exact);
      b.output(b.op_under_test({x}, "\"start_indices\": [0, 3], \"limit_indices\": " + ints({s[0], 3})),
               Accuracy::Exact);
      return b.finish();
    }
    case OpKind::DynamicSlice:
    case OpKind::DynamicUpdateSlice: {
      const Dims s = b.dims({6, 8});
      const std::string x = b.operand(d, s, 0);
      const std::string u = kind == OpKind::DynamicUpdateSlice ? b.operand(d, b.dims({2, 3}), 1) : "";
      const std::string i0 = b.scalar(it, 2), i1 = b.scalar(it, 5);
      // Out of range: clamped (an unsigned start is taken as it is).
      const std::string j0 = b.scalar(it, signed_index ? -3 : 0), j1 = b.scalar(it, signed_index ? 100 : 200);
      if (kind == OpKind::DynamicSlice) {
        const std::string sizes = "\"slice_sizes\": " + ints({std::min<int64_t>(3, s[0]), 4});
        b.output(b.op_under_test({x, i0, i1}, sizes), Accuracy::Exact);
        b.output(b.op_under_test({x, j0, j1}, sizes), Accuracy::Exact);
        b.output(b.op_under_test({x, j1, i0}, "\"slice_sizes\": " + ints({s[0], 0})), Accuracy::Exact);
      } else {
        b.output(b.op_under_test({x, u, i0, i1}), Accuracy::Exact);
        b.output(b.op_under_test({x, u, j0, j1}), Accuracy::Exact);
      }
      return b.finish();
    }
    case OpKind::Pad: {
      const std::string x = b.operand(d, b.dims({4, 5}), 0), pv = b.input(d, {});
      b.output(b.op_under_test({x, pv}, "\"edge_padding_low\": [1, -1], \"edge_padding_high\": [2, 0], "
                                         "\"interior_padding\": [1, 2]"),
               Accuracy::Exact);
      b.output(b.op_under_test({x, pv}, "\"edge_padding_low\": [1, -1], \"edge_padding_high\": [0, -2]"),
               Accuracy::Exact);
      b.output(b.op_under_test({x, pv}, "\"edge_padding_low\": [0, 0], \"edge_padding_high\": [0, 0]"),
               Accuracy::Exact);
      return b.finish();
    }
    case OpKind::Concatenate: {
      const std::string a = b.operand(d, b.dims({4, 5}), 0), c = b.operand(d, b.dims({2, 5}), 1),
                        e = b.operand(d, b.dims({4, 3}), 2);
      b.output(b.op_under_test({a, c}, "\"dimension\": 0"), Accuracy::Exact);
      b.output(b.op_under_test({a, e, a}, "\"dimension\": 1"), Accuracy::Exact);
      b.output(b.op_under_test({c}, "\"dimension\": 1"), Accuracy::Exact);
      return b.finish();
    }
    case OpKind::Reverse: {
      const std::string x = b.operand(d, b.dims({4, 6}), 0);
      for (const Dims& axes : {Dims{0}, Dims{1}, Dims{0, 1}})
        b.output(b.op_under_test({x}, "\"dimensions\": " + ints(axes)), Accuracy::Exact);
      return b.finish();
    }
    case OpKind::Gather: {
      // Empty: no indices (the operand cannot be empty: slice sizes of 1).
      const std::string x = b.operand(d, {5, 6}, 0);
      const int64_t n = b.empty() ? 0 : 4, m = b.empty() ? 0 : 3;
      const std::string rows = b.input(integer_tensor(it, {n, 1}, {0, 4, 2, signed_index ? -1 : 7}));
      b.output(b.op_under_test({x, rows}, "\"offset_dims\": [1], \"collapsed_slice_dims\": [0], "
                                          "\"start_index_map\": [0], \"index_vector_dim\": 1, \"slice_sizes\": [1, 6]"),
               Accuracy::Exact);
      const std::string corners = b.input(integer_tensor(it, {m, 2}, {0, 0, 3, 4, 4, 5}));
      b.output(b.op_under_test({x, corners}, "\"offset_dims\": [1, 2], \"collapsed_slice_dims\": [], "
                                             "\"start_index_map\": [0, 1], \"index_vector_dim\": 1, "
                                             "\"slice_sizes\": [2, 3]"),
               Accuracy::Exact);
      return b.finish();
    }
    case OpKind::Scatter: {
      const std::string x = b.operand(d, {5, 6}, 0);
      const int64_t n = b.empty() ? 0 : 5;
      // Row 1 twice (the last wins for replace), row 9 out of bounds (skipped).
      const std::string rows = b.input(integer_tensor(it, {n, 1}, {1, 3, 1, 9, 0}));
      const std::string updates = b.operand(d, {n, 6}, 1, 12);
      const std::string dims = "\"update_window_dims\": [1], \"inserted_window_dims\": [0], "
                               "\"scatter_dims_to_operand_dims\": [0], \"index_vector_dim\": 1";
      const std::pair<const char*, Accuracy> modes[] = {{"replace", Accuracy::Exact},
                                                        {"add", sum_or_exact(d)},
                                                        {"multiply", product_or_exact(d)},
                                                        {"max", Accuracy::Exact},
                                                        {"min", Accuracy::Exact}};
      for (const auto& [mode, accuracy] : modes)
        b.output(b.op_under_test({x, rows, updates}, dims + ", \"update\": " + quoted(mode)), accuracy);
      return b.finish();
    }
    case OpKind::ShapeOf: {
      b.output(b.op_under_test({b.operand(d, b.dims({4, 6}), 0)}), Accuracy::Exact);
      return b.finish();
    }
    case OpKind::DynamicTruncate: {
      const std::string x = b.operand(d, b.dims({5, 6}), 0);
      const std::string three = b.scalar(it, 3), many = b.scalar(it, 100), none = b.scalar(it, signed_index ? -2 : 0);
      b.output(b.op_under_test({x, three}, "\"dimension\": 0"), Accuracy::Exact);
      b.output(b.op_under_test({x, many}, "\"dimension\": 1"), Accuracy::Exact);
      b.output(b.op_under_test({x, none}, "\"dimension\": 1"), Accuracy::Exact);
      return b.finish();
    }
    case OpKind::PadToMatch: {
      const std::string x = b.operand(d, b.dims({3, 4}), 0);
      const std::string like = b.input(DType::U8, {5, 6});
      b.output(b.op_under_test({x, like}), Accuracy::Exact);
      b.output(b.op_under_test({x, like}, "\"value\": " + scalar_json(d, 1)), Accuracy::Exact);
      return b.finish();
    }
    case OpKind::DotGeneral: {
      const int64_t k = b.empty() ? 0 : 5;  // empty: nothing to contract, the result is zeros
      const Accuracy r = sum_or_exact(d);
      const std::string lhs = b.operand(d, {4, k}, 0, 12), rhs = b.operand(d, {k, 3}, 1, 12);
      b.output(b.op_under_test({lhs, rhs}, "\"lhs_contracting_dimensions\": [1], \"rhs_contracting_dimensions\": [0]"), r);
      const std::string rhs_t = b.operand(d, {3, k}, 2, 12);
      b.output(b.op_under_test({lhs, rhs_t}, "\"lhs_contracting_dimensions\": [1], \"rhs_contracting_dimensions\": [1]"),
               r);
      const std::string bl = b.operand(d, {2, 4, k}, 0, 12), br = b.operand(d, {2, k, 3}, 1, 12);
      b.output(b.op_under_test({bl, br}, "\"lhs_batching_dimensions\": [0], \"rhs_batching_dimensions\": [0], "
                                         "\"lhs_contracting_dimensions\": [2], \"rhs_contracting_dimensions\": [1]"),
               r);
      const std::string u = b.operand(d, {k}, 0, 12), v = b.operand(d, {k}, 1, 12);
      b.output(b.op_under_test({u, v}, "\"lhs_contracting_dimensions\": [0], \"rhs_contracting_dimensions\": [0]"), r);
      b.output(b.op_under_test({lhs, rhs}, "\"lhs_contracting_dimensions\": [], \"rhs_contracting_dimensions\": []"), r);
      if (is_complex(d)) {
        const std::string contract = "\"lhs_contracting_dimensions\": [1], \"rhs_contracting_dimensions\": [0]";
        b.output(b.op_under_test({lhs, rhs}, contract + ", \"conj_lhs\": true"), r);
        b.output(b.op_under_test({lhs, rhs}, contract + ", \"conj_rhs\": true"), r);
      }
      return b.finish();
    }
    default: break;
  }
  // Not reached for the ops of the table (build is called for those only).
  b.output(b.op_under_test({}), Accuracy::Exact);
  return b.finish();
}

Result<Case> loaded(Case c) {
  auto program = load_program(c.json);
  if (!program.ok())
    return Error{ErrorCode::Internal, "the conformance table is wrong: the program of '" + c.label() +
                                          "' does not load: " + std::string{tenact::to_string(program.error().code())} +
                                          ": " + program.error().message() + "\n" + c.json};
  c.program = std::make_shared<const SemanticProgram>(std::move(*program));
  return c;
}

}  // namespace

const std::vector<OpSpec>& op_table() {
  static const std::vector<OpSpec> table = [] {
    const std::vector<Layout> all(std::begin(kAllLayouts), std::end(kAllLayouts));
    const std::vector<Layout> no_operands = {Layout::Contiguous, Layout::Empty};
    std::vector<OpSpec> t;
    const auto row = [&](OpKind k, bool (*admits)(DType), const std::vector<Layout>& layouts) {
      t.push_back(OpSpec{k, dtypes_where(admits), layouts});
    };
    // Elementwise, unary ("Type sets"; transcendental ops take floating and
    // complex types, rounding ops floating ones, not bool and integers).
    row(OpKind::Negate, numeric, all);
    row(OpKind::Abs, signed_float_complex, all);
    row(OpKind::Sign, signed_float_complex, all);
    for (OpKind k : {OpKind::Exponential, OpKind::Log, OpKind::Sine, OpKind::Cosine, OpKind::Tanh, OpKind::Sqrt,
                     OpKind::Rsqrt, OpKind::ExponentialMinusOne, OpKind::LogPlusOne, OpKind::Conj, OpKind::Logistic})
      row(k, float_or_complex, all);
    for (OpKind k : {OpKind::Floor, OpKind::Ceil, OpKind::RoundNearestEven, OpKind::RoundNearestAfz})
      row(k, floating, all);
    row(OpKind::Not, bool_or_integer, all);
    // Elementwise, binary: add, multiply, maximum, minimum take bool too;
    // remainder rejects complex; and/or/xor are bool or integer.
    for (OpKind k : {OpKind::Add, OpKind::Multiply, OpKind::Maximum, OpKind::Minimum}) row(k, any_type, all);
    for (OpKind k : {OpKind::Subtract, OpKind::Divide, OpKind::Power}) row(k, numeric, all);
    row(OpKind::Remainder, integer_or_float, all);
    for (OpKind k : {OpKind::And, OpKind::Or, OpKind::Xor}) row(k, bool_or_integer, all);
    for (OpKind k : {OpKind::Compare, OpKind::Select, OpKind::Clamp, OpKind::Convert}) row(k, any_type, all);
    // Layout: every dtype, iota no bool.
    for (OpKind k : {OpKind::Transpose, OpKind::Reshape, OpKind::BroadcastInDim, OpKind::ExtractDiag,
                     OpKind::EmbedDiag, OpKind::Tril, OpKind::Triu})
      row(k, any_type, all);
    row(OpKind::Constant, any_type, no_operands);
    row(OpKind::Iota, numeric, no_operands);
    // Reductions: every dtype; reduce_sum_squares rejects bool.
    for (OpKind k : {OpKind::ReduceSum, OpKind::ReduceProd, OpKind::ReduceMax, OpKind::ReduceMin})
      row(k, any_type, all);
    row(OpKind::ReduceSumSquares, numeric, all);
    // Indexing: every operand dtype (indices: every integer type, in turn).
    for (OpKind k : {OpKind::Slice, OpKind::DynamicSlice, OpKind::DynamicUpdateSlice, OpKind::Pad,
                     OpKind::Concatenate, OpKind::Reverse, OpKind::Gather, OpKind::Scatter, OpKind::ShapeOf,
                     OpKind::DynamicTruncate, OpKind::PadToMatch})
      row(k, any_type, all);
    // Dot: numeric (bool rejected).
    row(OpKind::DotGeneral, numeric, all);
    return t;
  }();
  return table;
}

Result<std::vector<Case>> make_cases(const OpSpec& spec, DType dtype, Layout layout) {
  std::vector<Case> out;
  if (spec.kind == OpKind::Convert) {
    for (DType to : kAllDTypes) {
      TENACT_ASSIGN_OR_RETURN(Case c, loaded(build(spec.kind, dtype, layout, to)));
      out.push_back(std::move(c));
    }
    return out;
  }
  TENACT_ASSIGN_OR_RETURN(Case c, loaded(build(spec.kind, dtype, layout)));
  out.push_back(std::move(c));
  return out;
}

std::string probe_program(OpKind kind, DType dtype) { return build(kind, dtype, Layout::Contiguous).json; }

}  // namespace tenact::conformance
