// Step 1 and the value tensors known before resolution (model_plan.hpp).
#include <algorithm>
#include <set>

#include "planning/model/plan_stages.hpp"
#include "planning/signature.hpp"

namespace tenact {

namespace {

Error invalid_plan(std::string message) { return Error{ErrorCode::InvalidPlan, std::move(message)}; }

/// Every option names what the program has: nodes, values, op results, and
/// a tensor for every input.
Status check_names(const SemanticProgram& program, const ModelCompileOptions& options) {
  std::set<std::string, std::less<>> nodes, values, results;
  for (const Op& op : program.ops())
    if (!op.outputs.empty()) nodes.insert(program.value(op.outputs.front()).name);
  for (const ValueInfo& v : program.values()) {
    values.insert(v.name);
    if (v.role == ValueRole::Result) results.insert(v.name);
  }
  auto known_node = [&](const std::string& node) {
    return nodes.count(node) ? ok_status()
                             : Status{invalid_plan("program compile options reference an unknown node `" + node + "`")};
  };
  for (const auto& [node, unused] : options.required_capabilities) TENACT_TRY(known_node(node));
  for (const auto& [node, unused] : options.preferred_providers) TENACT_TRY(known_node(node));
  for (const auto& [value, unused] : options.tensors)
    if (!values.count(value))
      return invalid_plan("program compile options contain an unknown semantic value `" + value + "`");
  for (const std::string& value : options.retain)
    if (!results.count(value))
      return invalid_plan("completion retention must reference a semantic node output: `" + value + "`");
  for (ValueId input : program.inputs())
    if (!options.tensors.count(program.value(input).name))
      return invalid_plan("every program input requires an explicit canonical tensor capacity: `" +
                          program.value(input).name + "`");
  return ok_status();
}

/// The explicit tensors, each validated, by ValueId.
Result<std::vector<std::optional<ResolvedTensorSpec>>> explicit_tensors(const SemanticProgram& program,
                                                                        const ModelCompileOptions& options) {
  std::vector<std::optional<ResolvedTensorSpec>> tensors(program.values().size());
  for (ValueId id = 0; id < program.values().size(); ++id) {
    auto given = options.tensors.find(program.value(id).name);
    if (given == options.tensors.end()) continue;
    const ResolvedTensorSpec& t = given->second;
    auto made = ResolvedTensorSpec::make(t.dims, t.dtype, t.layout);
    if (!made.ok()) return made.error().with_context("explicit tensor `" + given->first + "`");
    tensors[id] = std::move(*made);
  }
  return tensors;
}

/// The symbols, bound from the inputs' explicit tensors (their extents
/// checked against the declarations, guards and deferred constraints).
Result<SymbolBindings> bind_input_symbols(const SemanticProgram& program,
                                          const std::vector<std::optional<ResolvedTensorSpec>>& tensors) {
  std::vector<InputSignature> signature;
  for (ValueId input : program.inputs()) {
    const ValueInfo& v = program.value(input);
    const ResolvedTensorSpec& t = *tensors[input];
    if (t.dtype != v.type.dtype || t.dims.size() != v.type.rank())
      return invalid_plan("explicit tensor `" + v.name + "` " + t.to_string() + " differs from the program input `" +
                          v.name + "` " + v.type.to_string());
    InputSignature s{t.dtype, {}};
    for (uint64_t d : t.dims) {
      if (d > static_cast<uint64_t>(INT64_MAX))
        return invalid_plan("explicit tensor `" + v.name + "` " + t.to_string() + " has an extent past int64");
      s.shape.push_back(static_cast<int64_t>(d));
    }
    signature.push_back(std::move(s));
  }
  auto bound = bind_signature(program, signature);
  if (!bound.ok()) return invalid_plan("the explicit input tensors do not fit the program: " + bound.error().message());
  return bound;
}

Status set_exact(CompileInputs& inputs, ValueId id, ResolvedTensorSpec tensor, std::string_view kind,
                 const std::string& name) {
  std::optional<ResolvedTensorSpec>& slot = inputs.tensors[id];
  if (slot && *slot != tensor)
    return invalid_plan("explicit " + std::string{kind} + " tensor `" + name + "` differs from model semantics");
  slot = std::move(tensor);
  return ok_status();
}

}  // namespace

Result<CompileInputs> check_compile_options(const SemanticProgram& program, const ModelCompileOptions& options) {
  TENACT_TRY(check_names(program, options));
  CompileInputs inputs;
  TENACT_ASSIGN_OR_RETURN(inputs.tensors, explicit_tensors(program, options));
  TENACT_ASSIGN_OR_RETURN(inputs.symbols, bind_input_symbols(program, inputs.tensors));
  std::set<ValueId> retained;
  for (ValueId id = 0; id < program.values().size(); ++id) {
    const ValueInfo& v = program.value(id);
    if (v.role != ValueRole::Result) continue;
    if (options.retain_all || std::find(options.retain.begin(), options.retain.end(), v.name) != options.retain.end())
      retained.insert(id);
  }
  inputs.retained.assign(retained.begin(), retained.end());
  return inputs;
}

Status add_model_tensors(const SemanticProgram& program, const WeightMaterializer& materializer,
                         CompileInputs& inputs) {
  for (const WeightInfo& w : program.weights()) {
    const std::string& name = program.value(w.value).name;
    auto physical = materializer.physical(program, w.value);
    if (!physical.ok())
      return physical.error().with_context("weight materializer `" + materializer.id + "` on weight `" + name + "`");
    TENACT_TRY(set_exact(inputs, w.value, std::move(*physical), "weight", name));
  }
  for (const StateInfo& s : program.states()) {
    const ValueInfo& v = program.value(s.value);
    std::vector<uint64_t> dims;
    for (const ShapeExtent& e : v.type.shape)
      dims.push_back(static_cast<uint64_t>(e.expr.constant_value().value_or(0)));
    TENACT_ASSIGN_OR_RETURN(
        auto tensor, ResolvedTensorSpec::make(std::move(dims), v.type.dtype, ResolvedTensorLayout::contiguous()));
    TENACT_TRY(set_exact(inputs, s.value, std::move(tensor), "state", v.name));
  }
  return ok_status();
}

}  // namespace tenact
