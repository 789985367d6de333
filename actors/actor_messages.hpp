// The messages Tenact's actors exchange (CAF 0.17 atoms and in-process
// payload types). Heavy payloads travel as shared_ptr (never copied by
// CAF); they are in-process only (no caf::io serialization), which is why
// they are declared with CAF_ALLOW_UNSAFE_MESSAGE_TYPE.
//
// Include only from actors/*.cpp and CAF programs: it pulls in CAF.
#pragma once

#include <memory>

#include <caf/all.hpp>

#include "actors/job_types.hpp"

namespace tenact::msg {

/// facade -> cache actor: prepare one job (PrepareJobPtr).
using prepare_atom = caf::atom_constant<caf::atom("t_prepare")>;
/// planning thread -> cache actor: an entry was produced (ProductionPtr).
using produced_atom = caf::atom_constant<caf::atom("t_produced")>;
/// cache actor -> itself (deterministic scheduler only): produce now.
using produce_atom = caf::atom_constant<caf::atom("t_produce")>;
/// -> cache actor: reply CacheStatsPtr.
using stats_atom = caf::atom_constant<caf::atom("t_stats")>;
/// -> cache actor: drop every stored entry.
using clear_atom = caf::atom_constant<caf::atom("t_clear")>;
/// -> cache actor: entries of epochs before the given one are unreachable.
using epoch_atom = caf::atom_constant<caf::atom("t_epoch")>;
/// pipeline -> engine actor / transfer actor: run a batch (BatchJobPtr).
using launch_atom = caf::atom_constant<caf::atom("t_launch")>;
/// engine thread -> pipeline: a batch finished (BatchResultPtr).
using batch_done_atom = caf::atom_constant<caf::atom("t_bdone")>;
/// facade -> pipeline: start the run.
using start_atom = caf::atom_constant<caf::atom("t_start")>;

}  // namespace tenact::msg

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tenact::PrepareJobPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tenact::ProductionPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tenact::CacheStatsPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tenact::BatchJobPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tenact::BatchResultPtr)
