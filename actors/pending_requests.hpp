// Requests in flight, so that shutdown can fail every one of them
// (ErrorCode::Shutdown) instead of leaving futures unset and callbacks
// uncalled. Each request's completion is wrapped to fire exactly once:
// whichever of the normal path and shutdown comes first wins.
//
// Thread-safe; add/remove are O(log n) under one mutex (only on paths
// that already cost a message or more).
#pragma once

#include <atomic>
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
  template <class T>
  std::function<void(Result<T>)> track(std::function<void(Result<T>)> done, const char* what) {
    auto once = std::make_shared<Once<T>>(std::move(done));
    uint64_t id = 0;
    {
      std::lock_guard lock(mutex_);
      if (!closed_) {
        id = ++next_;
        failers_.emplace(id, [once](const Error& e) { once->fire(Result<T>{e}); });
      }
    }
    if (id == 0) once->fire(Result<T>{Error{ErrorCode::Shutdown, std::string{what} + " after the runtime shut down"}});
    return [this, once, id](Result<T> r) {
      if (id != 0) remove(id);
      once->fire(std::move(r));
    };
  }

  /// Fails every tracked request with `error` and refuses new ones.
  void close(const Error& error) {
    std::map<uint64_t, std::function<void(const Error&)>> failers;
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
      failers.swap(failers_);
    }
    for (auto& [id, fail] : failers) fail(error);
  }

  size_t size() const {
    std::lock_guard lock(mutex_);
    return failers_.size();
  }

 private:
  template <class T>
  struct Once {
    explicit Once(std::function<void(Result<T>)> f) : done(std::move(f)) {}
    void fire(Result<T> r) {
      if (!fired.exchange(true)) {
        auto f = std::move(done);
        f(std::move(r));
      }
    }
    std::atomic<bool> fired{false};
    std::function<void(Result<T>)> done;
  };
  void remove(uint64_t id) {
    std::lock_guard lock(mutex_);
    failers_.erase(id);
  }

  mutable std::mutex mutex_;
  bool closed_ = false;
  uint64_t next_ = 0;
  std::map<uint64_t, std::function<void(const Error&)>> failers_;
};

}  // namespace tenact
