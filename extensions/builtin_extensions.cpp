// PLACEHOLDER (being written): the built-in module's families.
#include "extensions/builtin_extensions.hpp"

namespace tenact {

const std::vector<ExtensionFamilyPtr>& builtin_extension_families() {
  static const std::vector<ExtensionFamilyPtr> families;
  return families;
}

}  // namespace tenact
