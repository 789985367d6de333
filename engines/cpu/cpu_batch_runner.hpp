// Runs a BatchWork (engines/engine.hpp) on the calling thread with the CPU
// kernels: ops in order, planned regions as one fused pass each, every
// intermediate released right after its last reader. CpuEngine::launch_batch
// posts it to the engine's pool; tests call it directly.
//
// Thread-safety: reentrant; `pool` may be shared. Never call it on a CAF
// scheduler thread (it runs kernels).
#pragma once

#include "core/error.hpp"
#include "engines/cpu/kernels/fused_elementwise.hpp"
#include "util/worker_pool.hpp"
#include "engines/engine.hpp"

namespace tenact::cpu {

/// The outputs of `work`, or the first error (naming the batch op or
/// region). `work` must pass validate_batch.
Result<std::vector<HostTensor>> run_batch_on_cpu(const BatchWork& work, WorkerPool& pool,
                                                 FusedCounters* counters);

}  // namespace tenact::cpu
