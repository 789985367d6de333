// The runtime configuration snapshot planning reads: engines (descriptors
// only, never engine objects), transfer routes with their providers, the
// execution policy and the epoch.
//
// Contract: a RuntimeConfig is immutable and shared as
// shared_ptr<const RuntimeConfig>; reading it is safe from any thread.
// Every with_*/without_* call returns a NEW snapshot whose epoch is this
// one's plus one (also when the content happens to be equal) and leaves
// this snapshot unchanged. Registering an engine id — for the first time or
// again — assigns it the next registration number of that id (1, 2, ...),
// remembered across removal, so a plan prepared for an earlier
// registration never matches a later one. Cost of a change: O(engines +
// routes) copies.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/extension.hpp"
#include "core/program.hpp"
#include "engines/engine.hpp"
#include "transfer/transfer_route.hpp"

namespace tenact {

/// An extension family slot of one engine and its planning configuration.
struct ExtensionSlot {
  std::string family;
  /// The planning configuration: canonical JSON text or opaque bytes
  /// (empty: none). Shared, never modified.
  std::shared_ptr<const std::string> payload;
  /// XXH3-128 of the payload bytes.
  Fingerprint payload_fingerprint;
  /// The family's definition when it was registered with the runtime
  /// (RuntimeConfig::with_extension); null for a slot an engine declared
  /// and implements on its own. Names are unique per runtime, so the
  /// family name stands for the definition in keys and equality.
  ExtensionFamilyPtr definition;

  std::string_view payload_bytes() const { return payload ? *payload : std::string_view{}; }
  friend bool operator==(const ExtensionSlot& a, const ExtensionSlot& b) {
    return a.family == b.family && a.payload_fingerprint == b.payload_fingerprint &&
           a.payload_bytes() == b.payload_bytes();
  }
};

/// Builds a slot, fingerprinting `payload`.
ExtensionSlot make_extension_slot(std::string family, std::string payload);

struct EngineEntry {
  /// registration is assigned by the snapshot, not by the caller.
  EngineIdentity identity;
  EngineCapabilities capabilities;
  /// Lower is preferred; engines() is ordered by it, ties by the order in
  /// which the ids were first registered (re-registering keeps the place).
  uint32_t preference = 0;
  /// One slot per family of capabilities.extension_families, in that order.
  std::vector<ExtensionSlot> extension_slots;
  /// The planning payloads the registration gave, by family (kept for
  /// families registered with the runtime later).
  std::map<std::string, std::string> extension_payloads;

  const std::string& id() const { return identity.id; }
  const ExtensionSlot* extension_slot(std::string_view family) const;
  /// The storage classes program inputs may arrive in (the declared ones,
  /// or the default storage class when none are declared).
  std::vector<std::string> input_storage_classes() const;
};

inline constexpr uint64_t kUnlimitedWorkspace = std::numeric_limits<uint64_t>::max();

struct ExecutionPolicy {
  /// Hard limit on the scratch memory one op may plan for.
  uint64_t workspace_limit_bytes = kUnlimitedWorkspace;
  /// Seed for any choice planning makes pseudo-randomly (reproducibility).
  uint64_t planning_seed = 0;
  friend bool operator==(const ExecutionPolicy&, const ExecutionPolicy&) = default;
};

/// What a caller registers: the engine's identity (registration ignored),
/// capabilities, preference and extension planning payloads by family.
struct EngineRegistration {
  EngineIdentity identity;
  EngineCapabilities capabilities;
  uint32_t preference = 0;
  /// family -> payload; every family must be one of
  /// capabilities.extension_families, or the engine must run host
  /// extension kernels (the family may be registered with the runtime
  /// later); families without one get an empty payload.
  std::map<std::string, std::string> extension_payloads;
};

/// An extension family registered with the runtime, with the planning
/// payloads given for it by engine id.
struct RegisteredExtension {
  ExtensionFamilyPtr family;
  std::map<std::string, std::string> planning_configs;
};

class RuntimeConfig;
using RuntimeConfigPtr = std::shared_ptr<const RuntimeConfig>;

class RuntimeConfig {
 public:
  /// The first snapshot of runtime `runtime_id`: no engines, no routes,
  /// epoch `epoch` (0 for a new runtime).
  static RuntimeConfigPtr initial(uint64_t runtime_id, ExecutionPolicy policy = {},
                                  uint64_t epoch = 0);

