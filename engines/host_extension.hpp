// Extension ops on engines that run host kernels (the CPU engine, the
// simulated devices): preparing one through its family's prepare_host hook,
// and finding the prepared kernel again when the op runs.
//
// Thread-safety: pure functions; the plan is immutable once made.
#pragma once

#include "core/extension.hpp"
#include "engines/engine.hpp"

namespace tenact {

/// What answer_host_extension puts in a PreparedOp's payload.
struct HostExtensionPlan {
  ExtensionFamilyPtr family;
  HostExtensionKernel kernel;
};

/// What an engine with host_extension_kernels answers for an extension op:
/// Unsupported when the request is bound elsewhere, when the runtime gave
/// no family definition (a slot the engine does not implement itself) or
/// the family has no host kernel, or when the family's prepare_host says
/// Unsupported (its reason, naming the engine and family); the family's
/// other errors as they are, with the engine and family as context; else
/// the echoing plan (PreparedOp::answering) carrying a HostExtensionPlan.
PrepareAnswer answer_host_extension(const EngineIdentity& engine, const EngineCapabilities& capabilities,
                                    const OpPrepareRequest& request);

/// The plan answer_host_extension made for `op`, or nullptr when `op` is
/// not an extension op or has no payload. Only for ops the calling engine
/// prepared itself with answer_host_extension (the payload is taken to be
/// a HostExtensionPlan).
const HostExtensionPlan* host_extension_plan(const PreparedOp& op);

}  // namespace tenact
