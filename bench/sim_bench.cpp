// sim_bench: the simulated GPUs, in one run.
//  (i)  virtual makespan of the DAG suite (bench/sim_dags.hpp: a chain,
//       fork-joins, diamonds, a layered random DAG, a transformer block) on
//       1, 2, 4 and 8 simulated devices (through the Runtime, every input in
//       host memory), next to a lower bound from the same cost model
//       (lower_bound below; streams of one device overlap in this model, so
//       the executors are devices x streams), with the targets' ratios;
//  (ii) wall-clock cost per op of the sim engine against the CPU engine
//       running the same ops (a chain of adds on f32[1000]), through the
//       Runtime;
//  (iii) the stress harness's jobs per second of wall time at 4 devices
//       (stress/stress_run.hpp), without and with faults, next to its limit:
//       the same jobs generated and computed by the CPU reference alone
//       from as many threads (what the harness does besides the runtime).
// Each DAG is placed three ways in the same run: cost-aware (earliest
// finish, planning/cost_placement.hpp), round robin and engine preference
// (every op on the first device); the bound counts D x S executors.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "core/program_json.hpp"
#include "reference/cpu_reference_runner.hpp"
#include "stress/stress_run.hpp"

#include "actors/runtime.hpp"
#include "bench/sim_dags.hpp"
#include "core/program_json.hpp"
#include "engines/sim/sim_cost.hpp"
#include "planning/exec_program.hpp"
#include "planning/signature.hpp"
#include "setup/engine_setup.hpp"

using namespace tenact;

namespace {

// Each kernel's cost in the bound: a dot or a reduction, at the device's
// cost model; an elementwise or layout op counts nothing (elementwise ops
// may fuse into regions, and a bound must not count what may not run).
bool counted(OpKind kind) { return kind == OpKind::DotGeneral || family_of(kind) == OpFamily::Reduction; }

struct Bound {
  uint64_t critical_path = 0;  // from the first upload to the last kernel
  uint64_t total = 0;          // every counted kernel
  uint64_t first_upload = 0;   // no kernel starts before one input is on a device
  uint64_t on(uint64_t executors) const {
    return std::max(critical_path, first_upload + total / std::max<uint64_t>(1, executors));
  }
};

// Lower bounds of `p`'s makespan on default devices, of two kinds:
//  - Kind::Dots: every input is uploaded over a host link before its
//    readers start; dots and reductions take their cost; everything else,
//    and copies between devices, is free.
//  - Kind::Kernels (tighter) counts the launches no placement avoids: every
//    op that is not elementwise is a kernel of its own (layout and indexing
//    ops included; a constant may be a splat some region absorbs: free),
//    and an elementwise op none of whose operands an elementwise op makes
//    starts a kernel (alone or as a region's first member: its result
//    exists no earlier than its operands plus a launch); an elementwise op
//    that may continue a region adds nothing. Total work counts only the
//    kernels never fused (a region's launch is shared). Copies are free.
enum class BoundKind { Dots, Kernels };

Bound lower_bound(const bench::SuiteProgram& p, const sim::SimPlatform& platform, BoundKind kind) {
  const SemanticProgram program = load_program(p.json).value();
  const ExecProgram staged = stage(program).value();
  const EngineCostModel model = sim::cost_model_of(platform.devices[0]);
  const sim::SimLinkSpec link;  // the default host link
  std::vector<uint64_t> ready(staged.slots.size(), 0);
  std::vector<uint8_t> made_elementwise(staged.slots.size(), 0);
  Bound b;
  b.first_upload = UINT64_MAX;
  for (size_t i = 0; i < staged.input_slots.size(); ++i) {
    uint64_t bytes = 4;
    for (int64_t d : p.inputs[i]) bytes *= static_cast<uint64_t>(d);
    ready[staged.input_slots[i]] = copy_estimate_ns(link.latency_ns, link.bandwidth, bytes);
    b.first_upload = std::min(b.first_upload, ready[staged.input_slots[i]]);
  }
  for (const ExecInstruction& ins : staged.instructions) {
    const bool elementwise = family_of(ins.kind) == OpFamily::Elementwise;
    bool continues = false;
    uint64_t start = 0;
    for (SlotId s : ins.inputs) start = std::max(start, ready[s]), continues = continues || made_elementwise[s];
    const bool costs = kind == BoundKind::Dots ? counted(ins.kind) : !ins.is_constant() && !(elementwise && continues);
    uint64_t cost = 0;
    if (costs) {
      std::vector<std::vector<int64_t>> shapes;  // owns the extents' shapes
      std::vector<ValueExtent> in, out;
      for (SlotId s : ins.inputs) shapes.push_back(concrete_shape(staged.slot_type(s).shape, {}).value());
      for (SlotId s : ins.outputs) shapes.push_back(concrete_shape(staged.slot_type(s).shape, {}).value());
      for (size_t k = 0; k < ins.inputs.size(); ++k) in.push_back({staged.slot_type(ins.inputs[k]).dtype, shapes[k]});
      for (size_t k = 0; k < ins.outputs.size(); ++k)
        out.push_back({staged.slot_type(ins.outputs[k]).dtype, shapes[ins.inputs.size() + k]});
      cost = estimate_ns(model, op_work(ins.kind, ins.attrs, in, out));
    }
    if (kind == BoundKind::Dots || !elementwise) b.total += cost;
    for (SlotId s : ins.outputs) {
      ready[s] = start + cost;
      made_elementwise[s] = elementwise && !ins.is_constant();
      b.critical_path = std::max(b.critical_path, ready[s]);
    }
  }
  return b;
}

std::vector<Tensor> inputs_of(const bench::SuiteProgram& p) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    auto t = Tensor::zeros(DType::F32, p.inputs[i]).value();
    for (int64_t k = 0; k < t.element_count(); ++k)
      t.data_as<float>()[k] = 0.001f * static_cast<float>((k + static_cast<int64_t>(i)) % 7);
    out.push_back(std::move(t));
  }
  return out;
}

