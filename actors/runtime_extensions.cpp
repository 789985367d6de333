// The Runtime's extension side: registering families, the registry programs
// validate against, and the eager single-op path (Runtime::run_op).
#include <algorithm>

#include "actors/direct_launch.hpp"
#include "actors/runtime_impl.hpp"
#include "core/builder.hpp"
#include "core/guarded.hpp"
#include "core/program_json.hpp"
#include "extensions/builtin_extensions.hpp"
#include "planning/eager_extension.hpp"

namespace tenact {

Status Runtime::register_extension(ExtensionFamily family, std::map<std::string, std::string> planning_configs) {
  auto shared = std::make_shared<const ExtensionFamily>(std::move(family));
  std::lock_guard lock(impl_->mutex);
  if (impl_->closing) return impl_->refusal("register_extension");
  TENACT_ASSIGN_OR_RETURN(auto next, impl_->config->with_extension(std::move(shared), std::move(planning_configs)));
  impl_->publish(std::move(next));
  return ok_status();
}

ExtensionRegistry Runtime::extensions() const {
  ExtensionRegistry registry;
  const RuntimeConfigPtr config = impl_->current_config();  // held for the loop: the range's temporary is not
  for (const RegisteredExtension& e : config->extensions()) registry.add(e.family->name, e.family->infer);
  return registry;
}

Status register_builtin_extensions(Runtime& runtime) {
  for (const ExtensionFamilyPtr& family : builtin_extension_families())
    if (Status s = runtime.register_extension(*family); !s.ok())
      return s.error().with_context("registering the built-in module 'tenact'");
  return ok_status();
}

namespace {

/// What run_op works out before anything runs: the op, its operand and
/// result types, and how its inputs are described.
struct EagerOp {
  ExtensionAttrs attrs;
  std::vector<ValueType> operands;
  std::vector<ValueType> results;
  std::vector<InputDescriptor> descriptors;
};

Result<EagerOp> eager_op(const RuntimeConfig& config, std::string family, std::string_view attributes_json,
                         const std::vector<Tensor>& inputs, const std::string& engine) {
  const ExtensionFamilyPtr definition = config.find_extension(family);
  if (!definition)
    return Error{ErrorCode::MissingExtension, "extension family '" + family + "' is not registered with this runtime"};
  if (!config.find_engine(engine))
    return Error{ErrorCode::NoEligibleEngine, "run_op of extension family '" + family + "': engine '" + engine +
                                                  "' is not registered"};
  EagerOp op;
  TENACT_ASSIGN_OR_RETURN(op.attrs.attributes_json, canonical_attributes_json(attributes_json));
  op.attrs.family = std::move(family);
  for (const Tensor& input : inputs) {
    std::vector<DimExpr> dims;
    for (int64_t d : input.shape()) dims.push_back(DimExpr::constant(d));
    op.operands.push_back(ValueType{input.dtype(), exact_shape(dims)});
    Endpoint at = input.endpoint();
    op.descriptors.push_back(describe_input(input, at.engine.empty() ? Endpoint{} : std::move(at)));
  }
  auto results = definition->infer(op.operands, op.attrs.attributes_json);
  if (!results.ok()) return results.error().with_context("extension family '" + op.attrs.family + "'");
  if (results->empty())
    return Error{ErrorCode::InvalidAttribute, "extension family '" + op.attrs.family + "' inferred no results"};
  op.results = std::move(*results);
  return op;
}

/// The compiled path for one op: a program of the op alone, prepared
/// through the cache with placement on `engine`.
Result<std::shared_ptr<const SemanticProgram>> one_op_program(const EagerOp& op, const ExtensionRegistry& registry) {
  ProgramBuilder b("run_op " + op.attrs.family);
  std::vector<ValueRef> operands;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    std::vector<Dim> shape;
    for (const ShapeExtent& e : op.operands[i].shape) shape.push_back(Dim{e.expr});
    operands.push_back(b.input("x" + std::to_string(i), op.operands[i].dtype, std::move(shape)));
  }
  for (const ValueRef& out : b.extension(op.attrs.family, operands, op.attrs.attributes_json, op.results.size()))
    b.output(out);
  TENACT_ASSIGN_OR_RETURN(SemanticProgram program, b.build(registry));
  return std::make_shared<const SemanticProgram>(std::move(program));
}

/// Launches a plan prepared eagerly straight on its engine.
void launch_eager(Runtime::Impl& rt, const std::string& engine, std::shared_ptr<const PreparedOp> plan,
                  std::vector<Tensor> inputs, ExecuteCallback done) {
  auto slot = rt.engine_slot(engine);
  if (!slot) return done(Error{ErrorCode::EngineDown, "engine '" + engine + "' is not registered any more"});
  BatchWork work;
  const uint32_t operands = static_cast<uint32_t>(inputs.size());
  const uint32_t results = static_cast<uint32_t>(plan->results.size());
  work.inputs = std::move(inputs);
  BatchOp op{std::move(plan), {}};
  for (uint32_t i = 0; i < operands; ++i) op.operands.push_back(BatchRef::input(i));
  work.ops.push_back(std::move(op));
  for (uint32_t r = 0; r < results; ++r) work.outputs.push_back(BatchRef::op(0, r));
  work.caller_may_run = rt.options.caller_runs_small_batches && !on_runtime_thread();
  auto tracked = rt.pending.track<std::vector<Tensor>>(std::move(done), "the eager op", rt.options.run_deadline);
  launch_direct(&rt, *slot, std::move(work), [](Result<std::vector<Tensor>> r) { return r; }, [] {},
                std::move(tracked));
}

}  // namespace

