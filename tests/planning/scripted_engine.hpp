// A fake engine for planning tests: scripted identity, capabilities and
// prepare answers, counting its prepare calls. Echoes the request by
// default (a correct provider); a test installs `answer` to misbehave.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engines/engine.hpp"
#include "planning/runtime_config.hpp"

namespace tenact::testing {

class ScriptedEngine final : public Engine {
 public:
  using Answer = std::function<PrepareAnswer(const OpPrepareRequest&)>;

  ScriptedEngine(std::string id, std::vector<std::string> storage,
                 std::vector<OpFamily> families = {OpFamily::Elementwise, OpFamily::Reduction,
                                                   OpFamily::Indexing, OpFamily::Dot,
                                                   OpFamily::Layout}) {
    identity_.id = std::move(id);
    identity_.hardware_class = "fake-hw";
    capabilities_.storage_classes = std::move(storage);
    capabilities_.default_storage_class = capabilities_.storage_classes.front();
    capabilities_.op_families = std::move(families);
  }

  /// The plan a correct provider returns for `request`.
  static std::shared_ptr<const PreparedOp> echo(const OpPrepareRequest& request) {
    return PreparedOp::answering(request);
  }

  const EngineIdentity& identity() const override { return identity_; }
  const EngineCapabilities& capabilities() const override { return capabilities_; }
  PrepareAnswer prepare(const OpPrepareRequest& request) override {
    ++calls;
    if (answer) return answer(request);
    return echo(request);
  }
  Result<HostTensor> allocate(std::string_view, DType dtype, std::vector<int64_t> shape) override {
    return HostTensor::zeros(dtype, std::move(shape));
  }
  void launch(std::shared_ptr<const PreparedOp>, std::vector<HostTensor>, SymbolBindings,
              LaunchCompletion done) override {
    done(Error{ErrorCode::Unsupported, "scripted engine runs nothing"});
  }

  EngineRegistration registration(uint32_t preference = 0,
                                  std::map<std::string, std::string> payloads = {}) const {
    return EngineRegistration{identity_, capabilities_, preference, std::move(payloads)};
  }

  EngineIdentity identity_;
  EngineCapabilities capabilities_;
  Answer answer;
  std::atomic<int> calls{0};
};

}  // namespace tenact::testing
