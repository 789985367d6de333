// The prepared-entry key of the prepare cache (a root identity and an entry
// key): everything a prepared program
// depends on, with a 128-bit compact digest for hashing and an exact
// equality that settles digest collisions.
//
// Contract: keys are immutable values, cheap to copy (the root identity is
// shared), safe to read from many threads. The digest is computed once,
// when the key is made. Two keys are the same entry exactly when
// exact_equal() says so; equal keys always have equal digests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/program.hpp"
#include "engines/engine.hpp"
#include "planning/runtime_config.hpp"
#include "planning/specialization_projection.hpp"

namespace tenact {

/// The planning policy resolved for one engine, as it enters the key.
struct PlanningKey {
  std::string hardware_class;
  uint64_t workspace_limit_bytes = kUnlimitedWorkspace;
  uint64_t planning_seed = 0;
  friend bool operator==(const PlanningKey&, const PlanningKey&) = default;
};

/// The planning key of `engine` under `policy`.
PlanningKey planning_key(const EngineEntry& engine, const ExecutionPolicy& policy);

/// An extension op's planning configuration as the key sees it: the
/// digest hashes the payload fingerprint, exact equality compares bytes.
struct ExtensionPlanningIdentity {
  std::string family;
  std::string engine;
  Fingerprint payload_fingerprint;
  /// Shared with the snapshot's ExtensionSlot; never null after of().
  std::shared_ptr<const std::string> payload;

  static ExtensionPlanningIdentity of(const EngineEntry& engine, const ExtensionSlot& slot);
  std::string_view payload_bytes() const { return payload ? *payload : std::string_view{}; }
};

/// Exact equality of extension identities, payload bytes included.
bool extension_planning_exact_equal(const std::vector<ExtensionPlanningIdentity>& a,
                                    const std::vector<ExtensionPlanningIdentity>& b);

/// What every specialization of one prepared program shares.
struct RootIdentity {
  /// The program; its fingerprint enters the digest, the program itself
  /// (structural equality) the exact comparison. Never null.
  std::shared_ptr<const SemanticProgram> program;
  uint64_t runtime_id = 0;
  /// The configuration snapshot's epoch.
  uint64_t epoch = 0;
  /// Where the program's root lives (the primary engine and storage class).
  Endpoint root_placement;
  /// Every engine the root or an op is bound to, each once, ascending by
  /// id: id, hardware class, registration, context identity.
  std::vector<EngineIdentity> engines;
  /// Canonical text of the compiler options ("" for the defaults).
  std::string compiler_options;
  /// The planning policy resolved for the primary engine.
  PlanningKey planning;
  /// Canonical text of the prepare options that shape the plan (placement
  /// constraint, ...; "" for the defaults).
  std::string prepare_options;
  /// Where each staged instruction runs, one per instruction, in order.
  std::vector<Endpoint> op_bindings;
  /// Where each program input enters, one per input.
  std::vector<Endpoint> input_endpoints;
  /// One per extension op, in op order.
  std::vector<ExtensionPlanningIdentity> extension_planning;
  /// The queue each staged instruction is sent to, one per instruction
  /// (empty: every instruction with kAnyQueue).
  std::vector<uint32_t> op_queues;
};

/// Every field of `a` and `b` equal; programs by structural equality,
/// extension payloads by bytes.
bool root_identity_exact_equal(const RootIdentity& a, const RootIdentity& b);

/// Appends the root identity's digest fields in their fixed order:
/// program fingerprint, runtime id, epoch, root placement, engines,
/// compiler options, planning key, prepare options, op bindings, input
/// endpoints, extension planning (family, engine, payload fingerprint), op
/// queues.
void encode_for_digest(KeyEncoder& out, const RootIdentity& root);

/// Bytes a root identity keeps alive, not counting the program (shared
/// with the prepared root). Errors: Overflow.
Result<uint64_t> root_identity_retained_bytes(const RootIdentity& root);

/// Who counts the root identity's bytes: the key (before the root is
/// prepared) or the prepared root that several specializations share
/// (counted once by the cache).
enum class RootAccounting : uint8_t { CountedByKey, CountedBySharedRoot };

class PreparedEntryKey {
 public:
  /// A key of `root` under `requirements` (canonicalized) and the
  /// signature's `projection` of them. Errors: Internal for a null root or
  /// program; ProviderContract for requirements or a projection that do
  /// not have one entry per program input.
  static Result<PreparedEntryKey> make(std::shared_ptr<const RootIdentity> root,
                                       const SpecializationRequirements& requirements,
                                       SpecializationProjection projection,
                                       RootAccounting accounting = RootAccounting::CountedByKey);

  const RootIdentity& root() const { return *root_; }
  const std::shared_ptr<const RootIdentity>& shared_root() const { return root_; }
  const SpecializationRequirements& requirements() const { return requirements_; }
  const SpecializationProjection& projection() const { return projection_; }
  RootAccounting accounting() const { return accounting_; }

  /// XXH3-128 over the root identity's digest fields, then the canonical
  /// requirements, then the projection (key_encoding.hpp's rules).
  const Fingerprint& compact_digest() const { return digest_; }
  /// Every field equal (the accounting mode is not part of identity).
  bool exact_equal(const PreparedEntryKey& other) const;
  friend bool operator==(const PreparedEntryKey& a, const PreparedEntryKey& b) {
    return a.exact_equal(b);
  }

  /// sizeof(key) + requirements + projection, plus the root identity when
  /// accounting() is CountedByKey. Errors: Overflow.
  Result<uint64_t> retained_bytes() const;

  /// A copy whose digest is `digest`: lets tests stage a digest collision.
  PreparedEntryKey with_digest_for_testing(Fingerprint digest) const;

 private:
  PreparedEntryKey() = default;
  std::shared_ptr<const RootIdentity> root_;
  SpecializationRequirements requirements_;
  SpecializationProjection projection_;
  RootAccounting accounting_ = RootAccounting::CountedByKey;
  Fingerprint digest_;
};

/// For unordered containers: hash by digest, compare exactly.
struct PreparedEntryKeyHash {
  size_t operator()(const PreparedEntryKey& key) const {
    return static_cast<size_t>(key.compact_digest().lo ^ key.compact_digest().hi);
  }
};

}  // namespace tenact
