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
#include "actors/pipeline/pipeline_run.hpp"
#include "actors/request_memo.hpp"
#include "engines/engine.hpp"
#include "transfer/providers.hpp"
#include "transfer/transfer_route.hpp"
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
  /// The request as the request memo keys it, when a Ready answer may be
  /// remembered there (cache_in_flight): the cache actor inserts it.
  struct MemoRequest {
    std::shared_ptr<const SemanticProgram> program;
    std::vector<InputDescriptor> inputs;
    std::string options;
    MemoStamp stamp;
  };
  std::optional<MemoRequest> memo;
  std::function<void(Result<std::shared_ptr<const PreparedProgram>>)> done;
};
using PrepareJobPtr = std::shared_ptr<PrepareJob>;

using PipelinePlanPtr = std::shared_ptr<const PipelinePlan>;

/// An entry produced off the cache actor's thread for `key`.
struct Production {
  PreparedEntryKey key;
  ProducedEntry outcome;
  /// The CacheProduce::registered the producer got.
  bool registered = false;
  /// The producer's job (answered directly when not registered).
  PrepareJobPtr job;
  /// A ready entry's pipeline plan, built where the entry was produced
  /// (null otherwise, or when it could not be built: the first run builds
  /// it again and reports why).
  PipelinePlanPtr plan;
};
using ProductionPtr = std::shared_ptr<Production>;

using CacheStatsPtr = std::shared_ptr<CacheStats>;

/// A batch for an engine (or a transfer for the transfer path) and where
/// its result goes. `reply` is called exactly once, from an engine thread.
struct BatchJob {
  uint64_t batch_id = 0;
  BatchWork work;
  /// Transfers only: the route and who moves the bytes (work.inputs holds
  /// the one value at its source). The transfer actor resolves `provider`
  /// by name into `mover` before the copy runs.
  std::string provider;
  std::shared_ptr<const TransferProvider> mover;
  /// Where the copy runs (set by the transfer actor): the provider's
  /// run_on, or its copy thread.
  std::function<void(std::function<void()>)> run_on;
  Endpoint source, destination;
  std::function<void(Result<std::vector<Tensor>>)> reply;
};
using BatchJobPtr = std::shared_ptr<BatchJob>;

/// A change to the transfer registry (the transfer actor's routes and
/// providers), and who hears the outcome: the new configuration epoch, or
/// the reason it was refused. `done` is called exactly once, on the
/// transfer actor's thread (or, on shutdown, by the runtime).
struct RegistryChange {
  enum class Kind : uint8_t { AddProvider, AddRoute, RemoveRoute };
  Kind kind = Kind::AddRoute;
  /// AddProvider: its name and the provider.
  std::string name;
  TransferProvider provider;
  /// AddRoute: the route; RemoveRoute: its endpoints.
  TransferRoute route;
  std::function<void(Result<uint64_t>)> done;
};
using RegistryChangePtr = std::shared_ptr<RegistryChange>;

struct BatchResult {
  uint64_t batch_id = 0;
  Result<std::vector<Tensor>> result{std::vector<Tensor>{}};
  /// Set when tracing: when each op of the batch ran.
  std::shared_ptr<BatchTimings> timings;
  /// Set when the caller wants ExecutionStats: when it ran in virtual time
  /// (set by simulated devices and links only).
  std::shared_ptr<VirtualSpan> virtual_span;
};
using BatchResultPtr = std::shared_ptr<BatchResult>;

}  // namespace tenact
