// Events: a point in an engine's queue (or a copy's) that other work waits
// on. An event is signalled once, with the outcome of the work it marks (ok
// or that work's error); whoever waits on it learns that outcome. This is
// the host-side form every engine understands; an engine with native events
// (CUDA) derives from Event to carry its handle and may wait on its own
// events on the device instead of through when_signaled.
//
// Threading: every member is safe from many threads. A callback given to
// when_signaled runs exactly once: on the calling thread before
// when_signaled returns when the event is signalled already, otherwise on
// the thread that signals it, after the outcome is visible, in the order
// the callbacks were registered. Callbacks must not block (they run on
// engine threads).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace tenact {

class Event {
 public:
  /// `origin` says what it marks, for errors: "cpu queue 1, batch of 3 ops".
  static std::shared_ptr<Event> create(std::string origin);
  explicit Event(std::string origin) : origin_(std::move(origin)) {}
  virtual ~Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  const std::string& origin() const { return origin_; }

  /// Signals the event with `outcome` and runs the waiting callbacks.
  /// Returns false (and changes nothing) when it was signalled already.
  bool signal(Status outcome);
  bool signaled() const;
  /// The outcome once signalled.
  std::optional<Status> outcome() const;
  /// steady_clock nanoseconds when it was signalled (0: not yet), taken
  /// before any waiter runs: what tests and traces order work by.
  uint64_t signaled_ns() const;
  /// See the file comment.
  void when_signaled(std::function<void(const Status&)> callback);

 private:
  const std::string origin_;
  mutable std::mutex mutex_;
  std::optional<Status> outcome_;
  uint64_t signaled_ns_ = 0;
  std::vector<std::function<void(const Status&)>> waiting_;
};

using EventPtr = std::shared_ptr<Event>;

/// Calls `then` exactly once, when every event of `events` is signalled
/// (at once when `events` is empty or all are): ok when every one
/// succeeded, else the error of the first failed one in `events` order,
/// with "waiting on <origin>" as context. Runs where the last event's
/// callback runs (see Event). Null events count as signalled ok.
void when_all_signaled(std::span<const EventPtr> events, std::function<void(Status)> then);

}  // namespace tenact
