// A model plan for people and tools: `tenact plan` prints it.
//
// Text: value tensors (name, role, tensor), node resolutions (op, provider,
// engine, why), weight components, storage resources (id, kind, endpoint,
// bytes, what it holds), each value's place (resource, offset, bytes, or
// why it is not packed), arenas, and the activation totals: peak live,
// planned (arenas + unpacked) and total without reuse.
// JSON: the same facts as one object (keys documented in the .cpp).
//
// Pure and thread-safe.
#pragma once

#include <string>

#include "planning/model/model_plan.hpp"

namespace tenact {

std::string describe_model_plan(const ModelPlan& plan);
std::string model_plan_json(const ModelPlan& plan);

}  // namespace tenact
