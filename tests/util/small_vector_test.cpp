// util/small_vector.hpp: elements in order within and past the inline
// capacity, each constructed and destroyed exactly once, nothing
// constructed before it is pushed.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "util/small_vector.hpp"

namespace {

// Counts live objects of itself (constructions minus destructions).
struct Counted {
  static inline int live = 0;
  int value = 0;
  explicit Counted(int v) : value(v) { ++live; }
  Counted(Counted&& other) noexcept : value(other.value) { ++live; }
  Counted& operator=(Counted&&) = delete;
  ~Counted() { --live; }
};

}  // namespace

TEST_CASE("SmallVector holds its elements in order, inline and past its capacity", "[small_vector]") {
  for (int count : {0, 1, 3, 4, 5, 11}) {
    Counted::live = 0;
    {
      tenact::SmallVector<Counted, 4> v;
      CHECK(Counted::live == 0);  // nothing made up front
      for (int i = 0; i < count; ++i) v.push_back(Counted{i * 10});
      CHECK(Counted::live == count);
      REQUIRE(v.size() == static_cast<size_t>(count));
      CHECK(v.empty() == (count == 0));
      for (int i = 0; i < count; ++i) CHECK(v[static_cast<size_t>(i)].value == i * 10);
      int expected = 0;
      for (const Counted& c : v.span()) CHECK(c.value == (expected++) * 10);
      CHECK(expected == count);
    }
    CHECK(Counted::live == 0);  // every element destroyed once
  }
}

TEST_CASE("SmallVector keeps owning handles alive until it goes", "[small_vector]") {
  auto shared = std::make_shared<std::string>("kept");
  {
    tenact::SmallVector<std::shared_ptr<std::string>, 2> v;
    for (int i = 0; i < 5; ++i) v.push_back(shared);  // past the inline two
    CHECK(shared.use_count() == 6);
    CHECK(*v[4] == "kept");
  }
  CHECK(shared.use_count() == 1);
}
