// The worker pool: parallel_for covers [0, n) exactly once with ranges
// fixed by (n, grain, thread_count), the caller takes part (so nesting
// cannot deadlock), concurrent callers are safe, post runs tasks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <future>
#include <new>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "tests/util/counting_operator_new.hpp"
#include "tests/util/test_pool.hpp"
#include "util/worker_pool.hpp"


namespace tenact {
namespace {

using Ranges = std::vector<std::pair<int64_t, int64_t>>;

/// The ranges one parallel_for call hands out, sorted by start.
Ranges ranges_of(WorkerPool& pool, int64_t n, int64_t grain) {
  std::mutex m;
  Ranges ranges;
  pool.parallel_for(n, grain, [&](int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(m);
    ranges.emplace_back(b, e);
  });
  std::sort(ranges.begin(), ranges.end());
  return ranges;
}

TEST_CASE("parallel_for visits every index below n exactly once", "[worker_pool]") {
  auto pool_holder = test_pool(3);
  WorkerPool& pool = *pool_holder;
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{99}, int64_t{100}, int64_t{201},
                    int64_t{12345}, int64_t{1} << 20}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for(n, 100, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
    });
    int64_t wrong = 0;
    for (auto& h : hits) wrong += h.load() != 1;
    INFO("n = " << n);
    CHECK(wrong == 0);
  }
}

TEST_CASE("parallel_for ranges are contiguous, at least grain long and the same every run",
          "[worker_pool]") {
  auto pool_holder = test_pool(4);
  WorkerPool& pool = *pool_holder;
  const int64_t n = 1'000'003;
  const int64_t grain = 1000;
  const Ranges first = ranges_of(pool, n, grain);
  REQUIRE(first.size() > 1);
  CHECK(first.front().first == 0);
  CHECK(first.back().second == n);
  for (size_t i = 0; i < first.size(); ++i) {
    CHECK(first[i].second - first[i].first >= grain);
    if (i > 0) CHECK(first[i].first == first[i - 1].second);
  }
  for (int run = 0; run < 20; ++run) CHECK(ranges_of(pool, n, grain) == first);
  // Another pool of the same size splits the same way.
  auto twin_holder = test_pool(4);
  WorkerPool& twin = *twin_holder;
  CHECK(ranges_of(twin, n, grain) == first);
}

TEST_CASE("parallel_for gives one range when n is below two grains", "[worker_pool]") {
  auto pool_holder = test_pool(4);
  WorkerPool& pool = *pool_holder;
  CHECK(ranges_of(pool, 150, 100) == Ranges{{0, 150}});
  CHECK(ranges_of(pool, 0, 100).empty());
}

TEST_CASE("the free parallel_for runs serially without a pool or below two grains",
          "[worker_pool]") {
  Ranges seen;
  parallel_for(nullptr, 1'000'000, 10, [&](int64_t b, int64_t e) { seen.emplace_back(b, e); });
  CHECK(seen == Ranges{{0, 1'000'000}});
  auto pool_holder = test_pool(2);
  WorkerPool& pool = *pool_holder;
  seen.clear();
  const auto caller = std::this_thread::get_id();
  bool on_caller = false;
  parallel_for(&pool, 199, 100, [&](int64_t b, int64_t e) {
    seen.emplace_back(b, e);
    on_caller = std::this_thread::get_id() == caller;
  });
  CHECK(seen == Ranges{{0, 199}});
  CHECK(on_caller);
}

#if TENACT_COUNTS_OPERATOR_NEW
TEST_CASE("the free parallel_for allocates nothing when it runs serially", "[worker_pool]") {
  // A lambda too large for std::function's small buffer (it would be
  // copied to the heap if the serial path wrapped it).
  std::array<int64_t, 8> big{1, 2, 3, 4, 5, 6, 7, 8};
  int64_t sum = 0;
  auto body = [&sum, big](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) sum += big[static_cast<size_t>(i % 8)];
  };
  auto pool_holder = test_pool(2);
  const int64_t before = g_operator_new_calls;
  parallel_for(nullptr, 16, 1, body);           // no pool
  parallel_for(pool_holder.get(), 16, 10, body);  // below two grains
  const int64_t calls = g_operator_new_calls - before;
  CHECK(calls == 0);
  CHECK(sum == 2 * (1 + 2 + 3 + 4 + 5 + 6 + 7 + 8) * 2);
}
#endif

TEST_CASE("parallel_for runs chunks on pool threads at the same time as the caller",
          "[worker_pool]") {
  auto pool_holder = test_pool(2);
  WorkerPool& pool = *pool_holder;
  std::mutex m;
  std::condition_variable cv;
  int inside = 0;
  bool met = false;
  // Each chunk waits (bounded) until two chunks are inside at once: only
  // possible when two threads run chunks concurrently.
  pool.parallel_for(4, 1, [&](int64_t, int64_t) {
    std::unique_lock<std::mutex> lock(m);
    ++inside;
    if (inside >= 2) met = true;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(20), [&] { return met; });
    --inside;
  });
  CHECK(met);
}

