#include "engines/sim/sim_sequencer.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace tenact::sim {

bool SimSequencer::Key::operator<(const Key& o) const {
  return std::tie(time, lane, number) < std::tie(o.time, o.lane, o.number);
}

SimSequencer::SimSequencer(uint32_t in_order_lanes) : copy_lane_(in_order_lanes), lanes_(in_order_lanes + 1) {}

SimSequencer::Ticket SimSequencer::submit(uint32_t lane) {
  std::lock_guard lock(mutex_);
  lane = std::min(lane, copy_lane_);
  const Ticket ticket{lane, next_ticket_++};
  lanes_[lane].in_flight.insert(ticket.number);
  return ticket;
}

bool SimSequencer::safe_locked(const Key& key) const {
  for (uint32_t l = 0; l < lanes_.size(); ++l) {
    const Lane& lane = lanes_[l];
    if (lane.in_flight.empty()) continue;
    // The earliest any of the lane's work in flight can order: a stream's
    // ends no earlier than its clock; a copy at any time.
    const Key bound{l == copy_lane_ ? 0 : lane.clock, l, *lane.in_flight.begin()};
    if (!(key < bound)) return false;
  }
  return true;
}

void SimSequencer::release_locked() {
  while (!held_.empty() && safe_locked(held_.begin()->key)) {
    auto node = held_.extract(held_.begin());
    ready_.push_back(std::move(node.value().deliver));
  }
}

void SimSequencer::finish(Ticket ticket, uint64_t time, std::function<void()> deliver) {
  std::unique_lock lock(mutex_);
  const uint32_t l = std::min(ticket.lane, copy_lane_);
  Lane& lane = lanes_[l];
  lane.in_flight.erase(ticket.number);
  if (l != copy_lane_) {
    time = std::max(time, lane.clock);
    lane.clock = time;
  }
  held_.insert(Held{Key{time, l, ticket.number}, std::move(deliver)});
  release_locked();
  if (delivering_) return;  // the thread delivering now takes these too, in order
  delivering_ = true;
  while (!ready_.empty()) {
    std::vector<std::function<void()>> batch = std::move(ready_);
    ready_.clear();
    lock.unlock();
    for (auto& d : batch) d();
    batch.clear();  // what a delivery captured goes before the next round
    lock.lock();
  }
  delivering_ = false;
}

size_t SimSequencer::held() const {
  std::lock_guard lock(mutex_);
  return held_.size();
}

size_t SimSequencer::in_flight() const {
  std::lock_guard lock(mutex_);
  size_t n = 0;
  for (const Lane& lane : lanes_) n += lane.in_flight.size();
  return n;
}

}  // namespace tenact::sim
