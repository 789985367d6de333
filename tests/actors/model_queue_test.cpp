// ModelQueue (actors/model_queue.hpp) alone: submission order, exclusive
// tasks alone, shared tasks up to the limit, close() handing back what
// waits, and many threads submitting at once.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "actors/model_queue.hpp"

using tenact::ModelQueue;

TEST_CASE("shared tasks run up to the limit, an exclusive one waits for them and runs alone", "[model]") {
  ModelQueue q{2};
  std::vector<int> started;
  q.submit(false, [&] { started.push_back(1); });
  q.submit(false, [&] { started.push_back(2); });
  q.submit(false, [&] { started.push_back(3); });  // over the limit: waits
  CHECK(started == std::vector<int>{1, 2});
  CHECK(q.running() == 2);
  CHECK(q.waiting() == 1);
  q.submit(true, [&] { started.push_back(4); });
  q.submit(false, [&] { started.push_back(5); });  // behind the exclusive one: waits too
  q.finished(false);  // 1 ends: 3 starts
  CHECK(started == std::vector<int>{1, 2, 3});
  q.finished(false);  // 2 ends
  CHECK(started == std::vector<int>{1, 2, 3});
  q.finished(false);  // 3 ends: the exclusive task starts, alone
  CHECK(started == std::vector<int>{1, 2, 3, 4});
  CHECK(q.running() == 1);
  q.finished(true);  // then 5
  CHECK(started == std::vector<int>{1, 2, 3, 4, 5});
  q.finished(false);
  CHECK(q.running() == 0);
  CHECK(q.waiting() == 0);
}

TEST_CASE("a task that finishes inside itself lets the next start at once, in order", "[model]") {
  ModelQueue q{1};
  std::vector<int> order;
  for (int i = 0; i < 5; ++i)
    q.submit(i % 2 == 0, [&, i] {
      order.push_back(i);
      q.finished(i % 2 == 0);
    });
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(q.running() == 0);
}

TEST_CASE("close refuses new tasks and hands back the waiting ones unstarted", "[model]") {
  ModelQueue q{1};
  int ran = 0;
  q.submit(true, [&] { ++ran; });
  q.submit(true, [&] { ++ran; });
  q.submit(false, [&] { ++ran; });
  auto dropped = q.close();
  CHECK(dropped.size() == 2);
  CHECK(ran == 1);
  CHECK_FALSE(q.submit(false, [&] { ++ran; }));
  q.finished(true);  // nothing more starts
  CHECK(ran == 1);
}

TEST_CASE("exclusive tasks from many threads never overlap, and every task runs once", "[model]") {
  ModelQueue q{3};
  std::atomic<int> inside_exclusive{0}, inside_shared{0}, overlaps{0}, runs{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const bool exclusive = (i + t) % 3 == 0;
        q.submit(exclusive, [&, exclusive] {
          if (exclusive) {
            if (inside_exclusive.fetch_add(1) != 0 || inside_shared.load() != 0) ++overlaps;
          } else if (inside_shared.fetch_add(1) >= 3 || inside_exclusive.load() != 0) {
            ++overlaps;
          }
          ++runs;
          if (exclusive) inside_exclusive.fetch_sub(1);
          else inside_shared.fetch_sub(1);
          q.finished(exclusive);
        });
      }
    });
  for (auto& th : threads) th.join();
  CHECK(overlaps == 0);
  CHECK(runs == 1600);
}
