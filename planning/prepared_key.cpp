#include "planning/prepared_key.hpp"

#include "planning/key_encoding.hpp"
#include "planning/retained_bytes.hpp"

namespace tenact {

namespace {

// Field tags of the digest encoding, in their fixed order. Changing the
// order or a tag changes every digest (fine: digests are not persisted).
enum Tag : uint8_t {
  kFingerprint = 1,
  kRuntimeId,
  kEpoch,
  kRootPlacement,
  kEngines,
  kCompilerOptions,
  kPlanning,
  kPrepareOptions,
  kOpBindings,
  kInputEndpoints,
  kExtensionPlanning,
  kRequirements,
  kProjection,
  kOpQueues,
};

void put(KeyEncoder& out, const Endpoint& e) {
  out.str(e.engine);
  out.str(e.storage_class);
}

void put(KeyEncoder& out, const std::vector<Endpoint>& endpoints) {
  out.u64(endpoints.size());
  for (const Endpoint& e : endpoints) put(out, e);
}

Result<uint64_t> endpoints_bytes(const std::vector<Endpoint>& endpoints) {
  ByteCount c;
  c.add_array(endpoints.size(), sizeof(Endpoint));
  for (const Endpoint& e : endpoints) c.add(e.engine.size()).add(e.storage_class.size());
  return c.total();
}

}  // namespace

PlanningKey planning_key(const EngineEntry& engine, const ExecutionPolicy& policy) {
  return PlanningKey{engine.identity.hardware_class, policy.workspace_limit_bytes,
                     policy.planning_seed};
}

ExtensionPlanningIdentity ExtensionPlanningIdentity::of(const EngineEntry& engine,
                                                        const ExtensionSlot& slot) {
  return ExtensionPlanningIdentity{
      slot.family, engine.identity.id, slot.payload_fingerprint,
      slot.payload ? slot.payload : std::make_shared<const std::string>()};
}

bool extension_planning_exact_equal(const std::vector<ExtensionPlanningIdentity>& a,
                                    const std::vector<ExtensionPlanningIdentity>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].family != b[i].family || a[i].engine != b[i].engine ||
        !(a[i].payload_fingerprint == b[i].payload_fingerprint) ||
        a[i].payload_bytes() != b[i].payload_bytes())
      return false;
  return true;
}

bool root_identity_exact_equal(const RootIdentity& a, const RootIdentity& b) {
  const bool same_program =
      a.program == b.program || (a.program && b.program && *a.program == *b.program);
  return same_program && a.runtime_id == b.runtime_id && a.epoch == b.epoch &&
         a.root_placement == b.root_placement && a.engines == b.engines &&
         a.compiler_options == b.compiler_options && a.planning == b.planning &&
         a.prepare_options == b.prepare_options && a.op_bindings == b.op_bindings &&
         a.input_endpoints == b.input_endpoints && a.op_queues == b.op_queues &&
         extension_planning_exact_equal(a.extension_planning, b.extension_planning);
}

void encode_for_digest(KeyEncoder& out, const RootIdentity& root) {
  out.tag(kFingerprint);
  out.fingerprint(root.program ? root.program->fingerprint() : Fingerprint{});
  out.tag(kRuntimeId);
  out.u64(root.runtime_id);
  out.tag(kEpoch);
  out.u64(root.epoch);
  out.tag(kRootPlacement);
  put(out, root.root_placement);
  out.tag(kEngines);
  out.u64(root.engines.size());
  for (const EngineIdentity& e : root.engines) {
    out.str(e.id);
    out.str(e.hardware_class);
    out.u64(e.registration);
    out.u64(e.context);
  }
  out.tag(kCompilerOptions);
  out.str(root.compiler_options);
  out.tag(kPlanning);
  out.str(root.planning.hardware_class);
  out.u64(root.planning.workspace_limit_bytes);
  out.u64(root.planning.planning_seed);
  out.tag(kPrepareOptions);
  out.str(root.prepare_options);
  out.tag(kOpBindings);
  put(out, root.op_bindings);
  out.tag(kInputEndpoints);
  put(out, root.input_endpoints);
  out.tag(kExtensionPlanning);
  out.u64(root.extension_planning.size());
  for (const ExtensionPlanningIdentity& x : root.extension_planning) {
    out.str(x.family);
    out.str(x.engine);
    out.fingerprint(x.payload_fingerprint);
  }
  out.tag(kOpQueues);
  out.u64(root.op_queues.size());
  for (uint32_t q : root.op_queues) out.u64(q);
}

Result<uint64_t> root_identity_retained_bytes(const RootIdentity& root) {
  ByteCount c;
  c.add(sizeof(RootIdentity));
  c.add(root.root_placement.engine.size()).add(root.root_placement.storage_class.size());
  c.add_array(root.engines.size(), sizeof(EngineIdentity));
  for (const EngineIdentity& e : root.engines) c.add(e.id.size()).add(e.hardware_class.size());
  c.add(root.compiler_options.size());
  c.add(root.planning.hardware_class.size());
  c.add(root.prepare_options.size());
  c.add(endpoints_bytes(root.op_bindings));
  c.add(endpoints_bytes(root.input_endpoints));
  c.add_array(root.op_queues.size(), sizeof(uint32_t));
  c.add_array(root.extension_planning.size(), sizeof(ExtensionPlanningIdentity));
  for (const ExtensionPlanningIdentity& x : root.extension_planning)
    c.add(x.family.size()).add(x.engine.size()).add(x.payload_bytes().size());
  return c.total();
}

Result<PreparedEntryKey> PreparedEntryKey::make(std::shared_ptr<const RootIdentity> root,
                                                const SpecializationRequirements& requirements,
                                                SpecializationProjection projection,
                                                RootAccounting accounting) {
  if (!root || !root->program)
    return Error{ErrorCode::Internal, "a prepared-entry key needs a root identity with a program"};
  const size_t inputs = root->program->inputs().size();
  TENACT_ASSIGN_OR_RETURN(auto canonical, canonical_requirements(requirements, inputs));
  if (projection.inputs.size() != inputs)
    return Error{ErrorCode::ProviderContract,
                 "a specialization projection of " + std::to_string(projection.inputs.size()) +
                     " inputs does not fit a program of " + std::to_string(inputs)};
  PreparedEntryKey key;
  key.root_ = std::move(root);
  key.requirements_ = std::move(canonical);
  key.projection_ = std::move(projection);
  key.accounting_ = accounting;
  KeyEncoder enc;
  encode_for_digest(enc, *key.root_);
  enc.tag(kRequirements);
  encode(enc, key.requirements_);
  enc.tag(kProjection);
  encode(enc, key.projection_);
  key.digest_ = enc.digest128();
  return key;
}

bool PreparedEntryKey::exact_equal(const PreparedEntryKey& other) const {
  return (root_ == other.root_ || root_identity_exact_equal(*root_, *other.root_)) &&
         requirements_ == other.requirements_ && projection_ == other.projection_;
}

Result<uint64_t> PreparedEntryKey::retained_bytes() const {
  ByteCount c;
  c.add(sizeof(PreparedEntryKey));
  if (accounting_ == RootAccounting::CountedByKey) c.add(root_identity_retained_bytes(*root_));
  c.add(requirements_retained_bytes(requirements_));
  c.add(projection_retained_bytes(projection_));
  return c.total();
}

PreparedEntryKey PreparedEntryKey::with_digest_for_testing(Fingerprint digest) const {
  PreparedEntryKey copy = *this;
  copy.digest_ = digest;
  return copy;
}

}  // namespace tenact
