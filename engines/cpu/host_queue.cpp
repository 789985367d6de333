#include "engines/cpu/host_queue.hpp"

#include "util/worker_pool.hpp"

namespace tenact::cpu {

std::shared_ptr<HostQueue> HostQueue::create(WorkerPool& pool, std::string name) {
  return std::make_shared<HostQueue>(pool, std::move(name));
}

HostQueue::~HostQueue() {
  // Only entries waiting on events that were never signalled are left.
  for (Entry& entry : entries_)
    entry.task(Error{ErrorCode::Shutdown, name_ + " was destroyed before the events its batch waits on were signalled"});
}

void HostQueue::post_run() {
  pool_.post([self = shared_from_this()] { self->run_entries(); });
}

bool HostQueue::all_signaled(const std::vector<EventPtr>& waits) {
  for (const EventPtr& e : waits)
    if (e && !e->signaled()) return false;
  return true;
}

void HostQueue::release_after_here() {
  {
    std::lock_guard lock(mutex_);
    if (entries_.empty()) {
      running_ = false;
      return;
    }
  }
  post_run();
}

bool HostQueue::submit(std::vector<EventPtr> waits, Task task, bool may_run_here) {
  {
    std::lock_guard lock(mutex_);
    entries_.push_back(Entry{std::move(waits), std::move(task)});
    if (running_) return false;  // the owner picks it up
    running_ = true;
    if (!may_run_here || entries_.size() != 1 || !all_signaled(entries_.front().waits)) {
      // Not here: the pool owns the queue from now on.
      post_run();
      return false;
    }
  }
  // Idle, ready and allowed: run this one entry here; what was submitted
  // meanwhile goes on on the pool.
  Entry entry;
  {
    std::lock_guard lock(mutex_);
    entry = std::move(entries_.front());
    entries_.pop_front();
  }
  entry.task(ok_status());
  {
    std::lock_guard lock(mutex_);
    if (entries_.empty()) {
      running_ = false;
      return true;
    }
  }
  post_run();
  return true;
}

void HostQueue::run_entries() {
  for (;;) {
    Entry entry;
    {
      std::lock_guard lock(mutex_);
      if (entries_.empty()) {
        running_ = false;
        return;
      }
      if (!all_signaled(entries_.front().waits)) {
        // Keep owning the queue; the last of the head's events resumes it.
        std::vector<EventPtr> waits = entries_.front().waits;
        std::weak_ptr<HostQueue> weak = weak_from_this();
        when_all_signaled(waits, [weak](Status) {
          if (auto self = weak.lock()) self->post_run();
        });
        return;
      }
      entry = std::move(entries_.front());
      entries_.pop_front();
    }
    Status ready = ok_status();
    when_all_signaled(entry.waits, [&ready](Status s) { ready = std::move(s); });  // signalled: runs now
    entry.task(std::move(ready));
  }
}

}  // namespace tenact::cpu
