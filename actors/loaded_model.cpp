#include "actors/loaded_model.hpp"

#include <algorithm>
#include <cstring>

#include "actors/runtime.hpp"
#include "planning/input_signature.hpp"

namespace tenact {

namespace {

Error shutdown(std::string_view what) {
  return Error{ErrorCode::Shutdown, std::string{what} + " after the runtime shut down"};
}

std::vector<int64_t> as_shape(const std::vector<uint64_t>& dims) { return {dims.begin(), dims.end()}; }

// `bytes` of zero-filled memory of `endpoint`'s engine, as a 1-D u8 tensor.
Result<Tensor> allocate_bytes(const EngineLookup& engines, const Endpoint& endpoint, uint64_t bytes) {
  std::shared_ptr<Engine> engine = engines ? engines(endpoint.engine) : nullptr;
  if (!engine) return Error{ErrorCode::EngineDown, "engine '" + endpoint.engine + "' is not registered any more"};
  auto made = engine->allocate(endpoint.storage_class, DType::U8, {static_cast<int64_t>(bytes)});
  if (!made.ok()) return made.error().with_context("allocating " + std::to_string(bytes) + " bytes at " + endpoint.to_string());
  return made;
}

// A dense row-major view of `dtype[shape]` at byte `offset` of `buffer`.
Result<Tensor> view_at(const Tensor& buffer, DType dtype, std::vector<int64_t> shape, uint64_t offset) {
  const uint64_t size = size_of(dtype);
  if (offset % size != 0)
    return Error{ErrorCode::Internal, "a planned offset of " + std::to_string(offset) + " bytes is not a multiple of " +
                                          std::to_string(size)};
  auto strides = row_major_strides(shape);
  return Tensor::view(buffer.buffer(), dtype, std::move(shape), std::move(strides), static_cast<int64_t>(offset / size));
}

// Whether two tensors start at the same byte of the same memory.
bool same_storage(const Tensor& a, const Tensor& b) {
  return a.buffer() && b.buffer() && a.buffer()->data() + a.offset() * static_cast<int64_t>(size_of(a.dtype())) ==
                                         b.buffer()->data() + b.offset() * static_cast<int64_t>(size_of(b.dtype()));
}

}  // namespace

LoadedModel::LoadedModel(ModelLoadContext context, std::shared_ptr<const ModelExecution> execution,
                         const ModelOptions& options)
    : context_(std::move(context)),
      execution_(std::move(execution)),
      arenas_(ModelArenas::create(execution_)),
      queue_(options.max_concurrent_runs) {
  prepare_.compiler = execution_->plan->compiler;
  prepare_.pins = execution_->pins;
  prepare_.cache_in_flight = true;
  updates_states_ = !execution_->plan->program->state_updates().empty();
}

Result<std::shared_ptr<LoadedModel>> LoadedModel::load(Runtime& runtime, ModelLoadContext context,
                                                       std::shared_ptr<const ModelExecution> execution,
                                                       const std::map<std::string, Tensor>& weights,
                                                       const ModelOptions& options) {
  auto model = std::make_shared<LoadedModel>(std::move(context), execution, options);
  const ModelPlan& plan = *execution->plan;
  const SemanticProgram& program = *plan.program;
  TENACT_ASSIGN_OR_RETURN(auto materializer, WeightMaterializerRegistry::builtin().select(plan.weight_materializer));

  // Each weight arena is assembled in host memory, then copied to its
  // device once.
  std::map<std::string, Tensor> arena_of;  // by resource id
  for (const StorageResource& r : plan.resources) {
    if (r.kind != ResourceKind::WeightArena) continue;
    TENACT_ASSIGN_OR_RETURN(Tensor host, Tensor::zeros(DType::U8, {static_cast<int64_t>(r.bytes)}));
    for (const WeightComponent& c : plan.weight_components) {
      if (c.resource != r.id) continue;
      const std::string& name = program.value(c.weight).name;
      auto given = weights.find(name);
      if (given == weights.end())
        return Error{ErrorCode::InputMismatch, "weight '" + name + "' has no data"};
      if (!given->second.is_host())
        return Error{ErrorCode::InputMismatch, "weight '" + name + "' is not in host memory"};
      auto bytes = materializer->materialize(given->second, c.tensor);
      if (!bytes.ok()) return bytes.error().with_context("materializing weight '" + name + "'");
      const uint64_t length = static_cast<uint64_t>(bytes->element_count()) * size_of(bytes->dtype());
      if (length != c.length_bytes || c.offset_bytes + length > r.bytes)
        return Error{ErrorCode::Internal, "weight '" + name + "' materialized to " + std::to_string(length) +
                                              " bytes where the plan has " + std::to_string(c.length_bytes)};
      if (length > 0) std::memcpy(host.data() + c.offset_bytes, bytes->data(), length);
    }
    auto placed = runtime.copy(std::move(host), r.endpoint).get();
    if (!placed.ok()) return placed.error().with_context("uploading weight arena " + r.id + " to " + r.endpoint.to_string());
    arena_of.emplace(r.id, std::move(*placed));
    ModelMemory& held = model->held_[r.endpoint.to_string()];
    held.weight_bytes += r.bytes;
  }
  for (const ExecutionInput& in : execution->inputs) {
    if (in.kind != ExecutionInput::Kind::Weight) continue;
    const WeightComponent& c = plan.weight_components[in.index];
    const ValueInfo& w = program.value(c.weight);
    std::vector<int64_t> shape;
    for (const ShapeExtent& e : w.type.shape) shape.push_back(e.expr.constant_value().value_or(0));
    auto arena = arena_of.find(c.resource);
    if (arena == arena_of.end()) return Error{ErrorCode::Internal, "weight component " + c.id + " has no arena"};
    TENACT_ASSIGN_OR_RETURN(Tensor view, view_at(arena->second, w.type.dtype, std::move(shape), c.offset_bytes));
    model->weights_.push_back(std::move(view));
  }
  TENACT_ASSIGN_OR_RETURN(model->states_, model->fresh_states());
  for (const StateInfo& s : program.states()) {
    const ValueStorage& at = plan.storage[s.value];
    if (!at.places.empty()) model->held_[at.places.front().endpoint.to_string()].state_bytes += s.capacity_bytes;
  }
  return model;
}

Result<std::vector<Tensor>> LoadedModel::fresh_states() const {
  const ModelPlan& plan = *execution_->plan;
  const SemanticProgram& program = *plan.program;
  std::vector<Tensor> out;
  for (const StateInfo& s : program.states()) {
    const ValueStorage& at = plan.storage[s.value];
    const ValueInfo& v = program.value(s.value);
    if (at.places.empty()) return Error{ErrorCode::Internal, "state '" + v.name + "' has no planned place"};
    const StoragePlace& place = at.places.front();
    TENACT_ASSIGN_OR_RETURN(Tensor buffer, allocate_bytes(context_.engines, place.endpoint, place.length_bytes));
    TENACT_ASSIGN_OR_RETURN(Tensor view, view_at(buffer, v.type.dtype, as_shape(plan.tensors[s.value].dims), 0));
    out.push_back(std::move(view));
  }
  return out;
}

std::vector<Tensor> LoadedModel::states() const {
  std::lock_guard lock(states_mutex_);
  return states_;
}

Status LoadedModel::check_inputs(const std::vector<Tensor>& inputs) const {
  const ModelPlan& plan = *execution_->plan;
  const SemanticProgram& program = *plan.program;
  if (inputs.size() != program.inputs().size())
    return Error{ErrorCode::InputMismatch, "model '" + program.name() + "' takes " +
                                               std::to_string(program.inputs().size()) + " inputs, " +
                                               std::to_string(inputs.size()) + " given"};
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueId id = program.inputs()[i];
    const ResolvedTensorSpec& capacity = plan.tensors[id];
    const std::string& name = program.value(id).name;
    if (inputs[i].dtype() != capacity.dtype || inputs[i].rank() != capacity.dims.size())
      return Error{ErrorCode::InputMismatch, "input '" + name + "' is " + std::string{to_string(inputs[i].dtype())} +
                                                 to_string(inputs[i].shape()) + "; the model takes " +
                                                 capacity.to_string()};
    for (size_t a = 0; a < capacity.dims.size(); ++a)
      if (static_cast<uint64_t>(inputs[i].shape()[a]) > capacity.dims[a])
        return Error{ErrorCode::LimitExceeded, "input '" + name + "' " + to_string(inputs[i].shape()) +
                                                   " exceeds the model's planned capacity " + capacity.to_string()};
  }
  return ok_status();
}

