#pragma once
#include "planning/not_installed.hpp"
