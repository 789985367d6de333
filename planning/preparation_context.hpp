// The preparation context: which
// engine and storage class runs each op, where each input enters, and the
// scheduled graph with its transfers — everything a prepared program's
// root depends on, decided before any engine is asked to prepare an op.
//
// Order of the search:
//  1. candidates: the engines the placement constraint allows (all when
//     it names none), in preference order; then only the executable ones
//     (none left: NoExecutableEngine naming a preparation-only engine that
//     could have served an op, else NoEligibleEngine);
//  2. the program is staged; with pins (PrepareOptions::pins) every op is
//     placed where its pin says, on its queue, the pins' order edges become
//     instruction dependencies (with_order), and steps 2b-5 do not run;
//  2b. when the policy places by cost (PrepareOptions::policy: Auto with
//     estimates from every candidate, EarliestFinish or RoundRobin), the
//     placement of planning/cost_placement.hpp over the candidates of the
//     storage constraint (without one: every class of every candidate) is
//     built like any selection, its inputs entering where the estimates
//     put them; its queues and estimates are the schedule's `placement`.
//     Should it need a missing route, the search below runs;
//  3. per candidate storage class (the constraint's, or every candidate's
//     default class first, then the other classes, in preference order):
//     per op, the engines with that storage class whose capabilities serve
//     the op (its family, or a slot for its extension family); an op with
//     none skips the class; then the dispatch search: one selection per
//     preferred engine (each op on that engine where it can be, else on
//     its first candidate), then the Cartesian product of the candidates,
//     under a budget of attempts (DispatchSearchBudgetExceeded with the
//     attempts and the limit); a selection is accepted when every input
//     has ingress into an engine from which it reaches all its consumers
//     (NoInputIngress) and the scheduled graph can be built along
//     registered routes (MissingTransferProvider);
//  4. without a storage-class constraint, the cross-storage fallback: the
//     same search with every (engine, storage class) pair as candidates;
//  5. failing all: the last route error (ingress or transfer) seen, else
//     MissingExtension naming the family no engine has a slot for, else
//     NoEligibleEngine.
//
// Pure: reads the immutable configuration snapshot, calls no engine.
// Thread-safe. Cost: O(attempts × (instructions × operands + routes)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/error.hpp"
#include "core/program.hpp"
#include "engines/engine.hpp"
#include "planning/exec_program.hpp"
#include "planning/input_signature.hpp"
#include "planning/prepare_options.hpp"
#include "planning/prepared_key.hpp"
#include "planning/runtime_config.hpp"
#include "planning/schedule.hpp"

namespace tenact {

/// The hard limit on dispatch selections tried per storage class; past it,
/// preparation fails with DispatchSearchBudgetExceeded.
inline constexpr uint64_t kDispatchSearchBudget = 4096;

/// Where one op runs and, for an extension op, the slot serving it.
struct OpDispatch {
  OpBinding binding;
  std::optional<ExtensionPlanningIdentity> extension;
};

/// One OpDispatch per staged instruction ("op" below), each distinct
/// dispatch stored once: the ops of a program share a few (engine, storage
/// class, extension slot) choices, so this costs 4 bytes per op instead of
/// a binding per op. Immutable once
/// built; copies share nothing (copy the table itself only as a whole).
class OpDispatchTable {
 public:
  OpDispatchTable() = default;
  /// Op i runs as distinct[of_op[i]]. Precondition: every index is in range.
  OpDispatchTable(std::vector<OpDispatch> distinct, std::vector<uint32_t> of_op)
      : distinct_(std::move(distinct)), of_op_(std::move(of_op)) {}

  size_t size() const noexcept { return of_op_.size(); }
  bool empty() const noexcept { return of_op_.empty(); }
  const OpDispatch& operator[](size_t op) const { return distinct_[of_op_[op]]; }
  /// The distinct dispatches, in order of first use.
  std::span<const OpDispatch> distinct() const noexcept { return distinct_; }
  /// Per op, its index into distinct().
  std::span<const uint32_t> of_op() const noexcept { return of_op_; }

  /// Iterates the ops' dispatches in op order.
  class const_iterator {
   public:
    using value_type = OpDispatch;
    using difference_type = std::ptrdiff_t;
    const_iterator() = default;
    const_iterator(const OpDispatchTable* t, size_t i) : table_(t), index_(i) {}
    const OpDispatch& operator*() const { return (*table_)[index_]; }
    const OpDispatch* operator->() const { return &(*table_)[index_]; }
    const_iterator& operator++() {
      ++index_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++index_;
      return before;
    }
    friend bool operator==(const const_iterator&, const const_iterator&) = default;

   private:
    const OpDispatchTable* table_ = nullptr;
    size_t index_ = 0;
  };
  const_iterator begin() const noexcept { return {this, 0}; }
  const_iterator end() const noexcept { return {this, of_op_.size()}; }

 private:
  std::vector<OpDispatch> distinct_;
  std::vector<uint32_t> of_op_;
};

struct PreparationContext {
  RuntimeConfigPtr config;
  std::shared_ptr<const SemanticProgram> program;
  std::shared_ptr<const ExecProgram> staging;
  /// One per staged instruction, in order (dropped ops have none).
  OpDispatchTable dispatch;
  /// The primary placement: the first op's endpoint (an op-less program:
  /// the first candidate engine with the storage class).
  Endpoint root_placement;
  /// One per program input.
  std::vector<Endpoint> input_endpoints;
  std::shared_ptr<const ScheduledGraph> schedule;
  std::shared_ptr<const RootIdentity> root_identity;
  /// The compiler options it was resolved under (the root identity holds
  /// their text): region planning reads them.
  CompilerOptions compiler;
  /// Dispatch selections tried before this one was accepted (all storage
  /// classes together).
  uint64_t search_attempts = 0;
  /// Set when the options pinned every op (PrepareOptions::pins): each
  /// op's request carries its pin's provider choice.
  std::shared_ptr<const ExecutionPins> pins;
};

/// Resolves the context of preparing `program` for `inputs` under
/// `options` (see the file comment). `program` must not be null.
Result<PreparationContext> resolve_preparation_context(
    const RuntimeConfigPtr& config, std::shared_ptr<const SemanticProgram> program,
    std::span<const InputDescriptor> inputs, const PrepareOptions& options,
    uint64_t search_budget = kDispatchSearchBudget);

/// Whether `engine` can take a program input described by `input` in
/// `storage_class`: the class is one the engine accepts inputs in, and the
/// input's placement (when it names one) is that engine and class.
bool accepts_input(const EngineEntry& engine, const std::string& storage_class,
                   const InputDescriptor& input);

/// The binding of an op placed on `engine` in `storage_class` under
/// `config`: runtime id, epoch and the engine's registered identity.
OpBinding binding_for(const RuntimeConfig& config, const EngineEntry& engine,
                      const std::string& storage_class);

}  // namespace tenact
