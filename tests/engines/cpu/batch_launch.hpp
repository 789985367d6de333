// Launches a batch on an engine and waits for its completion, for the
// engine tests (CPU and simulated).
#pragma once

#include <future>
#include <utility>
#include <vector>

#include "engines/engine.hpp"

namespace tenact::testing {

inline Result<std::vector<Tensor>> launch_and_wait(Engine& engine, BatchWork work) {
  std::promise<Result<std::vector<Tensor>>> done;
  auto future = done.get_future();
  engine.launch_batch(std::move(work), [&](Result<std::vector<Tensor>> r) { done.set_value(std::move(r)); });
  return future.get();
}

}  // namespace tenact::testing
