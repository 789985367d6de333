// What a caller asks of one preparation besides the program and its
// inputs: where the program may run and how the prepare cache treats it.
//
// Plain values; thread-safe to read. The placement constraint shapes the
// plan and is therefore part of the prepared-entry key (canonical_text());
// cache_in_flight only changes what the cache retains, not the plan.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engines/tensor_contract.hpp"

namespace tenact {

/// Which engines and storage class a program may be placed on.
struct PlacementConstraint {
  /// Allowed engine ids, most preferred first (this order, not the
  /// engines' registered preferences, decides); empty: every registered
  /// engine in preference order. Ids that are not registered allow
  /// nothing; a repeated id counts at its first place.
  std::vector<std::string> engines;
  /// When set, every op runs in this storage class (no cross-storage
  /// fallback).
  std::optional<std::string> storage_class;

  bool is_any() const { return engines.empty() && !storage_class; }
  /// `engines` without repetitions, in their order.
  std::vector<std::string> distinct_engines() const;
  /// "any engine", "engines [cpu, sim:0], storage class 'device'".
  std::string to_string() const;
  friend bool operator==(const PlacementConstraint&, const PlacementConstraint&) = default;
};

/// How preparation places ops on the allowed engines
/// (planning/preparation_context.hpp).
enum class PlacementPolicy : uint8_t {
  /// EarliestFinish when every allowed executable engine gives cost
  /// estimates (EngineCapabilities::cost), else Preference.
  Auto,
  /// Earliest-finish-time list scheduling over the engines' estimates and
  /// the routes' copy costs (planning/cost_placement.hpp); an engine
  /// without estimates is costed by a nominal model.
  EarliestFinish,
  /// Every op on the most preferred engine that can run it (the dispatch
  /// search of the file comment of preparation_context.hpp).
  Preference,
  /// Ops in program order dealt to their candidate engines in turn: a
  /// baseline for benchmarks, not for use.
  RoundRobin,
};

/// "auto", "earliest_finish", "preference", "round_robin".
std::string_view to_string(PlacementPolicy policy) noexcept;
/// The policy named by to_string's text; nullopt for anything else.
std::optional<PlacementPolicy> parse_placement_policy(std::string_view text) noexcept;

/// What changes the staged program or the plan beyond the placement
/// constraint: part of the prepared key (PreparedKey's compiler options).
struct CompilerOptions {
  /// Plan elementwise regions (one fused pass each) on engines that can
  /// fuse them; off: every op runs as its own kernel.
  bool fuse_elementwise = true;
  /// The most compute ops one elementwise region holds (0: no limit).
  uint32_t max_region_ops = 0;
  friend bool operator==(const CompilerOptions&, const CompilerOptions&) = default;
};

/// Where one op of a program must run, as a model's plan decided it.
struct OpPin {
  std::string engine;
  std::string storage_class;
  /// The engine queue (stream) it is sent to; UINT32_MAX: the engine
  /// chooses (BatchWork::kAnyQueue).
  uint32_t queue = UINT32_MAX;
  /// The provider the engine prepares it for (null: the engine's own
  /// choice, as for any program).
  std::shared_ptr<const ProviderChoice> provider;
};

/// A placement fixed op by op (planning/model/model_execution.hpp makes
/// one per model): preparation takes it as it is instead of searching,
/// and the schedule adds the order edges as dependencies.
struct ExecutionPins {
  /// One per op of the program, in program order.
  std::vector<OpPin> ops;
  /// (before, after) op pairs: `after` starts only once `before` has
  /// finished, besides what their data requires.
  std::vector<std::pair<uint32_t, uint32_t>> order;
  /// Identifies pins and order (part of the prepared key): equal digests,
  /// equal pins.
  std::string digest;
};

struct PrepareOptions {
  PlacementConstraint placement;
  CompilerOptions compiler;
  /// Part of the key (canonical_text): plans made under different
  /// policies are different entries.
  PlacementPolicy policy = PlacementPolicy::Auto;
  /// When false the prepare cache retains nothing of this request (no
  /// entry, no in-flight record others could join).
  bool cache_in_flight = true;
  /// Runtime::run only: when a run fails because an engine it used went
  /// down, prepare it again on the engines left and run it again (programs
  /// are pure), up to RuntimeOptions::engine_down_retries times. Not part
  /// of the plan.
  bool retryable = false;
  /// When set, every op runs where its pin says (the placement constraint
  /// and policy are then not consulted); part of the key (compiler_text
  /// holds the digest).
  std::shared_ptr<const ExecutionPins> pins;

  /// The part of the options that shapes the plan, canonical ("" for the
  /// defaults): equal texts mean equal plans. placement_text() and
  /// compiler_text() joined by ';' (each left out when empty).
  std::string canonical_text() const;
  /// The placement constraint ("engines=...;storage=..."; "" for any).
  std::string placement_text() const;
  /// The compiler options, the placement policy and the pins' digest
  /// ("fuse=0", "max_region_ops=8", "policy=round_robin", "pins=<digest>",
  /// joined by ';'; "" for the defaults): the prepared key's
  /// compiler-options field.
  std::string compiler_text() const;
};

}  // namespace tenact
