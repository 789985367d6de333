// A way back to a Runtime for objects that may outlive it (models): while
// one holds a RuntimeLink::Use the runtime is not destroyed; once the
// runtime's destruction has begun, no new Use gets it.
//
// Contract: thread-safe; uses nest (a callback that runs inline inside a
// use may take another). close() — the runtime's destructor, first thing —
// refuses new uses and waits for the uses in progress to end; a use never
// blocks (what it calls returns at once: Runtime requests never wait).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace tenact {

class Runtime;

class RuntimeLink {
 public:
  explicit RuntimeLink(Runtime* runtime) : runtime_(runtime) {}

  /// One use: `runtime()` is the runtime, or nullptr once it is going.
  class Use {
   public:
    explicit Use(RuntimeLink& link) : link_(link), runtime_(link.enter()) {}
    ~Use() {
      if (runtime_) link_.leave();
    }
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;
    Runtime* runtime() const { return runtime_; }

   private:
    RuntimeLink& link_;
    Runtime* runtime_;
  };

  void close() {
    std::unique_lock lock(mutex_);
    closed_ = true;
    idle_.wait(lock, [this] { return users_ == 0; });
  }

 private:
  Runtime* enter() {
    std::lock_guard lock(mutex_);
    if (closed_) return nullptr;
    ++users_;
    return runtime_;
  }
  void leave() {
    std::lock_guard lock(mutex_);
    if (--users_ == 0 && closed_) idle_.notify_all();
  }

  Runtime* const runtime_;
  std::mutex mutex_;
  std::condition_variable idle_;
  uint64_t users_ = 0;
  bool closed_ = false;
};

}  // namespace tenact
