// A small runtime world for planning tests: scripted engines registered in
// a configuration snapshot, routes between them, programs from JSON, and
// input descriptors.
#pragma once

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/program_json.hpp"
#include "planning/input_signature.hpp"
#include "planning/prepared_program.hpp"
#include "planning/runtime_config.hpp"
#include "scripted_engine.hpp"

namespace tenact::testing {

struct World {
  RuntimeConfigPtr config = RuntimeConfig::initial(11);
  std::map<std::string, std::shared_ptr<ScriptedEngine>, std::less<>> engines;

  std::shared_ptr<ScriptedEngine> add(std::shared_ptr<ScriptedEngine> engine, uint32_t preference = 0,
                                      std::map<std::string, std::string> payloads = {}) {
    auto next = config->with_engine(engine->registration(preference, std::move(payloads)));
    REQUIRE(next.ok());
    config = *next;
    engines[engine->identity_.id] = engine;
    return engine;
  }
  std::shared_ptr<ScriptedEngine> add(std::string id, std::vector<std::string> storage,
                                      std::vector<OpFamily> families = {OpFamily::Elementwise, OpFamily::Reduction,
                                                                        OpFamily::Indexing, OpFamily::Dot,
                                                                        OpFamily::Layout},
                                      uint32_t preference = 0) {
    return add(std::make_shared<ScriptedEngine>(std::move(id), std::move(storage), std::move(families)),
               preference);
  }
  void route(Endpoint from, Endpoint to, std::string provider = "copy") {
    auto next = config->with_route(TransferRoute{std::move(from), std::move(to), std::move(provider)});
    REQUIRE(next.ok());
    config = *next;
  }
  EngineLookup lookup() const {
    auto copy = engines;
    return [copy](std::string_view id) -> std::shared_ptr<Engine> {
      auto it = copy.find(id);
      return it == copy.end() ? nullptr : it->second;
    };
  }
};

inline std::shared_ptr<const SemanticProgram> program_of(const std::string& json,
                                                         const ExtensionRegistry& extensions = {}) {
  auto p = load_program(json, extensions);
  if (!p.ok()) FAIL(p.error().to_string());
  return std::make_shared<const SemanticProgram>(std::move(*p));
}

/// A row-major, 64-byte-aligned input of `shape` at `placement` (empty: anywhere).
inline InputDescriptor input(DType dtype, std::vector<int64_t> shape, Endpoint placement = {}) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i > 1; --i) strides[i - 2] = strides[i - 1] * shape[i - 1];
  return InputDescriptor{dtype, std::move(shape), std::move(placement), std::move(strides), 6};
}

}  // namespace tenact::testing
