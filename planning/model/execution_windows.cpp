// When a model's ops run (model_plan.hpp, ModelPlan::op_windows): the
// regions preparation will fuse, predicted with the very function it uses
// (planning/elementwise_regions.hpp) on the same staged program, endpoints,
// queues and order edges. A region runs as one step once every input
// exists, so its members — and any op of its device positioned between
// them — may run anywhere between its first and last member: each such op
// gets that span (merged with overlapping spans) as its window. Every
// other op runs in its place: the device runs its units one at a time in
// ascending order, the lowest first op among those ready first.
#include <algorithm>

#include "planning/elementwise_regions.hpp"
#include "planning/exec_program.hpp"
#include "planning/model/plan_stages.hpp"

namespace tenact {

namespace {

// The model as a plain program: what preparation stages (values keep their
// ids: inputs, weights, states, then op results).
Result<SemanticProgram> plain_program(const SemanticProgram& program, const std::vector<ValueId>& retained) {
  ProgramDraft draft = program.to_draft();
  auto as_input = [&](ValueId id) {
    const ValueInfo& v = program.value(id);
    std::vector<DimExpr> dims;
    for (const ShapeExtent& e : v.type.shape) dims.push_back(e.expr);
    draft.inputs.push_back(InputDecl{v.name, v.type.dtype, std::move(dims)});
  };
  for (const WeightInfo& w : program.weights()) as_input(w.value);
  for (const StateInfo& s : program.states()) as_input(s.value);
  draft.weights.clear();
  draft.states.clear();
  draft.state_updates.clear();
  for (const StateUpdate& u : program.state_updates()) draft.outputs.push_back(program.value(u.value).name);
  for (ValueId v : retained) draft.outputs.push_back(program.value(v).name);
  return validate(draft, model_extensions(program));
}

bool fuses(const ProviderCatalog& catalog, const Endpoint& at) {
  for (const CatalogEntry& e : catalog.entries())
    if (e.engine == at.engine) return e.fuses_regions;
  return false;
}

}  // namespace

Result<PredictedExecution> predict_execution(const SemanticProgram& program, const ProviderCatalog& catalog,
                                             const ModelCompileOptions& options,
                                             const std::vector<NodeResolution>& nodes,
                                             const std::vector<ValueId>& retained,
                                             const std::vector<std::pair<size_t, size_t>>& order) {
  const size_t n = program.ops().size();
  PredictedExecution out;
  out.fused.assign(program.values().size(), false);
  for (size_t i = 0; i < n; ++i) out.windows.emplace_back(i, i);
  if (!options.compiler.fuse_elementwise || n == 0) return out;
  auto plain = plain_program(program, retained);
  if (!plain.ok()) return plain.error().with_context("predicting the fused regions of '" + program.name() + "'");
  TENACT_ASSIGN_OR_RETURN(ExecProgram staged, stage(*plain));
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  for (const auto& [before, after] : order) edges.emplace_back(static_cast<uint32_t>(before), static_cast<uint32_t>(after));
  TENACT_ASSIGN_OR_RETURN(staged, with_order(std::move(staged), edges, n));
  std::vector<Endpoint> endpoints;
  for (const ExecInstruction& ins : staged.instructions) endpoints.push_back(nodes[ins.semantic_op].endpoint);
  const std::vector<uint32_t> queues(staged.instructions.size(), 0);
  TENACT_ASSIGN_OR_RETURN(
      auto regions,
      plan_elementwise_regions(staged, endpoints, [&catalog](const Endpoint& e) { return fuses(catalog, e); }, queues,
                               options.compiler.max_region_ops));
  // Spans per endpoint, merged where they overlap.
  std::vector<std::pair<Endpoint, std::pair<size_t, size_t>>> spans;
  for (const ElementwiseRegion& r : regions) {
    std::vector<size_t> ops;
    for (uint32_t i : r.instructions) ops.push_back(staged.instructions[i].semantic_op);
    std::sort(ops.begin(), ops.end());
    for (uint32_t i : r.instructions)
      for (SlotId s : staged.instructions[i].outputs)
        if (!std::binary_search(r.outputs.begin(), r.outputs.end(), s)) out.fused[s] = true;
    spans.push_back({r.endpoint, {ops.front(), ops.back()}});
    out.regions.push_back(std::move(ops));
  }
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<Endpoint, std::pair<size_t, size_t>>> merged;
  for (auto& span : spans) {
    if (!merged.empty() && merged.back().first == span.first && span.second.first <= merged.back().second.second) {
      merged.back().second.second = std::max(merged.back().second.second, span.second.second);
      continue;
    }
    merged.push_back(span);
  }
  for (const auto& [at, segment] : merged)
    for (size_t i = segment.first; i <= segment.second; ++i)
      if (nodes[i].endpoint == at) out.windows[i] = segment;
  return out;
}

}  // namespace tenact
