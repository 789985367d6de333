// The state of one execution of a prepared program, without CAF: the
// pipeline actor owns a PipelineRun and drives it; engines and the transfer
// actor do the work. DESIGN.md, "The flow of one request", step 5.
//
// Units. The schedule's nodes are grouped into units of work, each at one
// location: an instruction node; a transfer node; or an elementwise region
// (all its member instruction nodes, absorbed splat constants included,
// run by the engine as one fused pass). A unit depends on the units of its
// nodes' dependencies (internal ones excluded). Units are numbered in a
// topological order (among the units whose dependencies come first, the one
// with the lowest first node), so ascending unit order respects
// dependencies.
//
// Values. A value copy (slot at a location) is held from when its producer
// reports it (or from start() for a program input) until its last reading
// unit has finished, then dropped: a copy is released once every unit
// reading it is done, however the units interleave (a reference count of
// reading units per copy). In a sequential run in node order this frees
// exactly the copies the schedule's `releases` name, at the same nodes;
// unlike those it stays correct when units finish out of node order.
// Program outputs are held until take_outputs(); a copy nobody reads that
// is no output is never held.
//
// Failure. The first error wins; afterwards nothing more starts
// (take_ready returns nothing), every held tensor is dropped, and the run
// is finished once the units in flight have reported (done or failed).
//
// Contract: PipelinePlan is immutable once built and may be shared between
// runs and threads (build it once per prepared program). PipelineRun is
// not thread-safe: one owner calls it from one thread. Costs: building a
// plan is O(nodes + dependencies + operands + locations per slot); per
// unit, take_ready/unit_done are O(inputs + outputs + dependents) with no
// maps or strings (strings are made only when a unit fails).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/tensor.hpp"
#include "engines/engine.hpp"
#include "planning/prepared_program.hpp"
#include "planning/schedule.hpp"

namespace tenact {

class InlineBatch;

enum class PipelineUnitKind : uint8_t { Instruction, Transfer, Region };

/// Index of a value copy within a plan (dense, one per slot copy).
using CopyId = uint32_t;

struct PipelineUnit {
  PipelineUnitKind kind = PipelineUnitKind::Instruction;
  /// Where it runs (a transfer: its destination).
  LocationId location = 0;
  /// The engine queue it is sent to (its first instruction's, from the
  /// schedule's placement; kAnyQueue for a transfer or without one).
  uint32_t queue = BatchWork::kAnyQueue;
  /// Its (location, queue) pair, numbered per plan: compute units of one
  /// lane may share a batch, units of different lanes never do.
  uint32_t lane = 0;
  /// Instruction: its index in ExecProgram::instructions. Region: its index
  /// in PreparedRoot::regions. Transfer: its node index.
  uint32_t index = 0;
  /// Its scheduled nodes, ascending.
  std::vector<uint32_t> nodes;
  /// Instruction: the one instruction. Region: every member (compute ops
  /// and absorbed splat constants), ascending (program order is a valid
  /// order to evaluate them in). Transfer: none.
  std::vector<uint32_t> instructions;
  /// The prepared op of each of `instructions` (PreparedProgram::ops of its
  /// semantic op), parallel to it.
  std::vector<std::shared_ptr<const PreparedOp>> ops;
  /// Units that must be done before it starts, ascending, each once; all
  /// lower than this unit.
  std::vector<uint32_t> dependencies;
  /// Units that list this one among their dependencies, ascending.
  std::vector<uint32_t> dependents;
  /// Compute units: whether a dependent runs in another lane (another
  /// queue or location, or it is a transfer). Enqueued behind events, such
  /// a dependent waits on the signal of the batch this unit is in, so that
  /// batch ends with it. Transfers (a batch each): false.
  bool feeds_other_lane = false;
  /// The copies it reads from outside the unit, in a fixed order.
  /// Instruction: one per operand, in operand order (a slot read twice
  /// appears twice). Region: the region's `inputs` (each once, order of
  /// first read). Transfer: the moved slot at its source.
  std::vector<SlotCopy> inputs;
  /// Region units: the memo every batch of this region gets
  /// (BatchRegion::memo), where the engine keeps what it compiled for it.
  std::shared_ptr<RegionMemo> region_memo;
  /// The copies it materializes, in the order unit_done takes them.
  /// Instruction: its results. Region: the region's `outputs`. Transfer:
  /// the moved slot at its destination.
  std::vector<SlotCopy> outputs;
  /// Transfer only: the moved slot, where it comes from, who moves it.
  SlotId slot = 0;
  LocationId source = 0;
  std::string provider;

