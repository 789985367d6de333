// reduce_max for every numeric dtype (reduction_by_op.hpp's contract; the
// op's semantics in reduction_ops.hpp).
#include "engines/cpu/kernels/reduction_reduce_with.hpp"

namespace tenact::cpu::reduction {

Status reduce_max(const HostTensor& input, const ReductionPlan& plan, HostTensor& output,
                WorkerPool* pool) {
  return reduce_numeric<MaxOp>(input, plan, output, pool);
}

}  // namespace tenact::cpu::reduction