  uint64_t runtime_id() const { return runtime_id_; }
  uint64_t epoch() const { return epoch_; }
  const ExecutionPolicy& policy() const { return policy_; }
  /// In preference order.
  const std::vector<EngineEntry>& engines() const { return engines_; }
  const EngineEntry* find_engine(std::string_view id) const;
  /// True when some registered engine has a slot for `family`.
  bool has_extension_family(std::string_view family) const;
  /// The families registered with with_extension, in registration order.
  const std::vector<RegisteredExtension>& extensions() const { return extensions_; }
  /// The registered definition of `family` (null: none registered).
  ExtensionFamilyPtr find_extension(std::string_view family) const;
  /// The last registration number given to `id` (0: never registered).
  uint64_t last_registration(std::string_view id) const;

  /// In insertion order.
  const std::vector<TransferRoute>& routes() const { return routes_; }
  const TransferRoute* find_route(const Endpoint& source, const Endpoint& destination) const;
  bool has_route(const Endpoint& source, const Endpoint& destination) const {
    return find_route(source, destination) != nullptr;
  }
  /// Routes leaving `source`, in insertion order.
  std::vector<const TransferRoute*> routes_from(const Endpoint& source) const;

  // -- changes: each returns a new snapshot, epoch + 1 ------------------------
  // Every change fails with Overflow when the epoch is at its maximum.
  /// Registers (or re-registers, replacing) an engine. Errors:
  /// InvalidAttribute for an empty id, no storage classes, a default
  /// storage class not among them, an accepted input storage class not
  /// among them, or a payload for a family the engine has no slot for.
  Result<RuntimeConfigPtr> with_engine(EngineRegistration registration) const;
  /// Registers an extension family. Every engine with
  /// host_extension_kernels gets a slot for it when it has a host kernel
  /// (prepare_host), now and when registered later; a slot's payload is
  /// the one the engine's registration gave for the family, else
  /// `planning_configs`'s for the engine id, else empty. An engine that
  /// declared a slot of that name itself keeps it, with the definition
  /// attached. Errors: InvalidAttribute for a family
  /// check_extension_family refuses or a name registered already.
  Result<RuntimeConfigPtr> with_extension(ExtensionFamilyPtr family,
                                          std::map<std::string, std::string> planning_configs = {}) const;
  /// Errors: InvalidAttribute when no engine `id` is registered. Routes
  /// that name the engine stay (planning only uses routes between
  /// registered engines).
  Result<RuntimeConfigPtr> without_engine(std::string_view id) const;
  /// Adds a route. One provider per route: a route with the same endpoints
  /// must be removed first (plans made over it are then refused, not
  /// silently moved to another provider). Errors: InvalidAttribute for an
  /// empty engine, storage class or provider, equal endpoints, or a route
  /// that exists already (naming its provider).
  Result<RuntimeConfigPtr> with_route(TransferRoute route) const;
  /// Records a transfer provider registered at run time (a new epoch; the
  /// built-in ones are not listed). Errors: InvalidAttribute for an empty
  /// or repeated name.
  Result<RuntimeConfigPtr> with_transfer_provider(std::string name) const;
  /// Providers recorded by with_transfer_provider, in order.
  const std::vector<std::string>& transfer_providers() const { return providers_; }
  /// Errors: InvalidAttribute when there is no such route.
  Result<RuntimeConfigPtr> without_route(const Endpoint& source, const Endpoint& destination) const;
  Result<RuntimeConfigPtr> with_policy(ExecutionPolicy policy) const;

 private:
  RuntimeConfig() = default;
  /// A copy of this snapshot with the next epoch (Overflow at the maximum).
  Result<std::shared_ptr<RuntimeConfig>> next() const;

  uint64_t runtime_id_ = 0;
  uint64_t epoch_ = 0;
  ExecutionPolicy policy_;
  std::vector<EngineEntry> engines_;
  std::vector<TransferRoute> routes_;
  std::vector<std::string> providers_;
  std::vector<RegisteredExtension> extensions_;
  /// Last registration number per engine id, kept after removal.
  std::map<std::string, uint64_t, std::less<>> registrations_;
  /// First-registration order of the current engines (preference ties).
  std::map<std::string, uint64_t, std::less<>> order_;
  uint64_t next_order_ = 0;
};

/// For an extension op request bound to an engine of `config`: sets
/// request.extension and request.planning_config from that engine's slot
/// for the op's family (left null where there is none). Other requests are
/// left as they are.
void attach_extension_slot(const RuntimeConfig& config, OpPrepareRequest& request);

}  // namespace tenact