void Runtime::run_op(std::string family, std::string attributes_json, std::vector<Tensor> inputs,
                     std::string engine, ExecuteCallback done) {
  Impl& rt = *impl_;
  if (rt.closing) return done(rt.refusal("run_op"));
  // Named references, not a structured binding: the lambdas below capture
  // them, which clang 14 (the sanitizer builds' compiler) does not allow.
  const auto snapshot = rt.snapshot();
  const RuntimeConfigPtr& config = snapshot.config;
  const EngineLookup& engines = snapshot.engines;
  auto op = guarded("run_op", [&] { return eager_op(*config, std::move(family), attributes_json, inputs, engine); });
  if (!op.ok()) return done(op.error());
  auto answer = guarded("run_op", [&] {
    return prepare_extension_immediate(*config, engines, engine, op->attrs, op->results, op->descriptors);
  });
  // An input the engine cannot take as it is enters through the compiled
  // path's transfers, as an op the engine refuses goes where placement says.
  const bool fall_back = answer.ok() ? !std::holds_alternative<std::shared_ptr<const PreparedOp>>(*answer)
                                     : answer.error().code() == ErrorCode::NoInputIngress;
  if (!answer.ok() && !fall_back) return done(answer.error());
  if (!fall_back)
    return launch_eager(rt, engine, std::get<std::shared_ptr<const PreparedOp>>(std::move(*answer)),
                        std::move(inputs), std::move(done));
  auto program = guarded("run_op", [&] { return one_op_program(*op, extensions()); });
  if (!program.ok()) return done(program.error());
  // The named engine first, then the others in preference order: where it
  // refuses the op, placement may put it elsewhere.
  PrepareOptions options;
  options.placement.engines = {engine};
  for (const EngineEntry& e : config->engines())
    if (e.id() != engine) options.placement.engines.push_back(e.id());
  run(std::move(*program), std::move(inputs), std::move(options), std::move(done));
}

std::future<Result<std::vector<Tensor>>> Runtime::run_op(std::string family, std::string attributes_json,
                                                         std::vector<Tensor> inputs, std::string engine) {
  auto [callback, future] = future_callback<std::vector<Tensor>>();
  run_op(std::move(family), std::move(attributes_json), std::move(inputs), std::move(engine), std::move(callback));
  return std::move(future);
}

}  // namespace tenact
