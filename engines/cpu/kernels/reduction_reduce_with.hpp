// reduce_with<Op>: the body every per-op reduction file instantiates (for
// each dtype the op admits). Included only by reduction_*.cpp; see
// reduction_by_op.hpp for the contract.
#pragma once

#include <cstdint>
#include <new>

#include "engines/cpu/kernels/dtype_dispatch.hpp"
#include "engines/cpu/kernels/reduction_by_op.hpp"
#include "engines/cpu/kernels/reduction_kernels.hpp"
#include "engines/cpu/kernels/reduction_ops.hpp"

namespace tenact::cpu::reduction {

/// Reduces `input` (any layout its plan supports) into the dense `output`
/// with policy Op.
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

/// Runs OpFor<T> for the element type T of `input`'s dtype. Bool is refused
/// here (it has reduce_bool_any / reduce_bool_all); its one-byte storage
/// type is U8's, so the check is on the dtype, not the type.
template <template <class> class OpFor>
Status reduce_numeric(const HostTensor& input, const ReductionPlan& plan, HostTensor& output,
                      WorkerPool* pool) {
  if (input.dtype() == DType::Bool)
    return Error{ErrorCode::Internal, "a numeric reduction was given a bool operand"};
  return visit_dtype<BoolByte>(input.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    return reduce_with<OpFor<T>>(input, plan, output, pool);
  });
}

}  // namespace tenact::cpu::reduction