Status LoadedModel::check_regions(const PreparedProgram& prepared) {
  if (regions_checked_.load(std::memory_order_acquire) == &prepared) return ok_status();
  std::vector<std::vector<size_t>> fused;
  for (const ElementwiseRegion& r : prepared.root->regions) {
    std::vector<size_t> ops;
    for (uint32_t i : r.instructions) ops.push_back(prepared.root->staging->instructions[i].semantic_op);
    std::sort(ops.begin(), ops.end());
    fused.push_back(std::move(ops));
  }
  if (fused != execution_->plan->fused_regions)
    return Error{ErrorCode::Internal, "model '" + execution_->plan->program->name() +
                                          "': preparation fused other elementwise regions than its plan's storage "
                                          "was packed for"};
  regions_checked_.store(&prepared, std::memory_order_release);
  return ok_status();
}

void LoadedModel::run(std::vector<Tensor> inputs, std::function<void(Result<ModelRunResult>)> done,
                      ExecutionStats* stats) {
  if (Status valid = check_inputs(inputs); !valid.ok()) return done(valid.error());
  auto self = shared_from_this();
  const bool exclusive = updates_states_;
  auto shared_done = std::make_shared<RunDone>(std::move(done));
  auto task = [self, exclusive, shared_done, stats, inputs = std::move(inputs)]() mutable {
    self->start_run(std::move(inputs),
                    [self, exclusive, shared_done](Result<ModelRunResult> r) {
                      self->queue_.finished(exclusive);
                      (*shared_done)(std::move(r));
                    },
                    stats);
  };
  if (!queue_.submit(exclusive, std::move(task))) (*shared_done)(shutdown("a model run"));
}