// The virtual makespan of one run on `devices` devices placed by `policy`:
// the world's clock after the run, less the clock before (uploads of the
// inputs included).
uint64_t makespan_on(const bench::SuiteProgram& p, int devices, PlacementPolicy policy) {
  Runtime rt;
  std::string list;
  for (int i = 0; i < devices; ++i) list += (i ? ",sim:" : "sim:") + std::to_string(i);
  auto made = setup::register_engines(rt, setup::parse_engine_list(list).value());
  if (!made.ok()) {
    std::fprintf(stderr, "sim_bench: %s\n", made.error().to_string().c_str());
    std::exit(1);
  }
  auto program = std::make_shared<const SemanticProgram>(load_program(p.json).value());
  PrepareOptions options;
  options.policy = policy;
  const uint64_t before = made->world->now();
  auto out = rt.run(program, inputs_of(p), options).get();
  if (!out.ok()) {
    std::fprintf(stderr, "sim_bench: %s: %s\n", p.name.c_str(), out.error().to_string().c_str());
    std::exit(1);
  }
  return made->world->now() - before;
}

void virtual_makespans() {
  const sim::SimPlatform platform = sim::default_platform(1).value();
  const uint32_t streams = platform.devices[0].streams;
  std::printf("(i) virtual makespan on default devices (%u streams each), by placement policy, against the lower\n"
              "    bound max(critical path, first upload + total work / (devices x streams)) of the same cost model\n",
              streams);
  std::printf("    and the kernel bound: the same counting the launches no placement avoids (every op but an\n"
              "    elementwise one that may join its producer's region; copies still free)\n");
  std::printf("%-14s %7s %11s %11s %11s %11s %9s %9s %11s %9s\n", "dag", "devices", "cost us", "robin us", "pref us",
              "bound us", "cost/bnd", "cost/rr", "kbound us", "cost/kb");
  std::vector<std::string> targets;
  for (const bench::SuiteProgram& p :
       {bench::chain(16), bench::fork_join(8, 4), bench::fork_join(32, 8), bench::diamonds(4, 16),
        bench::layered(8, 16, 7), bench::transformer_block()}) {
    const Bound bound = lower_bound(p, platform, BoundKind::Dots);
    const Bound kernels = lower_bound(p, platform, BoundKind::Kernels);
    uint64_t on_one = 0, on_four = 0, bound_four = 0, kbound_four = 0;
    bool never_worse = true;
    for (int devices : {1, 2, 4, 8}) {
      const uint64_t cost = makespan_on(p, devices, PlacementPolicy::EarliestFinish);
      const uint64_t robin = makespan_on(p, devices, PlacementPolicy::RoundRobin);
      const uint64_t pref = makespan_on(p, devices, PlacementPolicy::Preference);
      const uint64_t b = bound.on(static_cast<uint64_t>(devices) * streams);
      const uint64_t kb = kernels.on(static_cast<uint64_t>(devices) * streams);
      if (devices == 1) on_one = cost;
      if (devices == 4) on_four = cost, bound_four = b, kbound_four = kb;
      never_worse = never_worse && cost <= robin;
      std::printf("%-14s %7d %11.1f %11.1f %11.1f %11.1f %8.2fx %8.2fx %11.1f %8.2fx\n", p.name.c_str(), devices,
                  cost / 1e3, robin / 1e3, pref / 1e3, b / 1e3, static_cast<double>(cost) / static_cast<double>(b),
                  static_cast<double>(cost) / static_cast<double>(robin), kb / 1e3,
                  static_cast<double>(cost) / static_cast<double>(kb));
    }
    char line[320];
    std::snprintf(line, sizeof line,
                  "%-14s %s 4 devices %.2fx the bound (target <= 1.25; %.2fx the kernel bound), speedup 4 vs 1 "
                  "%.2fx (target >= 3), never worse than round robin: %s",
                  p.name.c_str(), p.wide ? "wide:  " : "narrow:", static_cast<double>(on_four) / bound_four,
                  static_cast<double>(on_four) / kbound_four,
                  static_cast<double>(on_one) / static_cast<double>(on_four), never_worse ? "yes" : "NO");
    targets.push_back(line);
  }
  std::printf("\ntargets (the wide graphs; narrow ones for reference)\n");
  for (const std::string& t : targets) std::printf("%s\n", t.c_str());
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

// Jobs per second of generating and computing `jobs` stress jobs on the
// CPU reference from `threads` threads (one engine, as the harness).
double reference_jobs_per_s(uint64_t jobs, uint32_t threads) {
  auto engine = tenact::cpu::CpuEngine::create({.threads = 1}).value();
  std::map<uint32_t, std::shared_ptr<const tenact::SemanticProgram>> programs;
  for (uint32_t i = 0; i < 32; ++i)
    programs[i] = std::make_shared<const tenact::SemanticProgram>(
        tenact::load_program(tenact::stress::generate_program_json(1, i)).value());
  std::atomic<uint64_t> next{0};
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (uint64_t j; (j = next.fetch_add(1)) < jobs;) {
        auto job = tenact::stress::generate_job(1, j).value();
        (void)tenact::cpu::run_program_on_cpu(*programs.at(job.program_index), job.inputs, *engine);
      }
    });
  for (auto& t : pool) t.join();
  return static_cast<double>(jobs) / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void stress_throughput() {
  std::printf("\n(iii) tenact stress at 4 simulated devices, 8 client threads x 8 jobs in flight, seed 1\n");
  const uint64_t jobs = 5000;
  const double limit = reference_jobs_per_s(jobs, 8);
  for (const char* faults : {"", "seed=3,transient=0.01,alloc=0.002,transfer=0.002,slow=sim:1*2"}) {
    tenact::stress::StressOptions o;
    o.jobs = jobs;
    o.clients = 8;
    o.window = 8;
    for (int d = 0; d < 4; ++d) o.engines.push_back({tenact::setup::EngineSpec::Kind::Sim, "sim:" + std::to_string(d)});
    if (*faults) o.engine_options.faults = tenact::sim::parse_fault_spec(faults).value();
    const auto r = tenact::stress::run_stress(o);
    const double rate = static_cast<double>(r.jobs) / r.wall_seconds;
    std::printf("%-14s %6llu jobs, %s, %8.0f jobs/s   (%.2fx the reference alone: %.0f jobs/s); p50 %llu us, p99 %llu us\n",
                *faults ? "with faults" : "no faults", static_cast<unsigned long long>(r.jobs),
                r.passed() ? "passed" : "FAILED", rate, rate / limit, limit,
                static_cast<unsigned long long>(r.latency_p50_us), static_cast<unsigned long long>(r.latency_p99_us));
  }
}

}  // namespace

int main() {
  virtual_makespans();
  wall_overhead();
  stress_throughput();
  return 0;
}
