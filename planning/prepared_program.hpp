// Prepared programs (a root, its entries, and the functions that produce
// them): a root shared by every specialization of
// one preparation context (identity, program, staging, schedule,
// elementwise regions, extension planning), and per specialization the
// ops prepared by their engines, each validated against what was asked.
//
// Producing an entry asks each op's engine to prepare it under the key's
// requirements and projection. The outcome is Ready, Redirect (an engine
// needs more specialization: the requester re-keys with the wider
// requirements and the shared root) or Failed, classified deterministic
// (Unsupported, DeterminismUnsupported and every provider-contract
// violation: the same request would fail the same way, so caches keep it)
// or transient (anything else: the next request tries again).
//
// Contract: roots and programs are immutable once made and shared as
// shared_ptr<const>; safe to read from many threads. The functions are
// pure apart from calling Engine::prepare (thread-safe by the engine
// contract); they never block on device work. Cost: one prepare call per
// op plus O(size of the program) for validation and accounting.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "core/error.hpp"
#include "core/program.hpp"
#include "engines/engine.hpp"
#include "planning/elementwise_regions.hpp"
#include "planning/input_signature.hpp"
#include "planning/preparation_context.hpp"
#include "planning/prepared_key.hpp"
#include "planning/specialization.hpp"

namespace tenact {

/// Finds the engine object registered under an id (nullptr: none now).
using EngineLookup = std::function<std::shared_ptr<Engine>(std::string_view engine_id)>;

/// What every specialization of one preparation context shares.
struct PreparedRoot {
  std::shared_ptr<const RootIdentity> identity;
  std::shared_ptr<const SemanticProgram> program;
  std::shared_ptr<const ExecProgram> staging;
  std::shared_ptr<const ScheduledGraph> schedule;
  /// One per staged instruction, in order.
  OpDispatchTable dispatch;
  std::vector<ElementwiseRegion> regions;
  /// Logical bytes the root keeps alive (identity, program, staging,
  /// schedule, regions), counted once however many entries share it.
  uint64_t retained_bytes = 0;
};

/// Builds the root of `context`: plans its elementwise regions (on engines
/// whose capabilities say fused_elementwise_regions) and counts its bytes.
/// Errors: Overflow (accounting), those of plan_elementwise_regions.
Result<std::shared_ptr<const PreparedRoot>> make_prepared_root(const PreparationContext& context);

/// When a cache last served an entry: a stamp from the cache's use clock
/// (larger is more recent; 0: never served since stored). Written by every
/// path that serves the entry — the cache itself and shortcuts in front of
/// it, from any thread — and read by eviction. An atomic that copies as its
/// current value.
class UseStamp {
 public:
  UseStamp() = default;
  UseStamp(const UseStamp& other) noexcept : value_(other.load()) {}
  UseStamp& operator=(const UseStamp& other) noexcept {
    value_.store(other.load(), std::memory_order_relaxed);
    return *this;
  }
  /// Cost: one relaxed store (two concurrent marks may land in either order).
  void mark(uint64_t stamp) const noexcept { value_.store(stamp, std::memory_order_relaxed); }
  uint64_t load() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<uint64_t> value_{0};
};

/// One specialization of a root: its ops, prepared.
struct PreparedProgram {
  std::shared_ptr<const PreparedRoot> root;
  SpecializationRequirements requirements;
  SpecializationProjection projection;
  /// One per staged instruction (ExecProgram::instructions), in order,
  /// prepared by the engine of its dispatch.
  std::vector<std::shared_ptr<const PreparedOp>> ops;
  /// Bytes of this entry alone (the root is counted by the root).
  uint64_t retained_bytes = 0;
  /// Recency for the cache that holds this entry; not part of the plan.
  UseStamp last_use;
};

struct EntryReady {
  std::shared_ptr<const PreparedProgram> program;
};
struct EntryRedirect {
  /// The merged, strictly wider requirements to re-key with.
  SpecializationRequirements requirements;
  std::shared_ptr<const PreparedRoot> root;
  /// Who asked and why, for messages.
  std::string asked_by;
  std::string reason;
};
struct EntryFailed {
  Error error;
  bool deterministic = false;
  /// The root, when it was made before the failure (a cache keeps it with
  /// a deterministic failure).
  std::shared_ptr<const PreparedRoot> root;
};
using ProducedEntry = std::variant<EntryReady, EntryRedirect, EntryFailed>;

/// True for the codes whose failure the same request would meet again.
bool is_deterministic_prepare_failure(ErrorCode code) noexcept;

/// Produces the entry of `key` (made from `context`): reuses
/// `shared_root` when given (a redirect's), else makes the root; asks each
/// op's engine (found through `engines`) to prepare it; validates every
/// plan (WrongOperationFamily, BindingMismatch, ProjectionMismatch) and
/// every redirect (NonWideningSpecialization, ProviderContract for
/// requirements that do not fit the inputs). `inputs` is the signature
/// the key's projection was made from. Never throws; every failure is an
/// EntryFailed naming the op and the engine.
ProducedEntry produce_prepared_entry(const PreparationContext& context, const PreparedEntryKey& key,
                                     std::shared_ptr<const PreparedRoot> shared_root,
                                     std::span<const InputDescriptor> inputs,
                                     const EngineLookup& engines);

/// Checks a plan against the request it answered. Errors (all deterministic):
/// WrongOperationFamily when it prepared another op kind or extension
/// family, BindingMismatch and ProjectionMismatch naming both sides.
Status validate_prepared_op(const PreparedOp& op, const OpPrepareRequest& request,
                            std::string_view who);

/// How preparation obtains an entry for a key: directly
/// (produce_prepared_entry), or through a cache that may answer from a
/// stored result or from another request's production.
using EntrySource = std::function<ProducedEntry(const PreparedEntryKey& key,
                                                const std::shared_ptr<const PreparedRoot>& shared_root)>;

/// Where one preparation stands on its way through prepared entries (the
/// preparation loop, one step at a time): the key to look up now,
/// how to produce its entry, and whether a produced entry settles the
/// preparation or re-keys it. prepare_program steps it in a loop; the
/// prepare-cache actor steps it one message at a time. Not thread-safe:
/// one owner at a time.
struct PreparationWalk {
  std::shared_ptr<const PreparationContext> context;
  /// The signature the projections are made from.
  std::vector<InputDescriptor> inputs;
  SpecializationState state;
  /// Set after a redirect: the root every further key shares.
  std::shared_ptr<const PreparedRoot> shared_root;

