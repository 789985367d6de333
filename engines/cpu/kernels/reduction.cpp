// run_reduction: reduce_sum, reduce_sum_squares, reduce_prod, reduce_max,
// reduce_min over any set of axes, every admitted dtype (kernel.hpp's
// contract; semantics in reduction_ops.hpp, loops in reduction_kernels.hpp,
// instantiated per op in reduction_sum.cpp, reduction_prod.cpp, …).
#include <string>
#include <utility>

#include "engines/cpu/kernels/kernel.hpp"
#include "engines/cpu/kernels/reduction_by_op.hpp"
#include "engines/cpu/kernels/reduction_plan.hpp"

namespace tenact::cpu {

namespace {

using namespace reduction;

std::string op_name(OpKind kind) { return std::string{to_string(kind)}; }

/// Runs the reduction `kind` names (each op's loops live in a file of its
/// own: reduction_by_op.hpp).
Status dispatch_op(OpKind kind, const HostTensor& input, const ReductionPlan& plan,
                   HostTensor& output, WorkerPool* pool) {
  if (input.dtype() == DType::Bool) {
    switch (kind) {
      case OpKind::ReduceSum:
      case OpKind::ReduceMax: return reduce_bool_any(input, plan, output, pool);
      case OpKind::ReduceProd:
      case OpKind::ReduceMin: return reduce_bool_all(input, plan, output, pool);
      default: return Error{ErrorCode::TypeMismatch, "bool operands are not accepted"};
    }
  }
  switch (kind) {
    case OpKind::ReduceSum: return reduce_sum(input, plan, output, pool);
    case OpKind::ReduceSumSquares: return reduce_sum_squares(input, plan, output, pool);
    case OpKind::ReduceProd: return reduce_prod(input, plan, output, pool);
    case OpKind::ReduceMax: return reduce_max(input, plan, output, pool);
    case OpKind::ReduceMin: return reduce_min(input, plan, output, pool);
    default: break;
  }
  return Error{ErrorCode::Internal, "not a reduction"};
}

DType result_dtype(OpKind kind, DType input) {
  return kind == OpKind::ReduceSumSquares ? real_component(input) : input;
}

}  // namespace

Result<std::vector<HostTensor>> run_reduction(const KernelCall& call) {
  const std::string name = op_name(call.kind);
  const auto* attrs = std::get_if<ReduceAttrs>(&call.attrs);
  if (attrs == nullptr)
    return Error{ErrorCode::Internal, name + ": the attributes are not reduction attributes"};
  if (call.inputs.size() != 1)
    return Error{ErrorCode::InputMismatch,
                 name + " takes 1 operand, got " + std::to_string(call.inputs.size())};
  const HostTensor& given = call.inputs[0];
  const DType out_dtype = result_dtype(call.kind, given.dtype());
  if (given.dtype() == DType::Bool && call.kind == OpKind::ReduceSumSquares)
    return Error{ErrorCode::TypeMismatch, name + " does not accept bool operands"};
  if (!call.result_types.empty() && call.result_types[0].dtype != out_dtype)
    return Error{ErrorCode::InputMismatch,
                 name + ": the program expects a " +
                     std::string{to_string(call.result_types[0].dtype)} +
                     " result, the operand gives " + std::string{to_string(out_dtype)}};

  auto planned = plan_reduction(given.shape(), given.strides(), attrs->dimensions);
  if (!planned.ok()) return std::move(planned).error().with_context(name);
  ReductionPlan plan = std::move(planned).value();
  HostTensor input = given;
  if (!plan.layout_supported) {
    // No unit-stride axis (broadcast, reversed or gapped innermost axis):
    // reduce a dense copy, whose plan always has one.
    TENACT_ASSIGN_OR_RETURN(input, given.contiguous());
    TENACT_ASSIGN_OR_RETURN(plan,
                            plan_reduction(input.shape(), input.strides(), attrs->dimensions));
  }

  // reduce_with writes every element (the identity for an empty reduction).
  TENACT_ASSIGN_OR_RETURN(HostTensor output,
                          output_tensor(call, 0, out_dtype, plan.out_shape, BufferFill::Unspecified));
  Status done = dispatch_op(call.kind, input, plan, output, call.pool);
  if (!done.ok()) return std::move(done).error().with_context(name);
  return single_result(call, std::move(output));
}

}  // namespace tenact::cpu
