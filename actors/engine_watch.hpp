// Runs that reach an engine without its engine actor in between (the
// single-batch fast path of execute) still fail at once when the engine
// actor dies: they register here, and the engine actor's exit hook fails
// every registered run with EngineDown.
//
// Thread-safe (one mutex); add/remove are O(log n).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "core/error.hpp"

namespace tenact {

class EngineWatch {
 public:
  explicit EngineWatch(std::string engine) : engine_(std::move(engine)) {}

  /// Registers a run's failure path; 0 when the engine actor is already
  /// down (the caller fails the run itself).
  uint64_t add(std::function<void(const Error&)> fail) {
    std::lock_guard lock(mutex_);
    if (!alive_) return 0;
    const uint64_t token = ++next_;
    runs_.emplace(token, std::move(fail));
    return token;
  }
  void remove(uint64_t token) {
    std::lock_guard lock(mutex_);
    runs_.erase(token);
  }
  /// The engine actor exited: fails every registered run.
  void down(const std::string& reason) {
    std::map<uint64_t, std::function<void(const Error&)>> runs;
    {
      std::lock_guard lock(mutex_);
      alive_ = false;
      runs.swap(runs_);
    }
    const Error error{ErrorCode::EngineDown,
                      "the engine actor of engine '" + engine_ + "' went down during the run (" + reason + ")"};
    for (auto& [token, fail] : runs) fail(error);
  }

 private:
  std::string engine_;
  std::mutex mutex_;
  bool alive_ = true;
  uint64_t next_ = 0;
  std::map<uint64_t, std::function<void(const Error&)>> runs_;
};

}  // namespace tenact
