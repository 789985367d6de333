#include "planning/model/model_execution.hpp"

#include "planning/model/plan_stages.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace tenact {

namespace {

Error internal(std::string message) { return Error{ErrorCode::Internal, std::move(message)}; }

Status check_plan(const ModelPlan& plan) {
  if (!plan.program) return internal("a model plan without its program");
  const SemanticProgram& p = *plan.program;
  if (plan.nodes.size() != p.ops().size() || plan.tensors.size() != p.values().size() ||
      plan.storage.size() != p.values().size())
    return internal("the model plan of '" + p.name() + "' does not fit its program");
  for (const WeightComponent& c : plan.weight_components)
    if (c.weight >= p.values().size() || p.value(c.weight).role != ValueRole::Weight)
      return internal("weight component " + c.id + " names no weight of '" + p.name() + "'");
  return ok_status();
}

/// `base`, or `base#2`, `base#3`, ... : the first not in `used`, added to it.
std::string unique_name(const std::string& base, std::set<std::string>& used) {
  std::string name = base;
  for (uint64_t n = 2; used.count(name); ++n) name = base + "#" + std::to_string(n);
  used.insert(name);
  return name;
}

std::vector<DimExpr> dims_of(const ValueInfo& v) {
  std::vector<DimExpr> dims;
  for (const ShapeExtent& e : v.type.shape) dims.push_back(e.expr);
  return dims;
}

/// The plain program's draft and what each of its inputs is.
struct Derived {
  ProgramDraft draft;
  std::vector<ExecutionInput> inputs;
};

Derived derive_draft(const ModelPlan& plan) {
  const SemanticProgram& program = *plan.program;
  const ProgramDraft model = program.to_draft();
  Derived d;
  d.draft.name = model.name;
  d.draft.guards = model.guards;
  d.draft.inputs = model.inputs;
  for (size_t i = 0; i < model.inputs.size(); ++i) d.inputs.push_back({ExecutionInput::Kind::Input, i});
  std::set<std::string> used;
  for (const ValueInfo& v : program.values()) used.insert(v.name);
  // Each weight's first component keeps its name; the others get one of their own.
  std::map<std::pair<ValueId, Endpoint>, std::string> copy_of;
  for (size_t c = 0; c < plan.weight_components.size(); ++c) {
    const WeightComponent& wc = plan.weight_components[c];
    const ValueInfo& w = program.value(wc.weight);
    const bool first =
        std::none_of(copy_of.begin(), copy_of.end(), [&](const auto& e) { return e.first.first == wc.weight; });
    const std::string name = first ? w.name : unique_name(w.name + "@" + wc.endpoint.to_string(), used);
    copy_of[{wc.weight, wc.endpoint}] = name;
    d.draft.inputs.push_back(InputDecl{name, w.type.dtype, dims_of(w)});
    d.inputs.push_back({ExecutionInput::Kind::Weight, c});
  }
  for (size_t k = 0; k < program.states().size(); ++k) {
    const ValueInfo& s = program.value(program.states()[k].value);
    d.draft.inputs.push_back(InputDecl{s.name, s.type.dtype, dims_of(s)});
    d.inputs.push_back({ExecutionInput::Kind::State, k});
  }
  for (size_t i = 0; i < model.ops.size(); ++i) {
    DraftOp op = model.ops[i];
    const std::vector<ValueId>& operands = program.ops()[i].inputs;
    for (size_t j = 0; j < operands.size(); ++j)
      if (program.value(operands[j]).role == ValueRole::Weight)
        op.in[j] = copy_of[{operands[j], plan.nodes[i].endpoint}];
    d.draft.ops.push_back(std::move(op));
  }
  d.draft.outputs = model.outputs;
  for (const StateUpdate& u : program.state_updates()) d.draft.outputs.push_back(program.value(u.value).name);
  for (ValueId v : plan.retained) d.draft.outputs.push_back(program.value(v).name);
  return d;
}

std::shared_ptr<const ExecutionPins> pins_of(const ModelPlan& plan) {
  auto pins = std::make_shared<ExecutionPins>();
  for (const NodeResolution& n : plan.nodes)
    pins->ops.push_back(OpPin{n.engine, n.endpoint.storage_class, 0, std::make_shared<const ProviderChoice>(n.choice)});
  for (const auto& [before, after] : plan.order)
    pins->order.emplace_back(static_cast<uint32_t>(before), static_cast<uint32_t>(after));
  pins->digest = plan.digest;
  return pins;
}

/// The activation arenas and, per op result, its slot in one of them.
Status place_destinations(const ModelPlan& plan, ModelExecution& e) {
  std::map<std::string, size_t> arena_of;
  for (const StorageResource& r : plan.resources) {
    if (r.kind != ResourceKind::ActivationArena) continue;
    arena_of[r.id] = e.arenas.size();
    e.arenas.push_back(ActivationArena{r.id, r.endpoint, r.bytes, r.alignment});
  }
  const SemanticProgram& program = *plan.program;
  for (const Op& op : program.ops()) {
    std::vector<std::optional<ArenaSlot>>& slots = e.destinations.emplace_back();
    for (ValueId v : op.outputs) {
      const ValueStorage& s = plan.storage[v];
      if (s.kind != ValueStorage::Kind::Activation || !s.packed) {
        slots.emplace_back();
        continue;
      }
      auto arena = s.places.empty() ? arena_of.end() : arena_of.find(s.places.front().resource);
      if (arena == arena_of.end()) return internal("packed value '" + program.value(v).name + "' has no arena");
      const ResolvedTensorSpec& t = plan.tensors[v];
      slots.push_back(ArenaSlot{arena->second, s.places.front().offset_bytes, s.places.front().length_bytes, t.dtype,
                                std::vector<int64_t>(t.dims.begin(), t.dims.end())});
    }
  }
  return ok_status();
}

}  // namespace