  /// The entry key of the current state (the root's bytes counted by the
  /// key until a shared root exists).
  Result<PreparedEntryKey> key() const;
  /// produce_prepared_entry for `key` with this walk's context and root.
  ProducedEntry produce(const PreparedEntryKey& key, const EngineLookup& engines) const;
  /// Ready: the program. Failed: its error. Redirect: re-keys (wider
  /// requirements, the redirect's shared root) and returns nothing, or the
  /// error follow_redirect gives (SpecializationRetryLimitExceeded,
  /// NonWideningSpecialization, ProviderContract).
  std::optional<Result<std::shared_ptr<const PreparedProgram>>> settle(const ProducedEntry& entry);
};

/// What one preparation did, for tools and tests.
struct PrepareReport {
  std::shared_ptr<const PreparationContext> context;
  /// Redirects followed.
  uint64_t redirects = 0;
  /// The key of the final entry (set when one was made).
  std::optional<PreparedEntryKey> key;
};

/// The whole preparation of a program, without a cache when
/// `source` is empty: checks the signature (arity, dtypes, ranks, guards)
/// first, resolves the context, then keys and produces entries, following
/// redirects (SpecializationRetryLimitExceeded past the retry bound,
/// NonWideningSpecialization for a redirect that adds nothing).
Result<std::shared_ptr<const PreparedProgram>> prepare_program(
    const RuntimeConfigPtr& config, std::shared_ptr<const SemanticProgram> program,
    std::span<const InputDescriptor> inputs, const PrepareOptions& options,
    const EngineLookup& engines, const EntrySource& source = {}, PrepareReport* report = nullptr);

}  // namespace tenact
