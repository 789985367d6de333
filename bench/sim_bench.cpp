// sim_bench: the simulated GPUs, in one run.
//  (i)  virtual makespan of a fork-join and of a layered random DAG of
//       dot_general kernels on 1, 2, 4 and 8 simulated devices (through the
//       Runtime, every input in host memory), next to the lower bound
//       max(critical path, total work / executors) from the same cost model,
//       with executors = devices and devices x streams: streams of one
//       device overlap in this model, so only the second is a true bound;
//  (ii) wall-clock cost per op of the sim engine against the CPU engine
//       running the same ops (a chain of adds on f32[1000]), through the
//       Runtime.
// Each DAG is placed three ways in the same run: cost-aware (earliest
// finish, planning/cost_placement.hpp), round robin and engine preference
// (every op on the first device); the bound counts D x S executors.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "actors/runtime.hpp"
#include "core/program_json.hpp"
#include "engines/sim/sim_cost.hpp"
#include "setup/engine_setup.hpp"

using namespace tenact;

namespace {

constexpr int64_t kDim = 128;  // every dot is f32[128,128] x f32[128,128]

struct Dag {
  std::string name;
  std::string json;
  /// Per node, its parents (node ids); node costs are all one dot.
  std::vector<std::vector<int>> parents;
};

std::string dot_op(const std::string& a, const std::string& b, const std::string& out) {
  return R"({"op": "dot_general", "in": [")" + a + R"(", ")" + b + R"("], "out": ")" + out +
         R"(", "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]})";
}

// Node i reads its first parent (or x) and w; extra parents are added first.
Dag make_dag(const std::string& name, const std::vector<std::vector<int>>& parents, const std::vector<int>& sinks) {
  Dag d;
  d.name = name;
  d.parents = parents;
  std::string ops;
  for (size_t i = 0; i < parents.size(); ++i) {
    std::string in = parents[i].empty() ? "x" : "n" + std::to_string(parents[i][0]);
    for (size_t p = 1; p < parents[i].size(); ++p) {
      const std::string sum = "s" + std::to_string(i) + "_" + std::to_string(p);
      ops += R"({"op": "add", "in": [")" + in + R"(", "n)" + std::to_string(parents[i][p]) + R"("], "out": ")" + sum +
             R"("},)";
      in = sum;
    }
    ops += dot_op(in, "w", "n" + std::to_string(i)) + ",";
  }
  std::string outputs;
  for (int s : sinks) outputs += std::string{outputs.empty() ? "" : ", "} + "\"n" + std::to_string(s) + "\"";
  ops.pop_back();
  d.json = R"({"format": "tenact.program/1", "name": ")" + name + R"(",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [128, 128]}, {"name": "w", "dtype": "f32", "shape": [128, 128]}],
    "ops": [)" + ops + R"(], "outputs": [)" + outputs + "]}";
  return d;
}

// 8 branches of 4 dots from x, joined by one dot reading all branch ends.
Dag fork_join() {
  std::vector<std::vector<int>> parents;
  std::vector<int> ends;
  for (int b = 0; b < 8; ++b)
    for (int j = 0; j < 4; ++j) {
      parents.push_back(j == 0 ? std::vector<int>{} : std::vector<int>{static_cast<int>(parents.size()) - 1});
      if (j == 3) ends.push_back(static_cast<int>(parents.size()) - 1);
    }
  parents.push_back(ends);
  return make_dag("fork_join", parents, {static_cast<int>(parents.size()) - 1});
}

// 6 layers of 6 nodes; each node reads 1-2 random nodes of the layer before.
Dag layered(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<int>> parents;
  std::vector<int> previous, sinks;
  for (int layer = 0; layer < 6; ++layer) {
    std::vector<int> current;
    for (int k = 0; k < 6; ++k) {
      std::vector<int> p;
      if (!previous.empty()) {
        p.push_back(previous[rng() % previous.size()]);
        const int other = previous[rng() % previous.size()];
        if (rng() % 2 == 0 && other != p[0]) p.push_back(other);
      }
      current.push_back(static_cast<int>(parents.size()));
      parents.push_back(p);
    }
    previous = current;
  }
  return make_dag("layered", parents, previous);
}

// Lower bounds from the cost model: every node is one dot (the adds that
// join parents are ignored, which keeps it a bound).
std::pair<uint64_t, uint64_t> critical_path_and_total(const Dag& d, const sim::SimDeviceSpec& spec) {
  sim::KernelWork w;
  w.ops = static_cast<uint64_t>(kDim * kDim * kDim);
  w.bytes = static_cast<uint64_t>(3 * kDim * kDim * 4);
  w.dtype = DType::F32;
  const uint64_t cost = sim::kernel_ns(spec, w);
  std::vector<uint64_t> finish(d.parents.size(), 0);
  uint64_t cp = 0;
  for (size_t i = 0; i < d.parents.size(); ++i) {
    uint64_t start = 0;
    for (int p : d.parents[i]) start = std::max(start, finish[static_cast<size_t>(p)]);
    finish[i] = start + cost;
    cp = std::max(cp, finish[i]);
  }
  return {cp, cost * d.parents.size()};
}

Tensor filled(float v) {
  auto t = Tensor::zeros(DType::F32, {kDim, kDim}).value();
  for (int64_t i = 0; i < kDim * kDim; ++i) t.data_as<float>()[i] = v;
  return t;
}

