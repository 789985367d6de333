// Worker pools and CPU engines for tests, through their fallible create():
// it cannot fail for the few threads a test asks for, and a failure throws
// out of the test (which then fails).
#pragma once

#include <memory>

#include "engines/cpu/cpu_engine.hpp"
#include "engines/cpu/kernels/worker_pool.hpp"

namespace tenact::cpu {

inline std::unique_ptr<WorkerPool> test_pool(size_t threads) {
  return std::move(WorkerPool::create(threads).value());
}

inline std::shared_ptr<CpuEngine> test_engine(CpuEngineOptions options = {}) {
  return std::move(CpuEngine::create(std::move(options)).value());
}

}  // namespace tenact::cpu