void LoadedModel::start_run(std::vector<Tensor> inputs, RunDone done, ExecutionStats* stats) {
  RuntimeLink::Use use(*context_.link);
  Runtime* rt = use.runtime();
  if (!rt) return done(shutdown("a model run"));
  const EngineLookup& engines = context_.engines;
  auto lease = arenas_->take([&engines](const Endpoint& at, uint64_t bytes) { return allocate_bytes(engines, at, bytes); });
  if (!lease.ok()) return done(lease.error());
  std::vector<Tensor> all = std::move(inputs);
  all.insert(all.end(), weights_.begin(), weights_.end());
  const std::vector<Tensor> held_states = states();
  all.insert(all.end(), held_states.begin(), held_states.end());
  std::vector<InputDescriptor> descriptors;
  descriptors.reserve(all.size());
  for (const Tensor& t : all) {
    Endpoint at = t.endpoint();
    descriptors.push_back(describe_input(t, at.engine.empty() ? Endpoint{} : std::move(at)));
  }
  auto self = shared_from_this();
  auto shared_inputs = std::make_shared<std::vector<Tensor>>(std::move(all));
  rt->prepare(execution_->program, std::move(descriptors), prepare_,
              [self, shared_inputs, destinations = std::move(*lease), done = std::move(done),
               stats](Result<PreparedProgramPtr> prepared) mutable {
                if (!prepared.ok()) return done(prepared.error());
                if (Status same = self->check_regions(**prepared); !same.ok()) return done(same.error());
                RuntimeLink::Use again(*self->context_.link);
                Runtime* runtime = again.runtime();
                if (!runtime) return done(shutdown("a model run"));
                ExecuteOptions options;
                options.destinations = std::move(destinations);
                options.retry_transient = !self->updates_states_;
                runtime->execute(std::move(*prepared), std::move(*shared_inputs),
                                 [self, done = std::move(done)](Result<std::vector<Tensor>> r) {
                                   self->complete_run(std::move(r), done);
                                 },
                                 stats, std::move(options));
              });
}

