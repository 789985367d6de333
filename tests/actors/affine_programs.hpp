// Small programs, inputs and options the runtime tests share, with results
// derived by hand: affine(k) computes y = x * (k + 1) + k over f32[8] (named
// "affine<k>": distinct programs of one structure); iota8() is 0..7;
// affine_entry_bytes() what one such program costs the prepare cache;
// small_runtime() the options of a runtime with two scheduler threads;
// check_answered_or_shut_down() what runs issued before shutdown got.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "actors/runtime.hpp"
#include "core/program_json.hpp"
#include "core/tensor.hpp"

namespace tenact::testing {

/// Placement by engine preference: what tests of routes and transfers
/// between engines that could each run everything assume (every op on the
/// first engine that runs it).
inline PrepareOptions by_preference() {
  PrepareOptions o;
  o.policy = PlacementPolicy::Preference;
  return o;
}

inline std::shared_ptr<const SemanticProgram> affine(int k) {
  const std::string json = R"({"format": "tenact.program/1", "name": "affine)" + std::to_string(k) + R"(",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [8]}],
    "ops": [{"op": "constant", "out": "a", "dtype": "f32", "shape": [8], "value": )" + std::to_string(k + 1) + R"(},
            {"op": "constant", "out": "b", "dtype": "f32", "shape": [8], "value": )" + std::to_string(k) + R"(},
            {"op": "multiply", "in": ["x", "a"], "out": "m"},
            {"op": "add", "in": ["m", "b"], "out": "y"}],
    "outputs": ["y"]})";
  auto p = load_program(json);
  REQUIRE(p.ok());
  return std::make_shared<const SemanticProgram>(std::move(*p));
}

inline HostTensor iota8() {
  auto t = HostTensor::zeros(DType::F32, {8});
  REQUIRE(t.ok());
  for (int i = 0; i < 8; ++i) t->data_as<float>()[i] = static_cast<float>(i);
  return *t;
}

inline RuntimeOptions small_runtime() {
  RuntimeOptions o;
  o.scheduler_threads = 2;
  return o;
}

/// The prepare cache's bytes for one affine entry with its root, measured
/// on a runtime of its own with `options` and `engine`: budgets in units of
/// entries.
/// Checks the answers of runs issued just before their runtime was
/// destroyed: every one is ready, and each either succeeded or was refused
/// with Shutdown (nothing lost, nothing else).
inline void check_answered_or_shut_down(std::vector<std::future<Result<std::vector<Tensor>>>>& futures) {
  size_t ok = 0, shutdown = 0, other = 0;
  for (auto& f : futures) {
    REQUIRE(f.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
    auto r = f.get();
    if (r.ok()) ++ok;
    else if (r.error().code() == ErrorCode::Shutdown) ++shutdown;
    else ++other;
  }
  CHECK(ok + shutdown == futures.size());
  CHECK(other == 0);
}

inline uint64_t affine_entry_bytes(const RuntimeOptions& options, std::shared_ptr<Engine> engine) {
  Runtime probe{options};
  REQUIRE(probe.register_engine(std::move(engine)).ok());
  REQUIRE(probe.run(affine(0), {iota8()}).get().ok());
  const uint64_t one = probe.cache_stats().bytes;
  REQUIRE(one > 0);
  return one;
}

}  // namespace tenact::testing
