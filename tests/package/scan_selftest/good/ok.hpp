// Accepted: a standard header, an installed one from the root, one next to it.
#pragma once
#include <vector>
#include "good/other.hpp"
#include "other.hpp"
