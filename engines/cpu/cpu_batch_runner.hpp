// Runs a BatchWork (engines/engine.hpp) on the calling thread with the CPU
// kernels: ops in order, planned regions as one fused pass each, every
// intermediate released right after its last reader. CpuEngine::launch_batch
// posts it to the engine's pool; tests call it directly.
//
// Thread-safety: reentrant; `pool` may be shared. Never call it on a CAF
// scheduler thread (it runs kernels).
#pragma once

#include <cstdint>

#include "core/error.hpp"
#include "engines/cpu/kernels/fused_elementwise.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "util/worker_pool.hpp"
#include "engines/engine.hpp"

#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace tenact::cpu {

/// One kernel the runner ran: a single op (first_op == last_op) or a fused
/// region (ops first_op .. last_op), with the tensors it read and wrote.
/// Valid only during the observer's call.
struct KernelRun {
  uint32_t first_op = 0;
  uint32_t last_op = 0;
  std::span<const HostTensor> inputs;
  std::span<const HostTensor> outputs;
};
/// Called on the running thread after each kernel succeeded (the
/// simulated engine charges its cost model from it).
using KernelObserver = std::function<void(const KernelRun&)>;

/// The outputs of `work`, or the first error (naming the batch op or
/// region). `work` must pass validate_batch.
///
/// Destinations (BatchOp::destinations): a single op's kernel gets its
/// op's, a region those of the ops whose results leave it; each result
/// that fits its destination is written there (a view of the
/// destination's buffer). A destination the host cannot address, or one
/// outside `destination_memory` when that is set (the engine's memory), is
/// ignored. Prepared ops run the kernel variant of their provider
/// (cpu_providers.hpp).
Result<std::vector<HostTensor>> run_batch_on_cpu(const BatchWork& work, WorkerPool& pool,
                                                 FusedCounters* counters,
                                                 const KernelObserver* observer = nullptr,
                                                 std::optional<Endpoint> destination_memory = std::nullopt);

/// run_batch_on_cpu for a `work` the caller has just validated
/// (validate_batch ok): the same without validating it again.
Result<std::vector<HostTensor>> run_validated_batch_on_cpu(const BatchWork& work, WorkerPool& pool,
                                                           FusedCounters* counters, const KernelObserver* observer,
                                                           std::optional<Endpoint> destination_memory);

/// What a batch's structure says about running it, independent of its
/// inputs' data and shapes: the region (index into work.regions) starting
/// at each op, and which op results nothing reads after each op.
struct BatchPlan {
  /// Per op, the region that starts there or -1 (empty: no regions).
  std::vector<int32_t> region_at;
  /// The op results dying after op k (outputs never):
  /// dies_after[dies_begin[k] .. dies_begin[k + 1]).
  std::vector<uint32_t> dies_begin;
  std::vector<uint32_t> dies_after;
  /// Op i's results are the runner's result slots
  /// result_begin[i] .. result_begin[i + 1] (one flat array per run).
  std::vector<uint32_t> result_begin;
};

/// The plan of `work` (which must pass validate_batch). Cost: linear in
/// its ops and refs, a few allocations.
BatchPlan plan_batch_on_cpu(const BatchWork& work);

/// run_validated_batch_on_cpu with the plan worked out before (for a work
/// run again and again with the same ops, regions and outputs), and no
/// observer. `keeps`: empty, or one per op, where that op's kernel keeps
/// what it works out for the next run (kernels/kernel.hpp, KernelKeep);
/// the caller holds them for one run at a time.
Result<std::vector<HostTensor>> run_planned_batch_on_cpu(const BatchWork& work, const BatchPlan& plan,
                                                         std::span<KernelKeep> keeps, WorkerPool& pool,
                                                         FusedCounters* counters,
                                                         std::optional<Endpoint> destination_memory);

}  // namespace tenact::cpu
