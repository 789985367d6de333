// The engine kinds of the conformance suite, the Runtime each test builds
// around one kind (Rig), the refusal check, and the control engines the
// suite checks itself with.
#include <algorithm>
#include <cstdio>
#include <utility>

#include "engines/cpu/cpu_engine.hpp"
#include "engines/forwarding_engine.hpp"
#include "planning/input_signature.hpp"
#include "setup/engine_setup.hpp"
#include "tests/engines/conformance/conformance.hpp"

namespace tenact::conformance {

namespace {

std::string error_text(const Error& e) { return std::string{tenact::to_string(e.code())} + ": " + e.message(); }

/// The codes of a refusal (MissingExtension: no engine has a slot for an
/// extension family the program uses).
bool is_refusal(ErrorCode code) {
  return code == ErrorCode::Unsupported || code == ErrorCode::NoEligibleEngine ||
         code == ErrorCode::NoExecutableEngine || code == ErrorCode::MissingExtension;
}

bool batch_has_family(const BatchWork& work, OpFamily family) {
  return std::any_of(work.ops.begin(), work.ops.end(),
                     [&](const BatchOp& op) { return op.op && family_of(op.op->kind) == family; });
}

/// See ControlBehaviour.
class ControlEngine final : public ForwardingEngine {
 public:
  ControlEngine(std::shared_ptr<Engine> inner, OpFamily family, ControlBehaviour behaviour,
                std::shared_ptr<ControlCounters> counters)
      : ForwardingEngine(std::move(inner)), family_(family), behaviour_(behaviour), counters_(std::move(counters)) {
    if (behaviour_ == ControlBehaviour::DropFromCapabilities)
      std::erase(capabilities_.op_families, family_);
  }

  PrepareAnswer prepare(const OpPrepareRequest& request) override {
    if (family_of(request.kind) == family_ &&
        (behaviour_ == ControlBehaviour::RefuseAtPrepare || behaviour_ == ControlBehaviour::DropFromCapabilities)) {
      counters_->prepares_refused.fetch_add(1);
      return Unsupported{"control engine '" + identity().id + "' does not serve " +
                         std::string{tenact::to_string(request.kind)}};
    }
    return ForwardingEngine::prepare(request);
  }

  void launch(std::shared_ptr<const PreparedOp> op, std::vector<Tensor> inputs, SymbolBindings symbols,
              LaunchCompletion done) override {
    const bool mine = family_of(op->kind) == family_;
    if (mine) counters_->launches_of_family.fetch_add(1);
    ForwardingEngine::launch(std::move(op), std::move(inputs), std::move(symbols), wrap(mine, std::move(done)));
  }

  void launch_batch(BatchWork work, LaunchCompletion done) override {
    const bool mine = batch_has_family(work, family_);
    if (mine) counters_->launches_of_family.fetch_add(1);
    ForwardingEngine::launch_batch(std::move(work), wrap(mine, std::move(done)));
  }

 private:
  LaunchCompletion wrap(bool mine, LaunchCompletion done) const {
    if (!mine || behaviour_ != ControlBehaviour::CorruptResults) return done;
    return [done = std::move(done)](Result<std::vector<Tensor>> outputs) {
      if (outputs.ok())
        for (Tensor& t : *outputs)
          if (t.is_host() && t.element_count() > 0) t.data()[0] ^= std::byte{1};
      done(std::move(outputs));
    };
  }

