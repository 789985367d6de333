#include "engines/sim/sim_world.hpp"

#include <algorithm>
#include <cmath>

namespace tenact::sim {

namespace {

// splitmix64: a well-mixed 64-bit hash of its argument.
uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

uint64_t virtual_ns(double seconds) {
  constexpr double kMax = 4.611686018427387904e18;  // 2^62
  const double ns = std::ceil(seconds * 1e9);
  if (!(ns > 0)) return 0;
  return ns >= kMax ? uint64_t{1} << 62 : static_cast<uint64_t>(ns);
}

Result<std::shared_ptr<SimWorld>> SimWorld::create(SimPlatform platform) {
  TENACT_TRY(validate_platform(platform));
  return std::make_shared<SimWorld>(std::move(platform));
}

SimWorld::SimWorld(SimPlatform platform) : platform_(std::move(platform)) {
  uint32_t lanes = 0;
  for (const SimDeviceSpec& device : platform_.devices) {
    counters_.push_back(std::make_unique<SimDeviceCounters>());
    first_lane_.push_back(lanes);
    lanes += std::max<uint32_t>(1, device.streams);
  }
  sequencer_ = std::make_unique<SimSequencer>(lanes);
}

int SimWorld::device_index(std::string_view id) const {
  for (size_t i = 0; i < platform_.devices.size(); ++i)
    if (platform_.devices[i].id == id) return static_cast<int>(i);
  return -1;
}

uint64_t SimWorld::ready_at(const Tensor& value) const {
  const auto& buffer = value.buffer();
  if (!buffer) return 0;
  std::lock_guard lock(mutex_);
  auto it = ready_.find(buffer.get());
  // The same address may have been reused by a newer buffer: only the
  // buffer recorded counts.
  if (it == ready_.end() || it->second.buffer.lock() != buffer) return 0;
  return it->second.time;
}

void SimWorld::set_ready(const Tensor& value, uint64_t time) {
  const auto& buffer = value.buffer();
  if (!buffer) return;
  {
    std::lock_guard lock(mutex_);
    ready_[buffer.get()] = Ready{buffer, time};
    if (ready_.size() >= prune_at_) prune_locked();
  }
  advance_to(time);
}

void SimWorld::prune_locked() {
  for (auto it = ready_.begin(); it != ready_.end();)
    it = it->second.buffer.expired() ? ready_.erase(it) : std::next(it);
  // Amortised: the next prune waits until the live entries have doubled.
  prune_at_ = std::max<size_t>(1024, 2 * ready_.size());
}

namespace {

// FNV-1a of "from->to": a stable number per link for fault draws.
uint64_t link_key(std::string_view from, std::string_view to) {
  uint64_t h = 1469598103934665603ull;
  auto add = [&h](std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  };
  add(from);
  add("->");
  add(to);
  return h;
}

}  // namespace

Result<uint64_t> SimWorld::charge_link(std::string_view from, std::string_view to, uint64_t bytes, uint64_t ready) {
  const SimLinkSpec* link = platform_.link(from, to);
  if (link == nullptr)
    return Error{ErrorCode::Unsupported, "platform '" + platform_.name + "' has no link from " + std::string{from} +
                                             " to " + std::string{to}};
  const uint64_t cost = link->latency_ns + virtual_ns(static_cast<double>(bytes) / link->bandwidth);
  const uint64_t done = ready + cost;
  const SimFaultSpec& faults = platform_.faults;
  // Keyed by the link, the copy's start and its size (all virtual, so a
  // replay draws the same whatever the host's timing).
  if (fault_happens(faults.transfer, faults.seed, FaultDraw::Transfer, link_key(from, to), ready, bytes)) {
    advance_to(ready + link->latency_ns);
    return Error{ErrorCode::TransientFailure, "the copy of " + std::to_string(bytes) + " bytes from " +
                                                  std::string{from} + " to " + std::string{to} +
                                                  " failed (injected fault, seed " + std::to_string(faults.seed) + ")"};
  }
  {
    std::lock_guard lock(mutex_);
    SimLinkStats& s = links_[{std::string{from}, std::string{to}}];
    s.from = from;
    s.to = to;
    s.copies += 1;
    s.bytes += bytes;
    s.busy_ns += cost;
  }
  if (int d = device_index(to); d >= 0) counters_[static_cast<size_t>(d)]->bytes_in.fetch_add(bytes);
  if (int d = device_index(from); d >= 0) counters_[static_cast<size_t>(d)]->bytes_out.fetch_add(bytes);
  advance_to(done);
  return done;
}

std::vector<SimLinkStats> SimWorld::link_stats() const {
  std::lock_guard lock(mutex_);
  std::vector<SimLinkStats> out;
  for (const auto& [key, stats] : links_) out.push_back(stats);
  return out;
}

double SimWorld::jitter(size_t device, uint32_t stream, uint64_t sequence) const {
  if (platform_.jitter <= 0) return 1.0;
  uint64_t h = mix64(platform_.seed);
  h = mix64(h ^ device);
  h = mix64(h ^ stream);
  h = mix64(h ^ sequence);
  const double unit = static_cast<double>(h >> 11) * 0x1.0p-53;  // [0, 1)
  return 1.0 - platform_.jitter + 2.0 * platform_.jitter * unit;
}

void SimWorld::advance_to(uint64_t time) {
  uint64_t seen = now_.load(std::memory_order_relaxed);
  while (time > seen && !now_.compare_exchange_weak(seen, time, std::memory_order_acq_rel)) {
  }
}

}  // namespace tenact::sim
