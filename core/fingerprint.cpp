#include "core/fingerprint.hpp"

#include <cstring>
#include <type_traits>
#include <xxhash.h>

namespace tenact {

namespace {

// Appends fields in a fixed order: integers little-endian fixed width,
// strings and lists length-prefixed, so no two programs share an encoding.
class Encoder {
 public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    u64(bits);
  }
  void str(std::string_view s) {
    u64(s.size());
    out_.append(s);
  }
  void dim(const DimExpr& e) { str(e.to_string()); }
  void dims(const std::vector<DimExpr>& v) {
    u64(v.size());
    for (const auto& e : v) dim(e);
  }
  void ints(const std::vector<int64_t>& v) {
    u64(v.size());
    for (auto x : v) i64(x);
  }
  void extent(const ShapeExtent& e) {
    u8(static_cast<uint8_t>(e.kind));
    if (e.kind != ExtentKind::Unknown) dim(e.expr);
  }
  void type(const ValueType& t) {
    u8(static_cast<uint8_t>(t.dtype));
    u64(t.shape.size());
    for (const auto& e : t.shape) extent(e);
  }
  void scalar(const Scalar& s) {
    u8(static_cast<uint8_t>(s.kind));
    u8(s.b);
    i64(s.i);
    u64(s.u);
    f64(s.re);
    f64(s.im);
  }
  void tensor(const HostTensor& t) {
    u8(static_cast<uint8_t>(t.dtype()));
    ints(t.shape());
    auto dense = t.contiguous();
    if (!dense.ok()) {  // cannot happen for a validated constant; keep the encoding total
      str("<unreadable>");
      return;
    }
    const size_t bytes = static_cast<size_t>(dense->element_count()) * size_of(t.dtype());
    str(std::string_view{reinterpret_cast<const char*>(dense->data()), bytes});
  }
  std::string take() { return std::move(out_); }

  void attrs(const OpAttrs& a) {
    u8(static_cast<uint8_t>(a.index()));
    std::visit([this](const auto& x) { encode(x); }, a);
  }

 private:
  void encode(const NoAttrs&) {}
  void encode(const CompareAttrs& a) { u8(static_cast<uint8_t>(a.direction)); }
  void encode(const TransposeAttrs& a) { ints(a.permutation); }
  void encode(const ReshapeAttrs& a) { dims(a.shape); }
  void encode(const BroadcastInDimAttrs& a) { dims(a.shape); ints(a.broadcast_dimensions); }
  void encode(const ConvertAttrs& a) { u8(static_cast<uint8_t>(a.dtype)); }
  void encode(const ConstantAttrs& a) {
    u8(static_cast<uint8_t>(a.dtype));
    dims(a.shape);
    u8(a.splat.has_value());
    if (a.splat) scalar(*a.splat);
    u8(a.dense.has_value());
    if (a.dense) tensor(*a.dense);
  }
  void encode(const IotaAttrs& a) { u8(static_cast<uint8_t>(a.dtype)); dims(a.shape); i64(a.iota_dimension); }
  void encode(const TriangleAttrs& a) { i64(a.k); }
  void encode(const ReduceAttrs& a) { ints(a.dimensions); }
  void encode(const SliceAttrs& a) { dims(a.start_indices); dims(a.limit_indices); ints(a.strides); }
  void encode(const DynamicSliceAttrs& a) { dims(a.slice_sizes); }
  void encode(const PadAttrs& a) {
    dims(a.edge_padding_low);
    dims(a.edge_padding_high);
    dims(a.interior_padding);
  }
  void encode(const ConcatenateAttrs& a) { i64(a.dimension); }
  void encode(const ReverseAttrs& a) { ints(a.dimensions); }
  void encode(const GatherAttrs& a) {
    ints(a.offset_dims);
    ints(a.collapsed_slice_dims);
    ints(a.start_index_map);
    i64(a.index_vector_dim);
    dims(a.slice_sizes);
    ints(a.operand_batching_dims);
    ints(a.start_indices_batching_dims);
  }
  void encode(const ScatterAttrs& a) {
    ints(a.update_window_dims);
    ints(a.inserted_window_dims);
    ints(a.scatter_dims_to_operand_dims);
    i64(a.index_vector_dim);
    ints(a.input_batching_dims);
    ints(a.scatter_indices_batching_dims);
    u8(static_cast<uint8_t>(a.update));
  }
  void encode(const DynamicTruncateAttrs& a) { i64(a.dimension); }
  // No value and an integer 0 encode alike: both pad with x's zero (a bool x
  // rejects an integer value).
  void encode(const PadToMatchAttrs& a) { scalar(a.value.value_or(Scalar::of_int(0))); }
  void encode(const DotGeneralAttrs& a) {
    ints(a.lhs_batching_dimensions);
    ints(a.rhs_batching_dimensions);
    ints(a.lhs_contracting_dimensions);
    ints(a.rhs_contracting_dimensions);
    u8(a.conj_lhs);
    u8(a.conj_rhs);
  }
  void encode(const ExtensionAttrs& a) { str(a.family); str(a.attributes_json); }

  std::string out_;
};

// Weights (name, type, inline data or not, its bytes), states (name,
// type, capacity in bytes) and state updates (state and value ids).
void encode_model(Encoder& e, const SemanticProgram& p) {
  e.str("model");
  e.u64(p.weights().size());
  for (const WeightInfo& w : p.weights()) {
    e.u64(w.value);
    e.str(p.value(w.value).name);
    e.type(p.value(w.value).type);
    e.u8(w.inline_data.has_value());
    if (w.inline_data) e.tensor(*w.inline_data);
  }
  e.u64(p.states().size());
  for (const StateInfo& s : p.states()) {
    e.u64(s.value);
    e.str(p.value(s.value).name);
    e.type(p.value(s.value).type);
    e.u64(s.capacity_bytes);
  }
  e.u64(p.state_updates().size());
  for (const StateUpdate& u : p.state_updates()) {
    e.u64(u.state);
    e.u64(u.value);
  }
}

}  // namespace

std::string canonical_encoding_of(const SemanticProgram& p) {
  Encoder e;
  e.str("tenact.program/1");
  e.u64(p.inputs().size());
  for (ValueId id : p.inputs()) {
    e.u64(id);
    e.str(p.value(id).name);
    e.type(p.value(id).type);
  }
  e.u64(p.ops().size());
  for (const Op& op : p.ops()) {
    e.u8(static_cast<uint8_t>(op.kind));
    e.u64(op.inputs.size());
    for (ValueId id : op.inputs) e.u64(id);
    e.u64(op.outputs.size());
    for (ValueId id : op.outputs) {
      e.u64(id);
      e.type(p.value(id).type);
    }
    e.attrs(op.attrs);
  }
  e.u64(p.outputs().size());
  for (ValueId id : p.outputs()) {
    e.u64(id);
    e.str(p.value(id).name);
  }
  e.u64(p.constraints().size());
  for (const Constraint& c : p.constraints()) {
    e.dim(c.lhs);
    e.u8(static_cast<uint8_t>(c.rel));
    e.dim(c.rhs);
  }
  // A model's sections follow; a program without them ends here, so its
  // encoding (and fingerprint) is what it was before models existed. The
  // constraints are length-prefixed, so no model shares a program's bytes.
  if (p.is_model()) encode_model(e, p);
  return e.take();
}

Fingerprint fingerprint_of(std::string_view bytes) {
  XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  return Fingerprint{h.high64, h.low64};
}

}  // namespace tenact
