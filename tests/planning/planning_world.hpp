// A small runtime world for planning tests: scripted engines registered in
// a configuration snapshot, routes between them, programs from JSON, input
// descriptors, and a check of error messages.
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

/// Whether the message of `e` contains `text`.
inline bool mentions(const Error& e, const std::string& text) {
  return e.message().find(text) != std::string::npos;
}

/// A row-major, 64-byte-aligned input of `shape` at `placement` (empty: anywhere).
inline InputDescriptor input(DType dtype, std::vector<int64_t> shape, Endpoint placement = {}) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i > 1; --i) strides[i - 2] = strides[i - 1] * shape[i - 1];
  return InputDescriptor{dtype, std::move(shape), std::move(placement), std::move(strides), 6};
}

// x, y: f32[B, 4]; z = x + y, w = tanh(z), s = reduce_sum(w, dimensions
// [1]): a batched program whose engines may ask for the batch extent.
inline const char* kBatched = R"({"format": "tenact.program/1", "name": "batched",
  "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 4]}, {"name": "y", "dtype": "f32", "shape": ["B", 4]}],
  "ops": [{"op": "add", "in": ["x", "y"], "out": "z"},
          {"op": "tanh", "in": ["z"], "out": "w"},
          {"op": "reduce_sum", "in": ["w"], "out": "s", "dimensions": [1]}],
  "outputs": ["s"]})";

/// kBatched's inputs for batch size `b`.
inline std::vector<InputDescriptor> batch(int64_t b) {
  return {input(DType::F32, {b, 4}), input(DType::F32, {b, 4})};
}

}  // namespace tenact::testing
