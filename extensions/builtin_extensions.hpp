// The built-in extension module `tenact` (docs/program-format.md, "The
// built-in module"): tenact.softmax, tenact.log_softmax, tenact.layer_norm,
// tenact.rms_norm and tenact.gelu, each with its result inference and a
// vectorized host kernel (the CPU engine's; the simulated devices run it
// too). Register them with a Runtime through register_builtin_extensions
// (actors/runtime.hpp) or RuntimeOptions::builtin_extensions.
//
// Thread-safety: the families are immutable; their hooks and kernels are
// pure and safe from many threads at once.
#pragma once

#include <vector>

#include "core/extension.hpp"

namespace tenact {

/// The five families of the module, in the order the format lists them.
/// Cheap: the definitions are made once per process and shared.
const std::vector<ExtensionFamilyPtr>& builtin_extension_families();

/// A registry of the module's families, to validate programs that use them
/// without a Runtime (`tenact check`): load_program(text, registry).
ExtensionRegistry builtin_extension_registry();

}  // namespace tenact
