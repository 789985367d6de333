// The message catalogue: every message Tenact's internal actors exchange,
// and each actor's typed interface (CAF 0.17 atoms and in-process payload
// types). Sending a message an actor does not accept is a compile error.
// Heavy payloads travel as shared_ptr (never copied by CAF); they are
// in-process only (no caf::io serialization), which is why they are
// declared with CAF_ALLOW_UNSAFE_MESSAGE_TYPE. The public, CAF-native
// gateway interface is in runtime_caf.hpp.
//
// Include only from actors/*.cpp and CAF programs: it pulls in CAF.
#pragma once

#include <cstdint>
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
/// facade -> cache actor: drop every stored entry (and the memo's entries
/// of generations before the given one).
using clear_atom = caf::atom_constant<caf::atom("t_clear")>;
/// -> cache actor: entries of epochs before the given one are unreachable.
using epoch_atom = caf::atom_constant<caf::atom("t_epoch")>;
/// pipeline -> cache actor: keep this plan a run had to build (PipelinePlanPtr).
using plan_atom = caf::atom_constant<caf::atom("t_plan")>;
/// pipeline (facade for Runtime::copy) -> engine actor / transfer actor:
/// run a batch (BatchJobPtr).
using launch_atom = caf::atom_constant<caf::atom("t_launch")>;
/// engine thread -> pipeline: a batch finished (BatchResultPtr).
using batch_done_atom = caf::atom_constant<caf::atom("t_bdone")>;
/// facade -> pipeline: start the run.
using start_atom = caf::atom_constant<caf::atom("t_start")>;
/// facade -> transfer actor: change the registry (RegistryChangePtr).
using registry_atom = caf::atom_constant<caf::atom("t_registry")>;
/// deadline ticker -> itself: fail the requests past their deadline.
using tick_atom = caf::atom_constant<caf::atom("t_tick")>;
/// runtime -> ticker, delayed: start what DelayedStarts holds under the id.
using start_later_atom = caf::atom_constant<caf::atom("t_later")>;

}  // namespace tenact::msg

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tenact::PrepareJobPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tenact::ProductionPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tenact::CacheStatsPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tenact::PipelinePlanPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tenact::BatchJobPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tenact::BatchResultPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tenact::RegistryChangePtr)

namespace tenact {

/// The prepare cache: owns the store of prepared entries, the request memo
/// and the plan cache (the facade and pipelines only read the last two);
/// requests for one key meet in its mailbox and are produced once (on the
/// planning threads).
using cache_actor_type = caf::typed_actor<caf::reacts_to<msg::prepare_atom, PrepareJobPtr>,
                                          caf::reacts_to<msg::produced_atom, ProductionPtr>,
                                          caf::reacts_to<msg::produce_atom, ProductionPtr>,
                                          caf::replies_to<msg::stats_atom>::with<CacheStatsPtr>,
                                          caf::reacts_to<msg::clear_atom, uint64_t>,
                                          caf::reacts_to<msg::epoch_atom, uint64_t>,
                                          caf::reacts_to<msg::plan_atom, PipelinePlanPtr>>;

/// One per engine: hands batches to its engine's own threads or streams.
using engine_actor_type = caf::typed_actor<caf::reacts_to<msg::launch_atom, BatchJobPtr>>;

/// The transfer registry: owns the transfer providers, decides route
/// changes (publishing each as a new configuration epoch), and runs copies
/// behind their events.
using transfer_actor_type = caf::typed_actor<caf::reacts_to<msg::launch_atom, BatchJobPtr>,
                                             caf::reacts_to<msg::registry_atom, RegistryChangePtr>>;

/// One per run of a prepared program.
using pipeline_actor_type = caf::typed_actor<caf::reacts_to<msg::start_atom>,
                                             caf::reacts_to<msg::batch_done_atom, BatchResultPtr>>;

/// Fails requests past their deadline, one tick at a time; starts work
/// held in the runtime's DelayedStarts when its delayed message arrives.
using ticker_actor_type =
    caf::typed_actor<caf::reacts_to<msg::tick_atom>, caf::reacts_to<msg::start_later_atom, uint64_t>>;

}  // namespace tenact
