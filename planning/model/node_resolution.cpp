// Step 3 of model_plan.hpp: each op, in program order, resolved to the first
// provider in catalog order that serves it, may take it (alias policy,
// required capabilities, preference) and whose contracts fit its tensors.
#include "planning/model/plan_stages.hpp"
#include "planning/model/tensor_unification.hpp"

namespace tenact {

namespace {

Error invalid_plan(std::string message) { return Error{ErrorCode::InvalidPlan, std::move(message)}; }

std::string joined(const std::vector<std::string>& items, std::string_view separator = ", ") {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i ? std::string{separator} : "") + items[i];
  return s;
}

/// One op being resolved and what its candidates are asked.
struct NodeQuery {
  const SemanticProgram& program;
  const CompileInputs& inputs;
  size_t op_index = 0;
  const Op& op;
  std::string node;
  std::vector<ValueType> operand_types;
  std::vector<ValueType> result_types;
  /// Set when the op computes a state update.
  const StateUpdate* update = nullptr;
  std::vector<std::string> required;

  ContractQuery query() const {
    return ContractQuery{op.kind, &op.attrs, operand_types, result_types, &inputs.symbols};
  }
  std::string state_name() const { return program.value(update->state).name; }
};

/// A provider that serves the op, with its contract for it.
struct Served {
  const CatalogEntry* entry = nullptr;
  OpContract contract;
};

/// Why the node may not take `s` for its alias policy, or "".
std::string alias_refusal(const NodeQuery& q, const Served& s) {
  const std::vector<TensorContract>& results = s.contract.results;
  for (size_t r = 0; r < results.size(); ++r) {
    const bool must = results[r].alias.kind == AliasPolicy::Kind::MustAlias;
    const bool updating = q.update != nullptr && r == q.update->result;
    // An update may also be computed into new storage that replaces the
    // state after the run (updates_in_place says which candidates do better).
    if (updating && must && results[r].alias != AliasPolicy::must(q.update->operand))
      return "its result must alias another operand than state `" + q.state_name() + "`";
    if (must && !updating) return "its result " + std::to_string(r) + " must alias an operand and updates no state";
  }
  if (q.update != nullptr && q.update->result >= results.size())
    return "it has no result " + std::to_string(q.update->result);
  return "";
}

/// Whether `s` writes the node's state update in place (its result must
/// alias the state's operand).
bool updates_in_place(const NodeQuery& q, const Served& s) {
  return q.update != nullptr && q.update->result < s.contract.results.size() &&
         s.contract.results[q.update->result].alias == AliasPolicy::must(q.update->operand);
}

std::vector<std::string> missing_capabilities(const NodeQuery& q, const CatalogEntry& entry) {
  std::vector<std::string> missing;
  for (const std::string& c : q.required)
    if (!entry.provider->has_capability(c)) missing.push_back(c);
  return missing;
}

/// The tensors of the op's results when `s`'s contracts fit: operands
/// unified, explicit results unified, the others inferred.
Result<std::vector<ResolvedTensorSpec>> fit(const NodeQuery& q, const Served& s) {
  const OpContract& c = s.contract;
  if (c.operands.size() != q.op.inputs.size() || c.results.size() != q.op.outputs.size())
    return invalid_plan("node `" + q.node + "` arity differs from the contract of provider `" + s.entry->qualified_id +
                        "`: " + std::to_string(c.operands.size()) + " operands and " +
                        std::to_string(c.results.size()) + " results for " + std::to_string(q.op.inputs.size()) +
                        " and " + std::to_string(q.op.outputs.size()));
  TensorSymbols symbols;
  for (size_t i = 0; i < q.op.inputs.size(); ++i) {
    const ValueId v = q.op.inputs[i];
    const std::optional<ResolvedTensorSpec>& tensor = q.inputs.tensors[v];
    if (!tensor)
      return invalid_plan("node `" + q.node + "` input `" + q.program.value(v).name + "` has no concrete tensor");
    TENACT_TRY(unify_tensor(c.operands[i], *tensor, symbols, q.node, "input", i, q.program.value(v).name));
  }
  for (size_t r = 0; r < q.op.outputs.size(); ++r)
    if (const auto& tensor = q.inputs.tensors[q.op.outputs[r]])
      TENACT_TRY(
          unify_tensor(c.results[r], *tensor, symbols, q.node, "output", r, q.program.value(q.op.outputs[r]).name));
  std::vector<ResolvedTensorSpec> results;
  for (size_t r = 0; r < q.op.outputs.size(); ++r) {
    if (const auto& tensor = q.inputs.tensors[q.op.outputs[r]]) {
      results.push_back(*tensor);
      continue;
    }
    TENACT_ASSIGN_OR_RETURN(auto inferred, infer_tensor(c.results[r], symbols, q.node));
    results.push_back(std::move(inferred));
  }
  return results;
}

/// Checks a result tensor against the program's own inference at the
/// bound symbols (an upper bound: its bound; an unknown extent: any).
Status check_program_inference(const NodeQuery& q, const Served& s, size_t r, const ResolvedTensorSpec& tensor) {
  const ValueInfo& v = q.program.value(q.op.outputs[r]);
  bool agrees = tensor.dtype == v.type.dtype && tensor.dims.size() == v.type.rank();
  std::string expected;
  for (size_t a = 0; a < v.type.rank(); ++a) {
    const ShapeExtent& e = v.type.shape[a];
    std::string extent = "?";
    if (e.kind != ExtentKind::Unknown) {
      auto value = e.expr.evaluate(q.inputs.symbols);
      if (!value.ok()) return value.error().with_context("node `" + q.node + "` result `" + v.name + "`");
      extent = std::to_string(*value);
      agrees = agrees && (a >= tensor.dims.size() || (*value >= 0 && static_cast<uint64_t>(*value) == tensor.dims[a]));
    }
    expected += (a ? ", " : "") + extent;
  }
  if (agrees) return ok_status();
  const std::string evaluated = std::string{to_string(v.type.dtype)} + "[" + expected + "]";
  const std::string declared = v.type.to_string();
  return invalid_plan("provider `" + s.entry->qualified_id + "` violates its contract at node `" + q.node +
                      "`: it gives value `" + v.name + "` the tensor " + tensor.to_string() + ", the program infers " +
                      (declared == evaluated ? declared : declared + " = " + evaluated));
}

/// The resolution of `q` to `s`, whose results have `tensors`.
Result<NodeResolution> resolution(const NodeQuery& q, const Served& s, std::vector<ResolvedTensorSpec> tensors,
                                  std::string why, CompileInputs& inputs) {
  for (size_t r = 0; r < tensors.size(); ++r) TENACT_TRY(check_program_inference(q, s, r, tensors[r]));
  NodeResolution n;
  n.op = q.op_index;
  n.node = q.node;
  n.provider = s.entry->qualified_id;
  n.engine = s.entry->engine;
  n.endpoint = s.entry->endpoint;
  n.choice.id = s.entry->provider->id;
  for (ValueId v : q.op.inputs) n.choice.operand_layouts.push_back(inputs.tensors[v]->layout);
  n.capabilities = s.entry->provider->capabilities;
  for (const TensorContract& c : s.contract.results) n.result_aliases.push_back(c.alias);
  n.why = std::move(why);
  for (size_t r = 0; r < tensors.size(); ++r) inputs.tensors[q.op.outputs[r]] = std::move(tensors[r]);
  return n;
}

Result<NodeResolution> resolve_preferred(const NodeQuery& q, const ProviderCatalog& catalog,
                                         const std::vector<Served>& served, const std::string& preferred,
                                         CompileInputs& inputs) {
  const std::string who = "node `" + q.node + "` prefers provider `" + preferred + "`";
  const CatalogEntry* entry = catalog.find(preferred);
  if (entry == nullptr) return invalid_plan(who + ", which is not in the catalog");
  const Served* chosen = nullptr;
  for (const Served& s : served)
    if (s.entry == entry) chosen = &s;
  if (chosen == nullptr) return invalid_plan(who + ", which does not serve " + q.program.describe_op(q.op_index));
  if (std::string refused = alias_refusal(q, *chosen); !refused.empty())
    return invalid_plan(who + ", which it may not take: " + refused);
  if (auto missing = missing_capabilities(q, *entry); !missing.empty())
    return invalid_plan(who + ", which lacks the required capabilities [" + joined(missing) + "]");
  auto tensors = fit(q, *chosen);
  if (!tensors.ok()) return invalid_plan(who + ", which does not fit: " + tensors.error().message());
  return resolution(q, *chosen, std::move(*tensors), "preferred by the options", inputs);
}

/// The candidates the node may take: alias policy, then capabilities.
Result<std::vector<const Served*>> admissible(const NodeQuery& q, const std::vector<Served>& served) {
  if (served.empty())
    return invalid_plan("no provider in the catalog serves node `" + q.node + "` (" +
                        q.program.describe_op(q.op_index) + ")");
  std::vector<const Served*> by_alias;
  std::vector<std::string> names;
  for (const Served& s : served) {
    names.push_back(s.entry->qualified_id);
    if (alias_refusal(q, s).empty()) by_alias.push_back(&s);
  }
  if (by_alias.empty() && q.update != nullptr)
    return invalid_plan("node `" + q.node + "` updates state `" + q.state_name() +
                        "`, but every provider serving it has a result that must alias another operand (candidates: " +
                        joined(names) + ")");
  // A state update: the providers that write it in place first.
  std::stable_partition(by_alias.begin(), by_alias.end(), [&q](const Served* s) { return updates_in_place(q, *s); });
  if (by_alias.empty())
    return invalid_plan("node `" + q.node +
                        "` updates no state, but every provider serving it has a result that "
                        "must alias an operand (candidates: " +
                        joined(names) + ")");
  std::vector<const Served*> capable;
  std::vector<std::string> offers;
  for (const Served* s : by_alias) {
    if (missing_capabilities(q, *s->entry).empty()) capable.push_back(s);
    offers.push_back(s->entry->qualified_id + " [" + joined(s->entry->provider->capabilities) + "]");
  }
  if (capable.empty())
    return invalid_plan("node `" + q.node + "` requires capabilities [" + joined(q.required) +
                        "], which no candidate has: " + joined(offers, "; "));
  return capable;
}

Result<NodeResolution> resolve_first_fit(const NodeQuery& q, const std::vector<Served>& served, CompileInputs& inputs) {
  TENACT_ASSIGN_OR_RETURN(auto candidates, admissible(q, served));
  const Served* winner = nullptr;
  std::vector<ResolvedTensorSpec> tensors;
  std::vector<std::string> rejected, also_fitting, reasons;
  for (const Served* s : candidates) {
    auto fitted = fit(q, *s);
    if (!fitted.ok()) {
      if (winner == nullptr) {
        rejected.push_back(s->entry->qualified_id + " (" + fitted.error().message() + ")");
        reasons.push_back(s->entry->qualified_id + ": " + fitted.error().message());
        if (candidates.size() == 1) return fitted.error();
      }
    } else if (winner == nullptr) {
      winner = s;
      tensors = std::move(*fitted);
    } else {
      also_fitting.push_back(s->entry->qualified_id);
    }
  }
  if (winner == nullptr) return invalid_plan("no provider fits node `" + q.node + "`: " + joined(reasons, "; "));
  std::string why = "the first provider in catalog order whose contract fits";
  if (!also_fitting.empty()) why += " (also fitting: " + joined(also_fitting) + ")";
  if (!rejected.empty()) why += "; rejected: " + joined(rejected, "; ");
  return resolution(q, *winner, std::move(tensors), std::move(why), inputs);
}

Result<NodeResolution> resolve_node(const SemanticProgram& program, const ProviderCatalog& catalog,
                                    const ModelCompileOptions& options, size_t op_index, CompileInputs& inputs) {
  const Op& op = program.ops()[op_index];
  if (op.outputs.empty()) return Error{ErrorCode::Internal, program.describe_op(op_index) + " has no result"};
  NodeQuery q{program, inputs, op_index, op, program.value(op.outputs.front()).name, {}, {}, nullptr, {}};
  for (ValueId v : op.inputs) q.operand_types.push_back(program.value(v).type);
  for (ValueId v : op.outputs) q.result_types.push_back(program.value(v).type);
  for (const StateUpdate& u : program.state_updates())
    if (u.op == op_index) q.update = &u;
  if (auto it = options.required_capabilities.find(q.node); it != options.required_capabilities.end())
    q.required = it->second;
  std::vector<Served> served;
  const ContractQuery query = q.query();
  for (const CatalogEntry& entry : catalog.entries())
    if (std::optional<OpContract> contract = entry.provider->contract(query))
      served.push_back(Served{&entry, std::move(*contract)});
  if (auto it = options.preferred_providers.find(q.node); it != options.preferred_providers.end())
    return resolve_preferred(q, catalog, served, it->second, inputs);
  return resolve_first_fit(q, served, inputs);
}

}  // namespace

Result<std::vector<NodeResolution>> resolve_nodes(const SemanticProgram& program, const ProviderCatalog& catalog,
                                                  const ModelCompileOptions& options, CompileInputs& inputs) {
  std::vector<NodeResolution> nodes;
  nodes.reserve(program.ops().size());
  for (size_t i = 0; i < program.ops().size(); ++i) {
    TENACT_ASSIGN_OR_RETURN(NodeResolution n, resolve_node(program, catalog, options, i, inputs));
    nodes.push_back(std::move(n));
  }
  return nodes;
}

}  // namespace tenact
