#include "engines/engine.hpp"

#include <algorithm>

namespace tenact {

bool EngineCapabilities::serves(OpFamily family) const {
  return std::find(op_families.begin(), op_families.end(), family) != op_families.end();
}

bool EngineCapabilities::has_extension(std::string_view family) const {
  return std::find(extension_families.begin(), extension_families.end(), family) !=
         extension_families.end();
}

std::shared_ptr<PreparedOp> PreparedOp::answering(const OpPrepareRequest& request) {
  auto op = std::make_shared<PreparedOp>();
  op->kind = request.kind;
  op->attrs = request.attrs;
  op->results = request.results;
  op->binding = request.binding;
  op->specialization = request.specialization;
  op->projection = request.projection;
  return op;
}

std::string OpBinding::to_string() const {
  return endpoint.to_string() + " (" + engine.hardware_class + ", registration " +
         std::to_string(engine.registration) + ", context " + std::to_string(engine.context) +
         ", runtime " + std::to_string(runtime_id) + ", epoch " + std::to_string(epoch) + ")";
}

}  // namespace tenact
