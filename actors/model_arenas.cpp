#include "actors/model_arenas.hpp"

namespace tenact {

std::shared_ptr<ModelArenas> ModelArenas::create(std::shared_ptr<const ModelExecution> execution) {
  return std::make_shared<ModelArenas>(std::move(execution));
}

Result<std::shared_ptr<ModelArenas::Set>> ModelArenas::make_set(const Allocate& allocate) const {
  const ModelExecution& e = *execution_;
  auto set = std::make_shared<Set>();
  for (const ActivationArena& arena : e.arenas) {
    auto buffer = allocate(arena.endpoint, arena.bytes);
    if (!buffer.ok())
      return buffer.error().with_context("the activation arena of " + std::to_string(arena.bytes) + " bytes at " +
                                         arena.endpoint.to_string());
    set->buffers.push_back(std::move(*buffer));
  }
  set->destinations.by_op.resize(e.destinations.size());
  for (size_t op = 0; op < e.destinations.size(); ++op) {
    const auto& slots = e.destinations[op];
    bool any = false;
    for (const auto& slot : slots) any = any || slot.has_value();
    if (!any) continue;
    std::vector<Tensor>& out = set->destinations.by_op[op];
    out.resize(slots.size());
    for (size_t r = 0; r < slots.size(); ++r) {
      if (!slots[r]) continue;
      const ArenaSlot& slot = *slots[r];
      const uint64_t size = size_of(slot.dtype);
      if (slot.arena >= set->buffers.size() || slot.offset_bytes % size != 0)
        return Error{ErrorCode::Internal, "a planned arena slot of op #" + std::to_string(op) + " does not fit its arena"};
      auto view = Tensor::view(set->buffers[slot.arena].buffer(), slot.dtype, slot.shape, row_major_strides(slot.shape),
                               static_cast<int64_t>(slot.offset_bytes / size));
      if (!view.ok()) return view.error().with_context("the arena slot of op #" + std::to_string(op));
      out[r] = std::move(*view);
    }
  }
  return set;
}

Result<PlannedDestinationsPtr> ModelArenas::take(const Allocate& allocate) {
  if (execution_->arenas.empty()) return PlannedDestinationsPtr{};
  std::shared_ptr<Set> set;
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      set = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!set) {
    TENACT_ASSIGN_OR_RETURN(set, make_set(allocate));
    std::lock_guard lock(mutex_);
    ++made_;
  }
  const PlannedDestinations* destinations = &set->destinations;
  std::weak_ptr<ModelArenas> pool = weak_from_this();
  return PlannedDestinationsPtr(destinations, [pool, set = std::move(set)](const PlannedDestinations*) mutable {
    if (auto alive = pool.lock()) alive->give_back(std::move(set));
  });
}

void ModelArenas::give_back(std::shared_ptr<Set> set) {
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(set));
}

uint32_t ModelArenas::made() const {
  std::lock_guard lock(mutex_);
  return made_;
}

std::vector<std::pair<Endpoint, uint64_t>> ModelArenas::bytes_per_set() const {
  std::vector<std::pair<Endpoint, uint64_t>> out;
  for (const ActivationArena& a : execution_->arenas) out.emplace_back(a.endpoint, a.bytes);
  return out;
}

}  // namespace tenact