void LoadedModel::complete_run(Result<std::vector<Tensor>> result, const RunDone& done) {
  if (!result.ok()) return done(result.error());
  const ModelExecution& e = *execution_;
  const SemanticProgram& program = *e.plan->program;
  std::vector<Tensor>& all = *result;
  if (all.size() != e.model_outputs + e.state_update_outputs + e.retained_outputs)
    return done(Error{ErrorCode::Internal, "a model run returned " + std::to_string(all.size()) + " outputs"});
  {
    // A state holds its update's value: in place (the same storage), or,
    // should an engine have written it elsewhere, that tensor from now on.
    std::lock_guard lock(states_mutex_);
    for (size_t k = 0; k < e.state_update_outputs; ++k) {
      const StateUpdate& update = program.state_updates()[k];
      for (size_t s = 0; s < program.states().size(); ++s)
        if (program.states()[s].value == update.state && !same_storage(states_[s], all[e.model_outputs + k]))
          states_[s] = all[e.model_outputs + k];
    }
  }
  ModelRunResult out;
  out.outputs.assign(std::make_move_iterator(all.begin()),
                     std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(e.model_outputs)));
  for (size_t k = 0; k < e.retained_outputs; ++k)
    out.retained.emplace(program.value(e.plan->retained[k]).name,
                         std::move(all[e.model_outputs + e.state_update_outputs + k]));
  all.clear();
  done(std::move(out));
}

void LoadedModel::state(std::string name, std::function<void(Result<Tensor>)> done) {
  const SemanticProgram& program = *execution_->plan->program;
  size_t index = program.states().size();
  for (size_t s = 0; s < program.states().size(); ++s)
    if (program.value(program.states()[s].value).name == name) index = s;
  if (index == program.states().size())
    return done(Error{ErrorCode::UndefinedName, "model '" + program.name() + "' has no state '" + name + "'"});
  auto self = shared_from_this();
  auto shared_done = std::make_shared<std::function<void(Result<Tensor>)>>(std::move(done));
  auto task = [self, index, shared_done] {
    auto finish = [self, shared_done](Result<Tensor> r) {
      self->queue_.finished(true);
      (*shared_done)(std::move(r));
    };
    const Tensor held = self->states()[index];
    if (held.is_host()) return finish(held.clone());
    RuntimeLink::Use use(*self->context_.link);
    Runtime* rt = use.runtime();
    if (!rt) return finish(shutdown("reading a state"));
    rt->copy(held, Endpoint::unowned_host(), std::move(finish));
  };
  if (!queue_.submit(true, std::move(task))) (*shared_done)(shutdown("reading a state"));
}

void LoadedModel::reset(std::function<void(Status)> done) {
  auto self = shared_from_this();
  auto shared_done = std::make_shared<std::function<void(Status)>>(std::move(done));
  auto task = [self, shared_done] {
    Status outcome = ok_status();
    auto fresh = self->fresh_states();
    if (fresh.ok()) {
      std::lock_guard lock(self->states_mutex_);
      self->states_ = std::move(*fresh);
    } else {
      outcome = fresh.error().with_context("resetting the states");
    }
    self->queue_.finished(true);
    (*shared_done)(std::move(outcome));
  };
  if (!queue_.submit(true, std::move(task))) (*shared_done)(shutdown("a reset"));
}

std::map<std::string, ModelMemory> LoadedModel::memory() const {
  std::map<std::string, ModelMemory> out = held_;
  const uint32_t sets = arenas_->made();
  for (const auto& [endpoint, bytes] : arenas_->bytes_per_set()) {
    ModelMemory& m = out[endpoint.to_string()];
    m.arena_bytes += bytes * sets;
    m.arenas = sets;
  }
  return out;
}

std::future<Result<ModelRunResult>> Model::run(std::vector<Tensor> inputs, ExecutionStats* stats) {
  auto promise = std::make_shared<std::promise<Result<ModelRunResult>>>();
  auto future = promise->get_future();
  run(std::move(inputs), [promise](Result<ModelRunResult> r) { promise->set_value(std::move(r)); }, stats);
  return future;
}

std::future<Result<Tensor>> Model::state(std::string name) {
  auto promise = std::make_shared<std::promise<Result<Tensor>>>();
  auto future = promise->get_future();
  state(std::move(name), [promise](Result<Tensor> r) { promise->set_value(std::move(r)); });
  return future;
}

std::future<Status> Model::reset() {
  auto promise = std::make_shared<std::promise<Status>>();
  auto future = promise->get_future();
  reset([promise](Status s) { promise->set_value(std::move(s)); });
  return future;
}

}  // namespace tenact
