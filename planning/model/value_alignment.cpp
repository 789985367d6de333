// The value alignment of a model's storage (model_plan.hpp, step 4): the
// providers' largest alignment evidence, found by a probe pass and iterated
// over the arena layout to a bounded monotonic fixed point.
#include <algorithm>
#include <bit>

#include "planning/model/plan_stages.hpp"

namespace tenact {

namespace {

/// The offset of `s` in its resource as seen from `at`: the place there
/// (a weight's component on that device), else its first place, else 0.
uint64_t offset_at(const ValueStorage& s, const Endpoint& at) {
  for (const StoragePlace& p : s.places)
    if (p.endpoint == at) return p.offset_bytes;
  return s.places.empty() ? 0 : s.places.front().offset_bytes;
}

std::vector<uint64_t> offsets(const StoragePass& pass, const std::vector<ValueId>& values, const Endpoint& at) {
  std::vector<uint64_t> out;
  for (ValueId v : values) out.push_back(offset_at(pass.storage[v], at));
  return out;
}

}  // namespace

Result<StoragePass> plan_storage(const StorageInputs& in, std::optional<uint64_t> alignment) {
  StoragePass pass;
  pass.alignment = alignment;
  pass.storage.resize(in.program.values().size());
  TENACT_TRY(place_weights_and_states(in, pass));
  TENACT_TRY(place_activations(in, pass));
  return pass;
}

Result<std::vector<uint64_t>> node_alignment_evidence(const StorageInputs& in, const StoragePass& pass) {
  if (in.nodes.empty()) return Error{ErrorCode::InvalidPlan, "program has no provider value-alignment evidence"};
  std::vector<uint64_t> evidence;
  for (const NodeResolution& n : in.nodes) {
    const CatalogEntry* entry = in.catalog.find(n.provider);
    if (entry == nullptr) return Error{ErrorCode::Internal, "provider `" + n.provider + "` left the catalog"};
    const Op& op = in.program.ops()[n.op];
    const std::vector<uint64_t> operand_offsets = offsets(pass, op.inputs, n.endpoint);
    const std::vector<uint64_t> result_offsets = offsets(pass, op.outputs, n.endpoint);
    const uint64_t e = entry->provider->alignment_for(AlignmentQuery{operand_offsets, result_offsets});
    if (!std::has_single_bit(e))
      return Error{ErrorCode::InvalidPlan, "provider value-alignment evidence is not a power of two: provider `" +
                                               n.provider + "` of node `" + n.node + "` gave " + std::to_string(e)};
    evidence.push_back(e);
  }
  return evidence;
}

Result<SettledAlignment> settle_value_alignment(uint64_t probe_evidence,
                                                const std::function<Result<uint64_t>(uint64_t)>& evidence_at,
                                                uint32_t max_passes) {
  if (!std::has_single_bit(probe_evidence))
    return Error{ErrorCode::InvalidPlan, "provider value-alignment evidence is not a power of two"};
  uint64_t alignment = probe_evidence;
  for (uint32_t pass = 1; pass <= max_passes; ++pass) {
    TENACT_ASSIGN_OR_RETURN(const uint64_t observed, evidence_at(alignment));
    if (observed <= alignment) return SettledAlignment{alignment, pass};
    alignment = observed;
  }
  return Error{ErrorCode::InvalidPlan, "provider value alignment did not reach a bounded monotonic fixed point"};
}

}  // namespace tenact
