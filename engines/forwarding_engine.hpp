// An engine that forwards every call to another one: the base of engine
// decorators (one that serves fewer op families, delays completions,
// counts launches, injects failures). A subclass overrides what it
// changes; capabilities are a copy it may edit in its constructor.
//
// Threading and ownership: as the inner engine's (engine.hpp); the
// decorator keeps the inner engine alive.
#pragma once

#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "engines/engine.hpp"

namespace tenact {

class ForwardingEngine : public Engine {
 public:
  explicit ForwardingEngine(std::shared_ptr<Engine> inner)
      : inner_(std::move(inner)), capabilities_(inner_->capabilities()) {}

  const EngineIdentity& identity() const override { return inner_->identity(); }
  const EngineCapabilities& capabilities() const override { return capabilities_; }
  PrepareAnswer prepare(const OpPrepareRequest& request) override { return inner_->prepare(request); }
  Result<Tensor> allocate(std::string_view storage_class, DType dtype, std::vector<int64_t> shape) override {
    return inner_->allocate(storage_class, dtype, std::move(shape));
  }
  Result<MemoryStats> memory_stats(std::string_view storage_class) const override {
    return inner_->memory_stats(storage_class);
  }
  void launch(std::shared_ptr<const PreparedOp> op, std::vector<Tensor> inputs, SymbolBindings symbols,
              LaunchCompletion done) override {
    inner_->launch(std::move(op), std::move(inputs), std::move(symbols), std::move(done));
  }
  void launch_batch(BatchWork work, LaunchCompletion done) override {
    inner_->launch_batch(std::move(work), std::move(done));
  }
  // run_on_caller is not forwarded: a decorator's batches go through its
  // launch_batch (which it may change) unless it overrides run_on_caller.

 protected:
  Engine& inner() const { return *inner_; }

  std::shared_ptr<Engine> inner_;
  /// What capabilities() answers: the inner engine's, as a subclass left them.
  EngineCapabilities capabilities_;
};

}  // namespace tenact
