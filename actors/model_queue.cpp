#include "actors/model_queue.hpp"

#include <algorithm>

namespace tenact {

ModelQueue::ModelQueue(uint32_t max_shared) : max_shared_(std::max<uint32_t>(1, max_shared)) {}

std::vector<ModelQueue::Task> ModelQueue::take_startable() {
  std::vector<Task> start;
  while (!waiting_.empty() && !exclusive_running_) {
    Waiting& next = waiting_.front();
    if (next.exclusive) {
      if (shared_running_ > 0) break;
      exclusive_running_ = true;
    } else {
      if (shared_running_ >= max_shared_) break;
      ++shared_running_;
    }
    start.push_back(std::move(next.task));
    waiting_.pop_front();
  }
  return start;
}

bool ModelQueue::submit(bool exclusive, Task task) {
  std::vector<Task> start;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    waiting_.push_back(Waiting{exclusive, std::move(task)});
    start = take_startable();
  }
  for (Task& t : start) t();
  return true;
}

void ModelQueue::finished(bool exclusive) {
  std::vector<Task> start;
  {
    std::lock_guard lock(mutex_);
    if (exclusive)
      exclusive_running_ = false;
    else if (shared_running_ > 0)
      --shared_running_;
    if (!closed_) start = take_startable();
  }
  for (Task& t : start) t();
}

std::vector<ModelQueue::Task> ModelQueue::close() {
  std::vector<Task> dropped;
  std::lock_guard lock(mutex_);
  closed_ = true;
  for (Waiting& w : waiting_) dropped.push_back(std::move(w.task));
  waiting_.clear();
  return dropped;
}

size_t ModelQueue::running() const {
  std::lock_guard lock(mutex_);
  return shared_running_ + (exclusive_running_ ? 1 : 0);
}

size_t ModelQueue::waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_.size();
}

}  // namespace tenact
