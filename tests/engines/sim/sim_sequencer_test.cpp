// The order in which a simulated platform's completions are delivered:
// virtual time (then lane, then submission), whatever the order the work
// finishes on the host, with nothing delivered while work in flight could
// still end before it. Expected orders are derived by hand from the rule in
// sim_sequencer.hpp.
#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "engines/sim/sim_sequencer.hpp"

using namespace tenact::sim;

namespace {

/// Records deliveries by name.
struct Deliveries {
  std::mutex mutex;
  std::vector<std::string> names;
  std::function<void()> of(std::string name) {
    return [this, name] {
      std::lock_guard lock(mutex);
      names.push_back(name);
    };
  }
  std::vector<std::string> taken() {
    std::lock_guard lock(mutex);
    return names;
  }
};

}  // namespace

TEST_CASE("completions are delivered in virtual-time order, whatever order they finish in on the host",
          "[sim][sequencer]") {
  SimSequencer seq{3};
  Deliveries d;
  const auto a = seq.submit(0), b = seq.submit(1), c = seq.submit(2);
  CHECK(seq.in_flight() == 3);
  seq.finish(c, 30, d.of("c"));
  seq.finish(b, 20, d.of("b"));
  // Lane 0 has work in flight and its clock is 0: it could still end first.
  CHECK(d.taken().empty());
  CHECK(seq.held() == 2);
  seq.finish(a, 10, d.of("a"));
  CHECK(d.taken() == std::vector<std::string>{"a", "b", "c"});
  CHECK(seq.held() == 0);
  CHECK(seq.in_flight() == 0);
}

TEST_CASE("an idle lane holds nothing back, nor does one whose clock is past the completion", "[sim][sequencer]") {
  SimSequencer seq{2};
  Deliveries d;
  const auto a = seq.submit(0);
  seq.finish(a, 50, d.of("a"));  // nothing else in flight
  CHECK(d.taken() == std::vector<std::string>{"a"});
  // Lane 0's next work ends no earlier than its clock, 50: lane 1's
  // completion at 40 goes at once.
  const auto b = seq.submit(0), c = seq.submit(1);
  seq.finish(c, 40, d.of("c"));
  CHECK(d.taken() == std::vector<std::string>{"a", "c"});
  // Still so for lane 1's next at 49 (lane 0's work ends at 50 or later).
  const auto e = seq.submit(1);
  seq.finish(e, 49, d.of("e"));
  CHECK(d.taken() == std::vector<std::string>{"a", "c", "e"});
  // A stream's work never ends before the work ahead of it: 45 counts as
  // 50, after e.
  const auto f = seq.submit(1);
  seq.finish(b, 45, d.of("b"));
  CHECK(d.taken() == std::vector<std::string>{"a", "c", "e"});  // lane 1 at clock 49 could end before 50
  seq.finish(f, 60, d.of("f"));
  CHECK(d.taken() == std::vector<std::string>{"a", "c", "e", "b", "f"});
}

TEST_CASE("equal virtual times are delivered in lane order, then in submission order", "[sim][sequencer]") {
  SimSequencer seq{2};
  Deliveries d;
  const auto on1 = seq.submit(1), on0 = seq.submit(0);
  seq.finish(on1, 10, d.of("lane 1"));
  CHECK(d.taken().empty());  // lane 0 at clock 0 could end at 10 and order first
  seq.finish(on0, 10, d.of("lane 0"));
  CHECK(d.taken() == std::vector<std::string>{"lane 0", "lane 1"});
  // Two on one lane at the same time: in submission order.
  const auto first = seq.submit(0), second = seq.submit(0);
  seq.finish(second, 10, d.of("second"));
  CHECK(d.taken().size() == 2);  // the first is still in flight on the lane
  seq.finish(first, 10, d.of("first"));
  CHECK(d.taken() == std::vector<std::string>{"lane 0", "lane 1", "first", "second"});
}

