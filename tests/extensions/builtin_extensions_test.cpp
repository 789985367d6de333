// PLACEHOLDER (being written).
#include <catch2/catch.hpp>

#include "extensions/builtin_extensions.hpp"

TEST_CASE("placeholder: the built-in module is being written", "[extensions]") {
  CHECK(tenact::builtin_extension_families().size() <= 5);
}
