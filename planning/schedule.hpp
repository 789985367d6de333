// The scheduled graph: a staged program placed on endpoints, with a
// transfer node wherever a value must move to another endpoint, inserted
// only along registered routes. The pipeline
// walks it: a node may start once every node in its `dependencies` has
// finished; a node's `releases` say which value copies nobody reads after
// it, so they can be freed as soon as it has finished.
//
// Contract: build_schedule() is pure and deterministic; a ScheduledGraph
// is immutable once built and safe to share across threads. Cost:
// O(instructions × operands × locations + routes).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "engines/engine.hpp"
#include "planning/exec_program.hpp"
#include "planning/runtime_config.hpp"

namespace tenact {

/// Index into ScheduledGraph::locations.
using LocationId = uint32_t;

/// One copy of a value: a slot materialized at a location.
struct SlotCopy {
  SlotId slot = 0;
  LocationId location = 0;
  friend bool operator==(const SlotCopy&, const SlotCopy&) = default;
};

enum class ScheduledNodeKind : uint8_t { Instruction, Transfer };

struct ScheduledNode {
  ScheduledNodeKind kind = ScheduledNodeKind::Instruction;
  /// Instruction nodes: the instruction's index in ExecProgram::instructions.
  uint32_t instruction = 0;
  /// Where the node runs: the instruction's location, or for a transfer
  /// its destination.
  LocationId location = 0;
  /// Transfer nodes: the value moved, from where, and who moves it.
  SlotId slot = 0;
  LocationId source = 0;
  std::string provider;
  /// Nodes that must finish before this one starts, ascending, each once.
  std::vector<uint32_t> dependencies;
  /// Value copies whose last reader, in node order, is this node (not
  /// program outputs): free them once it has finished, when nodes finish
  /// in node order. An executor that lets independent nodes finish out of
  /// order must count readers instead (actors/pipeline/pipeline_run.hpp
  /// does).
  std::vector<SlotCopy> releases;

  bool is_transfer() const { return kind == ScheduledNodeKind::Transfer; }
  friend bool operator==(const ScheduledNode&, const ScheduledNode&) = default;
};

/// Why an instruction runs where it does, when placement was cost-aware
/// (planning/cost_placement.hpp): its queue and the estimates it was
/// chosen by. Times are nanoseconds from the run's start, estimated.
struct OpPlacement {
  /// The engine queue (stream) it is sent to; BatchWork::kAnyQueue: the
  /// engine chooses.
  uint32_t queue = BatchWork::kAnyQueue;
  uint64_t est_start_ns = 0;
  uint64_t est_finish_ns = 0;
  /// Bytes of its operands moved to reach it (uploads and copies).
  uint64_t transfer_bytes = 0;
  friend bool operator==(const OpPlacement&, const OpPlacement&) = default;
};

struct ScheduledGraph {
  /// Distinct endpoints, in order of first use (root first).
  std::vector<Endpoint> locations;
  LocationId root = 0;
  /// Where each program input enters, one per input.
  std::vector<LocationId> input_locations;
  /// Where each instruction runs, one per instruction.
  std::vector<LocationId> instruction_locations;
  /// In a topological order: every dependency precedes its dependents.
  /// Instruction nodes keep program order; a transfer precedes the first
  /// instruction that needs it.
  std::vector<ScheduledNode> nodes;
  /// Index of each instruction's node.
  std::vector<uint32_t> instruction_nodes;
  /// Where each program output is delivered (where it was produced, or
  /// where its input entered), one per output.
  std::vector<SlotCopy> outputs;
  /// One per instruction when placement was cost-aware or round-robin
  /// (then `placed_by` says which); empty under the preference search.
  std::vector<OpPlacement> placement;
  /// "earliest_finish", "round_robin" or "preference".
  std::string placed_by = "preference";

  size_t transfer_count() const;
  /// The queue instruction `i` is sent to (kAnyQueue without a placement).
  uint32_t queue_of(size_t instruction) const {
    return instruction < placement.size() ? placement[instruction].queue : BatchWork::kAnyQueue;
  }
  const Endpoint& endpoint(LocationId id) const { return locations[id]; }
  friend bool operator==(const ScheduledGraph&, const ScheduledGraph&) = default;
};

/// Places `program` with its inputs at `input_endpoints` and instruction i
/// at `instruction_endpoints[i]`, `root` being the program's primary
/// placement. A value read at an endpoint where it is not yet available
/// is moved there by a transfer node from the first location holding it
/// (in order of availability: where it was produced, then earlier
/// transfer destinations) that has a registered route in `config`; each
/// value moves to an endpoint at most once. An instruction's `after` list
/// adds the nodes of those instructions to its dependencies.
/// Errors: MissingTransferProvider naming the instruction, the slot, the
/// destination and the endpoints the value was available at; Internal for
/// lists of the wrong length.
Result<ScheduledGraph> build_schedule(const ExecProgram& program, const Endpoint& root,
                                      std::span<const Endpoint> input_endpoints,
                                      std::span<const Endpoint> instruction_endpoints,
                                      const RuntimeConfig& config);

/// One line per node: "#3 add at cpu/host after [1, 2]",
/// "transfer slot 2 ('h') cpu/host -> sim:0/device via sim_link".
std::string describe_schedule(const ExecProgram& program, const ScheduledGraph& graph);

}  // namespace tenact
