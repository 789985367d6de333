// Elementwise region planning: which instructions of a staged program run
// as one fused pass (one walk over cache-sized tiles, no full-size
// intermediates). Regions are planned once per prepared root and recorded
// there; an engine whose capabilities say fused_elementwise_regions runs
// each region as one pass, any other engine never sees one (regions are
// only formed on such engines).
//
// A region is a set of at least two elementwise compute instructions (or
// one that reads an absorbed broadcast, see below) that
//  - are bound to one endpoint (engine and storage class) whose engine can
//    fuse (`can_fuse`),
//  - all produce one result of one shape (equal dimension expressions,
//    every extent exact), every operand having that shape or rank 0,
//  - are convex in the dataflow graph: no path leaves the region and comes
//    back into it, so the region can run as one node after all its inputs
//    and before all its readers;
// plus the splat constants (Constant with `splat`, of the region's shape)
// that only region members read: inside the region they are rank-0 inputs,
// never materialized; and the broadcast_in_dim instructions to the
// region's shape that only region members read: the region reads their
// operand through a view (stride 0 along the broadcast axes), so the
// broadcast is never materialized either.
//
// Contract: pure and deterministic (equal inputs give equal regions, in
// ascending order of their first instruction); the result is immutable and
// safe to share across threads. Instructions not in any region run one by
// one. Cost: O(instructions × operands).
//
// Beyond each region being convex, the regions together are acyclic: the
// graph whose nodes are the regions and the remaining instructions (an
// edge wherever a node reads a slot another writes) has no cycle, so a
// dataflow scheduler may fire each region once all its inputs exist, and
// sequential_steps() orders them for a sequential executor. A region may
// interleave in program order with instructions outside it (an unrelated
// reduction between two members, say); program order alone is then not a
// valid order to run regions in.
//
// Planning rule (greedy, one walk in program order): regions are numbered
// as they are opened. An elementwise instruction joins the region that
// writes one of its operands when every other operand depends on no region
// numbered as high (so edges between regions only ever go from a lower to
// a higher number: no cycle); otherwise it joins the latest region of its
// endpoint and shape numbered above everything its operands depend on —
// only where the engine spreads the work over its queues itself (the
// instruction has no planned queue, kAnyQueue): an instruction placed on a
// queue of its own never joins an unrelated region, since the region would
// make its readers wait for the other members' inputs and take the
// parallelism the placement planned across queues; otherwise it opens a
// region. Regions left with fewer than two compute members are dropped,
// unless their one member reads a broadcast the region absorbs (below):
// one pass then replaces two. A splat constant is absorbed when it is
// read, on the region's endpoint, only by members of one region of its
// shape and is no program output — except that a region of rank > 0 keeps at least one
// full-shape input: when all its full-shape inputs would be absorbed
// splats, the first (lowest instruction) of them stays a normal
// instruction. A broadcast_in_dim is absorbed under the same conditions as
// a splat (its result of the region's shape, read on the region's endpoint
// only by one region's members, no program output), when it is also in no
// `after` constraint (neither ordered after another instruction nor named
// by one) and, where queues are planned, on the queue of the region's
// first compute member.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/shape.hpp"
#include "engines/engine.hpp"
#include "planning/exec_program.hpp"

namespace tenact {

struct ElementwiseRegion {
  /// Member instructions (compute ops and absorbed splat constants),
  /// ascending; program order is a valid order to evaluate them in.
  std::vector<uint32_t> instructions;
  /// Absorbed splat constants (a subset of `instructions`), ascending:
  /// their values enter the region as rank-0 scalars.
  std::vector<uint32_t> splat_constants;
  /// Absorbed broadcast_in_dim instructions (a subset of `instructions`),
  /// ascending: their operand (among `inputs`) enters the region as a view
  /// of the region's shape.
  std::vector<uint32_t> broadcasts;
  /// Slots the region reads that are written outside it (program inputs,
  /// results of earlier instructions), each once, in order of first read.
  std::vector<SlotId> inputs;
  /// Slots written inside the region that must be materialized: read by an
  /// instruction outside the region or a program output. Ascending.
  std::vector<SlotId> outputs;
  /// Where every member runs.
  Endpoint endpoint;
  /// The common result shape of the compute members.
  Shape shape;

  /// Number of compute members (neither splat constants nor broadcasts).
  size_t compute_ops() const { return instructions.size() - splat_constants.size() - broadcasts.size(); }
  friend bool operator==(const ElementwiseRegion&, const ElementwiseRegion&) = default;
};

/// Says whether the engine behind an endpoint runs fused regions (asked
/// once per distinct endpoint; an empty function fuses nowhere).
using CanFuseRegions = std::function<bool(const Endpoint&)>;

/// Plans the regions of `program`, whose instruction i runs at
/// `instruction_endpoints[i]`, on queue `instruction_queues[i]` (empty:
/// every instruction kAnyQueue). A region holds at most
/// `max_compute_members` compute instructions (0: no limit): an instruction
/// that would join a full region opens a new one instead. Errors: Internal
/// when a non-empty list does not have one entry per instruction.
Result<std::vector<ElementwiseRegion>> plan_elementwise_regions(
    const ExecProgram& program, std::span<const Endpoint> instruction_endpoints,
    const CanFuseRegions& can_fuse, std::span<const uint32_t> instruction_queues = {},
    uint32_t max_compute_members = 0);

/// For each instruction, the index of its region in `regions`, or -1.
std::vector<int32_t> region_of_instructions(size_t instruction_count,
                                            std::span<const ElementwiseRegion> regions);

/// "region 0: #2 multiply, #3 add, #4 tanh (+1 splat) (+1 broadcast) over f32[n, 4] at cpu/host":
/// the compute members in order, the numbers of absorbed splats and broadcasts, and the
/// region's shape with the dtype of its last compute member.
std::string describe_region(const ExecProgram& program, const ElementwiseRegion& region,
                            size_t index);

/// One step of a sequential run: a region, or an instruction in no region.
struct ExecStep {
  enum class Kind : uint8_t { Instruction, Region };
  Kind kind = Kind::Instruction;
  /// Index into program.instructions (Instruction) or into the regions.
  uint32_t index = 0;
  friend bool operator==(const ExecStep&, const ExecStep&) = default;
};

/// Every region and every instruction outside all regions, once each, in an
/// order that runs each after everything it reads: among the steps whose
/// inputs exist, the one with the lowest first instruction goes first (so
/// without regions this is program order). Precondition: `regions` were
/// planned for `program` (disjoint, acyclic). Cost: O(reads · log steps).
std::vector<ExecStep> sequential_steps(const ExecProgram& program,
                                       std::span<const ElementwiseRegion> regions);

}  // namespace tenact
