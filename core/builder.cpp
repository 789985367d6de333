#include "core/builder.hpp"

namespace tenact {

Dim::Dim(const std::string& text) : expr_(DimExpr::parse(text)) {}

ProgramBuilder::ProgramBuilder(std::string name) { draft_.name = std::move(name); }

std::string ProgramBuilder::fresh_name(std::string requested) {
  if (!requested.empty()) return requested;
  return "%" + std::to_string(next_name_++);
}

std::vector<DimExpr> ProgramBuilder::dims(const std::vector<Dim>& shape, const std::string& where) {
  std::vector<DimExpr> out;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].expr().ok()) {
      out.push_back(*shape[i].expr());
    } else {
      pending_.push_back(
          shape[i].expr().error().with_context(where + " element " + std::to_string(i)));
      out.push_back(DimExpr::constant(0));
    }
  }
  return out;
}

void ProgramBuilder::flush_pending(const std::string& where) {
  for (const Error& e : pending_) errors_.push_back(where.empty() ? e : e.with_context(where));
  pending_.clear();
}

ValueRef ProgramBuilder::input(std::string name, DType dtype, std::vector<Dim> shape) {
  const std::string where = "input #" + std::to_string(draft_.inputs.size()) + " '" + name + "'";
  draft_.inputs.push_back(InputDecl{name, dtype, dims(shape, where + " shape")});
  flush_pending("");
  return ValueRef{std::move(name)};
}

ValueRef ProgramBuilder::weight(std::string name, DType dtype, std::vector<Dim> shape,
                                std::optional<HostTensor> data) {
  const std::string where = "weight #" + std::to_string(draft_.weights.size()) + " '" + name + "'";
  WeightDecl decl{name, dtype, dims(shape, where + " shape"), std::nullopt};
  if (data) {
    auto dense = data->is_host() ? data->contiguous()
                                 : Result<HostTensor>{Error{ErrorCode::InvalidAttribute,
                                                            "not in host memory (" +
                                                                data->endpoint().to_string() + ")"}};
    if (dense.ok()) decl.data = std::move(*dense);
    else pending_.push_back(dense.error().with_context(where + " data"));
  }
  draft_.weights.push_back(std::move(decl));
  flush_pending("");
  return ValueRef{std::move(name)};
}

ValueRef ProgramBuilder::state(std::string name, DType dtype, std::vector<Dim> shape,
                               CapacityUnit unit, uint64_t capacity) {
  const std::string where = "state #" + std::to_string(draft_.states.size()) + " '" + name + "'";
  draft_.states.push_back(StateDecl{name, dtype, dims(shape, where + " shape"), unit, capacity});
  flush_pending("");
  return ValueRef{std::move(name)};
}

void ProgramBuilder::state_update(const ValueRef& state, const ValueRef& value) {
  draft_.state_updates.push_back(StateUpdateDecl{state.name, value.name});
}

void ProgramBuilder::guard(std::string text) { draft_.guards.push_back(std::move(text)); }

void ProgramBuilder::output(const ValueRef& value) { draft_.outputs.push_back(value.name); }

ValueRef ProgramBuilder::op(OpKind kind, std::vector<ValueRef> operands, OpAttrs attrs, std::string out) {
  DraftOp op{kind, {}, {fresh_name(std::move(out))}, std::move(attrs)};
  for (auto& v : operands) op.in.push_back(std::move(v.name));
  flush_pending(describe_draft_op(draft_.ops.size(), op));
  draft_.ops.push_back(std::move(op));
  return ValueRef{draft_.ops.back().out.front()};
}

std::vector<ValueRef> ProgramBuilder::extension(std::string family, std::vector<ValueRef> operands,
                                                std::string attributes_json, size_t results,
                                                std::vector<std::string> outs) {
  DraftOp op{OpKind::Extension, {}, {}, ExtensionAttrs{std::move(family), std::move(attributes_json)}};
  for (auto& v : operands) op.in.push_back(std::move(v.name));
  std::vector<ValueRef> refs;
  for (size_t i = 0; i < results; ++i) {
    op.out.push_back(fresh_name(i < outs.size() ? outs[i] : ""));
    refs.push_back(ValueRef{op.out.back()});
  }
  draft_.ops.push_back(std::move(op));
  return refs;
}

