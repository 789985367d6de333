// Payloads of the actors' messages, CAF-free: a preparation job, a
// produced entry, a batch of engine work and its result. Moved between
// threads as shared_ptr; each is owned by whoever holds the last pointer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "actors/cache/prepare_cache_store.hpp"
#include "engines/engine.hpp"
#include "planning/input_signature.hpp"
#include "planning/preparation_context.hpp"
#include "planning/prepared_program.hpp"
#include "planning/specialization.hpp"

namespace tenact {

/// One preparation travelling through the prepare-cache actor: where it
/// stands (its resolved context and specialization state), and the
/// requester's completion (called exactly once, on the cache actor's
/// thread or, on shutdown, by the runtime).
struct PrepareJob {
  PreparationWalk walk;
  bool cache_in_flight = true;
  EngineLookup engines;
  std::function<void(Result<std::shared_ptr<const PreparedProgram>>)> done;
};
using PrepareJobPtr = std::shared_ptr<PrepareJob>;

/// An entry produced off the cache actor's thread for `key`.
struct Production {
  PreparedEntryKey key;
  ProducedEntry outcome;
  /// The CacheProduce::registered the producer got.
  bool registered = false;
  /// The producer's job (answered directly when not registered).
  PrepareJobPtr job;
};
using ProductionPtr = std::shared_ptr<Production>;

using CacheStatsPtr = std::shared_ptr<CacheStats>;

/// A batch for an engine (or a transfer for the transfer path) and where
/// its result goes. `reply` is called exactly once, from an engine thread.
struct BatchJob {
  uint64_t batch_id = 0;
  BatchWork work;
  /// Transfers only: the route and who moves the bytes (work.inputs holds
  /// the one value at its source).
  std::string provider;
  Endpoint source, destination;
  std::function<void(Result<std::vector<Tensor>>)> reply;
};
using BatchJobPtr = std::shared_ptr<BatchJob>;

struct BatchResult {
  uint64_t batch_id = 0;
  Result<std::vector<Tensor>> result{std::vector<Tensor>{}};
  /// Set when tracing: when each op of the batch ran.
  std::shared_ptr<BatchTimings> timings;
};
using BatchResultPtr = std::shared_ptr<BatchResult>;

}  // namespace tenact
