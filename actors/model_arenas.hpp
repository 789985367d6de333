// The activation arenas of one model: per run in flight, one buffer per
// planned arena (planning/model/model_execution.hpp), with the views its
// op results are written into (PlannedDestinations). Sets are made on first
// need and kept: a run takes an idle set, or a new one.
//
// Contract: thread-safe. take() hands a set out as a PlannedDestinationsPtr
// that gives it back when its last reference drops — the runtime holds it
// until the run's last batch is done (ExecuteOptions::destinations), so a
// set is never shared by two runs at once. Sets outlive the pool if a run
// still holds one; they go back to no one then.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "core/endpoint.hpp"
#include "core/error.hpp"
#include "core/tensor.hpp"
#include "engines/engine.hpp"
#include "planning/model/model_execution.hpp"

namespace tenact {

class ModelArenas : public std::enable_shared_from_this<ModelArenas> {
 public:
  /// Allocates `bytes` of arena in the memory of `endpoint` (a 1-D u8
  /// tensor the endpoint's engine owns).
  using Allocate = std::function<Result<Tensor>(const Endpoint& endpoint, uint64_t bytes)>;

  static std::shared_ptr<ModelArenas> create(std::shared_ptr<const ModelExecution> execution);

  /// An idle set, or a new one made with `allocate` (its errors, naming the
  /// arena). Null when the plan has no arena (nothing is packed).
  Result<PlannedDestinationsPtr> take(const Allocate& allocate);
  /// Sets made so far.
  uint32_t made() const;
  /// Bytes of one set, per endpoint.
  std::vector<std::pair<Endpoint, uint64_t>> bytes_per_set() const;

  explicit ModelArenas(std::shared_ptr<const ModelExecution> execution) : execution_(std::move(execution)) {}

 private:
  struct Set {
    std::vector<Tensor> buffers;
    PlannedDestinations destinations;
  };
  Result<std::shared_ptr<Set>> make_set(const Allocate& allocate) const;
  void give_back(std::shared_ptr<Set> set);

  std::shared_ptr<const ModelExecution> execution_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<Set>> idle_;
  uint32_t made_ = 0;
};

}  // namespace tenact