  /// Copy ids parallel to `inputs` and `outputs`; `reads` is the distinct
  /// copies of `inputs` (what the unit releases when done).
  std::vector<CopyId> input_copies;
  std::vector<CopyId> output_copies;
  std::vector<CopyId> reads;
};

/// Units of a prepared program and the value copies they pass; built once
/// per prepared program, shared by its runs.
class PipelinePlan {
 public:
  /// Errors: Internal when the program is inconsistent (missing root,
  /// staging or schedule; an op count that does not match; a read of a
  /// copy nobody makes; a dependency cycle between units).
  static Result<std::shared_ptr<const PipelinePlan>> build(
      std::shared_ptr<const PreparedProgram> program);

  const PreparedProgram& program() const { return *program_; }
  const std::shared_ptr<const PreparedProgram>& program_ptr() const { return program_; }
  const ExecProgram& staging() const { return *program_->root->staging; }
  const ScheduledGraph& schedule() const { return *program_->root->schedule; }

  size_t unit_count() const { return units_.size(); }
  const PipelineUnit& unit(uint32_t u) const { return units_[u]; }
  std::span<const PipelineUnit> units() const { return units_; }
  /// The unit a scheduled node belongs to.
  uint32_t unit_of_node(uint32_t node) const { return unit_of_node_[node]; }
  const Endpoint& endpoint(LocationId location) const { return schedule().endpoint(location); }

  /// Distinct (location, queue) pairs of the units.
  uint32_t lane_count() const { return lane_count_; }
  /// Whether the whole plan is compute units of one lane (one location
  /// and queue, no transfers): it then runs as one batch.
  bool single_lane() const;

  size_t copy_count() const { return copies_.size(); }
  const SlotCopy& copy(CopyId c) const { return copies_[c]; }
  /// The copy of `slot` at `location`, or nullopt when none is made.
  std::optional<CopyId> find_copy(SlotCopy copy) const;
  /// Number of units reading copy `c`.
  uint32_t reader_count(CopyId c) const { return readers_[c]; }
  /// Whether copy `c` is delivered as a program output.
  bool is_output(CopyId c) const { return is_output_[c] != 0; }
  /// Copy ids of the program inputs (in program order) and outputs (in
  /// program order, repeats kept).
  std::span<const CopyId> input_copies() const { return input_copies_; }
  std::span<const CopyId> output_copies() const { return output_copies_; }

  /// How errors name a unit: "op #3 (add -> 'z') at cpu/host",
  /// "transfer of slot 2 ('h') cpu/host -> sim:0/device",
  /// "region 0 (#2 multiply, #3 add over f32[4] at cpu/host)".
  std::string describe_unit(uint32_t u) const;

  /// `plan` as one batch run on a client's thread (InlineBatch), built by
  /// the first call with that run's inputs and kept: null when the plan is
  /// not one batch of compute units on one lane. Thread-safe; after the
  /// first call it costs one load.
  static std::shared_ptr<const InlineBatch> inline_batch(const std::shared_ptr<const PipelinePlan>& plan,
                                                         std::span<const Tensor> inputs);

 private:
  struct InlineCache {
    std::once_flag once;
    std::shared_ptr<const InlineBatch> batch;
  };
  std::shared_ptr<const PreparedProgram> program_;
  /// Filled once by inline_batch() (a pointer, so that the plan stays
  /// movable while it is built).
  std::unique_ptr<InlineCache> inline_cache_ = std::make_unique<InlineCache>();
  std::vector<PipelineUnit> units_;
  std::vector<uint32_t> unit_of_node_;
  std::vector<SlotCopy> copies_;
  /// Per slot, its copies: [copy_begin_[s], copy_begin_[s + 1]) into
  /// copies_by_slot_.
  std::vector<uint32_t> copy_begin_;
  std::vector<CopyId> copies_by_slot_;
  std::vector<uint32_t> readers_;
  std::vector<uint8_t> is_output_;
  std::vector<CopyId> input_copies_;
  std::vector<CopyId> output_copies_;
  uint32_t lane_count_ = 0;

