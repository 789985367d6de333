// DelayedStarts: a start is held under an id until taken once; close()
// destroys every held start without running it (what it captured is
// released then) and refuses new ones; holds from many threads get
// distinct ids.
#include <catch2/catch.hpp>

#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "actors/delayed_starts.hpp"

using namespace tenact;

TEST_CASE("a delayed start is taken once, by its id", "[delayed_starts]") {
  DelayedStarts starts;
  int ran = 0;
  const uint64_t a = starts.hold([&] { ran += 1; });
  const uint64_t b = starts.hold([&] { ran += 10; });
  REQUIRE(a != 0);
  REQUIRE(b != 0);
  CHECK(a != b);
  CHECK(starts.held() == 2);
  auto second = starts.take(b);
  REQUIRE(second);
  (*second)();
  CHECK(ran == 10);
  CHECK_FALSE(starts.take(b));
  CHECK_FALSE(starts.take(12345));
  CHECK(starts.held() == 1);
}

TEST_CASE("closing drops held starts unrun, releasing what they hold, and refuses new ones", "[delayed_starts]") {
  DelayedStarts starts;
  auto owned = std::make_shared<int>(7);
  bool ran = false;
  const uint64_t id = starts.hold([owned, &ran] { ran = true; });
  CHECK(owned.use_count() == 2);
  starts.close();
  CHECK(owned.use_count() == 1);
  CHECK_FALSE(ran);
  CHECK_FALSE(starts.take(id));
  CHECK(starts.hold([] {}) == 0);
  CHECK(starts.held() == 0);
}

TEST_CASE("starts held from 4 threads get distinct ids and are each taken once", "[delayed_starts]") {
  DelayedStarts starts;
  std::vector<std::vector<uint64_t>> ids(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < ids.size(); ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 500; ++k) ids[t].push_back(starts.hold([] {}));
    });
  for (auto& th : threads) th.join();
  std::set<uint64_t> all;
  for (const auto& list : ids) all.insert(list.begin(), list.end());
  CHECK(all.size() == 2000);
  CHECK(all.count(0) == 0);
  size_t taken = 0;
  for (uint64_t id : all) taken += starts.take(id) ? 1 : 0;
  CHECK(taken == 2000);
  CHECK(starts.held() == 0);
}
