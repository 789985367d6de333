// The order in which one model's work starts (actors/model.hpp): shared
// tasks (runs of a model without state updates) run concurrently up to a
// limit; exclusive tasks (runs that update states, state reads, resets) run
// alone; everything starts in submission order — a shared task behind a
// waiting exclusive one waits too, so nothing overtakes.
//
// Contract: thread-safe. A task starts on the thread that submits it when
// it may start at once, else on the thread whose finished() call makes
// room; it must call finished() exactly once, with its own `exclusive`,
// when its work is over (from any thread, also from inside the task).
// Tasks never run under the queue's lock. After close(), submit refuses
// (returns false) and the tasks still waiting are handed back, unstarted.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

namespace tenact {

class ModelQueue {
 public:
  using Task = std::function<void()>;
  /// `max_shared`: shared tasks at once (at least 1).
  explicit ModelQueue(uint32_t max_shared);

  /// Starts `task` now or queues it; false (the task dropped unstarted)
  /// once closed.
  bool submit(bool exclusive, Task task);
  /// The end of a started task's work: starts what may start now.
  void finished(bool exclusive);
  /// Refuses further tasks; returns those waiting, in order.
  std::vector<Task> close();

  /// Tasks started and not finished, and tasks waiting.
  size_t running() const;
  size_t waiting() const;

 private:
  struct Waiting {
    bool exclusive = false;
    Task task;
  };
  /// Moves the tasks that may start now out of the queue (lock held).
  std::vector<Task> take_startable();

  const uint32_t max_shared_;
  mutable std::mutex mutex_;
  std::deque<Waiting> waiting_;
  uint32_t shared_running_ = 0;
  bool exclusive_running_ = false;
  bool closed_ = false;
};

}  // namespace tenact
