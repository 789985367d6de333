#include "planning/plan_validity.hpp"

namespace tenact {

Status check_plan_current(const PreparedProgram& program, const RuntimeConfig& config) {
  if (!program.root || !program.root->identity || !program.root->schedule)
    return Error{ErrorCode::InvalidAttribute, "the prepared program has no root"};
  const RootIdentity& id = *program.root->identity;
  const std::string what = "the plan of program '" + id.program->name() + "'";
  if (id.runtime_id != config.runtime_id())
    return Error{ErrorCode::BindingMismatch, what + " was prepared by runtime " + std::to_string(id.runtime_id) +
                                                 ", not by this one (runtime " + std::to_string(config.runtime_id()) +
                                                 "): prepare it here"};
  if (id.epoch == config.epoch()) return ok_status();
  const std::string since = " since it was prepared (epoch " + std::to_string(id.epoch) + ", now " +
                            std::to_string(config.epoch()) + "): prepare it again";
  for (const EngineIdentity& used : id.engines) {
    const EngineEntry* now = config.find_engine(used.id);
    if (!now) return Error{ErrorCode::BindingMismatch, what + " uses engine '" + used.id + "', which was removed" + since};
    if (!(now->identity == used))
      return Error{ErrorCode::BindingMismatch, what + " uses engine '" + used.id + "' of registration " +
                                                   std::to_string(used.registration) + ", which was registered again (registration " +
                                                   std::to_string(now->identity.registration) + ")" + since};
  }
  const ScheduledGraph& graph = *program.root->schedule;
  for (const ScheduledNode& node : graph.nodes) {
    if (!node.is_transfer()) continue;
    const Endpoint& from = graph.endpoint(node.source);
    const Endpoint& to = graph.endpoint(node.location);
    const TransferRoute* route = config.find_route(from, to);
    if (!route || route->provider != node.provider)
      return Error{ErrorCode::BindingMismatch,
                   what + " moves values from " + from.to_string() + " to " + to.to_string() + " via " + node.provider +
                       ", a route that was " + (route ? "given to provider '" + route->provider + "'" : std::string{"removed"}) +
                       since};
  }
  return ok_status();
}

}  // namespace tenact