// The virtual makespan of one run on `devices` devices placed by `policy`:
// the world's clock after the run, less the clock before (uploads of the
// inputs included).
uint64_t makespan_on(const Dag& d, int devices, PlacementPolicy policy) {
  Runtime rt;
  std::string list;
  for (int i = 0; i < devices; ++i) list += (i ? ",sim:" : "sim:") + std::to_string(i);
  auto made = setup::register_engines(rt, setup::parse_engine_list(list).value());
  if (!made.ok()) {
    std::fprintf(stderr, "sim_bench: %s\n", made.error().to_string().c_str());
    std::exit(1);
  }
  auto program = std::make_shared<const SemanticProgram>(load_program(d.json).value());
  PrepareOptions options;
  options.policy = policy;
  const uint64_t before = made->world->now();
  auto out = rt.run(program, {filled(0.001f), filled(0.002f)}, options).get();
  if (!out.ok()) {
    std::fprintf(stderr, "sim_bench: %s\n", out.error().to_string().c_str());
    std::exit(1);
  }
  return made->world->now() - before;
}

void virtual_makespans() {
  const sim::SimDeviceSpec spec = sim::default_platform(1).value().devices[0];
  std::printf("(i) virtual makespan, default devices (%u streams each), f32[128,128] dots, by placement policy\n",
              spec.streams);
  std::printf("%-10s %7s %12s %12s %12s %12s %9s %9s %9s\n", "dag", "devices", "cost us", "robin us", "pref us",
              "bound us", "cost/bnd", "cost/rr", "kernels");
  for (const Dag& d : {fork_join(), layered(7)}) {
    const auto [cp, total] = critical_path_and_total(d, spec);
    uint64_t on_one = 0, on_four = 0;
    bool never_worse = true;
    for (int devices : {1, 2, 4, 8}) {
      const uint64_t cost = makespan_on(d, devices, PlacementPolicy::EarliestFinish);
      const uint64_t robin = makespan_on(d, devices, PlacementPolicy::RoundRobin);
      const uint64_t pref = makespan_on(d, devices, PlacementPolicy::Preference);
      // Streams of a device overlap in this model: the executors are D x S.
      const uint64_t bound = std::max(cp, total / (static_cast<uint64_t>(devices) * spec.streams));
      if (devices == 1) on_one = cost;
      if (devices == 4) on_four = cost;
      never_worse = never_worse && cost <= robin;
      std::printf("%-10s %7d %12.1f %12.1f %12.1f %12.1f %8.2fx %8.2fx %9zu\n", d.name.c_str(), devices, cost / 1e3,
                  robin / 1e3, pref / 1e3, bound / 1e3, static_cast<double>(cost) / static_cast<double>(bound),
                  static_cast<double>(cost) / static_cast<double>(robin), d.parents.size());
    }
    std::printf("%-10s speedup 4 vs 1 device (cost-aware): %.2fx; cost-aware never worse than round robin: %s\n",
                d.name.c_str(), static_cast<double>(on_one) / static_cast<double>(on_four), never_worse ? "yes" : "NO");
  }
}

// Wall-clock per op: a chain of `n` adds on f32[1000], run `reps` times.
double wall_us_per_op(const std::string& engines, size_t cpu_threads, int n, int reps) {
  Runtime rt;
  setup::EngineSetupOptions options;
  options.cpu_threads = cpu_threads;
  auto made = setup::register_engines(rt, setup::parse_engine_list(engines).value(), options);
  if (!made.ok()) std::exit(1);
  std::string ops;
  for (int i = 0; i < n; ++i)
    ops += std::string{i ? "," : ""} + R"({"op": "add", "in": [")" + (i ? "a" + std::to_string(i - 1) : "x") +
           R"(", "x"], "out": "a)" + std::to_string(i) + R"("})";
  // Both engines fuse the chain into regions: the same kernels on each.
  const std::string json = R"({"format": "tenact.program/1", "name": "chain",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [1000]}], "ops": [)" + ops +
                           R"(], "outputs": ["a)" + std::to_string(n - 1) + "\"]}";
  auto program = std::make_shared<const SemanticProgram>(load_program(json).value());
  auto x = Tensor::zeros(DType::F32, {1000}).value();
  (void)rt.run(program, {x}).get();  // prepare once
  std::vector<double> samples;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = rt.run(program, {x}).get();
    const auto t1 = std::chrono::steady_clock::now();
    if (!out.ok()) std::exit(1);
    samples.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

void wall_overhead() {
  std::printf("\n(ii) wall-clock per op, chain of 200 adds on f32[1000] (fused into regions where the engine fuses)\n");
  const double cpu = wall_us_per_op("cpu", 0, 200, 21);
  const double cpu1 = wall_us_per_op("cpu", 1, 200, 21);
  const double sim = wall_us_per_op("sim:0", 0, 200, 21);  // one host thread per device by default
  std::printf("cpu engine, all cores   %8.3f us/op\n", cpu);
  std::printf("cpu engine, 1 thread    %8.3f us/op\n", cpu1);
  std::printf("sim engine, 1 thread    %8.3f us/op   (%.2fx the 1-thread CPU engine's, %.2fx all cores')\n", sim,
              sim / cpu1, sim / cpu);
}

}  // namespace

int main() {
  virtual_makespans();
  wall_overhead();
  return 0;
}
