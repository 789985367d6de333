#include "extensions/builtin_extensions.hpp"

namespace tenact {

ExtensionRegistry builtin_extension_registry() {
  ExtensionRegistry registry;
  for (const ExtensionFamilyPtr& family : builtin_extension_families()) registry.add(family->name, family->infer);
  return registry;
}

}  // namespace tenact