TEST_CASE("a nested parallel_for inside a chunk completes", "[worker_pool]") {
  auto pool_holder = test_pool(2);
  WorkerPool& pool = *pool_holder;
  std::atomic<int64_t> total{0};
  pool.parallel_for(64, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      pool.parallel_for(1000, 10, [&](int64_t ib, int64_t ie) { total.fetch_add(ie - ib); });
    }
  });
  CHECK(total.load() == 64 * 1000);
}

TEST_CASE("many threads may call parallel_for on one pool at once", "[worker_pool]") {
  auto pool_holder = test_pool(3);
  WorkerPool& pool = *pool_holder;
  constexpr int kCallers = 8;
  constexpr int kCalls = 40;
  std::vector<int64_t> sums(kCallers, 0);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int k = 0; k < kCalls; ++k) {
        std::atomic<int64_t> sum{0};
        pool.parallel_for(10'000, 50, [&](int64_t b, int64_t e) {
          int64_t local = 0;
          for (int64_t i = b; i < e; ++i) local += i;
          sum.fetch_add(local);
        });
        sums[static_cast<size_t>(c)] += sum.load();
      }
    });
  }
  for (auto& t : callers) t.join();
  for (int64_t s : sums) CHECK(s == int64_t{kCalls} * (10'000LL * 9'999 / 2));
}

TEST_CASE("post runs tasks on pool threads and the destructor waits for them",
          "[worker_pool]") {
  std::atomic<int> ran{0};
  std::set<std::thread::id> ids;
  std::mutex m;
  {
    auto pool_holder = test_pool(2);
    WorkerPool& pool = *pool_holder;
    CHECK(pool.thread_count() == 2);
    for (int i = 0; i < 100; ++i)
      pool.post([&] {
        ran.fetch_add(1);
        std::lock_guard<std::mutex> lock(m);
        ids.insert(std::this_thread::get_id());
      });
  }
  CHECK(ran.load() == 100);
  CHECK(ids.count(std::this_thread::get_id()) == 0);
}

TEST_CASE("a pool whose last owner lets go in one of its tasks runs what is queued and does not abort",
          "[worker_pool]") {
  // An engine's last reference can be a callback that one of its pool's
  // tasks runs; the pool is then destroyed on its own thread.
  for (int round = 0; round < 20; ++round) {
    std::shared_ptr<WorkerPool> pool{test_pool(2)};
    std::promise<void> owner_gone;
    std::promise<int> queued_ran;
    std::atomic<int> ran{0};
    auto counted = [&] {
      if (ran.fetch_add(1) + 1 == 8) queued_ran.set_value(ran.load());
    };
    pool->post([held = pool, gone = owner_gone.get_future().share(), counted]() mutable {
      gone.wait();                                      // the test's reference is dropped
      for (int i = 0; i < 8; ++i) held->post(counted);  // queued behind this task
      held.reset();                                     // the last owner: ~WorkerPool here
    });
    pool.reset();
    owner_gone.set_value();
    auto done = queued_ran.get_future();
    REQUIRE(done.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    CHECK(done.get() == 8);
  }
}

TEST_CASE("destroy_off_pool runs here, except on one of the pool's threads", "[worker_pool]") {
  auto pool = test_pool(2);
  const std::thread::id test_thread = std::this_thread::get_id();
  std::thread::id ran_on;
  bool ran_on_pool = true;
  destroy_off_pool(*pool, [&] {
    ran_on = std::this_thread::get_id();
    ran_on_pool = pool->runs_here();
  });
  CHECK(ran_on == test_thread);  // synchronous, off the pool
  CHECK_FALSE(ran_on_pool);
  CHECK_FALSE(pool->runs_here());

  std::promise<std::pair<bool, bool>> seen;  // (the task on the pool, the destroy on the pool)
  pool->post([&] {
    const bool task_on_pool = pool->runs_here();
    destroy_off_pool(*pool, [&seen, &pool, task_on_pool] { seen.set_value({task_on_pool, pool->runs_here()}); });
  });
  auto answer = seen.get_future();
  REQUIRE(answer.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  const auto [task_on_pool, destroy_on_pool] = answer.get();
  CHECK(task_on_pool);
  CHECK_FALSE(destroy_on_pool);
}

TEST_CASE("a pool of 0 threads means the hardware concurrency", "[worker_pool]") {
  auto pool_holder = test_pool(0);
  WorkerPool& pool = *pool_holder;
  CHECK(pool.thread_count() == std::max<size_t>(1, std::thread::hardware_concurrency()));
}

TEST_CASE("a pool over the thread limit is an error, not an attempt", "[worker_pool]") {
  auto too_many = WorkerPool::create(WorkerPool::kMaxThreads + 1);
  REQUIRE_FALSE(too_many.ok());
  CHECK(too_many.error().code() == ErrorCode::LimitExceeded);
  CHECK(too_many.error().message() == "a worker pool of 1025 threads is over the limit of 1024");
}

}  // namespace
}  // namespace tenact
