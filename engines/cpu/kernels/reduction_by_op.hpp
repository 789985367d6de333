// The reduction kernels, one function per reduction op, each compiled in a
// translation unit of its own (reduction_sum.cpp, …): each instantiates the
// reduction loops for every dtype, and one file holding all five was the
// build's longest compile by far.
//
// Contract, for every function below: `input` is any layout whose plan is
// `plan` (plan.layout_supported), `output` a dense tensor of plan.out_shape
// in the op's result dtype; the functions fill `output` and return ok, or a
// ResourceExhausted error when the partial results cannot be allocated.
// Bool operands go to reduce_bool_any / reduce_bool_all (sum and max are
// "any", prod and min "all"); the numeric functions refuse them. Runs on the
// caller's thread, fanning out to `pool` when it is given.
#pragma once

#include "core/error.hpp"
#include "core/tensor.hpp"
#include "engines/cpu/kernels/reduction_plan.hpp"

namespace tenact {
class WorkerPool;  // util/worker_pool.hpp
}  // namespace tenact

namespace tenact::cpu::reduction {

Status reduce_sum(const HostTensor& input, const ReductionPlan& plan, HostTensor& output,
                  WorkerPool* pool);
Status reduce_sum_squares(const HostTensor& input, const ReductionPlan& plan, HostTensor& output,
                          WorkerPool* pool);
Status reduce_prod(const HostTensor& input, const ReductionPlan& plan, HostTensor& output,
                   WorkerPool* pool);
Status reduce_max(const HostTensor& input, const ReductionPlan& plan, HostTensor& output,
                  WorkerPool* pool);
Status reduce_min(const HostTensor& input, const ReductionPlan& plan, HostTensor& output,
                  WorkerPool* pool);
Status reduce_bool_any(const HostTensor& input, const ReductionPlan& plan, HostTensor& output,
                       WorkerPool* pool);
Status reduce_bool_all(const HostTensor& input, const ReductionPlan& plan, HostTensor& output,
                       WorkerPool* pool);

}  // namespace tenact::cpu::reduction
