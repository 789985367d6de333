// compile_model_plan: the stages of plan_stages.hpp in the order of the file
// comment of model_plan.hpp, and the plan assembled from them.
#include "planning/model/model_plan.hpp"

#include <algorithm>

#include "planning/model/plan_stages.hpp"

namespace tenact {

namespace {

/// Every value's tensor, now that every node is resolved.
Result<std::vector<ResolvedTensorSpec>> resolved_tensors(const SemanticProgram& program, CompileInputs& inputs) {
  std::vector<ResolvedTensorSpec> tensors;
  tensors.reserve(inputs.tensors.size());
  for (ValueId v = 0; v < inputs.tensors.size(); ++v) {
    if (!inputs.tensors[v])
      return Error{ErrorCode::InvalidPlan,
                   "program compilation did not resolve semantic value `" + program.value(v).name + "`"};
    tensors.push_back(std::move(*inputs.tensors[v]));
  }
  return tensors;
}

/// (R, U) for each state update U written in place and every other op R
/// that reads its state (an update into new storage needs no order).
std::vector<std::pair<size_t, size_t>> update_order(const SemanticProgram& program,
                                                    const std::vector<NodeResolution>& nodes) {
  std::vector<std::pair<size_t, size_t>> order;
  for (const StateUpdate& u : program.state_updates()) {
    const std::vector<AliasPolicy>& aliases = nodes[u.op].result_aliases;
    if (u.result >= aliases.size() || aliases[u.result] != AliasPolicy::must(u.operand)) continue;
    for (size_t r = 0; r < program.ops().size(); ++r) {
      const std::vector<ValueId>& operands = program.ops()[r].inputs;
      if (r != u.op && std::find(operands.begin(), operands.end(), u.state) != operands.end())
        order.emplace_back(r, u.op);
    }
  }
  return order;
}

/// The storage settled at the value alignment's fixed point; sets each
/// node's evidence there.
Status settle_storage(const StorageInputs& in, ModelPlan& plan) {
  TENACT_ASSIGN_OR_RETURN(const StoragePass probe, plan_storage(in, std::nullopt));
  TENACT_ASSIGN_OR_RETURN(const auto probe_evidence, node_alignment_evidence(in, probe));
  std::optional<StoragePass> last;
  std::vector<uint64_t> last_evidence;
  auto evidence_at = [&](uint64_t alignment) -> Result<uint64_t> {
    TENACT_ASSIGN_OR_RETURN(last, plan_storage(in, alignment));
    TENACT_ASSIGN_OR_RETURN(last_evidence, node_alignment_evidence(in, *last));
    return *std::max_element(last_evidence.begin(), last_evidence.end());
  };
  TENACT_ASSIGN_OR_RETURN(
      const SettledAlignment settled,
      settle_value_alignment(*std::max_element(probe_evidence.begin(), probe_evidence.end()), evidence_at));
  plan.value_alignment_bytes = settled.alignment;
  plan.alignment_passes = settled.passes;
  for (size_t i = 0; i < plan.nodes.size(); ++i) plan.nodes[i].value_alignment_bytes = last_evidence[i];
  plan.weight_components = std::move(last->components);
  plan.resources = std::move(last->resources);
  plan.storage = std::move(last->storage);
  plan.total_activation_bytes = last->activation_bytes.total;
  plan.planned_activation_bytes = last->activation_bytes.planned;
  plan.peak_live_activation_bytes = last->activation_bytes.peak_live;
  return ok_status();
}

}  // namespace

std::string_view to_string(ResourceKind kind) noexcept {
  switch (kind) {
    case ResourceKind::WeightArena: return "weight-arena";
    case ResourceKind::State: return "state";
    case ResourceKind::Activation: return "activation";
    case ResourceKind::ActivationArena: return "activation-arena";
  }
  return "?";
}

const StorageResource* ModelPlan::resource(std::string_view id) const {
  for (const StorageResource& r : resources)
    if (r.id == id) return &r;
  return nullptr;
}

Result<std::shared_ptr<const ModelPlan>> compile_model_plan(std::shared_ptr<const SemanticProgram> program,
                                                            const ProviderCatalog& catalog,
                                                            const ModelCompileOptions& options,
                                                            const WeightMaterializerRegistry& materializers) {
  if (!program) return Error{ErrorCode::InvalidPlan, "compile_model_plan without a program"};
  TENACT_ASSIGN_OR_RETURN(CompileInputs inputs, check_compile_options(*program, options));
  TENACT_ASSIGN_OR_RETURN(auto materializer, materializers.select(options.weight_materializer));
  TENACT_TRY(add_model_tensors(*program, *materializer, inputs));
  auto plan = std::make_shared<ModelPlan>();
  TENACT_ASSIGN_OR_RETURN(plan->nodes, resolve_nodes(*program, catalog, options, inputs));
  TENACT_ASSIGN_OR_RETURN(plan->tensors, resolved_tensors(*program, inputs));
  plan->program = program;
  plan->family_fingerprint = program->fingerprint().to_hex();
  plan->weight_materializer = materializer->id;
  plan->execution_weight_fingerprint = execution_weight_fingerprint(*program, materializer->id, plan->tensors);
  plan->symbols = std::move(inputs.symbols);
  plan->compiler = options.compiler;
  plan->retained = std::move(inputs.retained);
  plan->order = update_order(*program, plan->nodes);
  TENACT_ASSIGN_OR_RETURN(PredictedExecution execution,
                          predict_execution(*program, catalog, options, plan->nodes, plan->retained, plan->order));
  const StorageInputs in{*program,
                         catalog,
                         options,
                         plan->tensors,
                         plan->nodes,
                         plan->retained,
                         plan->family_fingerprint,
                         plan->execution_weight_fingerprint,
                         execution};
  TENACT_TRY(settle_storage(in, *plan));
  plan->fused_regions = std::move(execution.regions);
  plan->op_windows = std::move(execution.windows);
  plan->digest = plan_digest(*plan);
  return std::shared_ptr<const ModelPlan>(std::move(plan));
}

}  // namespace tenact
