#include "engines/event.hpp"

#include <atomic>
#include <chrono>

namespace tenact {

std::shared_ptr<Event> Event::create(std::string origin) { return std::make_shared<Event>(std::move(origin)); }

bool Event::signal(Status outcome) {
  std::vector<std::function<void(const Status&)>> waiting;
  {
    std::lock_guard lock(mutex_);
    if (outcome_) return false;
    outcome_ = std::move(outcome);
    signaled_ns_ = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                             std::chrono::steady_clock::now().time_since_epoch())
                                             .count());
    waiting.swap(waiting_);
  }
  // outcome_ never changes once set: reading it unlocked is safe.
  for (auto& callback : waiting) callback(*outcome_);
  return true;
}

bool Event::signaled() const {
  std::lock_guard lock(mutex_);
  return outcome_.has_value();
}

uint64_t Event::signaled_ns() const {
  std::lock_guard lock(mutex_);
  return signaled_ns_;
}

std::optional<Status> Event::outcome() const {
  std::lock_guard lock(mutex_);
  return outcome_;
}

void Event::when_signaled(std::function<void(const Status&)> callback) {
  {
    std::lock_guard lock(mutex_);
    if (!outcome_) {
      waiting_.push_back(std::move(callback));
      return;
    }
  }
  callback(*outcome_);
}

namespace {

struct AllSignaled {
  std::vector<EventPtr> events;
  std::function<void(Status)> then;
  std::atomic<size_t> left{0};

  void finish() {
    for (const EventPtr& e : events) {
      if (!e) continue;
      std::optional<Status> s = e->outcome();  // signalled: every callback has run
      if (s && !s->ok()) return then(s->error().with_context("waiting on " + e->origin()));
    }
    then(ok_status());
  }
};

}  // namespace

void when_all_signaled(std::span<const EventPtr> events, std::function<void(Status)> then) {
  auto all = std::make_shared<AllSignaled>();
  all->events.assign(events.begin(), events.end());
  all->then = std::move(then);
  // One count per event plus one for this call, so that `then` cannot run
  // while the loop below is still registering.
  all->left.store(all->events.size() + 1);
  for (const EventPtr& e : all->events) {
    if (!e) {
      all->left.fetch_sub(1);
      continue;
    }
    e->when_signaled([all](const Status&) {
      if (all->left.fetch_sub(1) == 1) all->finish();
    });
  }
  if (all->left.fetch_sub(1) == 1) all->finish();
}

}  // namespace tenact