Result<std::shared_ptr<const ModelExecution>> derive_model_execution(std::shared_ptr<const ModelPlan> plan) {
  if (!plan) return internal("derive_model_execution without a plan");
  TENACT_TRY(check_plan(*plan));
  const SemanticProgram& model = *plan->program;
  Derived derived = derive_draft(*plan);
  auto program = validate(derived.draft, model_extensions(model));
  if (!program.ok()) return program.error().with_context("the execution program of model '" + model.name() + "'");
  auto e = std::make_shared<ModelExecution>();
  e->plan = plan;
  e->program = std::make_shared<const SemanticProgram>(std::move(*program));
  e->inputs = std::move(derived.inputs);
  e->model_outputs = model.outputs().size();
  e->state_update_outputs = model.state_updates().size();
  e->retained_outputs = plan->retained.size();
  e->pins = pins_of(*plan);
  TENACT_TRY(place_destinations(*plan, *e));
  return std::shared_ptr<const ModelExecution>(std::move(e));
}

/// The extension families of the model's ops, each inferring exactly what
/// the model's validation inferred for the same operands and attributes.
ExtensionRegistry model_extensions(const SemanticProgram& program) {
  struct Instance {
    std::vector<ValueType> operands;
    std::string attributes;
    std::vector<ValueType> results;
  };
  std::map<std::string, std::vector<Instance>> by_family;
  for (const Op& op : program.ops()) {
    const auto* ext = std::get_if<ExtensionAttrs>(&op.attrs);
    if (op.kind != OpKind::Extension || ext == nullptr) continue;
    Instance instance{{}, ext->attributes_json, {}};
    for (ValueId v : op.inputs) instance.operands.push_back(program.value(v).type);
    for (ValueId v : op.outputs) instance.results.push_back(program.value(v).type);
    by_family[ext->family].push_back(std::move(instance));
  }
  ExtensionRegistry registry;
  for (auto& [family, instances] : by_family)
    registry.add(
        family,
        [family = family, instances = std::move(instances)](
            std::span<const ValueType> operands, const std::string& attributes) -> Result<std::vector<ValueType>> {
          for (const Instance& i : instances)
            if (i.attributes == attributes &&
                std::equal(operands.begin(), operands.end(), i.operands.begin(), i.operands.end()))
              return i.results;
          return internal("extension family '" + family + "' is applied as the model never applies it");
        });
  return registry;
}

}  // namespace tenact
