#include "planning/retained_bytes.hpp"

#include "core/checked.hpp"

namespace tenact {

namespace {

Error overflow() {
  return Error{ErrorCode::Overflow, "retained-byte accounting overflows 64 bits"};
}

uint64_t bit_vector_bytes(size_t bits) { return (uint64_t{bits} + 7) / 8; }

// Owned bytes of each attribute struct; one overload per alternative of
// OpAttrs, so a new alternative fails to compile until it is counted.
struct AttrBytes {
  ByteCount& c;
  void ints(const std::vector<int64_t>& v) { c.add_array(v.size(), sizeof(int64_t)); }
  void dims(const std::vector<DimExpr>& v) {
    c.add_array(v.size(), sizeof(DimExpr));
    c.add(dim_exprs_retained_bytes(v));
  }
  void operator()(const NoAttrs&) {}
  void operator()(const CompareAttrs&) {}
  void operator()(const TransposeAttrs& a) { ints(a.permutation); }
  void operator()(const ReshapeAttrs& a) { dims(a.shape); }
  void operator()(const BroadcastInDimAttrs& a) {
    dims(a.shape);
    ints(a.broadcast_dimensions);
  }
  void operator()(const ConvertAttrs&) {}
  void operator()(const ConstantAttrs& a) {
    dims(a.shape);
    if (a.dense) {
      c.add_array(a.dense->shape().size(), 2 * sizeof(int64_t));  // shape and strides
      const int64_t n = a.dense->element_count();
      c.add_array(n < 0 ? 0 : static_cast<uint64_t>(n), size_of(a.dense->dtype()));
    }
  }
  void operator()(const IotaAttrs& a) { dims(a.shape); }
  void operator()(const TriangleAttrs&) {}
  void operator()(const ReduceAttrs& a) { ints(a.dimensions); }
  void operator()(const SliceAttrs& a) {
    dims(a.start_indices);
    dims(a.limit_indices);
    ints(a.strides);
  }
  void operator()(const DynamicSliceAttrs& a) { dims(a.slice_sizes); }
  void operator()(const PadAttrs& a) {
    dims(a.edge_padding_low);
    dims(a.edge_padding_high);
    dims(a.interior_padding);
  }
  void operator()(const ConcatenateAttrs&) {}
  void operator()(const ReverseAttrs& a) { ints(a.dimensions); }
  void operator()(const GatherAttrs& a) {
    ints(a.offset_dims);
    ints(a.collapsed_slice_dims);
    ints(a.start_index_map);
    dims(a.slice_sizes);
    ints(a.operand_batching_dims);
    ints(a.start_indices_batching_dims);
  }
  void operator()(const ScatterAttrs& a) {
    ints(a.update_window_dims);
    ints(a.inserted_window_dims);
    ints(a.scatter_dims_to_operand_dims);
    ints(a.input_batching_dims);
    ints(a.scatter_indices_batching_dims);
  }
  void operator()(const DynamicTruncateAttrs&) {}
  void operator()(const PadToMatchAttrs&) {}
  void operator()(const DotGeneralAttrs& a) {
    ints(a.lhs_batching_dimensions);
    ints(a.rhs_batching_dimensions);
    ints(a.lhs_contracting_dimensions);
    ints(a.rhs_contracting_dimensions);
  }
  void operator()(const ExtensionAttrs& a) {
    c.add(a.family.size());
    c.add(a.attributes_json.size());
  }
};

}  // namespace

ByteCount& ByteCount::add(uint64_t bytes) {
  if (error_) return *this;
  auto sum = checked_add_u(sum_, bytes);
  if (!sum) error_ = overflow();
  else sum_ = *sum;
  return *this;
}

ByteCount& ByteCount::add(const Result<uint64_t>& bytes) {
  if (error_) return *this;
  if (!bytes.ok()) {
    error_ = bytes.error();
    return *this;
  }
  return add(*bytes);
}

ByteCount& ByteCount::add_array(uint64_t count, uint64_t element_size) {
  return add(array_bytes(count, element_size));
}

Result<uint64_t> ByteCount::total() const {
  if (error_) return *error_;
  return sum_;
}

Result<uint64_t> checked_sum(std::span<const uint64_t> values) {
  ByteCount c;
  for (uint64_t v : values) c.add(v);
  return c.total();
}

Result<uint64_t> checked_sum(std::initializer_list<uint64_t> values) {
  return checked_sum(std::span<const uint64_t>{values.begin(), values.size()});
}

Result<uint64_t> array_bytes(uint64_t count, uint64_t element_size) {
  auto product = checked_mul_u(count, element_size);
  if (!product) return overflow();
  return *product;
}

Result<uint64_t> dim_expr_retained_bytes(const DimExpr& expr) {
  if (expr.is_constant()) return uint64_t{0};
  return checked_sum({kDimExprNodeBytes, expr.to_string().size()});
}

Result<uint64_t> dim_exprs_retained_bytes(std::span<const DimExpr> exprs) {
  ByteCount c;
  for (const DimExpr& e : exprs) c.add(dim_expr_retained_bytes(e));
  return c.total();
}

Result<uint64_t> shape_retained_bytes(const Shape& shape) {
  ByteCount c;
  c.add_array(shape.size(), sizeof(ShapeExtent));
  for (const ShapeExtent& e : shape)
    if (e.kind != ExtentKind::Unknown) c.add(dim_expr_retained_bytes(e.expr));
  return c.total();
}

Result<uint64_t> op_attrs_retained_bytes(const OpAttrs& attrs) {
  ByteCount c;
  std::visit(AttrBytes{c}, attrs);
  return c.total();
}

Result<uint64_t> input_requirement_retained_bytes(const InputRequirement& requirement) {
  return array_bytes(requirement.concrete_dims.size(), sizeof(size_t));
}

Result<uint64_t> input_projection_retained_bytes(const InputProjection& p) {
  ByteCount c;
  c.add_array(p.concrete_dims.size(), sizeof(ConcreteDim));
  if (p.storage_class) c.add(p.storage_class->size());
  if (p.engine) c.add(p.engine->size());
  if (p.strides) c.add_array(p.strides->size(), sizeof(int64_t));
  return c.total();
}

Result<uint64_t> semantic_program_retained_bytes(const SemanticProgram& program) {
  ByteCount c;
  c.add(sizeof(SemanticProgram));
  c.add(program.name().size());
  c.add_array(program.values().size(), sizeof(ValueInfo));
  for (const ValueInfo& v : program.values()) {
    c.add(v.name.size());
    c.add(shape_retained_bytes(v.type.shape));
  }
  c.add_array(program.inputs().size(), sizeof(ValueId));
  c.add_array(program.outputs().size(), sizeof(ValueId));
  c.add_array(program.ops().size(), sizeof(Op));
  for (const Op& op : program.ops()) {
    c.add_array(op.inputs.size(), sizeof(ValueId));
    c.add_array(op.outputs.size(), sizeof(ValueId));
    c.add(op_attrs_retained_bytes(op.attrs));
  }
  c.add_array(program.constraints().size(), sizeof(Constraint));
  for (const Constraint& k : program.constraints()) {
    c.add(dim_expr_retained_bytes(k.lhs)).add(dim_expr_retained_bytes(k.rhs));
    c.add(k.origin.size()).add(k.what.size());
  }
  c.add_array(program.guard_texts().size(), sizeof(std::string));
  for (const std::string& g : program.guard_texts()) c.add(g.size());
  c.add_array(program.symbols().size(), sizeof(SymbolSource));
  for (const SymbolSource& s : program.symbols()) c.add(s.symbol.size());
  c.add(program.canonical_encoding().size());
  return c.total();
}

Result<uint64_t> exec_program_retained_bytes(const ExecProgram& program) {
  ByteCount c;
  c.add(sizeof(ExecProgram));
  c.add_array(program.slots.size(), sizeof(ExecSlot));
  for (const ExecSlot& s : program.slots) {
    c.add(s.name.size());
    c.add(shape_retained_bytes(s.type.shape));
  }
  c.add_array(program.input_slots.size(), sizeof(SlotId));
  c.add_array(program.output_slots.size(), sizeof(SlotId));
  c.add_array(program.constant_instructions.size(), sizeof(uint32_t));
  c.add_array(program.dropped_ops.size(), sizeof(size_t));
  c.add_array(program.instructions.size(), sizeof(ExecInstruction));
  for (const ExecInstruction& ins : program.instructions) {
    c.add_array(ins.inputs.size(), sizeof(SlotId));
    c.add_array(ins.outputs.size(), sizeof(SlotId));
    c.add(bit_vector_bytes(ins.last_use.size()));
    c.add(bit_vector_bytes(ins.unread_output.size()));
    c.add(op_attrs_retained_bytes(ins.attrs));
  }
  return c.total();
}

Result<uint64_t> requirements_retained_bytes(const SpecializationRequirements& requirements) {
  ByteCount c;
  c.add(sizeof(SpecializationRequirements));
  c.add_array(requirements.inputs.size(), sizeof(InputRequirement));
  for (const InputRequirement& r : requirements.inputs) c.add(input_requirement_retained_bytes(r));
  return c.total();
}

Result<uint64_t> projection_retained_bytes(const SpecializationProjection& projection) {
  ByteCount c;
  c.add(sizeof(SpecializationProjection));
  c.add_array(projection.inputs.size(), sizeof(InputProjection));
  for (const InputProjection& p : projection.inputs) c.add(input_projection_retained_bytes(p));
  return c.total();
}

Result<uint64_t> input_descriptors_retained_bytes(std::span<const InputDescriptor> inputs) {
  ByteCount c;
  c.add_array(inputs.size(), sizeof(InputDescriptor));
  for (const InputDescriptor& d : inputs) {
    c.add_array(d.shape.size(), sizeof(int64_t));
    c.add_array(d.strides.size(), sizeof(int64_t));
    c.add(d.placement.engine.size());
    c.add(d.placement.storage_class.size());
  }
  return c.total();
}

}  // namespace tenact
