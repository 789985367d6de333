// SharedList (core/shared_list.hpp): copies share one allocation until one
// of them is edited; equality compares items.
#include <catch2/catch.hpp>

#include <vector>

#include "core/shared_list.hpp"

using tenact::SharedList;

TEST_CASE("copies of a SharedList share one list until one is edited", "[shared_list]") {
  const SharedList<int> a{1, 2, 3};
  SharedList<int> b = a;
  CHECK(b.shares_storage_with(a));
  CHECK(b.data() == a.data());
  CHECK(b == a);

  b.edit()[1] = 20;  // b gets its own list first
  CHECK_FALSE(b.shares_storage_with(a));
  CHECK(a == std::vector<int>{1, 2, 3});
  CHECK(b == std::vector<int>{1, 20, 3});
  CHECK_FALSE(a == b);

  SharedList<int> c = b;
  c.edit().push_back(4);
  CHECK(b.size() == 3);
  CHECK(c.size() == 4);
  SharedList<int> only = std::vector<int>{7};
  int* before = &only.edit()[0];
  CHECK(&only.edit()[0] == before);  // not shared: edited in place
}

TEST_CASE("an empty SharedList has no list and equals every empty one", "[shared_list]") {
  SharedList<int> none;
  CHECK(none.empty());
  CHECK(none.begin() == none.end());
  CHECK(none.data() == nullptr);
  CHECK(none == SharedList<int>{std::vector<int>{}});
  CHECK(none.shares_storage_with(SharedList<int>{}));
  SharedList<int> edited;
  edited.edit();
  CHECK(edited == none);
  CHECK(none == std::vector<int>{});
  int sum = 0;
  for (int x : SharedList<int>{4, 5}) sum += x;
  CHECK(sum == 9);
}
