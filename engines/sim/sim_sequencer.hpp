// The order in which a simulated platform's completions reach the runtime:
// by virtual time, whatever the host's timing. Engines compute on host
// threads, so a batch that ends late in virtual time may finish first on
// the host; the sequencer holds each completion until nothing still
// running can end before it, then delivers it.
//
// Lanes. Every stream of every device is an in-order lane: its work ends in
// submission order, each no earlier than the one before (the stream's
// clock). Copies along links share one unordered lane: a copy in flight may
// end at any virtual time. A completion is ordered by (virtual time, lane,
// submission ticket).
//
// Delivery rule (conservative, as in a discrete-event simulation): the
// earliest finished completion c is delivered once every lane with work in
// flight is sure to end after c: an in-order lane whose clock (its latest
// finished end) orders after c, and no copy in flight. Work submitted later
// is caused by a completion already delivered (the runtime submits the rest
// of a run behind events up front, or in answer to a delivery), so it
// cannot end before what has been delivered.
//
// Contract: every submit() is followed by exactly one finish() of its
// ticket (engines and queues call their completions on every path,
// shutdown included), or the completions after it wait forever. Deliveries
// run on the thread that calls finish() (or the one already delivering:
// one thread delivers at a time, in order, and the others return at once),
// outside the lock; a delivery must not block. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <vector>

namespace tenact::sim {

class SimSequencer {
 public:
  struct Ticket {
    uint32_t lane = 0;
    uint64_t number = 0;
  };

  /// `in_order_lanes` streams (lanes 0..n-1) and the copy lane (n).
  explicit SimSequencer(uint32_t in_order_lanes);
  uint32_t copy_lane() const { return copy_lane_; }

  /// Work was submitted on `lane` (< copy_lane() for a stream, copy_lane()
  /// for a copy): its completion comes through finish(ticket, ...).
  Ticket submit(uint32_t lane);
  /// The work of `ticket` ended at virtual `time` (raised to its lane's
  /// clock when lower: a stream's work never ends before the work ahead
  /// of it). Runs `deliver` when its turn comes, maybe before returning.
  void finish(Ticket ticket, uint64_t time, std::function<void()> deliver);

  /// Finished completions not yet delivered, and work in flight.
  size_t held() const;
  size_t in_flight() const;

 private:
  struct Key {
    uint64_t time = 0;
    uint32_t lane = 0;
    uint64_t number = 0;
    bool operator<(const Key& o) const;
  };
  struct Held {
    Key key;
    std::function<void()> deliver;
    bool operator<(const Held& o) const { return key < o.key; }
  };
  struct Lane {
    uint64_t clock = 0;
    /// Tickets in flight on the lane (ascending; an in-order lane's first
    /// is the next to end).
    std::set<uint64_t> in_flight;
  };
  /// Whether nothing in flight can order before `key`. Under mutex_.
  bool safe_locked(const Key& key) const;
  /// Moves every completion whose turn has come to ready_. Under mutex_.
  void release_locked();

  const uint32_t copy_lane_;
  mutable std::mutex mutex_;
  std::vector<Lane> lanes_;
  uint64_t next_ticket_ = 1;
  std::multiset<Held> held_;
  std::vector<std::function<void()>> ready_;
  bool delivering_ = false;
};

}  // namespace tenact::sim
