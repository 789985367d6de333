// The caller-thread path of Runtime::run: a program whose preparation the
// facade's memo answers, whose plan is one batch on one engine lane, run
// by the engine on the client's thread (Engine::run_on_caller) before
// run() returns, with no pipeline, no job-board admission and no per-run
// plan walk (actors/pipeline/inline_batch.hpp). Internal to actors/*.cpp.
//
// Taken only where it changes nothing a caller can see but the time: a
// client's own thread; RuntimeOptions with direct_single_batch and
// caller_runs_small_batches on, no trace, no bound on runs in flight, and
// no job placement to do (balance_jobs with one engine able to run it, or
// a placement constraint); options that let the memo answer; every input
// in unowned host memory or where the plan takes it. A run it does not
// take, or whose batch the engine declines (too big, its queue busy) or
// fails (a failure is then met again, retried and reported by the usual
// path: programs are pure), goes the usual way, inputs untouched.
//
// Runs on the caller's thread outside any CAF scheduler thread; the
// callback runs there too, marked as a runtime thread (a request it makes
// does not run inline). A run in progress holds the runtime's shutdown
// (work in flight) but no room on the job board: queue_stats() does not
// count it.
#pragma once

#include <memory>
#include <vector>

#include "actors/runtime_impl.hpp"

namespace tenact {

/// True when the run was taken and answered (`done` was called and its
/// inputs dropped first); false when it must go the usual way (then
/// nothing was touched: `inputs` and `done` are as they were).
bool try_run_inline(Runtime::Impl& rt, const std::shared_ptr<const SemanticProgram>& program,
                    std::vector<Tensor>& inputs, const PrepareOptions& options, ExecuteCallback& done,
                    ExecutionStats* stats);

}  // namespace tenact
