// The CAF-native interface of a Runtime, for programs that are themselves
// CAF actors: a typed gateway actor living in the runtime's actor system.
// Requests are messages, replies come back as responses (no blocking, no
// futures): `request(gateway, timeout, run_atom::value, request).then(...)`.
//
// Payloads are in-process only (shared_ptr, CAF_ALLOW_UNSAFE_MESSAGE_TYPE).
// Include from CAF code only (pulls in CAF).
#pragma once

#include <memory>
#include <vector>

#include <caf/all.hpp>

#include "actors/runtime.hpp"

namespace tenact {

struct RunRequest {
  std::shared_ptr<const SemanticProgram> program;
  std::vector<Tensor> inputs;
  PrepareOptions options;
};
using RunRequestPtr = std::shared_ptr<const RunRequest>;
using RunResultPtr = std::shared_ptr<const Result<std::vector<Tensor>>>;
using CacheStatsReply = std::shared_ptr<const CacheStats>;

namespace msg {
/// -> gateway: prepare (through the cache) and execute; replies RunResultPtr.
using run_atom = caf::atom_constant<caf::atom("t_run")>;
/// -> gateway: the prepare cache's counters; replies CacheStatsReply.
using cache_stats_atom = caf::atom_constant<caf::atom("t_cstats")>;
/// runtime thread -> gateway: a run finished (internal).
using run_done_atom = caf::atom_constant<caf::atom("t_rundone")>;
}  // namespace msg

using runtime_gateway = caf::typed_actor<
    caf::replies_to<msg::run_atom, RunRequestPtr>::with<RunResultPtr>,
    caf::replies_to<msg::cache_stats_atom>::with<CacheStatsReply>,
    caf::reacts_to<msg::run_done_atom, uint64_t, RunResultPtr>>;

/// The runtime's gateway (one per runtime, spawned with it).
runtime_gateway gateway_of(Runtime& runtime);
/// The runtime's actor system, to spawn client actors in.
caf::actor_system& actor_system_of(Runtime& runtime);

/// With RuntimeOptions::deterministic_scheduler: runs every pending actor
/// job on the calling thread, in order, until none is left; returns how
/// many ran. (Otherwise: 0, nothing happens.) The calling thread counts as
/// a runtime thread meanwhile (runtime_threads.hpp): runs the handlers
/// start never run inline on it.
size_t drive_scheduler(caf::actor_system& system);

}  // namespace tenact

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tenact::RunRequestPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tenact::RunResultPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tenact::CacheStatsReply)