  friend class PipelinePlanBuilder;
};

/// Ready units at one location, in an order that respects dependencies
/// (ascending unit order). Compute units (instructions, regions) of one
/// lane (location and queue) share a batch; a transfer is a batch of its own (the transfer
/// actor runs it, not the engine).
struct PipelineBatch {
  LocationId location = 0;
  std::vector<uint32_t> units;
  /// The queue its units go to (BatchWork::queue).
  uint32_t queue = BatchWork::kAnyQueue;
};

class PipelineRun {
 public:
  enum class UnitState : uint8_t { Waiting, Ready, Started, Done };

  /// Starts a run: builds the plan, then as start(plan, inputs).
  static Result<PipelineRun> start(std::shared_ptr<const PreparedProgram> program,
                                   std::vector<Tensor> inputs);
  /// `inputs` in program order, already checked against the prepared
  /// signature by the caller; only their count (and each dtype and rank)
  /// is checked here. Errors: InputMismatch.
  static Result<PipelineRun> start(std::shared_ptr<const PipelinePlan> plan,
                                   std::vector<Tensor> inputs);

  const PipelinePlan& plan() const { return *plan_; }
  /// Where the run's op results go (BatchOp::destinations), set before the
  /// first batch is built; null: nowhere in particular. Dropped by
  /// take_outputs (the run is over then).
  void set_destinations(PlannedDestinationsPtr destinations) { destinations_ = std::move(destinations); }
  const PlannedDestinationsPtr& destinations() const { return destinations_; }
  const std::shared_ptr<const PipelinePlan>& plan_ptr() const { return plan_; }
  size_t unit_count() const { return plan_->unit_count(); }
  const PipelineUnit& unit(uint32_t u) const { return plan_->unit(u); }
  UnitState state(uint32_t u) const { return state_[u]; }

  // -- handing out work ----------------------------------------------------------

  /// Units whose dependencies are all done and that have not started, in
  /// ascending order, now marked started. Empty after a failure.
  std::vector<uint32_t> take_ready();
  /// The ready units grouped into batches (ordered by their first unit),
  /// each greedily extended by not-started units of its lane whose
  /// every dependency not yet done is inside the batch (a chain on one
  /// engine becomes one batch). A batch never waits on anything outside it
  /// that is not done. Every unit in a batch is now started. Empty after a
  /// failure.
  std::vector<PipelineBatch> take_ready_batches();

  /// Every unit not started yet, now started, grouped into batches for
  /// enqueueing behind events: batch k may read what batches before it
  /// make (they are enqueued first) but nothing of a later one. A compute
  /// unit joins the latest batch of its lane when every dependency not
  /// done is in that batch or an earlier one, and that batch is still
  /// open; a batch closes after a unit that feeds another lane
  /// (PipelineUnit::feeds_other_lane), so work on other queues waits for
  /// that unit, not for whatever its queue does after it. A transfer is a
  /// batch of its own. Batches come in an order that respects dependencies; the units of
  /// each ascending. Inputs from other batches are not held yet: see
  /// holds(). Empty after a failure.
  std::vector<PipelineBatch> take_all_batches();

  /// The tensors of `unit`'s input copies (PipelineUnit::inputs order).
  /// Valid for a started unit whose inputs are all held: a unit taken by
  /// take_ready, or the first of a batch; an input produced inside its
  /// batch comes back empty (use batch_inputs). Empty tensors after a
  /// failure.
  std::vector<Tensor> unit_inputs(uint32_t unit) const;

  // -- reports -----------------------------------------------------------------

  /// Stores `outputs` (PipelineUnit::outputs order), releases the copies
  /// the unit was the last to read, and makes dependents whose
  /// dependencies are now all done ready. After a failure the outputs are
  /// dropped. Errors (the run is left unchanged; the caller should then
  /// fail() the unit): Internal for a unit out of range, not started or
  /// already done, a wrong number of outputs, or an output whose dtype or
  /// rank differs from its slot's.
  Status unit_done(uint32_t unit, std::vector<Tensor> outputs);
  /// Records `error` with the unit named as context unless an error is
  /// already recorded (the first wins), marks the unit finished when it
  /// was in flight, and cancels the run (nothing more starts, every held
  /// tensor is dropped).
  void fail(uint32_t unit, Error error);

  // -- batches -----------------------------------------------------------------

