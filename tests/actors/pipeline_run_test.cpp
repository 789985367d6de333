// placeholder: being written
#include <catch2/catch.hpp>
