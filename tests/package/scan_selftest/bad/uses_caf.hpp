#pragma once
#include <caf/all.hpp>
