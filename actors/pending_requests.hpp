// Requests in flight, so that shutdown can fail every one of them
// (ErrorCode::Shutdown) and a request past its deadline fails with
// Timeout, instead of leaving futures unset and callbacks uncalled. Each
// request's completion is wrapped to fire exactly once: whichever of the
// normal path, the deadline and shutdown comes first wins.
//
// Thread-safe; add/remove are O(log n) under one mutex (only on paths
// that already cost a message or more); expire() scans the requests in
// flight (the runtime calls it on a timer tick).
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "core/error.hpp"

namespace tenact {

class PendingRequests {
 public:
  /// Wraps `done` so it is called exactly once, and tracks it until then.
  /// After close() the returned function has already been called with a
  /// Shutdown error (and calling it does nothing).
  /// `deadline`: how long the request may take (zero or negative: no
  /// deadline); expire() fails it with Timeout afterwards.
  /// `on_answer` (optional) runs just before `done` when the returned
  /// function answers first, never when the deadline or shutdown does:
  /// there a caller may have let go of what it would write (its stats).
  template <class T>
  std::function<void(Result<T>)> track(std::function<void(Result<T>)> done, const char* what,
                                       std::chrono::milliseconds deadline = std::chrono::milliseconds{0},
                                       std::function<void()> on_answer = {}) {
    auto once = std::make_shared<Once<T>>(std::move(done), std::move(on_answer));
    uint64_t id = 0;
    {
      std::lock_guard lock(mutex_);
      if (!closed_) {
        id = ++next_;
        failers_.emplace(id, [once](const Error& e) { once->fire(Result<T>{e}); });
        if (deadline.count() > 0)
          deadlines_.emplace(id, Deadline{Clock::now() + deadline, std::string{what}, deadline});
      }
    }
    if (id == 0) once->fire(Result<T>{Error{ErrorCode::Shutdown, std::string{what} + " after the runtime shut down"}});
    return [this, once, id](Result<T> r) {
      if (id != 0) remove(id);
      once->fire(std::move(r), true);
    };
  }

  /// Fails every tracked request with `error` and refuses new ones.
  void close(const Error& error) {
    std::map<uint64_t, std::function<void(const Error&)>> failers;
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
      failers.swap(failers_);
      deadlines_.clear();
    }
    for (auto& [id, fail] : failers) fail(error);
  }

  /// Fails every request whose deadline is before `now` with Timeout.
  /// Returns how many.
  size_t expire(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now()) {
    std::vector<std::pair<std::function<void(const Error&)>, Error>> expired;
    {
      std::lock_guard lock(mutex_);
      for (auto it = deadlines_.begin(); it != deadlines_.end();) {
        if (it->second.at > now) {
          ++it;
          continue;
        }
        auto f = failers_.find(it->first);
        if (f != failers_.end()) {
          expired.emplace_back(std::move(f->second),
                               Error{ErrorCode::Timeout, it->second.what + " passed its deadline of " +
                                                             std::to_string(it->second.limit.count()) + " ms"});
          failers_.erase(f);
        }
        it = deadlines_.erase(it);
      }
    }
    for (auto& [fail, error] : expired) fail(error);
    return expired.size();
  }

  size_t size() const {
    std::lock_guard lock(mutex_);
    return failers_.size();
  }

 private:
  template <class T>
  struct Once {
    Once(std::function<void(Result<T>)> f, std::function<void()> a) : done(std::move(f)), on_answer(std::move(a)) {}
    /// `answered`: the normal path (on_answer runs first), not a failer.
    void fire(Result<T> r, bool answered = false) {
      if (!fired.exchange(true)) {
        auto f = std::move(done);
        auto a = std::move(on_answer);
        if (answered && a) a();
        f(std::move(r));
      }
    }
    std::atomic<bool> fired{false};
    std::function<void(Result<T>)> done;
    std::function<void()> on_answer;
  };
  void remove(uint64_t id) {
    std::lock_guard lock(mutex_);
    failers_.erase(id);
    deadlines_.erase(id);
  }
  using Clock = std::chrono::steady_clock;
  struct Deadline {
    Clock::time_point at;
    std::string what;
    std::chrono::milliseconds limit;
  };

  mutable std::mutex mutex_;
  bool closed_ = false;
  uint64_t next_ = 0;
  std::map<uint64_t, std::function<void(const Error&)>> failers_;
  std::map<uint64_t, Deadline> deadlines_;
};

}  // namespace tenact
