// Storage of weights and states (model_plan.hpp, step 4): one component per
// device that reads a weight, in one arena per (device, physical dtype);
// one resource per state.
#include <algorithm>
#include <bit>

#include "planning/model/plan_stages.hpp"
#include "planning/model/resource_ids.hpp"

namespace tenact {

namespace {

Error invalid_plan(std::string message) { return Error{ErrorCode::InvalidPlan, std::move(message)}; }

/// The endpoints of the nodes that read `value`, in catalog order.
std::vector<Endpoint> reader_endpoints(const StorageInputs& in, ValueId value) {
  std::vector<std::pair<uint32_t, Endpoint>> found;
  for (size_t i = 0; i < in.program.ops().size(); ++i) {
    const std::vector<ValueId>& operands = in.program.ops()[i].inputs;
    if (std::find(operands.begin(), operands.end(), value) == operands.end()) continue;
    const Endpoint& at = in.nodes[i].endpoint;
    if (std::none_of(found.begin(), found.end(), [&](const auto& f) { return f.second == at; }))
      found.emplace_back(engine_rank(in.catalog, at.engine), at);
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Endpoint> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

/// One weight arena being laid out.
struct Arena {
  Endpoint endpoint;
  DType dtype = DType::U8;
  uint64_t next = 0;
  uint64_t alignment = 1;
  std::string id;
  std::vector<std::string> weights;
};

/// Where the next component of `endpoint` and `dtype` goes: its arena's
/// next aligned offset (at alignment `a`), the arena advanced past it.
Result<std::pair<std::string, uint64_t>> arena_offset(std::vector<Arena>& arenas, const StorageInputs& in,
                                                      const Endpoint& endpoint, DType dtype, uint64_t a,
                                                      uint64_t length, const std::string& weight) {
  auto it = std::find_if(arenas.begin(), arenas.end(),
                         [&](const Arena& x) { return x.endpoint == endpoint && x.dtype == dtype; });
  if (it == arenas.end()) {
    const std::string identity = endpoint.to_string() + ":" + std::string{to_string(dtype)};
    arenas.push_back(
        Arena{endpoint, dtype, 0, 1, hashed_resource_id("weight-arena", in.weight_fingerprint, identity), {}});
    it = arenas.end() - 1;
  }
  const uint64_t alignment = std::max<uint64_t>(a, size_of(dtype));
  TENACT_ASSIGN_OR_RETURN(const uint64_t offset, checked_align_up(it->next, alignment));
  TENACT_ASSIGN_OR_RETURN(it->next, checked_end(offset, length, "weight arena"));
  it->alignment = std::max(it->alignment, alignment);
  if (std::find(it->weights.begin(), it->weights.end(), weight) == it->weights.end()) it->weights.push_back(weight);
  return std::pair{it->id, offset};
}

std::string holds_weights(const std::vector<std::string>& names) {
  std::string s = names.size() == 1 ? "weight " : "weights ";
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
  return s;
}

Status place_weights(const StorageInputs& in, StoragePass& pass) {
  std::vector<Arena> arenas;
  for (const WeightInfo& w : in.program.weights()) {
    const std::string& name = in.program.value(w.value).name;
    const ResolvedTensorSpec& tensor = in.tensors[w.value];
    TENACT_ASSIGN_OR_RETURN(const uint64_t length, tensor.minimum_storage_bytes());
    ValueStorage& storage = pass.storage[w.value];
    storage.kind = ValueStorage::Kind::Weight;
    for (const Endpoint& at : reader_endpoints(in, w.value)) {
      WeightComponent c{name + "@" + at.to_string(), w.value, at, tensor, {}, 0, length};
      if (pass.alignment) {
        TENACT_ASSIGN_OR_RETURN(auto placed, arena_offset(arenas, in, at, tensor.dtype, *pass.alignment, length, name));
        std::tie(c.resource, c.offset_bytes) = std::move(placed);
      } else {
        c.resource = hashed_resource_id("weight-probe", in.weight_fingerprint, c.id);
        pass.resources.push_back(StorageResource{c.resource, ResourceKind::WeightArena, at, tensor.dtype, length,
                                                 size_of(tensor.dtype), "weight " + name});
      }
      storage.places.push_back(StoragePlace{c.resource, at, c.offset_bytes, length});
      pass.components.push_back(std::move(c));
    }
  }
  for (const Arena& a : arenas)
    pass.resources.push_back(StorageResource{a.id, ResourceKind::WeightArena, a.endpoint, a.dtype, a.next, a.alignment,
                                             holds_weights(a.weights)});
  return ok_status();
}

/// Where a state lives: with its update, else its first reader, else on the
/// most preferred engine.
Result<Endpoint> state_endpoint(const StorageInputs& in, ValueId state) {
  for (const StateUpdate& u : in.program.state_updates())
    if (u.state == state) return in.nodes[u.op].endpoint;
  for (size_t i = 0; i < in.program.ops().size(); ++i) {
    const std::vector<ValueId>& operands = in.program.ops()[i].inputs;
    if (std::find(operands.begin(), operands.end(), state) != operands.end()) return in.nodes[i].endpoint;
  }
  if (in.catalog.entries().empty())
    return Error{ErrorCode::Internal, "state `" + in.program.value(state).name + "` has no engine to live on"};
  return in.catalog.entries().front().endpoint;
}

Status place_states(const StorageInputs& in, StoragePass& pass) {
  for (const StateInfo& s : in.program.states()) {
    const std::string& name = in.program.value(s.value).name;
    const DType dtype = in.tensors[s.value].dtype;
    const uint64_t alignment = std::max<uint64_t>(pass.alignment.value_or(1), size_of(dtype));
    TENACT_ASSIGN_OR_RETURN(const uint64_t bytes, checked_align_up(s.capacity_bytes, size_of(dtype), "state"));
    TENACT_ASSIGN_OR_RETURN(Endpoint at, state_endpoint(in, s.value));
    const std::string id = hashed_resource_id("state", in.family_fingerprint, name);
    pass.resources.push_back(StorageResource{id, ResourceKind::State, at, dtype, bytes, alignment, "state " + name});
    ValueStorage& storage = pass.storage[s.value];
    storage.kind = ValueStorage::Kind::State;
    storage.places.push_back(StoragePlace{id, std::move(at), 0, bytes});
  }
  return ok_status();
}

}  // namespace

Result<uint64_t> checked_align_up(uint64_t value, uint64_t alignment, std::string_view what) {
  if (!std::has_single_bit(alignment)) return invalid_plan(std::string{what} + " alignment is invalid");
  uint64_t sum = 0;
  if (__builtin_add_overflow(value, alignment - 1, &sum))
    return invalid_plan(std::string{what} + " alignment overflows u64");
  return sum & ~(alignment - 1);
}

Result<uint64_t> checked_end(uint64_t a, uint64_t b, std::string_view what) {
  uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return invalid_plan(std::string{what} + " byte range overflows u64");
  return sum;
}

uint32_t engine_rank(const ProviderCatalog& catalog, std::string_view engine) {
  const std::vector<std::string>& engines = catalog.engines();
  return static_cast<uint32_t>(std::find(engines.begin(), engines.end(), engine) - engines.begin());
}

Status place_weights_and_states(const StorageInputs& in, StoragePass& pass) {
  TENACT_TRY(place_weights(in, pass));
  return place_states(in, pass);
}

}  // namespace tenact
