// Helpers the conformance test files share: rigs that check their memory
// when they go, the op-matrix runner, and hand-built batches for the queue
// and event tests. Included by conformance_*_test.cpp only (it uses Catch2).
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "core/program_json.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "engines/sim/sim_engine.hpp"
#include "tests/engines/conformance/conformance.hpp"

namespace tenact::conformance::suite {

using namespace std::chrono_literals;

// -- rigs that check their memory when they go -------------------------------------------

/// A Rig whose destruction checks that every engine's memory is back.
struct CheckedRig {
  std::unique_ptr<Rig> rig;
  CheckedRig(const EngineKind& kind, unsigned devices = 1) {
    auto made = Rig::create(kind, devices);
    if (!made.ok()) FAIL("engine kind '" << kind.name << "': " << made.error().to_string());
    rig = std::move(*made);
  }
  ~CheckedRig() {
    rig->shutdown();
    for (const std::string& leak : rig->leaks()) FAIL_CHECK(leak);
  }
  Rig* operator->() { return rig.get(); }
  Rig& operator*() { return *rig; }
};

inline std::shared_ptr<const SemanticProgram> program_of(const std::string& json, const ExtensionRegistry& extensions = {}) {
  auto p = load_program(json, extensions);
  if (!p.ok()) FAIL("a program of the suite does not load: " << p.error().to_string() << "\n" << json);
  return std::make_shared<const SemanticProgram>(std::move(*p));
}

// -- the matrix ------------------------------------------------------------------------

/// Cases a known engine bug makes fail: "engine kind|case label". The
/// matrix leaves them to the [known-bug] test case, which keeps failing
/// until the bug is fixed.
inline const std::vector<std::string>& known_bugs() {
  static const std::vector<std::string> bugs = {};
  return bugs;
}
inline bool is_known_bug(const std::string& kind, const std::string& label) {
  const std::string key = kind + "|" + label;
  return std::find(known_bugs().begin(), known_bugs().end(), key) != known_bugs().end();
}

struct MatrixReport {
  size_t cases = 0;        // programs made (op x dtype x layout, convert per target)
  size_t compared = 0;     // (case, engine kind) pairs run and compared
  size_t refused = 0;      // (case, engine kind) pairs checked to be refused
  size_t known_bugs = 0;   // left to the [known-bug] test
  std::vector<std::string> failures;
  std::set<std::string> failing_cases;  // "engine kind|case label"
};

enum class BugPolicy { LeaveKnownBugs, OnlyKnownBugs };

/// Ops an engine has run, where the suite can ask (the sim engine counts
/// them): evidence that the engine under test ran the cases itself.
inline std::optional<uint64_t> ops_run(Engine& engine) {
  if (auto* sim = dynamic_cast<sim::SimEngine*>(&engine)) return sim->stats().ops;
  return std::nullopt;
}

/// Runs every case of the ops `select` keeps on the reference and on each
/// kind of `kinds`; compares (or checks the refusal of) each.
inline MatrixReport run_matrix(const std::vector<EngineKind>& kinds, const std::function<bool(const OpSpec&)>& select,
                        BugPolicy policy = BugPolicy::LeaveKnownBugs) {
  MatrixReport report;
  std::vector<std::unique_ptr<Rig>> rigs;
  auto reference = Rig::create(reference_kind());
  if (!reference.ok()) {
    report.failures.push_back("the reference: " + reference.error().to_string());
    return report;
  }
  for (const EngineKind& kind : kinds) {
    auto rig = Rig::create(kind);
    if (!rig.ok()) {
      report.failures.push_back("engine kind '" + kind.name + "': " + rig.error().to_string());
      return report;
    }
    rigs.push_back(std::move(*rig));
  }
  for (const OpSpec& spec : op_table()) {
    if (!select(spec)) continue;
    for (DType dtype : spec.admitted)
      for (Layout layout : spec.layouts) {
        auto cases = make_cases(spec, dtype, layout);
        if (!cases.ok()) {  // a bug of the table: loud, never skipped
          report.failures.push_back(cases.error().message());
          continue;
        }
        for (const Case& c : *cases) {
          ++report.cases;
          bool wanted = false;
          for (const auto& rig : rigs)
            wanted = wanted || (is_known_bug(rig->kind().name, c.label()) == (policy == BugPolicy::OnlyKnownBugs));
          if (!wanted) continue;
          auto expected = reference->get()->run(c.program, c.inputs);
          if (!expected.ok()) {
            report.failures.push_back("the reference fails case '" + c.label() + "': " + expected.error().to_string());
            continue;
          }
          for (const auto& rig : rigs) {
            const EngineKind& kind = rig->kind();
            const std::string where = "engine kind '" + kind.name + "', case '" + c.label() + "'";
            if (is_known_bug(kind.name, c.label()) != (policy == BugPolicy::OnlyKnownBugs)) {
              report.known_bugs += policy == BugPolicy::LeaveKnownBugs;
              continue;
            }
            if (kind.refuses(c.kind, c.dtype) || (c.to && kind.refuses(c.kind, *c.to))) {
              ++report.refused;
              const std::string verdict = refusal_verdict(*rig, c.program, c.inputs);
              if (verdict != "ok") report.failures.push_back(where + " is listed as unsupported, but it was " + verdict);
              continue;
            }
            ++report.compared;
            auto actual = rig->run(c.program, c.inputs);
            if (!actual.ok()) {
              report.failures.push_back(where + " fails: " + actual.error().to_string() + "\nprogram: " + c.json);
              continue;
            }
            if (actual->size() != expected->size()) {
              report.failures.push_back(where + ": " + std::to_string(actual->size()) + " outputs, expected " +
                                        std::to_string(expected->size()));
              continue;
            }
            for (size_t i = 0; i < actual->size(); ++i) {
              const std::string diff = compare((*expected)[i], (*actual)[i], kind.tolerance(c.accuracies[i]));
              if (!diff.empty()) report.failing_cases.insert(kind.name + "|" + c.label());
              if (!diff.empty())
                report.failures.push_back(where + ", output " + std::to_string(i) + " ('" + c.outputs[i] + "', " +
                                          to_string(c.accuracies[i]) + "): " + diff + "\nprogram: " + c.json);
            }
          }
        }
      }
  }
  for (auto& rig : rigs) {
    const std::optional<uint64_t> ran = ops_run(rig->engine());
    if (ran && *ran == 0 && report.compared > 0)
      report.failures.push_back("engine kind '" + rig->kind().name + "' compared cases but its engine ran no op");
    rig->shutdown();
    for (std::string& leak : rig->leaks()) report.failures.push_back(std::move(leak));
  }
  (*reference)->shutdown();
  for (std::string& leak : (*reference)->leaks()) report.failures.push_back(std::move(leak));
  return report;
}

inline void check_matrix(const char* what, const std::function<bool(const OpSpec&)>& select) {
  const MatrixReport report = run_matrix(engine_kinds(), select);
  std::printf("conformance matrix, %s: %zu cases, %zu compared, %zu refused, %zu known bugs left out\n", what,
              report.cases, report.compared, report.refused, report.known_bugs);
  CHECK(report.cases > 0);
  for (const std::string& failure : report.failures) FAIL_CHECK(failure);
  CHECK(report.failures.empty());
}

inline bool is_unary_elementwise(OpKind k) { return k >= OpKind::Negate && k <= OpKind::Not; }
inline bool is_binary_elementwise(OpKind k) { return k >= OpKind::Add && k <= OpKind::Xor; }

/// Whether `engine`'s allocated bytes in `storage` come to `bytes` within
/// five seconds (a release on another thread may lag its cause).
inline bool eventually_allocated(Engine& engine, const std::string& storage, uint64_t bytes) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (true) {
    auto stats = engine.memory_stats(storage);
    if (stats.ok() && stats->allocated_bytes == bytes) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
}

// -- engine-level helpers ------------------------------------------------------------------

inline Tensor ramp(int64_t n, float scale, float offset = 0) {
  Tensor t = Tensor::zeros(DType::F32, {n}).value();
  for (int64_t i = 0; i < n; ++i) t.data_as<float>()[i] = scale * static_cast<float>(i) + offset;
  return t;
}

inline std::shared_ptr<const PreparedOp> prepared_add(Engine& engine, int64_t n) {
  OpPrepareRequest request;
  request.kind = OpKind::Add;
  const ValueType type{DType::F32, exact_shape({n})};
  request.operands = {type, type};
  request.results = {type};
  request.binding.endpoint = Endpoint{engine.identity().id, engine.capabilities().default_storage_class};
  request.binding.engine = engine.identity();
  PrepareAnswer answer = engine.prepare(request);
  auto* op = std::get_if<std::shared_ptr<const PreparedOp>>(&answer);
  REQUIRE(op != nullptr);
  return *op;
}

/// `value` copied into `engine`'s default storage class.
inline Tensor place(Rig& rig, const Tensor& value, const Engine& engine) {
  auto placed =
      rig.runtime().copy(value, Endpoint{engine.identity().id, engine.capabilities().default_storage_class}).get();
  REQUIRE(placed.ok());
  return *placed;
}

/// One add of inputs (a, b) on `queue`; b may be the first deferred input.
inline BatchWork add_batch(Engine& engine, std::vector<Tensor> inputs, uint32_t queue, int64_t n) {
  BatchWork work;
  work.inputs = std::move(inputs);
  work.ops.push_back({prepared_add(engine, n), {BatchRef::input(0), BatchRef::input(1)}});
  work.outputs = {BatchRef::op(0)};
  work.queue = queue;
  return work;
}

struct Launched {
  std::shared_ptr<std::promise<Result<std::vector<Tensor>>>> promise =
      std::make_shared<std::promise<Result<std::vector<Tensor>>>>();
  std::future<Result<std::vector<Tensor>>> future = promise->get_future();
  LaunchCompletion done() {
    return [p = promise](Result<std::vector<Tensor>> r) { p->set_value(std::move(r)); };
  }
};

/// The host value of the only output of a batch.
inline Tensor result_of(Rig& rig, std::future<Result<std::vector<Tensor>>>& future) {
  REQUIRE(future.wait_for(30s) == std::future_status::ready);
  auto r = future.get();
  if (!r.ok()) FAIL(r.error().to_string());
  REQUIRE(r->size() == 1);
  auto host = rig.to_host((*r)[0]);
  REQUIRE(host.ok());
  return *host;
}

inline std::vector<uint32_t> queues_to_test(const Engine& engine) {
  const uint32_t queues = engine.capabilities().queues;
  if (queues == 0) return {};
  if (queues == 1) return {0};
  return {0, queues - 1};
}

/// Ops saved by fusion so far on an engine this suite knows how to ask
/// (nullopt for others).
inline std::optional<uint64_t> fused_ops_saved(Engine& engine) {
  if (auto* cpu = dynamic_cast<cpu::CpuEngine*>(&engine))
    return cpu->fused_counters().ops_fused.load() - cpu->fused_counters().regions_run.load();
  if (auto* sim = dynamic_cast<sim::SimEngine*>(&engine)) {
    const sim::SimEngineStats s = sim->stats();
    return s.ops - s.kernels;
  }
  return std::nullopt;
}

}  // namespace tenact::conformance::suite
