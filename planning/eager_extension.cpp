#include "planning/eager_extension.hpp"

#include "planning/preparation_context.hpp"

namespace tenact {

namespace {

bool has_ingress(const EngineEntry& engine, const InputDescriptor& input) {
  for (const std::string& cls : engine.capabilities.storage_classes)
    if (accepts_input(engine, cls, input)) return true;
  return false;
}

ValueType exact_type(const InputDescriptor& input) {
  Shape shape;
  for (int64_t d : input.shape) shape.push_back(ShapeExtent::exact(DimExpr::constant(d)));
  return ValueType{input.dtype, std::move(shape)};
}

}  // namespace

Result<PrepareAnswer> prepare_extension_immediate(const RuntimeConfig& config,
                                                  const EngineLookup& engines,
                                                  std::string_view engine_id,
                                                  const ExtensionAttrs& op,
                                                  const std::vector<ValueType>& results,
                                                  std::span<const InputDescriptor> inputs) {
  const std::string id{engine_id};
  const EngineEntry* engine = config.find_engine(engine_id);
  if (!engine)
    return PrepareAnswer{Unsupported{"engine '" + id + "' is not registered (extension family '" +
                                     op.family + "')"}};
  if (!engine->capabilities.executable)
    return PrepareAnswer{Unsupported{"engine '" + id + "' is preparation-only (extension family '" +
                                     op.family + "')"}};
  if (!engine->extension_slot(op.family))
    return PrepareAnswer{Unsupported{"engine '" + id + "' has no slot for extension family '" +
                                     op.family + "'"}};
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!has_ingress(*engine, inputs[i]))
      return Error{ErrorCode::NoInputIngress,
                   "input " + std::to_string(i) + ", placed at " +
                       (inputs[i].placement.engine.empty() ? std::string{"no particular endpoint"}
                                                           : inputs[i].placement.to_string()) +
                       ", has no ingress into engine '" + id + "' for extension family '" +
                       op.family + "'"};
  OpPrepareRequest request;
  request.op_index = 0;
  request.kind = OpKind::Extension;
  request.attrs = op;
  for (const InputDescriptor& in : inputs) request.operands.push_back(exact_type(in));
  request.results = results;
  request.binding = binding_for(config, *engine, engine->capabilities.default_storage_class);
  request.specialization.inputs = std::vector<InputRequirement>(inputs.size());
  request.projection.inputs = std::vector<InputProjection>(inputs.size());
  attach_extension_slot(config, request);
  const std::string who = "engine '" + id + "' preparing extension '" + op.family + "' eagerly";
  std::shared_ptr<Engine> object = engines ? engines(engine_id) : nullptr;
  if (!object) return Error{ErrorCode::EngineDown, who + ": the engine is not available"};
  PrepareAnswer answer = object->prepare(request);
  if (auto* error = std::get_if<Error>(&answer)) return error->with_context(who);
  if (auto* plan = std::get_if<std::shared_ptr<const PreparedOp>>(&answer)) {
    if (!*plan) return Error{ErrorCode::ProviderContract, who + ": returned an empty plan"};
    TENACT_TRY(validate_prepared_op(**plan, request, who));
  }
  return answer;
}

}  // namespace tenact
