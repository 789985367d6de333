#include "planning/model/provider_catalog.hpp"

#include <bit>
#include <set>

namespace tenact {

namespace {

Error catalog_error(std::string message) {
  return Error{ErrorCode::InvalidPlan, "provider catalog: " + std::move(message)};
}

Status check_engine(const ProviderCatalog::Engine& engine, std::set<std::string>& seen) {
  if (engine.id.empty()) return catalog_error("an engine without an id");
  if (!seen.insert(engine.id).second) return catalog_error("engine '" + engine.id + "' is listed twice");
  if (engine.storage_class.empty()) return catalog_error("engine '" + engine.id + "' has no storage class");
  if (!engine.providers) return ok_status();
  std::set<std::string> ids;
  for (const OpProvider& p : *engine.providers) {
    const std::string who = "engine '" + engine.id + "' provider '" + p.id + "'";
    if (p.id.empty()) return catalog_error("engine '" + engine.id + "' has a provider without an id");
    if (!ids.insert(p.id).second) return catalog_error(who + " is declared twice");
    if (!p.contract) return catalog_error(who + " has no contract function");
    if (!std::has_single_bit(p.value_alignment_bytes))
      return catalog_error(who + " has a value alignment of " + std::to_string(p.value_alignment_bytes) +
                           " bytes, not a power of two");
  }
  return ok_status();
}

}  // namespace

Result<ProviderCatalog> ProviderCatalog::make(std::vector<Engine> engines) {
  ProviderCatalog catalog;
  std::set<std::string> seen;
  for (size_t rank = 0; rank < engines.size(); ++rank) {
    const Engine& engine = engines[rank];
    TENACT_TRY(check_engine(engine, seen));
    catalog.engines_.push_back(engine.id);
    if (!engine.providers) continue;
    for (const OpProvider& p : *engine.providers)
      catalog.entries_.push_back(CatalogEntry{engine.id + "/" + p.id, engine.id,
                                              Endpoint{engine.id, engine.storage_class}, static_cast<uint32_t>(rank),
                                              &p, engine.providers, engine.fuses_regions});
  }
  return catalog;
}

Result<ProviderCatalog> ProviderCatalog::from_config(const RuntimeConfig& config,
                                                     const PlacementConstraint& placement) {
  std::vector<const EngineEntry*> allowed;
  if (placement.engines.empty()) {
    for (const EngineEntry& e : config.engines()) allowed.push_back(&e);
  } else {
    for (const std::string& id : placement.distinct_engines())
      if (const EngineEntry* e = config.find_engine(id)) allowed.push_back(e);
  }
  std::vector<Engine> engines;
  for (const EngineEntry* e : allowed) {
    const EngineCapabilities& caps = e->capabilities;
    if (!caps.executable || !caps.providers || caps.providers->empty()) continue;
    std::string storage = caps.default_storage_class;
    if (placement.storage_class)
      for (const std::string& s : caps.storage_classes)
        if (s == *placement.storage_class) storage = s;
    engines.push_back(Engine{e->id(), std::move(storage), caps.providers, caps.fused_elementwise_regions});
  }
  if (engines.empty())
    return Error{ErrorCode::NoEligibleEngine,
                 "no executable engine allowed by the placement (" + placement.to_string() + ") declares op providers"};
  return make(std::move(engines));
}

const CatalogEntry* ProviderCatalog::find(std::string_view qualified_id) const {
  for (const CatalogEntry& e : entries_)
    if (e.qualified_id == qualified_id) return &e;
  return nullptr;
}

}  // namespace tenact
