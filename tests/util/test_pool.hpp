// Worker pools for tests, through their fallible create(): it cannot fail
// for the few threads a test asks for, and a failure throws out of the test
// (which then fails).
#pragma once

#include <memory>

#include "util/worker_pool.hpp"

namespace tenact {

inline std::unique_ptr<WorkerPool> test_pool(size_t threads) {
  return std::move(WorkerPool::create(threads).value());
}

}  // namespace tenact