  /// Copies the units of `batch` read that none of them makes, each once,
  /// in order of first read (unit order, then input order): what the batch
  /// needs from outside. Held for a batch from take_ready_batches.
  std::vector<SlotCopy> batch_input_copies(std::span<const uint32_t> batch) const;
  std::vector<Tensor> batch_inputs(std::span<const uint32_t> batch) const;
  /// The same copies as ids (batch_input_copies' order).
  std::vector<CopyId> batch_input_ids(std::span<const uint32_t> batch) const;
  /// Whether copy `c`'s tensor is held now.
  bool holds(CopyId c) const { return c < holding_.size() && holding_[c] != 0; }
  const Tensor& held(CopyId c) const { return held_[c]; }
  /// Copies the units of `batch` make that are needed after it (read by a
  /// unit outside the batch, or a program output), in unit order, then
  /// output order. Copies read only inside the batch need not come back.
  std::vector<SlotCopy> batch_output_copies(std::span<const uint32_t> batch) const;
  /// The same copies as ids (batch_output_copies' order).
  std::vector<CopyId> batch_output_ids(std::span<const uint32_t> batch) const;
  /// Every unit of `batch` done at once: `outputs` parallel to
  /// batch_output_copies(batch). Errors as unit_done (Internal; the run is
  /// left unchanged).
  Status batch_done(std::span<const uint32_t> batch, std::vector<Tensor> outputs);
  /// fail() for a batch: every unit of it in flight is finished; the error
  /// names the batch ("batch of 3 units at cpu/host, op #0 (...) to op #2
  /// (...)"; a batch of one names its unit).
  void fail_batch(std::span<const uint32_t> batch, Error error);

  // -- the end -----------------------------------------------------------------

  /// Units started and not yet reported.
  size_t in_flight() const { return in_flight_; }
  /// Every unit done, or failed with none in flight.
  bool finished() const { return error_ ? in_flight_ == 0 : done_count_ == unit_count(); }
  bool failed() const { return error_.has_value(); }
  const std::optional<Error>& error() const { return error_; }
  /// The program outputs in program order (a repeated output is the same
  /// tensor twice; a passed-through input is the caller's tensor), once the
  /// run is finished; releases everything held. Errors: the run's error;
  /// Internal before the run is finished or when taken twice.
  Result<std::vector<Tensor>> take_outputs();

  // -- accounting ----------------------------------------------------------------

  /// Logical bytes (elements × element size) of the copies held now, and
  /// the most held at once (counted after a unit's outputs are stored and
  /// before its inputs are released).
  uint64_t live_bytes() const { return live_bytes_; }
  uint64_t peak_bytes() const { return peak_bytes_; }
  /// Copies held now.
  size_t held_copies() const { return held_count_; }

 private:
  explicit PipelineRun(std::shared_ptr<const PipelinePlan> plan);

  void hold(CopyId c, Tensor tensor);
  void drop(CopyId c);
  void release_reads(const PipelineUnit& unit);
  void finish_unit(uint32_t u);
  void cancel();
  void record_error(Error error);
  Status check_in_flight(uint32_t u, std::string_view what) const;
  /// `unit`: who reported it, for the message (UINT32_MAX: a batch).
  Status check_output(SlotId slot, const Tensor& tensor, uint32_t unit) const;
  /// Two fresh stamps for copy_stamp_; returns the first (the second is
  /// one more).
  uint32_t stamp_copies() const;

  std::shared_ptr<const PipelinePlan> plan_;
  PlannedDestinationsPtr destinations_;
  std::vector<UnitState> state_;
  /// Per unit: dependencies not yet done.
  std::vector<uint32_t> unmet_;
  /// Ready units not yet taken, in the order they became ready.
  std::vector<uint32_t> ready_;
  /// Per copy: the tensor held (when holding_), its logical bytes, and the
  /// reading units not yet done.
  std::vector<Tensor> held_;
  std::vector<uint64_t> held_bytes_;
  std::vector<uint8_t> holding_;
  std::vector<uint32_t> readers_left_;
  size_t held_count_ = 0;
  size_t in_flight_ = 0;
  size_t done_count_ = 0;
  uint64_t live_bytes_ = 0;
  uint64_t peak_bytes_ = 0;
  std::optional<Error> error_;
  bool outputs_taken_ = false;
  // Scratch reused between calls, never cleared: an entry is valid where
  // its stamp equals the current call's (stamp_ only grows).
  mutable uint32_t stamp_ = 0;
  std::vector<uint32_t> unit_stamp_;
  std::vector<uint32_t> pending_;
  mutable std::vector<uint32_t> copy_stamp_;
  mutable std::vector<uint32_t> copy_scratch_;
};

/// "instruction", "transfer", "region".
std::string_view to_string(PipelineUnitKind kind) noexcept;

}  // namespace tenact
