// Work the runtime starts later, after a wait in wall-clock time (a
// retry's backoff on an engine without a virtual clock): each start is
// held here under an id, and a delayed message to the runtime's ticker
// names the id when its time comes (deadline_ticker.cpp). The runtime, not
// the message, owns what a start holds (a run's inputs, engine buffers
// among them), so that shutdown drops every held start while the engines
// are still there, whatever the message queue still holds.
//
// Thread-safe: one mutex around a map; every call is O(log n) and none
// runs a start under the lock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

namespace tenact {

class DelayedStarts {
 public:
  /// Holds `start` and returns its id (never 0); 0 once close() was
  /// called: then nothing is held, and the caller answers instead.
  uint64_t hold(std::function<void()> start) {
    std::lock_guard lock(mutex_);
    if (closed_) return 0;
    const uint64_t id = ++next_;
    held_.emplace(id, std::move(start));
    return id;
  }

  /// The start held under `id`, no longer held; nullopt when none is
  /// (taken already, or dropped by close()).
  std::optional<std::function<void()>> take(uint64_t id) {
    std::lock_guard lock(mutex_);
    auto it = held_.find(id);
    if (it == held_.end()) return std::nullopt;
    std::function<void()> start = std::move(it->second);
    held_.erase(it);
    return start;
  }

  /// Refuses new starts and destroys every held one without running it
  /// (outside the lock: destroying one may release buffers).
  void close() {
    std::map<uint64_t, std::function<void()>> dropped;
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
      dropped.swap(held_);
    }
  }

  size_t held() const {
    std::lock_guard lock(mutex_);
    return held_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::map<uint64_t, std::function<void()>> held_;
  uint64_t next_ = 0;
  bool closed_ = false;
};

}  // namespace tenact
