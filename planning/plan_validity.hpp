// Whether a prepared program may still run under a runtime's current
// configuration. A plan is bound to the runtime that prepared it, to the
// registrations of the engines it uses and to the routes its transfers
// take; other changes of the configuration (another engine added or
// removed, an unrelated route, a new epoch for any reason) leave it valid,
// and it runs as prepared.
//
// Pure function of its arguments; thread-safe. Cost: O(1) when the
// configuration is the one the plan was prepared under (same epoch),
// otherwise O(engines used + transfers) lookups.
#pragma once

#include "core/error.hpp"
#include "planning/prepared_program.hpp"
#include "planning/runtime_config.hpp"

namespace tenact {

/// Ok when `program` may run under `config`. Errors (BindingMismatch, each
/// naming what moved): prepared by another runtime; an engine it uses no
/// longer registered, or registered again since (a new registration, other
/// capabilities or context); a route one of its transfers takes removed or
/// served by another provider.
Status check_plan_current(const PreparedProgram& program, const RuntimeConfig& config);

}  // namespace tenact
