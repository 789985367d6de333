// The Model behind Runtime::load_model (actors/model.hpp): loading (weights
// materialized into arenas and uploaded, states allocated) and the runs.
// Internal to actors/; no CAF header.
//
// Threading: see actors/model.hpp. The state tensors are guarded by a
// mutex: runs read them, exclusive tasks (state updates' swaps, reset)
// replace them; the model's queue keeps those from overlapping.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "actors/model.hpp"
#include "actors/model_arenas.hpp"
#include "actors/model_queue.hpp"
#include "actors/runtime_link.hpp"
#include "planning/prepared_program.hpp"

namespace tenact {

/// What loading needs of the runtime besides its public calls.
struct ModelLoadContext {
  std::shared_ptr<RuntimeLink> link;
  /// The engine object registered under an id (nullptr: none now).
  EngineLookup engines;
};

class LoadedModel final : public Model, public std::enable_shared_from_this<LoadedModel> {
 public:
  /// Loads `execution` (see Runtime::load_model): uploads the weights
  /// through `runtime` (blocking), allocates the states.
  static Result<std::shared_ptr<LoadedModel>> load(Runtime& runtime, ModelLoadContext context,
                                                   std::shared_ptr<const ModelExecution> execution,
                                                   const std::map<std::string, Tensor>& weights,
                                                   const ModelOptions& options);

  const ModelExecution& execution() const override { return *execution_; }
  void run(std::vector<Tensor> inputs, std::function<void(Result<ModelRunResult>)> done,
           ExecutionStats* stats = nullptr) override;
  void state(std::string name, std::function<void(Result<Tensor>)> done) override;
  void reset(std::function<void(Status)> done) override;
  std::map<std::string, ModelMemory> memory() const override;

  LoadedModel(ModelLoadContext context, std::shared_ptr<const ModelExecution> execution, const ModelOptions& options);

 private:
  using RunDone = std::function<void(Result<ModelRunResult>)>;
  void start_run(std::vector<Tensor> inputs, RunDone done, ExecutionStats* stats);
  void complete_run(Result<std::vector<Tensor>> result, const RunDone& done);
  Status check_inputs(const std::vector<Tensor>& inputs) const;
  /// Internal unless `prepared` fuses exactly the regions the plan's
  /// storage was packed for (checked once per prepared program).
  Status check_regions(const PreparedProgram& prepared);
  Result<std::vector<Tensor>> fresh_states() const;
  std::vector<Tensor> states() const;

  ModelLoadContext context_;
  std::shared_ptr<const ModelExecution> execution_;
  PrepareOptions prepare_;
  /// Whether the program updates states: its runs are exclusive, never retried.
  bool updates_states_ = false;
  /// One per weight input of the derived program, in its input order.
  std::vector<Tensor> weights_;
  /// Bytes per endpoint of the weight arenas and the states.
  std::map<std::string, ModelMemory> held_;
  std::shared_ptr<ModelArenas> arenas_;
  ModelQueue queue_;
  /// The last prepared program check_regions passed.
  std::atomic<const PreparedProgram*> regions_checked_{nullptr};
  mutable std::mutex states_mutex_;
  /// One per program state (SemanticProgram::states() order).
  std::vector<Tensor> states_;
};

}  // namespace tenact
