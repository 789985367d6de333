// run_reduction: reduce_sum, reduce_sum_squares, reduce_prod, reduce_max,
// reduce_min over any set of axes, every admitted dtype (kernel.hpp's
// contract; semantics in reduction_ops.hpp, loops in reduction_kernels.hpp).
#include <complex>
#include <cstdint>
#include <new>
#include <string>
#include <utility>

#include "engines/cpu/kernels/dtype_dispatch.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "engines/cpu/kernels/reduction_kernels.hpp"
#include "engines/cpu/kernels/reduction_ops.hpp"
#include "engines/cpu/kernels/reduction_plan.hpp"

namespace tenact::cpu {

namespace {

using namespace reduction;

std::string op_name(OpKind kind) { return std::string{to_string(kind)}; }

/// Reduces `input` (any layout) into the dense `output` with policy Op.
template <class Op>
Status reduce_with(const HostTensor& input, const ReductionPlan& plan, HostTensor& output,
                   WorkerPool* pool) {
  auto* out = output.data_as<typename Op::Out>();
  if (plan.out_count == 0) return ok_status();
  if (plan.reduce_count == 0) {
    const typename Op::Out id = Op::finish(Op::identity());
    for (int64_t i = 0; i < plan.out_count; ++i) out[i] = id;
    return ok_status();
  }
  bool done = false;
  try {
    done = run_plan<Op>(input.data_as<const typename Op::In>(), out, plan, pool);
  } catch (const std::bad_alloc&) {
    done = false;
  }
  if (!done)
    return Error{ErrorCode::ResourceExhausted, "out of memory for the reduction's partial results"};
  return ok_status();
}

template <class T>
Status dispatch_op(OpKind kind, const HostTensor& input, const ReductionPlan& plan,
                   HostTensor& output, WorkerPool* pool) {
  if constexpr (std::is_same_v<T, BoolByte>) {
    if (input.dtype() == DType::Bool) {
      switch (kind) {
        case OpKind::ReduceSum:
        case OpKind::ReduceMax: return reduce_with<BoolOrOp>(input, plan, output, pool);
        case OpKind::ReduceProd:
        case OpKind::ReduceMin: return reduce_with<BoolAndOp>(input, plan, output, pool);
        default:
          return Error{ErrorCode::TypeMismatch, "bool operands are not accepted"};
      }
    }
  }
  switch (kind) {
    case OpKind::ReduceSum: return reduce_with<SumOp<T>>(input, plan, output, pool);
    case OpKind::ReduceSumSquares: return reduce_with<SumSquaresOp<T>>(input, plan, output, pool);
    case OpKind::ReduceProd: return reduce_with<ProdOp<T>>(input, plan, output, pool);
    case OpKind::ReduceMax: return reduce_with<MaxOp<T>>(input, plan, output, pool);
    case OpKind::ReduceMin: return reduce_with<MinOp<T>>(input, plan, output, pool);
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

  auto allocated = HostTensor::zeros(out_dtype, plan.out_shape);
  if (!allocated.ok()) return std::move(allocated).error().with_context(name);
  HostTensor output = std::move(allocated).value();
  Status done = visit_dtype<BoolByte>(given.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return dispatch_op<T>(call.kind, input, plan, output, call.pool);
  });
  if (!done.ok()) return std::move(done).error().with_context(name);
  std::vector<HostTensor> results;
  results.push_back(std::move(output));
  return results;
}

}  // namespace tenact::cpu