TEST_CASE("a copy in flight may end at any virtual time: later completions wait for it", "[sim][sequencer]") {
  SimSequencer seq{1};
  Deliveries d;
  const auto copy = seq.submit(seq.copy_lane()), kernel = seq.submit(0);
  seq.finish(kernel, 5, d.of("kernel"));
  CHECK(d.taken().empty());
  seq.finish(copy, 3, d.of("copy"));  // ends first in virtual time
  CHECK(d.taken() == std::vector<std::string>{"copy", "kernel"});
  // Copies are not in order among themselves: a later one may end first.
  const auto slow = seq.submit(seq.copy_lane()), fast = seq.submit(seq.copy_lane());
  seq.finish(slow, 100, d.of("slow"));
  CHECK(d.taken().size() == 2);
  seq.finish(fast, 60, d.of("fast"));
  CHECK(d.taken() == std::vector<std::string>{"copy", "kernel", "fast", "slow"});
  // A lane number past the copy lane is the copy lane.
  const auto past = seq.submit(seq.copy_lane() + 5);
  CHECK(past.lane == seq.copy_lane());
  seq.finish(past, 1, d.of("past"));
  CHECK(d.taken().back() == "past");
}

TEST_CASE("a delivery may submit and finish more work: it is delivered after, on the same thread",
          "[sim][sequencer]") {
  SimSequencer seq{1};
  Deliveries d;
  const auto outer = seq.submit(0);
  std::thread::id outer_thread, inner_thread;
  seq.finish(outer, 10, [&] {
    outer_thread = std::this_thread::get_id();
    d.of("outer")();
    const auto inner = seq.submit(0);
    seq.finish(inner, 20, [&] {
      inner_thread = std::this_thread::get_id();
      d.of("inner")();
    });
    // Not inside this delivery: after it returns.
    CHECK(d.taken() == std::vector<std::string>{"outer"});
  });
  CHECK(d.taken() == std::vector<std::string>{"outer", "inner"});
  CHECK(outer_thread == inner_thread);
}

TEST_CASE("under many threads every completion is delivered once, in order, one delivery at a time",
          "[sim][sequencer][threads]") {
  // As the runtime does: a run's work is submitted up front, in each
  // lane's order; it then finishes on many threads in any interleaving.
  constexpr uint32_t kLanes = 4;
  constexpr int kPerLane = 400;
  SimSequencer seq{kLanes};
  std::vector<std::vector<SimSequencer::Ticket>> tickets(kLanes);
  for (int i = 0; i < kPerLane; ++i)
    for (uint32_t lane = 0; lane < kLanes; ++lane) tickets[lane].push_back(seq.submit(lane));
  std::mutex mutex;
  std::vector<std::tuple<uint64_t, uint32_t, int>> delivered;  // (time, lane, index)
  std::atomic<int> delivering{0};
  std::atomic<bool> overlapped{false};
  std::vector<std::thread> threads;
  for (uint32_t lane = 0; lane < kLanes; ++lane)
    threads.emplace_back([&, lane] {
      std::mt19937 rng(lane + 1);
      uint64_t time = 0;
      for (int i = 0; i < kPerLane; ++i) {
        time += rng() % 7;  // ties across lanes are frequent
        if (rng() % 8 == 0) std::this_thread::yield();
        seq.finish(tickets[lane][static_cast<size_t>(i)], time, [&, lane, i, time] {
          if (delivering.fetch_add(1) != 0) overlapped = true;
          {
            std::lock_guard lock(mutex);
            delivered.emplace_back(time, lane, i);
          }
          delivering.fetch_sub(1);
        });
      }
    });
  for (auto& t : threads) t.join();
  REQUIRE(delivered.size() == kLanes * kPerLane);
  CHECK_FALSE(overlapped.load());
  // Each is delivered once, and (time, lane, index) never goes back.
  for (size_t k = 1; k < delivered.size(); ++k) {
    INFO("delivery " << k);
    REQUIRE(delivered[k - 1] < delivered[k]);
  }
  CHECK(seq.held() == 0);
  CHECK(seq.in_flight() == 0);
}
