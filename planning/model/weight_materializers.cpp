#include "planning/model/weight_materializers.hpp"

#include <algorithm>

namespace tenact {

namespace {

/// Panels of 16 columns: what the packed-panel GEMM providers read.
const BlockedLayout& panel_layout() {
  static const BlockedLayout layout{{1, 16}, {1, 0}};
  return layout;
}

Result<std::vector<uint64_t>> declared_dims(const ValueInfo& weight) {
  std::vector<uint64_t> dims;
  for (const ShapeExtent& e : weight.type.shape) {
    std::optional<int64_t> v = e.is_exact() ? e.expr.constant_value() : std::nullopt;
    if (!v || *v < 0)
      return Error{ErrorCode::Internal,
                   "weight '" + weight.name + "' has a shape that is not concrete: " + to_string(weight.type.shape)};
    dims.push_back(static_cast<uint64_t>(*v));
  }
  return dims;
}

Result<ResolvedTensorSpec> as_declared(const SemanticProgram& program, ValueId weight) {
  const ValueInfo& v = program.value(weight);
  TENACT_ASSIGN_OR_RETURN(auto dims, declared_dims(v));
  return ResolvedTensorSpec::make(std::move(dims), v.type.dtype, ResolvedTensorLayout::contiguous());
}

/// Whether `op` reads `weight` only as the rhs of a plain matrix product.
bool reads_as_plain_rhs(const Op& op, ValueId weight) {
  const auto* dot = std::get_if<DotGeneralAttrs>(&op.attrs);
  if (op.kind != OpKind::DotGeneral || dot == nullptr || op.inputs.size() != 2) return false;
  return op.inputs[0] != weight && op.inputs[1] == weight &&
         dot->lhs_contracting_dimensions == std::vector<int64_t>{1} &&
         dot->rhs_contracting_dimensions == std::vector<int64_t>{0} && dot->lhs_batching_dimensions.empty() &&
         dot->rhs_batching_dimensions.empty() && !dot->conj_lhs && !dot->conj_rhs;
}

Result<ResolvedTensorSpec> panels_or_declared(const SemanticProgram& program, ValueId weight) {
  TENACT_ASSIGN_OR_RETURN(ResolvedTensorSpec declared, as_declared(program, weight));
  if (declared.dtype != DType::F32 || declared.dims.size() != 2) return declared;
  bool read = false;
  for (const Op& op : program.ops()) {
    if (std::find(op.inputs.begin(), op.inputs.end(), weight) == op.inputs.end()) continue;
    if (!reads_as_plain_rhs(op, weight)) return declared;
    read = true;
  }
  if (!read) return declared;
  TENACT_ASSIGN_OR_RETURN(auto layout, ResolvedTensorLayout::blocked_for(panel_layout(), declared.dims));
  return ResolvedTensorSpec::make(declared.dims, declared.dtype, std::move(layout));
}

/// The physical bytes of `logical` laid out as `physical` (contiguous or
/// blocked), as a dense 1-D host tensor.
Result<HostTensor> materialize_as(const HostTensor& logical, const ResolvedTensorSpec& physical) {
  const std::vector<uint64_t> dims(logical.shape().begin(), logical.shape().end());
  if (logical.dtype() != physical.dtype || dims != physical.dims)
    return Error{ErrorCode::InputMismatch, "weight data is " + std::string{to_string(logical.dtype())} +
                                               to_string(logical.shape()) + ", its physical tensor is " +
                                               physical.to_string()};
  if (!logical.is_host()) return Error{ErrorCode::InputMismatch, "weight data is not in host memory"};
  TENACT_ASSIGN_OR_RETURN(const uint64_t bytes, physical.minimum_storage_bytes());
  const int64_t elements = static_cast<int64_t>(bytes / size_of(physical.dtype));
  switch (physical.layout.kind) {
    case ResolvedTensorLayout::Kind::Contiguous: {
      TENACT_ASSIGN_OR_RETURN(HostTensor out, HostTensor::for_overwrite(physical.dtype, {elements}));
      if (elements > 0) TENACT_TRY(logical.copy_to_dense(out.data()));
      return out;
    }
    case ResolvedTensorLayout::Kind::Blocked: return pack_blocked(logical, physical.layout.blocked);
    case ResolvedTensorLayout::Kind::Strided: break;
  }
  return Error{ErrorCode::Unsupported, "no built-in weight materializer writes " + physical.to_string()};
}

}  // namespace

WeightMaterializerRegistry WeightMaterializerRegistry::identity_only() {
  WeightMaterializerRegistry r;
  r.materializers_.push_back(std::make_shared<const WeightMaterializer>(
      WeightMaterializer{std::string{kIdentityMaterializer}, "every weight as declared (contiguous, its dtype)",
                         as_declared, materialize_as}));
  return r;
}

WeightMaterializerRegistry WeightMaterializerRegistry::builtin() {
  WeightMaterializerRegistry r = identity_only();
  r.materializers_.push_back(std::make_shared<const WeightMaterializer>(WeightMaterializer{
      std::string{kPackPanelsMaterializer},
      "2-D f32 weights read only as the rhs of plain matrix products in panels of 16 columns; others as declared",
      panels_or_declared, materialize_as}));
  return r;
}

Status WeightMaterializerRegistry::add(WeightMaterializer materializer) {
  if (materializer.id.empty()) return Error{ErrorCode::InvalidPlan, "a weight materializer needs an id"};
  for (const auto& m : materializers_)
    if (m->id == materializer.id)
      return Error{ErrorCode::InvalidPlan, "weight materializer `" + materializer.id + "` is registered already"};
  if (!materializer.physical || !materializer.materialize)
    return Error{ErrorCode::InvalidPlan,
                 "weight materializer `" + materializer.id + "` lacks its physical or materialize function"};
  materializers_.push_back(std::make_shared<const WeightMaterializer>(std::move(materializer)));
  return ok_status();
}

Result<std::shared_ptr<const WeightMaterializer>> WeightMaterializerRegistry::select(std::string_view id) const {
  for (const auto& m : materializers_)
    if (m->id == id) return m;
  std::string known;
  for (const std::string& k : ids()) known += (known.empty() ? "" : ", ") + k;
  return Error{ErrorCode::InvalidPlan,
               "unknown weight materializer `" + std::string{id} + "` (registered: " + known + ")"};
}

std::vector<std::string> WeightMaterializerRegistry::ids() const {
  std::vector<std::string> out;
  for (const auto& m : materializers_) out.push_back(m->id);
  return out;
}

}  // namespace tenact
