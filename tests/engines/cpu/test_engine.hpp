// CPU engines (and worker pools) for tests, through their fallible create():
// it cannot fail for the few threads a test asks for, and a failure throws
// out of the test (which then fails).
#pragma once

#include <memory>

#include "engines/cpu/cpu_engine.hpp"
#include "tests/util/test_pool.hpp"

namespace tenact::cpu {

inline std::shared_ptr<CpuEngine> test_engine(CpuEngineOptions options = {}) {
  return std::move(CpuEngine::create(std::move(options)).value());
}

}  // namespace tenact::cpu
