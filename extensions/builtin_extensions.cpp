// The five families of the module `tenact`: inference and prepare share
// check_builtin_op (builtin_attrs.hpp); the kernels are host_kernels.hpp's;
// the work estimates count the arithmetic of the f32 loops.
#include "extensions/builtin_extensions.hpp"

#include "extensions/builtin_attrs.hpp"
#include "extensions/host_kernels.hpp"

namespace tenact {

namespace {

using builtin::BuiltinAttrs;
using builtin::BuiltinOp;

uint64_t element_count(const ValueExtent& v) {
  uint64_t n = 1;
  for (int64_t d : v.shape) n *= d > 0 ? static_cast<uint64_t>(d) : 0;
  return n;
}

/// Arithmetic operations per element of x and per group, as the f32 loops
/// do them: exp_f32 ~22 operations, log_f32 ~30, tanh_f32 ~25, erf_f32
/// ~45 (vector_math.hpp), every other operation 1.
struct OpCounts {
  uint64_t per_element = 1;
  uint64_t per_group = 0;
};

OpCounts op_counts(const BuiltinAttrs& a) {
  switch (a.op) {
    case BuiltinOp::Softmax: return {26, 2};             // max, sub, exp, add, div
    case BuiltinOp::LogSoftmax: return {27, 31};         // max, sub, exp, add, 2 sub; log
    case BuiltinOp::LayerNorm: return {a.has_scale ? 8u : 6u, 4};  // sum, (sub, mul, add), sub, div
    case BuiltinOp::RmsNorm: return {a.has_scale ? 4u : 3u, 3};    // mul, add, div
    case BuiltinOp::Gelu: return {a.tanh_approximation ? 33u : 49u, 0};
  }
  return {};
}

/// One op: its operations, and its bytes: every operand read and the result
/// written once (the passes over a group reread it from cache), plus for
/// f16/bf16 groups the f32 blocks they are computed in (16 bytes an element).
ExtensionWork estimate(BuiltinOp op, const ExtensionWorkCall& call) {
  ExtensionWork w;
  for (const ValueExtent& v : call.operands) w.bytes += element_count(v) * size_of(v.dtype);
  for (const ValueExtent& v : call.results) w.bytes += element_count(v) * size_of(v.dtype);
  if (call.operands.empty()) return w;
  const ValueExtent& x = call.operands[0];
  const uint64_t elements = element_count(x);
  std::vector<ValueType> types;
  for (const ValueExtent& v : call.operands) {
    ValueType t{v.dtype, {}};
    for (int64_t d : v.shape) t.shape.push_back(ShapeExtent::exact(DimExpr::constant(d)));
    types.push_back(std::move(t));
  }
  const auto attrs = builtin::check_builtin_op(op, types, call.op.attributes_json);
  if (!attrs.ok()) {  // an op validation would refuse: the elementwise default
    w.ops = elements;
    return w;
  }
  uint64_t group = 1;
  for (int64_t d : attrs->dimensions) group *= static_cast<uint64_t>(std::max<int64_t>(x.shape[d], 0));
  const OpCounts c = op_counts(*attrs);
  w.ops = elements * c.per_element + (group > 0 ? elements / group : 0) * c.per_group;
  if (op != BuiltinOp::Gelu && (x.dtype == DType::F16 || x.dtype == DType::BF16)) w.bytes += 16 * elements;
  return w;
}

ExtensionFamilyPtr make_family(BuiltinOp op) {
  ExtensionFamily f;
  f.name = std::string{builtin::family_name(op)};
  f.infer = [op](std::span<const ValueType> operands,
                 const std::string& attributes_json) -> Result<std::vector<ValueType>> {
    TENACT_TRY(builtin::check_builtin_op(op, operands, attributes_json));
    return std::vector<ValueType>{ValueType{operands[0].dtype, operands[0].shape}};
  };
  f.prepare_host = [op](const ExtensionPrepareCall& call) -> Result<HostExtensionKernel> {
    TENACT_ASSIGN_OR_RETURN(BuiltinAttrs attrs,
                            builtin::check_builtin_op(op, call.operands, call.op.attributes_json));
    return builtin::make_host_kernel(std::move(attrs));
  };
  f.estimate = [op](const ExtensionWorkCall& call) { return estimate(op, call); };
  return std::make_shared<const ExtensionFamily>(std::move(f));
}

}  // namespace

const std::vector<ExtensionFamilyPtr>& builtin_extension_families() {
  static const std::vector<ExtensionFamilyPtr> families = {
      make_family(BuiltinOp::Softmax), make_family(BuiltinOp::LogSoftmax),
      make_family(BuiltinOp::LayerNorm), make_family(BuiltinOp::RmsNorm),
      make_family(BuiltinOp::Gelu)};
  return families;
}

}  // namespace tenact
