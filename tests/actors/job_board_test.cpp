// The job board without actors: admission under a per-engine bound, the
// order waiting runs are admitted in, deadlines, a full waiting room,
// shutdown, the least loaded engine, and the statistics; then 8 threads
// admitting and finishing 4,000 runs against a bound of 2 (never more than
// 2 in flight on an engine, every run started exactly once).
#include <catch2/catch.hpp>

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include "actors/job_board.hpp"

using namespace tenact;

namespace {

JobLoad on(std::initializer_list<std::pair<const char*, uint64_t>> shares) {
  JobLoad load;
  for (const auto& [engine, ns] : shares) load.engines.push_back({engine, ns});
  return load;
}

const auto kLater = std::chrono::steady_clock::now() + std::chrono::hours(1);

// Records what a run's start was told.
struct Outcome {
  int started = 0;
  std::optional<Error> error;
  JobBoard::Start start() {
    return [this](Status s) {
      ++started;
      if (!s.ok()) error = s.error();
    };
  }
};

}  // namespace

TEST_CASE("job board: without a bound every run starts at once", "[jobs]") {
  JobBoard board;
  Outcome a, b;
  board.admit(on({{"sim:0", 100}}), kLater, a.start());
  board.admit(on({{"sim:0", 50}, {"sim:1", 7}}), kLater, b.start());
  CHECK(a.started == 1);
  CHECK(b.started == 1);
  CHECK_FALSE(a.error);
  const auto stats = board.stats();
  CHECK(stats.at("sim:0").in_flight == 2);
  CHECK(stats.at("sim:0").backlog_ns == 150);
  CHECK(stats.at("sim:1").backlog_ns == 7);
  board.finished(on({{"sim:0", 100}}));
  CHECK(board.stats().at("sim:0").in_flight == 1);
  CHECK(board.stats().at("sim:0").backlog_ns == 50);
  CHECK(board.stats().at("sim:0").max_in_flight == 2);
  CHECK(board.stats().at("sim:0").runs == 2);
}

TEST_CASE("job board: past the bound a run waits, and goes when its engine has room", "[jobs]") {
  JobBoard board{JobBoardOptions{1, 16}};
  Outcome first, second, other, third;
  board.admit(on({{"sim:0", 10}}), kLater, first.start());
  board.admit(on({{"sim:0", 10}}), kLater, second.start());  // sim:0 is full: waits
  board.admit(on({{"sim:1", 10}}), kLater, other.start());   // sim:1 has room: goes past it
  board.admit(on({{"sim:0", 10}}), kLater, third.start());
  CHECK(first.started == 1);
  CHECK(second.started == 0);
  CHECK(other.started == 1);
  CHECK(third.started == 0);
  CHECK(board.waiting() == 2);
  board.finished(on({{"sim:0", 10}}));  // room for one: the earlier waiter
  CHECK(second.started == 1);
  CHECK(third.started == 0);
  board.finished(on({{"sim:0", 10}}));
  CHECK(third.started == 1);
  CHECK(board.waiting() == 0);
  const auto s = board.stats().at("sim:0");
  CHECK(s.max_in_flight == 1);
  CHECK(s.runs == 3);
  CHECK(s.waited == 2);
}

TEST_CASE("job board: a run over two engines waits until both have room", "[jobs]") {
  JobBoard board{JobBoardOptions{1, 16}};
  Outcome a, b, both;
  board.admit(on({{"sim:0", 1}}), kLater, a.start());
  board.admit(on({{"sim:1", 1}}), kLater, b.start());
  board.admit(on({{"sim:0", 1}, {"sim:1", 1}}), kLater, both.start());
  board.finished(on({{"sim:0", 1}}));
  CHECK(both.started == 0);  // sim:1 is still full
  board.finished(on({{"sim:1", 1}}));
  CHECK(both.started == 1);
  CHECK_FALSE(both.error);
}

