// reduce_bool_any / reduce_bool_all over bool bytes (reduction_by_op.hpp's
// contract; BoolOrOp / BoolAndOp in reduction_ops.hpp).
#include "engines/cpu/kernels/reduction_reduce_with.hpp"

namespace tenact::cpu::reduction {

Status reduce_bool_any(const HostTensor& input, const ReductionPlan& plan, HostTensor& output,
                       WorkerPool* pool) {
  return reduce_with<BoolOrOp>(input, plan, output, pool);
}

Status reduce_bool_all(const HostTensor& input, const ReductionPlan& plan, HostTensor& output,
                       WorkerPool* pool) {
  return reduce_with<BoolAndOp>(input, plan, output, pool);
}

}  // namespace tenact::cpu::reduction
