#include "planning/runtime_config.hpp"

#include <algorithm>

#include "core/checked.hpp"
#include "planning/key_encoding.hpp"

namespace tenact {

namespace {

Error invalid(std::string message) { return Error{ErrorCode::InvalidAttribute, std::move(message)}; }

bool contains(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

std::string list_text(const std::vector<std::string>& list) {
  std::string out = "[";
  for (size_t i = 0; i < list.size(); ++i) out += (i ? ", " : "") + list[i];
  return out + "]";
}

Status check_endpoint(const Endpoint& e, const char* which) {
  // Unowned host memory is the one endpoint without an engine.
  if (e == Endpoint::unowned_host()) return ok_status();
  if (e.engine.empty() || e.storage_class.empty())
    return invalid(std::string{"transfer route "} + which + " '" + e.to_string() +
                   "' needs an engine and a storage class");
  return ok_status();
}

// Gives `engine` the slot of a registered family (see with_extension).
void attach_extension(EngineEntry& engine, const RegisteredExtension& extension) {
  const std::string& name = extension.family->name;
  for (ExtensionSlot& slot : engine.extension_slots)
    if (slot.family == name) {
      slot.definition = extension.family;
      return;
    }
  if (!engine.capabilities.host_extension_kernels || !extension.family->prepare_host) return;
  std::string payload;
  if (auto own = engine.extension_payloads.find(name); own != engine.extension_payloads.end()) {
    payload = own->second;
  } else if (auto given = extension.planning_configs.find(engine.identity.id);
             given != extension.planning_configs.end()) {
    payload = given->second;
  }
  ExtensionSlot slot = make_extension_slot(name, std::move(payload));
  slot.definition = extension.family;
  engine.extension_slots.push_back(std::move(slot));
  engine.capabilities.extension_families.push_back(name);
}

}  // namespace

ExtensionFamilyPtr RuntimeConfig::find_extension(std::string_view family) const {
  for (const RegisteredExtension& e : extensions_)
    if (e.family->name == family) return e.family;
  return nullptr;
}

Result<RuntimeConfigPtr> RuntimeConfig::with_extension(ExtensionFamilyPtr family,
                                                       std::map<std::string, std::string> planning_configs) const {
  if (!family) return invalid("register an extension family: no family given");
  TENACT_TRY(check_extension_family(*family));
  if (find_extension(family->name))
    return invalid("extension family '" + family->name + "' is registered already");
  TENACT_ASSIGN_OR_RETURN(auto copy, next());
  copy->extensions_.push_back(RegisteredExtension{std::move(family), std::move(planning_configs)});
  for (EngineEntry& engine : copy->engines_) attach_extension(engine, copy->extensions_.back());
  return RuntimeConfigPtr{std::move(copy)};
}

void attach_extension_slot(const RuntimeConfig& config, OpPrepareRequest& request) {
  const auto* attrs = std::get_if<ExtensionAttrs>(&request.attrs);
  if (request.kind != OpKind::Extension || attrs == nullptr) return;
  const EngineEntry* engine = config.find_engine(request.binding.endpoint.engine);
  const ExtensionSlot* slot = engine ? engine->extension_slot(attrs->family) : nullptr;
  if (slot == nullptr) return;
  request.extension = slot->definition;
  request.planning_config = slot->payload;
}

ExtensionSlot make_extension_slot(std::string family, std::string payload) {
  const Fingerprint fp = xxh3_128(payload);
  return ExtensionSlot{std::move(family), std::make_shared<const std::string>(std::move(payload)),
                       fp, nullptr};
}

const ExtensionSlot* EngineEntry::extension_slot(std::string_view family) const {
  for (const ExtensionSlot& s : extension_slots)
    if (s.family == family) return &s;
  return nullptr;
}

std::vector<std::string> EngineEntry::input_storage_classes() const {
  if (!capabilities.accepted_input_storage.empty()) return capabilities.accepted_input_storage;
  return {capabilities.default_storage_class};
}

RuntimeConfigPtr RuntimeConfig::initial(uint64_t runtime_id, ExecutionPolicy policy,
                                        uint64_t epoch) {
  auto config = std::shared_ptr<RuntimeConfig>(new RuntimeConfig());
  config->runtime_id_ = runtime_id;
  config->epoch_ = epoch;
  config->policy_ = policy;
  return config;
}

Result<std::shared_ptr<RuntimeConfig>> RuntimeConfig::next() const {
  auto epoch = checked_add_u(epoch_, 1);
  if (!epoch)
    return Error{ErrorCode::Overflow, "runtime configuration epoch " + std::to_string(epoch_) +
                                          " cannot advance"};
  auto copy = std::shared_ptr<RuntimeConfig>(new RuntimeConfig(*this));
  copy->epoch_ = *epoch;
  return copy;
}

const EngineEntry* RuntimeConfig::find_engine(std::string_view id) const {
  for (const EngineEntry& e : engines_)
    if (e.identity.id == id) return &e;
  return nullptr;
}

bool RuntimeConfig::has_extension_family(std::string_view family) const {
  for (const EngineEntry& e : engines_)
    if (e.extension_slot(family)) return true;
  return false;
}

uint64_t RuntimeConfig::last_registration(std::string_view id) const {
  auto it = registrations_.find(id);
  return it == registrations_.end() ? 0 : it->second;
}

const TransferRoute* RuntimeConfig::find_route(const Endpoint& source,
                                               const Endpoint& destination) const {
  for (const TransferRoute& r : routes_)
    if (r.source == source && r.destination == destination) return &r;
  return nullptr;
}

std::vector<const TransferRoute*> RuntimeConfig::routes_from(const Endpoint& source) const {
  std::vector<const TransferRoute*> out;
  for (const TransferRoute& r : routes_)
    if (r.source == source) out.push_back(&r);
  return out;
}

Result<RuntimeConfigPtr> RuntimeConfig::with_engine(EngineRegistration reg) const {
  const std::string& id = reg.identity.id;
  const EngineCapabilities& caps = reg.capabilities;
  if (id.empty()) return invalid("an engine needs a non-empty id");
  const std::string who = "engine '" + id + "'";
  if (caps.storage_classes.empty()) return invalid(who + " declares no storage class");
  if (!contains(caps.storage_classes, caps.default_storage_class))
    return invalid(who + ": default storage class '" + caps.default_storage_class +
                   "' is not one of its storage classes " + list_text(caps.storage_classes));
  for (const std::string& s : caps.accepted_input_storage)
    if (!contains(caps.storage_classes, s))
      return invalid(who + ": accepted input storage class '" + s +
                     "' is not one of its storage classes " + list_text(caps.storage_classes));
  for (const auto& [family, payload] : reg.extension_payloads)
    if (!caps.has_extension(family) && !caps.host_extension_kernels)
      return invalid(who + " has no slot for extension family '" + family +
                     "' but a planning payload was given for it; its families are " +
                     list_text(caps.extension_families));

  auto registration = checked_add_u(last_registration(id), 1);
  if (!registration)
    return Error{ErrorCode::Overflow, who + ": registration number cannot advance"};
  TENACT_ASSIGN_OR_RETURN(auto copy, next());

  EngineEntry entry;
  entry.identity = std::move(reg.identity);
  entry.identity.registration = *registration;
  entry.capabilities = std::move(reg.capabilities);
  entry.preference = reg.preference;
  entry.extension_payloads = std::move(reg.extension_payloads);
  for (const std::string& family : entry.capabilities.extension_families) {
    if (entry.extension_slot(family)) continue;  // a family listed twice gets one slot
    auto it = entry.extension_payloads.find(family);
    entry.extension_slots.push_back(
        make_extension_slot(family, it == entry.extension_payloads.end() ? "" : it->second));
  }
  for (const RegisteredExtension& extension : extensions_) attach_extension(entry, extension);

  copy->registrations_[entry.identity.id] = *registration;
  if (!copy->order_.count(entry.identity.id)) copy->order_[entry.identity.id] = copy->next_order_++;
  auto& engines = copy->engines_;
  engines.erase(std::remove_if(engines.begin(), engines.end(),
                               [&](const EngineEntry& e) { return e.identity.id == entry.identity.id; }),
                engines.end());
  engines.push_back(std::move(entry));
  const auto& order = copy->order_;
  std::stable_sort(engines.begin(), engines.end(), [&](const EngineEntry& a, const EngineEntry& b) {
    if (a.preference != b.preference) return a.preference < b.preference;
    return order.find(a.identity.id)->second < order.find(b.identity.id)->second;
  });
  return RuntimeConfigPtr{std::move(copy)};
}

Result<RuntimeConfigPtr> RuntimeConfig::without_engine(std::string_view id) const {
  if (!find_engine(id)) return invalid("no engine '" + std::string{id} + "' is registered");
  TENACT_ASSIGN_OR_RETURN(auto copy, next());
  auto& engines = copy->engines_;
  engines.erase(std::remove_if(engines.begin(), engines.end(),
                               [&](const EngineEntry& e) { return e.identity.id == id; }),
                engines.end());
  copy->order_.erase(copy->order_.find(id));
  return RuntimeConfigPtr{std::move(copy)};
}

Result<RuntimeConfigPtr> RuntimeConfig::with_route(TransferRoute route) const {
  TENACT_TRY(check_endpoint(route.source, "source"));
  TENACT_TRY(check_endpoint(route.destination, "destination"));
  const std::string what =
      "transfer route " + route.source.to_string() + " -> " + route.destination.to_string();
  if (route.source == route.destination) return invalid(what + " has equal endpoints");
  if (route.provider.empty()) return invalid(what + " needs a provider");
  if (const TransferRoute* existing = find_route(route.source, route.destination))
    return invalid(what + " is served by provider '" + existing->provider +
                   "' already; remove the route first");
  TENACT_ASSIGN_OR_RETURN(auto copy, next());
  copy->routes_.push_back(std::move(route));
  return RuntimeConfigPtr{std::move(copy)};
}

Result<RuntimeConfigPtr> RuntimeConfig::with_transfer_provider(std::string name) const {
  if (name.empty()) return invalid("a transfer provider needs a name");
  if (std::find(providers_.begin(), providers_.end(), name) != providers_.end())
    return invalid("transfer provider '" + name + "' is registered already");
  TENACT_ASSIGN_OR_RETURN(auto copy, next());
  copy->providers_.push_back(std::move(name));
  return RuntimeConfigPtr{std::move(copy)};
}

Result<RuntimeConfigPtr> RuntimeConfig::without_route(const Endpoint& source,
                                                      const Endpoint& destination) const {
  if (!has_route(source, destination))
    return invalid("no transfer route " + source.to_string() + " -> " + destination.to_string() +
                   " is registered");
  TENACT_ASSIGN_OR_RETURN(auto copy, next());
  auto& routes = copy->routes_;
  routes.erase(std::remove_if(routes.begin(), routes.end(),
                              [&](const TransferRoute& r) {
                                return r.source == source && r.destination == destination;
                              }),
               routes.end());
  return RuntimeConfigPtr{std::move(copy)};
}

Result<RuntimeConfigPtr> RuntimeConfig::with_policy(ExecutionPolicy policy) const {
  TENACT_ASSIGN_OR_RETURN(auto copy, next());
  copy->policy_ = policy;
  return RuntimeConfigPtr{std::move(copy)};
}

}  // namespace tenact
