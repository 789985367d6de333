// The providers a model's ops may be resolved to: every allowed engine's
// OpProviders (engines/tensor_contract.hpp), qualified by the engine id
// ("cpu/dot_general.blas"), in preference order — engines in the order
// given (a runtime's: its preference order, or the placement constraint's
// list), each engine's providers in the order it declares them.
//
// Contract: immutable once made; safe to share and read from many threads.
// Entries keep their engine's provider list alive.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/endpoint.hpp"
#include "core/error.hpp"
#include "engines/tensor_contract.hpp"
#include "planning/prepare_options.hpp"
#include "planning/runtime_config.hpp"

namespace tenact {

struct CatalogEntry {
  /// "<engine>/<provider id>".
  std::string qualified_id;
  std::string engine;
  /// Where its operands and results live: the engine and the storage class
  /// the catalog was made for.
  Endpoint endpoint;
  /// Position of its engine in the catalog's engine order (0: most preferred).
  uint32_t engine_rank = 0;
  /// Owned by `providers`.
  const OpProvider* provider = nullptr;
  OpProviderList providers;
  /// Whether its engine runs planned elementwise regions as one fused pass
  /// (EngineCapabilities::fused_elementwise_regions).
  bool fuses_regions = false;
};

class ProviderCatalog {
 public:
  /// One engine's contribution: its id, the storage class its values live
  /// in, and its providers.
  struct Engine {
    std::string id;
    std::string storage_class;
    OpProviderList providers;
    bool fuses_regions = false;
  };

  /// Errors: InvalidPlan for an empty or repeated engine id, a provider
  /// without an id or a contract function, a provider id repeated within an
  /// engine, or a value alignment that is not a power of two.
  static Result<ProviderCatalog> make(std::vector<Engine> engines);
  /// The executable engines of `config` that `placement` allows (every
  /// engine, in preference order, when it names none; its order when it
  /// does), each at the constraint's storage class when it has it, else at
  /// its default storage class. Errors: NoEligibleEngine when no allowed
  /// engine declares providers, naming the placement; those of make().
  static Result<ProviderCatalog> from_config(const RuntimeConfig& config,
                                             const PlacementConstraint& placement);

  std::span<const CatalogEntry> entries() const { return entries_; }
  /// The entry of a qualified id, or nullptr.
  const CatalogEntry* find(std::string_view qualified_id) const;
  /// The engine ids, in order.
  const std::vector<std::string>& engines() const { return engines_; }

 private:
  std::vector<CatalogEntry> entries_;
  std::vector<std::string> engines_;
};

}  // namespace tenact
