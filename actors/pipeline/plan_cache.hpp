// Pipeline plans (actors/pipeline/pipeline_run.hpp) built once per
// prepared program and shared by its runs: building a plan costs about a
// microsecond per node, more than running a small program.
//
// A plan holds its prepared program, so the cache is cleared whenever the
// prepare cache lets entries go (with the facade's memo) and is bounded
// (emptied past `max_entries`). Thread-safe: one mutex, held for a map
// lookup or insert (a plan is built outside it; two racing builders may
// both build, the first insert wins).
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "actors/pipeline/pipeline_run.hpp"

namespace tenact {

class PlanCache {
 public:
  explicit PlanCache(size_t max_entries = 1024) : max_(max_entries) {}

  Result<std::shared_ptr<const PipelinePlan>> get(const std::shared_ptr<const PreparedProgram>& program) {
    {
      std::lock_guard lock(mutex_);
      auto it = plans_.find(program.get());
      if (it != plans_.end()) return it->second;
    }
    TENACT_ASSIGN_OR_RETURN(auto plan, PipelinePlan::build(program));
    std::lock_guard lock(mutex_);
    if (plans_.size() >= max_) plans_.clear();
    return plans_.emplace(program.get(), std::move(plan)).first->second;
  }

  void clear() {
    std::lock_guard lock(mutex_);
    plans_.clear();
  }

 private:
  size_t max_;
  std::mutex mutex_;
  /// Keyed by the program the plan holds (so the address stays valid).
  std::map<const PreparedProgram*, std::shared_ptr<const PipelinePlan>> plans_;
};

}  // namespace tenact
