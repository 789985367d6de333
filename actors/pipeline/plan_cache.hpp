// Pipeline plans (actors/pipeline/pipeline_run.hpp) built once per
// prepared program and shared by its runs: building a plan costs about a
// microsecond per node, more than running a small program.
//
// Ownership: the prepare-cache actor alone changes the cache. It inserts
// the plan built with each ready entry (on the planning thread that
// produced it) and a plan a run had to build itself (sent to it as
// plan_atom), and clears the cache whenever it lets entries go (with the
// request memo). Pipelines read it from any thread. A plan holds its
// prepared program, so the bound (`max_entries`, the whole cache emptied
// past it) also bounds the programs kept alive here.
//
// Thread-safe: one mutex, held for a map lookup, insert or clear.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "actors/pipeline/pipeline_run.hpp"

namespace tenact {

class PlanCache {
 public:
  explicit PlanCache(size_t max_entries = 1024) : max_(max_entries) {}

  /// The plan of `program`, or null.
  std::shared_ptr<const PipelinePlan> find(const PreparedProgram& program) const {
    std::lock_guard lock(mutex_);
    auto it = plans_.find(&program);
    return it == plans_.end() ? nullptr : it->second;
  }

  /// Keeps `plan` for its program (a plan already kept for it stays).
  void insert(std::shared_ptr<const PipelinePlan> plan) {
    if (!plan) return;
    std::lock_guard lock(mutex_);
    if (plans_.size() >= max_) plans_.clear();
    plans_.emplace(&plan->program(), std::move(plan));
  }

  void clear() {
    std::lock_guard lock(mutex_);
    plans_.clear();
  }

 private:
  size_t max_;
  mutable std::mutex mutex_;
  /// Keyed by the program the plan holds (so the address stays valid).
  std::map<const PreparedProgram*, std::shared_ptr<const PipelinePlan>> plans_;
};

}  // namespace tenact
