// Models: a program with weights and states, compiled once against the
// registered engines' provider contracts (planning/model/model_plan.hpp)
// and loaded: weights materialized and uploaded once to every device that
// reads them (one arena per dtype per device), states allocated with their
// capacity and zero-filled, activations in planned arenas. Then run many
// times. Runtime::load_model makes one.
//
// A run: the model's inputs (program order) plus the resident weights and
// the states go to a plain program derived from the plan
// (planning/model/model_execution.hpp), prepared through the prepare cache
// with every op pinned to its planned engine, queue and provider (the plan
// is part of the prepared key), and executed with its op results written
// into an activation arena of its own (BatchOp::destinations). States are
// updated in place by their update ops (providers whose result must alias
// the state); after the run a state holds its update's value.
//
// Threading: every member is safe from many threads. Work on one model
// starts in call order: runs of a model whose program updates states, and
// state() and reset(), run one at a time; runs of a model without state
// updates run concurrently, up to ModelOptions::max_concurrent_runs at
// once (each with its own activation arena, made on first need and kept),
// the rest wait their turn. Callbacks run on a runtime thread (or on the
// caller's, when a small run ran inline) and must not block. A failed run
// that updates states may have written part of them (no run is retried
// after a transient failure once it may have written a state); reset()
// zeroes them again.
//
// Lifetime: a Model keeps its buffers (weights, states, arenas) until it is
// destroyed. It refers to its Runtime, which must outlive it or be
// destroyed first: from the Runtime's destruction on, every call fails
// with Shutdown.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/program.hpp"
#include "core/tensor.hpp"
#include "planning/model/model_execution.hpp"
#include "planning/model/model_plan.hpp"
#include "planning/prepare_options.hpp"

namespace tenact {

class Runtime;
struct ExecutionStats;

struct ModelOptions {
  /// What the plan compiler is given: an explicit tensor for every program
  /// input (the largest extents a run may bring), explicit tensors where a
  /// contract does not fix one, required capabilities and preferred
  /// providers per node, retention, the weight materializer, packing, and
  /// the compiler options the runs are prepared with (fusion).
  ModelCompileOptions compile;
  /// The engines the model's ops may be resolved to (every registered
  /// executable engine, in preference order, when it names none).
  PlacementConstraint placement;
  /// Runs of a model without state updates that may run at once (each
  /// holds an activation arena while it runs); at least 1.
  uint32_t max_concurrent_runs = 4;
};

struct ModelRunResult {
  /// The program's outputs, in program order, in buffers the caller owns
  /// (never the model's arenas).
  std::vector<Tensor> outputs;
  /// Completion retention: each retained value by name.
  std::map<std::string, Tensor> retained;
};

/// What one model holds, per endpoint ("cpu/host"): weights, states and
/// activation arenas, in bytes.
struct ModelMemory {
  uint64_t weight_bytes = 0;
  uint64_t state_bytes = 0;
  uint64_t arena_bytes = 0;
  /// Activation arenas made so far (one per concurrent run).
  uint32_t arenas = 0;
};

class Model {
 public:
  virtual ~Model() = default;
  const ModelPlan& plan() const { return *execution().plan; }
  virtual const ModelExecution& execution() const = 0;

  /// Runs the model (see the file comment). `inputs` in program order, each
  /// within its planned capacity: dtype and rank as declared, every extent
  /// at most the explicit tensor's. Errors: InputMismatch (count, dtype,
  /// rank), LimitExceeded (an extent over the capacity, naming the input),
  /// the run's errors, Shutdown once the runtime is going.
  virtual void run(std::vector<Tensor> inputs, std::function<void(Result<ModelRunResult>)> done,
                   ExecutionStats* stats = nullptr) = 0;
  std::future<Result<ModelRunResult>> run(std::vector<Tensor> inputs, ExecutionStats* stats = nullptr);

  /// A host copy of state `name` once the work called before is done.
  /// Errors: UndefinedName for a name that is no state.
  virtual void state(std::string name, std::function<void(Result<Tensor>)> done) = 0;
  std::future<Result<Tensor>> state(std::string name);

  /// Zero-fills every state once the work called before is done.
  virtual void reset(std::function<void(Status)> done) = 0;
  std::future<Status> reset();

  /// Bytes held per endpoint.
  virtual std::map<std::string, ModelMemory> memory() const = 0;
};

using ModelPtr = std::shared_ptr<Model>;

}  // namespace tenact