ValueRef ProgramBuilder::unary(OpKind kind, const ValueRef& x, std::string out) {
  return op(kind, {x}, NoAttrs{}, std::move(out));
}
ValueRef ProgramBuilder::binary(OpKind kind, const ValueRef& a, const ValueRef& b, std::string out) {
  return op(kind, {a, b}, NoAttrs{}, std::move(out));
}
ValueRef ProgramBuilder::compare(CompareDirection dir, const ValueRef& a, const ValueRef& b,
                                 std::string out) {
  return op(OpKind::Compare, {a, b}, CompareAttrs{dir}, std::move(out));
}
ValueRef ProgramBuilder::select(const ValueRef& pred, const ValueRef& on_true,
                                const ValueRef& on_false, std::string out) {
  return op(OpKind::Select, {pred, on_true, on_false}, NoAttrs{}, std::move(out));
}
ValueRef ProgramBuilder::convert(const ValueRef& x, DType dtype, std::string out) {
  return op(OpKind::Convert, {x}, ConvertAttrs{dtype}, std::move(out));
}
ValueRef ProgramBuilder::constant(DType dtype, std::vector<Dim> shape, Scalar value, std::string out) {
  ConstantAttrs a;
  a.dtype = dtype;
  a.shape = dims(shape, "attribute 'shape'");
  a.splat = value;
  if (auto fits = value.check_fits(dtype); !fits.ok())
    pending_.push_back(fits.error().with_context("attribute 'value'"));
  return op(OpKind::Constant, {}, std::move(a), std::move(out));
}
ValueRef ProgramBuilder::constant(HostTensor value, std::string out) {
  ConstantAttrs a;
  a.dtype = value.dtype();
  for (auto d : value.shape()) a.shape.push_back(DimExpr::constant(d));
  auto dense = value.contiguous();
  if (dense.ok()) a.dense = std::move(*dense);
  else pending_.push_back(dense.error().with_context("attribute 'value'"));
  return op(OpKind::Constant, {}, std::move(a), std::move(out));
}
ValueRef ProgramBuilder::iota(DType dtype, std::vector<Dim> shape, int64_t iota_dimension, std::string out) {
  return op(OpKind::Iota, {}, IotaAttrs{dtype, dims(shape, "attribute 'shape'"), iota_dimension},
            std::move(out));
}
ValueRef ProgramBuilder::transpose(const ValueRef& x, std::vector<int64_t> permutation, std::string out) {
  return op(OpKind::Transpose, {x}, TransposeAttrs{std::move(permutation)}, std::move(out));
}
ValueRef ProgramBuilder::reshape(const ValueRef& x, std::vector<Dim> shape, std::string out) {
  return op(OpKind::Reshape, {x}, ReshapeAttrs{dims(shape, "attribute 'shape'")}, std::move(out));
}
ValueRef ProgramBuilder::broadcast_in_dim(const ValueRef& x, std::vector<Dim> shape,
                                          std::vector<int64_t> broadcast_dimensions, std::string out) {
  return op(OpKind::BroadcastInDim, {x},
            BroadcastInDimAttrs{dims(shape, "attribute 'shape'"), std::move(broadcast_dimensions)},
            std::move(out));
}
ValueRef ProgramBuilder::reduce(OpKind kind, const ValueRef& x, std::vector<int64_t> dimensions,
                                std::string out) {
  return op(kind, {x}, ReduceAttrs{std::move(dimensions)}, std::move(out));
}
ValueRef ProgramBuilder::slice(const ValueRef& x, std::vector<Dim> start, std::vector<Dim> limit,
                               std::vector<int64_t> strides, std::string out) {
  SliceAttrs a{dims(start, "attribute 'start_indices'"), dims(limit, "attribute 'limit_indices'"),
               std::move(strides)};
  if (a.strides.empty()) a.strides.assign(a.start_indices.size(), 1);
  return op(OpKind::Slice, {x}, std::move(a), std::move(out));
}
ValueRef ProgramBuilder::dot_general(const ValueRef& lhs, const ValueRef& rhs, DotGeneralAttrs dims_,
                                     std::string out) {
  return op(OpKind::DotGeneral, {lhs, rhs}, std::move(dims_), std::move(out));
}

ValidationReport ProgramBuilder::build_all(const ExtensionRegistry& extensions) const {
  ValidationReport report = validate_all(draft_, extensions);
  if (!errors_.empty()) {
    report.program.reset();
    report.errors.insert(report.errors.begin(), errors_.begin(), errors_.end());
  }
  return report;
}

Result<SemanticProgram> ProgramBuilder::build(const ExtensionRegistry& extensions) const {
  if (!errors_.empty()) return errors_.front();
  return validate(draft_, extensions);
}

}  // namespace tenact
