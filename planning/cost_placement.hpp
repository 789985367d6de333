// Cost-aware placement: which candidate (engine, storage class) and which
// queue of it each staged instruction runs on, by earliest-finish-time list
// scheduling (HEFT's processor selection; StarPU's dmda does the same at
// run time):
//
//  1. each instruction's cost on each candidate is estimate_ns of the
//     candidate's cost model (engines/cost_model.hpp) at the instruction's
//     extents (slot_extents: exact and upper-bound extents evaluated at the
//     caller's signature, anything else 1);
//  2. instructions are taken in program order, a topological order and the
//     order in which an engine's queue runs the work it gets (the pipeline
//     sends a queue its units in program order): placed in another order,
//     as HEFT's upward rank would, a queue's estimates would not hold, and
//     ops a queue must run before others would wait for queues they were
//     not planned to wait for;
//  3. an instruction goes to the candidate, and there to the lane (queue),
//     where it finishes earliest: it starts when the lane is free and every
//     operand has arrived. An operand held where the candidate runs is
//     there when it was made; otherwise it is copied from the first place
//     holding it (where it was made, then earlier copies, in order) that
//     has a route to the candidate, at the route's estimate (a route
//     without one: free), as the schedule will copy it
//     (planning/schedule.hpp). A program input enters where its first
//     placed reader runs when that candidate accepts it (`accepts`), after
//     an upload along the route from host memory when there is one; an
//     input placed on an engine enters there. Candidates whose memory
//     (EngineCostModel::memory_bytes, counted as everything placed on the
//     engine, never freed: an over-estimate of the peak) would overflow are
//     passed over unless none is left. A candidate no operand can reach is
//     never chosen. Ties: fewer bytes moved, then the endpoint of the
//     instruction placed just before (before the first, where the first
//     placed input lives), then candidate order. A constant
//     is placed with its first reader, on its lane, at no cost (it is a
//     splat a region absorbs, or tiny); one nobody reads on its own. Among an
//     engine's lanes the one that leaves the least idle gap wins (the
//     latest one free by the time the operands are there, else the first
//     one free).
//
// HEFT's choice is greedy: an op may go to an idle device for a gain that
// the copies back to its readers then cost more than. So the placement is
// made over the first k resources of the candidate order (k = 1 .. all; a
// resource: the engines that share one, or one engine), each op keeping
// only candidates of those resources while it has any, and the placement
// whose end is estimated earliest wins (one that fits in memory before one
// that does not; ties: fewer resources). To compare
// them, each is estimated again with its picks and queues fixed and its
// fused regions costed as such: an elementwise op that reads the result of
// an elementwise op on the same candidate and queue, with the same result
// extents (every other operand of those extents or a scalar), on an engine
// that fuses, costs no launch of its own (the region runs as one kernel).
// (The choices themselves are made as if every op launched alone: made so,
// they spread work better.)
//
// Engines of one resource (EngineCostModel::resource) share its lanes and
// memory. An engine with lanes > 1 gets queue numbers 0 .. lanes - 1; with one
// lane its instructions go with kAnyQueue (the engine spreads them).
// Pure and deterministic; no engine is called. Cost:
// O(resources × instructions × candidates × (operands × places × routes + lanes)).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "core/endpoint.hpp"
#include "engines/cost_model.hpp"
#include "planning/exec_program.hpp"
#include "planning/runtime_config.hpp"
#include "planning/schedule.hpp"

namespace tenact {

/// One place an instruction may run.
struct PlacementCandidate {
  Endpoint endpoint;
  /// Its engine's cost model (a nominal one when the engine gives none).
  EngineCostModel cost;
  /// Lanes placement plans for: cost.lanes, at most the engine's queues
  /// (1 when it has fewer).
  uint32_t lanes = 1;
  /// Whether the engine runs elementwise regions as one fused kernel
  /// (EngineCapabilities::fused_elementwise_regions).
  bool fuses_elementwise = false;
};

struct CostPlacementProblem {
  const ExecProgram* staging = nullptr;
  /// Per slot, the extents to cost it at.
  std::span<const std::vector<int64_t>> slot_extents;
  std::span<const PlacementCandidate> candidates;
  /// Per instruction, indices into `candidates` (each list non-empty).
  std::function<std::span<const uint32_t>(size_t instruction)> candidates_of;
  /// Per program input, the endpoint it is placed at (engine empty: in host
  /// memory, free to enter anywhere that accepts it).
  std::span<const Endpoint> input_placements;
  /// Whether program input `i` may enter at `endpoint`.
  std::function<bool(size_t input, const Endpoint& endpoint)> accepts;
  const RuntimeConfig* config = nullptr;
};

struct CostPlacement {
  /// Per instruction, its index into candidates_of(instruction).
  std::vector<uint32_t> pick;
  /// Per instruction, its queue and estimates.
  std::vector<OpPlacement> placement;
  /// Per program input, where it enters (the endpoint its first placed
  /// reader runs at, or its placement; engine empty: read by no
  /// instruction).
  std::vector<Endpoint> input_entries;
  /// The estimated end of the last instruction.
  uint64_t est_makespan_ns = 0;
  /// Whether some instruction went where memory would overflow (no
  /// candidate of it had room).
  bool over_memory = false;
};

/// Earliest-finish-time placement (the file comment). nullopt when some
/// instruction has no candidate its operands can reach.
std::optional<CostPlacement> place_earliest_finish(const CostPlacementProblem& problem);

/// Instructions in program order dealt to their candidates in turn (the
/// k-th instruction to its candidate k mod n), every queue kAnyQueue,
/// estimated as above. nullopt as place_earliest_finish.
std::optional<CostPlacement> place_round_robin(const CostPlacementProblem& problem);

/// The model placement assumes for an engine that gives no estimates.
EngineCostModel nominal_cost_model();

}  // namespace tenact
