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

}  // namespace tenact
