// Runtime::load_model: compile the plan against the current configuration,
// derive its execution, load it (actors/loaded_model.hpp).
#include "actors/loaded_model.hpp"
#include "actors/runtime_impl.hpp"
#include "core/model_weights.hpp"
#include "planning/model/model_execution.hpp"
#include "planning/model/model_plan.hpp"
#include "planning/model/provider_catalog.hpp"

namespace tenact {

Result<ModelPtr> Runtime::load_model(std::shared_ptr<const SemanticProgram> program,
                                     std::map<std::string, Tensor> weights, ModelOptions options) {
  Impl& rt = *impl_;
  if (!program) return Error{ErrorCode::InvalidAttribute, "load_model without a program"};
  if (rt.closing) return rt.refusal("load_model");
  if (on_runtime_thread())
    return Error{ErrorCode::Internal, "load_model waits for its uploads and so cannot run on a runtime thread "
                                      "(a callback): call it from a thread of your own"};
  // A weight the map leaves out comes with the program (inline data).
  for (const WeightInfo& w : program->weights())
    if (w.inline_data && !weights.count(program->value(w.value).name))
      weights.emplace(program->value(w.value).name, *w.inline_data);
  TENACT_TRY(check_weights(*program, weights));
  auto [config, engines] = rt.snapshot();
  TENACT_ASSIGN_OR_RETURN(auto catalog, ProviderCatalog::from_config(*config, options.placement));
  TENACT_ASSIGN_OR_RETURN(auto plan, compile_model_plan(program, catalog, options.compile));
  TENACT_ASSIGN_OR_RETURN(auto execution, derive_model_execution(std::move(plan)));
  ModelLoadContext context{rt.link, std::move(engines)};
  TENACT_ASSIGN_OR_RETURN(auto model, LoadedModel::load(*this, std::move(context), std::move(execution), weights, options));
  return ModelPtr{std::move(model)};
}

}  // namespace tenact