TEST_CASE("job board: a waiting run past its deadline fails naming the full engines", "[jobs]") {
  JobBoard board{JobBoardOptions{2, 16}};
  Outcome a, b, late;
  const auto now = std::chrono::steady_clock::now();
  board.admit(on({{"sim:3", 1}}), kLater, a.start());
  board.admit(on({{"sim:3", 1}}), kLater, b.start());
  board.admit(on({{"sim:3", 1}}), now + std::chrono::milliseconds(5), late.start());
  CHECK(board.expire(now) == 0);
  CHECK(late.started == 0);
  CHECK(board.expire(now + std::chrono::milliseconds(6)) == 1);
  REQUIRE(late.error);
  CHECK(late.error->code() == ErrorCode::Timeout);
  CHECK(late.error->message() ==
        "the run waited past its deadline for room on engines 'sim:3' (2 runs in flight), each at its bound of 2 "
        "runs in flight");
  board.finished(on({{"sim:3", 1}}));
  CHECK(late.started == 1);  // told once, never started after
}

TEST_CASE("job board: a full waiting room refuses at once, and shutdown fails who waits", "[jobs]") {
  JobBoard board{JobBoardOptions{1, 1}};
  Outcome a, waits, refused;
  board.admit(on({{"cpu", 1}}), kLater, a.start());
  board.admit(on({{"cpu", 1}}), kLater, waits.start());
  board.admit(on({{"cpu", 1}}), kLater, refused.start());
  REQUIRE(refused.error);
  CHECK(refused.error->code() == ErrorCode::LimitExceeded);
  CHECK(refused.error->message() ==
        "the runtime is full: 1 runs wait for room already (engines at their bound of 1 runs in flight: 'cpu' (1 "
        "runs in flight))");
  board.fail_all(Error{ErrorCode::Shutdown, "down"});
  REQUIRE(waits.error);
  CHECK(waits.error->code() == ErrorCode::Shutdown);
  CHECK(board.waiting() == 0);
}

TEST_CASE("job board: the least loaded engine by estimated work, then runs in flight, then order", "[jobs]") {
  JobBoard board;
  Outcome o;
  const std::vector<std::string> ids{"sim:0", "sim:1", "sim:2"};
  CHECK(board.least_loaded(ids) == "sim:0");  // all idle: the first
  board.admit(on({{"sim:0", 500}}), kLater, o.start());
  board.admit(on({{"sim:1", 200}}), kLater, o.start());
  CHECK(board.least_loaded(ids) == "sim:2");
  board.admit(on({{"sim:2", 200}}), kLater, o.start());
  board.admit(on({{"sim:2", 0}}), kLater, o.start());
  CHECK(board.least_loaded(ids) == "sim:1");  // 200 ns each; sim:1 has one run, sim:2 two
  CHECK(board.least_loaded({}) == "");
}

TEST_CASE("job board: 8 threads, 4,000 runs, a bound of 2: never more in flight, each started once", "[jobs]") {
  JobBoard board{JobBoardOptions{2, 100000}};
  std::atomic<int> in_flight0{0}, in_flight1{0}, worst{0}, started{0}, failed{0};
  std::vector<std::thread> threads;
  // A started run finishes at once, on the thread that started it: the
  // admitting one, or the one whose finish made room.
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        const char* engine = (t + i) % 2 ? "sim:1" : "sim:0";
        std::atomic<int>& counter = (t + i) % 2 ? in_flight1 : in_flight0;
        board.admit(on({{engine, 1}}), kLater, [&, engine](Status s) {
          if (!s.ok()) {
            ++failed;
            return;
          }
          ++started;
          const int now = ++counter;
          int seen = worst.load();
          while (now > seen && !worst.compare_exchange_weak(seen, now)) {
          }
          --counter;
          board.finished(on({{engine, 1}}));
        });
      }
    });
  for (auto& t : threads) t.join();
  CHECK(started.load() == 4000);
  CHECK(failed.load() == 0);
  CHECK(worst.load() <= 2);
  CHECK(board.stats().at("sim:0").max_in_flight <= 2);
  CHECK(board.stats().at("sim:1").max_in_flight <= 2);
  CHECK(board.waiting() == 0);
  CHECK(board.stats().at("sim:0").in_flight == 0);
  CHECK(board.stats().at("sim:1").in_flight == 0);
  CHECK(board.stats().at("sim:0").runs + board.stats().at("sim:1").runs == 4000);
}