  OpFamily family_;
  ControlBehaviour behaviour_;
  std::shared_ptr<ControlCounters> counters_;
};

Result<std::shared_ptr<cpu::CpuEngine>> make_cpu(std::string id, bool fuse) {
  cpu::CpuEngineOptions o;
  o.id = std::move(id);
  o.threads = 2;
  o.fuse_regions = fuse;
  return cpu::CpuEngine::create(std::move(o));
}

}  // namespace

bool Refusal::covers(OpKind kind, DType t) const {
  return (!family || *family == family_of(kind)) && (!op || *op == kind) && (!dtype || *dtype == t);
}

std::string Refusal::to_string() const {
  std::string s;
  if (family) s += "family " + std::string{tenact::to_string(*family)};
  if (op) s += (s.empty() ? "op " : ", op ") + std::string{tenact::to_string(*op)};
  if (dtype) s += (s.empty() ? "dtype " : ", dtype ") + std::string{tenact::to_string(*dtype)};
  return s.empty() ? "everything" : s;
}

Tolerance EngineKind::tolerance(Accuracy accuracy) const {
  if (accuracy == Accuracy::Exact) return {};
  auto it = ulps.find(accuracy);
  return Tolerance{it == ulps.end() ? 0u : it->second};
}

bool EngineKind::refuses(OpKind kind, DType dtype) const {
  return std::any_of(unsupported.begin(), unsupported.end(), [&](const Refusal& r) { return r.covers(kind, dtype); });
}

std::function<Result<Installed>(Runtime&, unsigned)> install_engine_list(std::string one, std::string two) {
  return [one = std::move(one), two = std::move(two)](Runtime& runtime, unsigned devices) -> Result<Installed> {
    TENACT_ASSIGN_OR_RETURN(auto specs, setup::parse_engine_list(devices >= 2 ? two : one));
    setup::EngineSetupOptions options;
    options.cpu_threads = 2;
    TENACT_ASSIGN_OR_RETURN(auto made, setup::register_engines(runtime, specs, options));
    return Installed{std::move(made.engines)};
  };
}

const std::vector<ListedKind>& listed_engine_kinds() {
  // One entry per engine kind. cuda: the spec's 4 ulps for transcendental
  // functions (CUDA's own math, not the CPU's); skipped where
  // setup::make_engines refuses cuda:0, naming why (no CUDA engine in this
  // build, no device, or the engine not there yet).
  static const std::vector<ListedKind> kinds = [] {
    std::vector<ListedKind> made;
    made.push_back({EngineKind{"cpu", install_engine_list("cpu", "cpu,cpu:1"), 2, {}, {}}, std::nullopt});
    made.push_back({EngineKind{"sim", install_engine_list("sim:0", "sim:0,sim:1"), 2, {}, {}}, std::nullopt});
    ListedKind cuda{EngineKind{"cuda", install_engine_list("cuda:0", "cuda:0,cuda:1"), 2, {},
                               {{Accuracy::Approximate, 4}}},
                    std::nullopt};
    if (auto probe = setup::make_engines(setup::parse_engine_list("cuda:0").value()); !probe.ok())
      cuda.skipped = probe.error();
    made.push_back(std::move(cuda));
    return made;
  }();
  return kinds;
}

const std::vector<EngineKind>& engine_kinds() {
  static const std::vector<EngineKind> kinds = [] {
    std::vector<EngineKind> available;
    for (const ListedKind& listed : listed_engine_kinds()) {
      if (listed.skipped) {
        std::printf("conformance: engine kind '%s' skipped: %s\n", listed.kind.name.c_str(),
                    error_text(*listed.skipped).c_str());
        continue;
      }
      available.push_back(listed.kind);
    }
    return available;
  }();
  return kinds;
}

EngineKind reference_kind() { return EngineKind{"reference cpu", install_engine_list("cpu", "cpu,cpu:1"), 2, {}, {}}; }

EngineKind unfused_reference_kind() {
  EngineKind kind;
  kind.name = "unfused reference cpu";
  kind.install = [](Runtime& runtime, unsigned) -> Result<Installed> {
    TENACT_ASSIGN_OR_RETURN(auto cpu, make_cpu("cpu", false));
    TENACT_TRY(runtime.register_engine(cpu, 0));
    return Installed{{cpu}};
  };
  return kind;
}

EngineKind control_kind(std::string name, OpFamily family, ControlBehaviour behaviour,
                        std::vector<Refusal> unsupported, std::shared_ptr<ControlCounters> counters) {
  EngineKind kind;
  kind.name = std::move(name);
  kind.unsupported = std::move(unsupported);
  kind.install = [family, behaviour, counters](Runtime& runtime, unsigned) -> Result<Installed> {
    TENACT_ASSIGN_OR_RETURN(auto cpu, make_cpu("cpu", true));
    auto control = std::make_shared<ControlEngine>(cpu, family, behaviour, counters);
    TENACT_TRY(runtime.register_engine(control, 0));
    return Installed{{control}};
  };
  return kind;
}

// -- Rig ---------------------------------------------------------------------------

Rig::Rig(const EngineKind& kind, std::unique_ptr<Runtime> runtime, Installed installed)
    : kind_(kind), runtime_(std::move(runtime)), installed_(std::move(installed)) {
  for (const auto& engine : installed_.engines)
    for (const std::string& storage : engine->capabilities().storage_classes)
      if (auto stats = engine->memory_stats(storage); stats.ok())
        baseline_[engine->identity().id + "/" + storage] = stats->allocated_bytes;
}

Rig::~Rig() { shutdown(); }

Result<std::unique_ptr<Rig>> Rig::create(const EngineKind& kind, unsigned devices) {
  RuntimeOptions options;
  options.scheduler_threads = 2;
  auto runtime = std::make_unique<Runtime>(options);
  TENACT_TRY(runtime->status());
  auto installed = kind.install(*runtime, devices);
  if (!installed.ok()) return installed.error().with_context("installing engine kind '" + kind.name + "'");
  if (installed->engines.size() != devices)
    return Error{ErrorCode::Internal, "engine kind '" + kind.name + "' installed " +
                                          std::to_string(installed->engines.size()) + " engines, asked for " +
                                          std::to_string(devices)};
  return std::unique_ptr<Rig>(new Rig(kind, std::move(runtime), std::move(*installed)));
}

std::vector<Endpoint> Rig::endpoints() const {
  std::vector<Endpoint> out;
  for (const auto& engine : installed_.engines) {
    const EngineCapabilities& caps = engine->capabilities();
    out.push_back(Endpoint{engine->identity().id, caps.default_storage_class});
    for (const std::string& storage : caps.storage_classes)
      if (storage != caps.default_storage_class) out.push_back(Endpoint{engine->identity().id, storage});
  }
  return out;
}

Result<Tensor> Rig::to_host(const Tensor& value) {
  if (value.is_host()) return value;
  auto copied = runtime_->copy(value, Endpoint::unowned_host()).get();
  if (!copied.ok()) return copied.error().with_context("reading a result back from " + value.endpoint().to_string());
  if (!copied->is_host())
    return Error{ErrorCode::Internal, "a copy to unowned host memory is not host addressable"};
  return copied;
}

Result<std::vector<Tensor>> Rig::run(const std::shared_ptr<const SemanticProgram>& program,
                                     const std::vector<Tensor>& inputs) {
  auto outputs = runtime_->run(program, inputs).get();
  if (!outputs.ok()) return outputs.error();
  std::vector<Tensor> host;
  for (const Tensor& out : *outputs) {
    TENACT_ASSIGN_OR_RETURN(Tensor h, to_host(out));
    host.push_back(std::move(h));
  }
  return host;
}

Result<PreparedProgramPtr> Rig::prepare(const std::shared_ptr<const SemanticProgram>& program,
                                        const std::vector<Tensor>& inputs) {
  std::vector<InputDescriptor> descriptors;
  for (const Tensor& input : inputs) {
    Endpoint at = input.endpoint();
    descriptors.push_back(describe_input(input, at.engine.empty() ? Endpoint{} : std::move(at)));
  }
  return runtime_->prepare(program, std::move(descriptors)).get();
}

void Rig::shutdown() { runtime_.reset(); }

std::vector<std::string> Rig::leaks() const {
  std::vector<std::string> out;
  for (const auto& engine : installed_.engines)
    for (const std::string& storage : engine->capabilities().storage_classes) {
      auto stats = engine->memory_stats(storage);
      if (!stats.ok()) continue;  // an allocator the engine does not count
      const std::string where = engine->identity().id + "/" + storage;
      const uint64_t before = baseline_.count(where) ? baseline_.at(where) : 0;
      if (stats->allocated_bytes != before)
        out.push_back(where + ": " + std::to_string(stats->allocated_bytes) + " bytes allocated after the runtime " +
                      "shut down, " + std::to_string(before) + " before (engine kind '" + kind_.name + "')");
    }
  return out;
}

std::string refusal_verdict(Rig& rig, const std::shared_ptr<const SemanticProgram>& program,
                            const std::vector<Tensor>& inputs) {
  auto prepared = rig.prepare(program, inputs);
  if (prepared.ok()) return "prepared, though the engine kind lists it as unsupported";
  if (!is_refusal(prepared.error().code())) return "prepare failed, but not with a refusal: " + error_text(prepared.error());
  auto ran = rig.runtime().run(program, inputs).get();
  if (ran.ok()) return "prepare refused it, but run returned " + std::to_string(ran->size()) + " outputs";
  if (!is_refusal(ran.error().code())) return "run failed, but not with a refusal: " + error_text(ran.error());
  return "ok";
}

}  // namespace tenact::conformance
