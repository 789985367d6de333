// An in-order queue (stream) of host work over a worker pool: the CPU
// engine's queues. Entries start in the order they were submitted, each
// after the previous one has returned and after every event it waits on is
// signalled; the queue waits for an entry's events without holding a thread
// (a callback on the last event resumes it on the pool).
//
// Contract: submit() is safe from many threads. A task gets the outcome of
// its waits (ok, or the first failed wait's error) and must not throw; it
// runs on a pool thread, or on the submitting thread when its waits are
// signalled and the queue is idle and `may_run_here` (then before submit
// returns). Work posted to the pool holds the queue (shared); callbacks on
// events hold it weakly. The pool must outlive every task it runs (destroy
// the queue's owner's handle, then the pool: it runs what is posted). When
// the queue goes with entries still waiting on events, each such task gets
// a Shutdown error instead: no batch is lost.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <mutex>
#include <vector>

#include "engines/event.hpp"

namespace tenact {
class WorkerPool;
}

namespace tenact::cpu {

class HostQueue : public std::enable_shared_from_this<HostQueue> {
 public:
  using Task = std::function<void(Status waits)>;

  static std::shared_ptr<HostQueue> create(WorkerPool& pool, std::string name);
  HostQueue(WorkerPool& pool, std::string name) : pool_(pool), name_(std::move(name)) {}
  ~HostQueue();
  HostQueue(const HostQueue&) = delete;
  HostQueue& operator=(const HostQueue&) = delete;

  /// Returns true when the task ran on the calling thread.
  bool submit(std::vector<EventPtr> waits, Task task, bool may_run_here = false);
  /// Runs `task` on the calling thread when the queue is idle (nothing
  /// queued or running) and returns true; what is submitted meanwhile waits
  /// for it, then goes on on the pool. Returns false, running nothing,
  /// when the queue is busy. No allocation.
  template <class F>
  bool run_here_if_idle(F&& task) {
    {
      std::lock_guard lock(mutex_);
      if (running_ || !entries_.empty()) return false;
      running_ = true;
    }
    struct Release {
      HostQueue* queue;
      ~Release() { queue->release_after_here(); }
    } release{this};
    task();
    return true;
  }

 private:
  struct Entry {
    std::vector<EventPtr> waits;
    Task task;
  };
  /// Runs entries while the head's waits are signalled; when one is not,
  /// registers a callback that resumes on the pool and returns. Called by
  /// the one thread that owns the queue (running_).
  void run_entries();
  /// After run_here_if_idle's task: idle again, or the pool runs what came.
  void release_after_here();
  void post_run();
  static bool all_signaled(const std::vector<EventPtr>& waits);

  WorkerPool& pool_;
  const std::string name_;
  std::mutex mutex_;
  std::deque<Entry> entries_;
  /// Some thread owns the queue: runs entries, or waits on the head's events.
  bool running_ = false;
};

}  // namespace tenact::cpu
