// runtime_bench: the actor runtime's overheads, each next to its baseline
// measured in the same run.
//  (i)   prepare cache-hit latency from a plain thread (callback and future
//        forms), median and p99;
//  (ii)  cache-hit throughput with 1, 2, 8 and 64 client threads;
//  (iii) per-node pipeline overhead on a 10,000-node chain of scalar adds
//        and on a 10,000-node wide graph (100 branches of 100), against the
//        same kernels called directly on the CPU engine in a loop;
//  (iv)  small-program latency: prepare hit plus execution of a 5-op
//        program on 1,000-element tensors, median and p99;
//  (v)   a 1,000-node chain alternating between two engines (a transfer
//        between every two nodes): enqueued behind events against the
//        host-mediated path;
//  (vi)  the `mlp` example at batch 4 (two dots, bias adds, a relu) through
//        Runtime::run against the same computed by hand: cblas_sgemm and
//        plain loops into preallocated buffers, the limit on this machine.
// Targets (issue 5): hit median <= 5 us, p99 <= 50 us; >= 500k hits/s at 8
// threads; small program median <= 30 us. Issue 17: per node on both
// graphs <= 0.1 us of overhead and <= 0.2 us in all, next to oneTBB's flow
// graph of the same graphs when libtbb-dev was found at build time.
//
// Usage: runtime_bench [--quick] [--threads N] [--profile-small RUNS] [--profile-mlp RUNS]
//                      [--profile-chain RUNS]
//   --profile-small: only RUNS direct small-program runs, nothing printed
//   --profile-mlp: only RUNS mlp B=4 runs, nothing printed
//   --profile-chain: only RUNS runs of (iii)'s 10,000-add chain, nothing printed
//   (a loop for perf record).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "actors/runtime.hpp"
#include "bench/bench_programs.hpp"
#include "bench/tbb_flow_baseline.hpp"
#include "core/program_json.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "engines/forwarding_engine.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "core/cpu_isa.hpp"
#include "engines/cpu/kernels/vector_math.hpp"

#include <cblas.h>

using namespace tenact;
using Clock = std::chrono::steady_clock;

namespace {

// A started CPU engine, or the benchmark ends with the reason.
std::shared_ptr<cpu::CpuEngine> make_engine(const cpu::CpuEngineOptions& options) {
  auto engine = cpu::CpuEngine::create(options);
  if (!engine.ok()) {
    std::fprintf(stderr, "runtime_bench: %s\n", engine.error().to_string().c_str());
    std::exit(1);
  }
  return std::move(*engine);
}

struct Options {
  bool quick = false;
  size_t threads = 0;
  int profile_small = 0;  // > 0: only this many direct small-program runs (for perf)
  int profile_mlp = 0;    // > 0: only this many mlp B=4 runs (for perf)
  int profile_chain = 0;  // > 0: only this many runs of the 10,000-add chain (direct single batch, no regions)
};

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5));
  return v[i];
}

int g_misses = 0;

void row(const char* name, double value, const char* unit, const char* target, bool met, const std::string& note) {
  std::printf("%-46s %12.3f %-8s %-10s %-5s %s\n", name, value, unit, target, met ? "ok" : "MISS", note.c_str());
  if (!met) ++g_misses;
}

void info(const char* name, double value, const char* unit, const std::string& note) {
  std::printf("%-46s %12.3f %-8s %-10s %-5s %s\n", name, value, unit, "-", "", note.c_str());
}

std::shared_ptr<const SemanticProgram> load(const std::string& json) {
  auto p = load_program(json);
  if (!p.ok()) {
    std::fprintf(stderr, "program: %s\n", p.error().to_string().c_str());
    std::exit(1);
  }
  return std::make_shared<const SemanticProgram>(std::move(*p));
}

HostTensor filled(DType dt, std::vector<int64_t> shape, float v) {
  auto t = HostTensor::zeros(dt, shape);
  for (int64_t i = 0; i < t->element_count(); ++i) t->data_as<float>()[i] = v + static_cast<float>(i % 7);
  return *t;
}

std::shared_ptr<const SemanticProgram> small_program(int64_t n = 1000) { return load(bench::small_program_json(n)); }

// A chain of `n` scalar adds: v_{i+1} = v_i + c.
std::shared_ptr<const SemanticProgram> chain_program(int n) { return load(bench::scalar_chain_json(n)); }

// `branches` chains of `length` scalar adds, all starting at x.
std::shared_ptr<const SemanticProgram> wide_program(int branches, int length) {
  std::string ops, outs;
  for (int b = 0; b < branches; ++b) {
    for (int i = 0; i < length; ++i) {
      const std::string in = i ? "b" + std::to_string(b) + "_" + std::to_string(i) : std::string{"x"};
      ops += std::string{ops.empty() ? "" : ",\n"} + R"({"op": "add", "in": [")" + in + R"(", "c"], "out": "b)" +
             std::to_string(b) + "_" + std::to_string(i + 1) + R"("})";
    }
    outs += std::string{b ? ", " : ""} + "\"b" + std::to_string(b) + "_" + std::to_string(length) + "\"";
  }
  return load(R"({"format": "tenact.program/1", "name": "wide",
    "inputs": [{"name": "x", "dtype": "f32", "shape": []}, {"name": "c", "dtype": "f32", "shape": []}],
    "ops": [)" + ops + R"(], "outputs": [)" + outs + R"(]})");
}

void bench_cache_hits(Runtime& rt, const Options& o) {
  auto program = small_program();
  std::vector<HostTensor> inputs{filled(DType::F32, {1000}, 1), filled(DType::F32, {1000}, 2)};
  auto descriptors = describe_inputs(inputs, Endpoint{});
  if (!rt.prepare(program, descriptors).get().ok()) std::exit(1);
  const int n = o.quick ? 20000 : 100000;
  std::vector<double> cb, fut;
  cb.reserve(n);
  fut.reserve(n);
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    bool ok = false;
    rt.prepare(program, descriptors, {}, [&](Result<PreparedProgramPtr> r) { ok = r.ok(); });
    cb.push_back(us_since(t0));
    if (!ok) std::exit(1);
    t0 = Clock::now();
    auto r = rt.prepare(program, descriptors).get();
    fut.push_back(us_since(t0));
    if (!r.ok()) std::exit(1);
  }
  row("(i) cache hit, callback: median", percentile(cb, 0.5), "us", "<= 5", percentile(cb, 0.5) <= 5, "plain thread");
  row("(i) cache hit, callback: p99", percentile(cb, 0.99), "us", "<= 50", percentile(cb, 0.99) <= 50, "");
  info("(i) cache hit, future: median", percentile(fut, 0.5), "us", "std::future round trip included");
  info("(i) cache hit, future: p99", percentile(fut, 0.99), "us", "");

  for (int threads : {1, 2, 8, 64}) {
    const auto per_thread = static_cast<int>((o.quick ? 200000 : 800000) / threads);
    std::atomic<int> failures{0};
    std::vector<std::thread> clients;
    const auto t0 = Clock::now();
    for (int t = 0; t < threads; ++t)
      clients.emplace_back([&] {
        for (int i = 0; i < per_thread; ++i)
          rt.prepare(program, descriptors, {}, [&](Result<PreparedProgramPtr> r) {
            if (!r.ok()) ++failures;
          });
      });
    for (auto& c : clients) c.join();
    const double seconds = us_since(t0) / 1e6;
    const double rate = static_cast<double>(per_thread) * threads / seconds;
    char name[64];
    std::snprintf(name, sizeof name, "(ii) cache hits/s, %d threads", threads);
    if (threads == 8)
      row(name, rate / 1e3, "k/s", ">= 500", rate >= 500e3 && failures == 0, "");
    else
      info(name, rate / 1e3, "k/s", failures ? "FAILURES" : "");
  }
}

// Runs `program` through the runtime and, as the baseline, its ops as
// direct run_kernel calls on the engine's pool in program order. Returns
// the runtime's median microseconds per node.
double bench_nodes(Runtime& rt, cpu::CpuEngine& engine, const char* label, std::shared_ptr<const SemanticProgram> program,
                   const Options& o, bool target) {
  std::vector<HostTensor> inputs{filled(DType::F32, {}, 1), filled(DType::F32, {}, 0)};
  auto prepared = rt.prepare(program, describe_inputs(inputs, Endpoint{})).get();
  if (!prepared.ok()) {
    std::fprintf(stderr, "%s: %s\n", label, prepared.error().to_string().c_str());
    std::exit(1);
  }
  const size_t nodes = program->ops().size();
  auto direct = [&]() {
    std::vector<std::optional<HostTensor>> values(program->values().size());
    for (size_t i = 0; i < inputs.size(); ++i) values[program->inputs()[i]] = inputs[i];
    const SymbolBindings none;
    for (const Op& op : program->ops()) {
      std::vector<HostTensor> in;
      for (ValueId v : op.inputs) in.push_back(*values[v]);
      std::vector<ValueType> types{program->value(op.outputs[0]).type};
      cpu::KernelCall call{op.kind, op.attrs, in, types, none, &engine.pool()};
      auto r = cpu::run_kernel(call);
      if (!r.ok()) std::exit(1);
      values[op.outputs[0]] = std::move((*r)[0]);
    }
  };
  auto through_runtime = [&]() {
    auto r = rt.execute(*prepared, inputs).get();
    if (!r.ok()) {
      std::fprintf(stderr, "%s: %s\n", label, r.error().to_string().c_str());
      std::exit(1);
    }
  };
  direct();
  through_runtime();
  const int reps = o.quick ? 5 : 15;
  std::vector<double> d, p;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    direct();
    d.push_back(us_since(t0));
    t0 = Clock::now();
    through_runtime();
    p.push_back(us_since(t0));
  }
  const double direct_us = percentile(d, 0.5), pipeline_us = percentile(p, 0.5);
  const double per_node = (pipeline_us - direct_us) / static_cast<double>(nodes);
  char name[96], note[160];
  std::snprintf(name, sizeof name, "(iii) %s: overhead per node", label);
  std::snprintf(note, sizeof note, "pipeline %.0f us vs direct kernels %.0f us for %zu nodes (%.2f us/node)", pipeline_us,
                direct_us, nodes, direct_us / static_cast<double>(nodes));
  if (target) row(name, per_node, "us", "<= 0.1", per_node <= 0.1, note);
  else info(name, per_node, "us", note);
  const double whole = pipeline_us / static_cast<double>(nodes);
  std::snprintf(name, sizeof name, "(iii) %s: whole cost per node", label);
  if (target) row(name, whole, "us", "<= 0.2", whole <= 0.2, "issue #17's targets: overhead <= 0.1, whole <= 0.2 us/node");
  else info(name, whole, "us", "");
  return whole;
}

// The same graphs in oneTBB's flow graph (bench/tbb_flow_baseline.hpp),
// next to Tenact's whole cost per node measured above.
void bench_tbb_nodes(const Options& o, double chain_per_node_us, double wide_per_node_us) {
  if (!bench::tbb_flow_available()) {
    std::printf("(iii) TBB flow-graph baseline skipped: libtbb-dev was not found when this was built "
                "(scripts/install-peers.sh installs it)\n");
    return;
  }
  const int reps = o.quick ? 5 : 15;
  // The CPU engine's default: one thread per processor.
  const int threads = o.threads ? static_cast<int>(o.threads) : static_cast<int>(std::thread::hardware_concurrency());
  auto report = [&](const char* label, std::optional<bench::FlowGraphTiming> t, double tenact_per_node) {
    if (!t || !t->error.empty()) {
      std::fprintf(stderr, "%s: %s\n", label, t ? t->error.c_str() : "no timing");
      std::exit(1);
    }
    const double per_node = t->median_run_us / 10000.0;
    char name[96], note[160];
    std::snprintf(name, sizeof name, "(iii) TBB flow graph, %s: per node", label);
    std::snprintf(note, sizeof note, "%.0f us per run of 10000 continue_nodes; Tenact's pipeline costs %.1fx as much",
                  t->median_run_us, tenact_per_node / per_node);
    info(name, per_node, "us", note);
  };
  report("chain of 10,000 scalar adds", bench::tbb_chain_runs(10000, threads, reps), chain_per_node_us);
  report("100 branches of 100 scalar adds", bench::tbb_wide_runs(100, 100, threads, reps), wide_per_node_us);
}

// The small program by hand: one loop into a buffer made once, with the
// engine's own f32 tanh, in the widest of the ISA copies the engine picks
// from (its fused kernel runs the same math in the same copies).
inline void small_by_hand_body(const float* x, const float* y, float* e, size_t n) {
  for (size_t i = 0; i < n; ++i) e[i] = std::max(cpu::vmath::tanh_f32(x[i] * y[i] + x[i]) - y[i], x[i]);
}
#if defined(__x86_64__)
__attribute__((target("avx2"))) void small_by_hand_avx2(const float* x, const float* y, float* e, size_t n) {
  small_by_hand_body(x, y, e, n);
}
#if defined(__clang__)
__attribute__((target("avx512f")))
#else
__attribute__((target("avx512f,prefer-vector-width=512")))
#endif
void small_by_hand_avx512(const float* x, const float* y, float* e, size_t n) {
  small_by_hand_body(x, y, e, n);
}
#endif
using SmallByHand = void (*)(const float*, const float*, float*, size_t);
SmallByHand small_by_hand_for_this_cpu() {
#if defined(__x86_64__)
  switch (best_cpu_isa()) {
    case CpuIsa::Avx512: return &small_by_hand_avx512;
    case CpuIsa::Avx2: return &small_by_hand_avx2;
    default: break;
  }
#endif
  return &small_by_hand_body;
}

// (iv) on three runtimes alive at once, run in alternating blocks (runs
// interleaved one by one would measure how each path disturbs the next, the
// pipeline's CAF threads above all) so that all three see the same machine: the default (the batch goes to the engine
// directly and, issued from this client thread and small, runs on it), the
// engine's threads (caller_runs_small_batches off: a hand-off to the pool
// and a wake-up back), and a pipeline actor (direct_single_batch off).
void bench_small_program(const Options& o) {
  struct Path {
    const char* name;
    std::unique_ptr<Runtime> rt;
    std::vector<double> lat;
  };
  std::vector<Path> paths;
  for (int k = 0; k < 3; ++k) {
    RuntimeOptions ro;
    ro.direct_single_batch = k != 2;
    ro.caller_runs_small_batches = k == 0;
    auto rt = std::make_unique<Runtime>(ro);
    cpu::CpuEngineOptions eo;
    eo.threads = o.threads;
    if (!rt->register_engine(make_engine(eo)).ok()) std::exit(1);
    paths.push_back({k == 0 ? "default" : k == 1 ? "engine threads" : k == 2 ? "pipeline actor" : "run_sync",
                     std::move(rt), {}});
  }
  paths.push_back({"run_sync", nullptr, {}});  // through the default runtime (paths[0])
  auto program = small_program();
  std::vector<HostTensor> inputs{filled(DType::F32, {1000}, 1), filled(DType::F32, {1000}, 2)};
  for (Path& p : paths)
    if (p.rt && !p.rt->run(program, inputs).get().ok()) std::exit(1);
  // By hand (small_by_hand_for_this_cpu).
  const float* x = inputs[0].data_as<float>();
  const float* y = inputs[1].data_as<float>();
  std::vector<float> e(1000);
  const SmallByHand hand_loop = small_by_hand_for_this_cpu();
  auto by_hand = [&] { hand_loop(x, y, e.data(), e.size()); };
  by_hand();
  {
    auto r = paths[0].rt->run_sync(program, inputs);
    if (!r.ok() || std::memcmp((*r)[0].data(), e.data(), e.size() * sizeof(float)) != 0) {
      std::fprintf(stderr, "runtime_bench: the small program's output differs from the hand-written one\n");
      std::exit(1);
    }
  }
  std::vector<double> hand_lat;
  const int n = o.quick ? 2000 : 10000, rounds = 5;
  for (int round = 0; round < rounds; ++round) {
    for (Path& p : paths)
      for (int i = 0; i < n / rounds; ++i) {
        const auto t0 = Clock::now();
        auto r = p.rt ? p.rt->run(program, inputs).get() : paths[0].rt->run_sync(program, inputs);
        p.lat.push_back(us_since(t0));
        if (!r.ok()) std::exit(1);
      }
    for (int i = 0; i < n / rounds / 10; ++i) {  // 10 calls at a time (near the clock's resolution)
      const auto t0 = Clock::now();
      for (int k = 0; k < 10; ++k) by_hand();
      hand_lat.push_back(us_since(t0) / 10);
    }
  }
  const double median = percentile(paths[0].lat, 0.5);
  row("(iv) small program (hit + run): median", median, "us", "<= 30", median <= 30,
      "5 ops on f32[1000], one fused region, run on the calling thread (default)");
  info("(iv) small program (hit + run): p99", percentile(paths[0].lat, 0.99), "us", "");
  for (size_t k = 1; k < paths.size(); ++k) {
    char name[96], note[96];
    const double m = percentile(paths[k].lat, 0.5);
    std::snprintf(name, sizeof name, "(iv) small program, %s: median", paths[k].name);
    std::snprintf(note, sizeof note, "%.2fx the default; %s", m / median,
                  k == 1   ? "caller_runs_small_batches off"
                  : k == 2 ? "direct_single_batch off"
                           : "the default runtime, answered to this thread without a future");
    info(name, m, "us", note);
    std::snprintf(name, sizeof name, "(iv) small program, %s: p99", paths[k].name);
    info(name, percentile(paths[k].lat, 0.99), "us", "");
  }
  const double hand = percentile(hand_lat, 0.5), sync = percentile(paths[3].lat, 0.5);
  info("(iv) small program by hand: median", hand, "us",
       "one loop into a buffer made once, the engine's f32 tanh, widest ISA copy");
  row("(iv) small program: run_sync / by hand", sync / hand, "x", "<= 1.5", sync / hand <= 1.5,
      "issue #17's target <= 1.5x");
  // A client that passes fresh buffers every time (their addresses, and so
  // their alignment, differ from run to run) still hits the facade's memo.
  std::vector<double> fresh_lat;
  for (int i = 0; i < n; ++i) {
    std::vector<HostTensor> fresh{filled(DType::F32, {1000}, 1), filled(DType::F32, {1000}, 2)};
    const auto t0 = Clock::now();
    auto r = paths[0].rt->run(program, std::move(fresh)).get();
    fresh_lat.push_back(us_since(t0));
    if (!r.ok()) std::exit(1);
  }
  info("(iv) small program, fresh buffers: median", percentile(fresh_lat, 0.5), "us",
       "default path, new tensors every run (alignment varies)");

  // The CPU engine's inline bound (inline_work_limit, 32,768 visits): at
  // n = 2,340 the batch is just inside it and runs on the caller, at 2,341
  // just outside and goes to the pool; each next to the pool path.
  for (int64_t size : {int64_t{2340}, int64_t{2341}, int64_t{8000}}) {
    auto sized = small_program(size);
    std::vector<HostTensor> sized_inputs{filled(DType::F32, {size}, 1), filled(DType::F32, {size}, 2)};
    std::vector<double> on[2];
    for (int round = 0; round < rounds; ++round)
      for (int k = 0; k < 2; ++k)
        for (int i = 0; i < n / rounds / 2; ++i) {
          const auto t0 = Clock::now();
          auto r = paths[k].rt->run(sized, sized_inputs).get();
          on[k].push_back(us_since(t0));
          if (!r.ok()) std::exit(1);
        }
    char name[96], note[128];
    std::snprintf(name, sizeof name, "(iv) f32[%lld], default: median", static_cast<long long>(size));
    std::snprintf(note, sizeof note, "%lld visits (%s the limit); engine threads %.1f us (%.1fx)",
                  static_cast<long long>(size * 14), size * 14 <= 32768 ? "within" : "over",
                  percentile(on[1], 0.5), percentile(on[1], 0.5) / percentile(on[0], 0.5));
    info(name, percentile(on[0], 0.5), "us", note);
  }
}

// -- (v) enqueue behind events ---------------------------------------------------

// A CPU engine that serves only some op families (so placement alternates
// between two of them).
class FamilyEngine final : public ForwardingEngine {
 public:
  FamilyEngine(std::shared_ptr<cpu::CpuEngine> inner, std::vector<OpFamily> families)
      : ForwardingEngine(std::move(inner)) {
    capabilities_.op_families = std::move(families);
  }
};

// `nodes` ops over f32[8] alternating between the two engines: y + y
// (elementwise, engine "cpu"), reshape (layout, engine "cpu:1"), each step
// a transfer away from the last.
std::shared_ptr<const SemanticProgram> alternating_program(int nodes) {
  std::string ops;
  std::string last = "x";
  for (int i = 0; i < nodes; ++i) {
    const std::string out = "v" + std::to_string(i);
    if (i) ops += ",\n";
    if (i % 2 == 0) ops += R"({"op": "add", "in": [")" + last + R"(", ")" + last + R"("], "out": ")" + out + R"("})";
    else ops += R"({"op": "reshape", "in": [")" + last + R"("], "out": ")" + out + R"(", "shape": )" +
                (i % 4 == 1 ? std::string{"[2, 4]"} : std::string{"[8]"}) + "}";
    last = out;
  }
  return load(R"({"format": "tenact.program/1", "name": "alternating",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [8]}],
    "ops": [)" + ops + R"(], "outputs": [")" + last + R"("]})");
}

// (v): the 1,000-node alternating chain, enqueued behind events against
// the host-mediated path (each batch sent once the pipeline heard its
// inputs are done), each on runtimes and engines of its own, run in
// alternating blocks.
void bench_behind_events(const Options& o) {
  const int nodes = 1000;
  const int runs = o.quick ? 5 : 30;
  auto program = alternating_program(nodes);
  struct Path {
    const char* name;
    bool behind_events;
    std::unique_ptr<Runtime> rt;
    PreparedProgramPtr prepared;
    std::vector<double> us;
  };
  Path paths[2] = {{"host-mediated", false, nullptr, nullptr, {}}, {"behind events", true, nullptr, nullptr, {}}};
  const HostTensor x = filled(DType::F32, {8}, 0);
  for (Path& p : paths) {
    RuntimeOptions ro;
    ro.enqueue_behind_events = p.behind_events;
    p.rt = std::make_unique<Runtime>(ro);
    for (const char* id : {"cpu", "cpu:1"}) {
      cpu::CpuEngineOptions eo;
      eo.id = id;
      eo.threads = o.threads ? o.threads : 1;
      const bool elementwise = std::strcmp(id, "cpu") == 0;
      auto engine = std::make_shared<FamilyEngine>(
          make_engine(eo), std::vector<OpFamily>{elementwise ? OpFamily::Elementwise : OpFamily::Layout});
      if (!p.rt->register_engine(engine, elementwise ? 0 : 1).ok()) std::exit(1);
    }
    if (!p.rt->add_route(TransferRoute{{"cpu", "host"}, {"cpu:1", "host"}, "host_copy"}).ok() ||
        !p.rt->add_route(TransferRoute{{"cpu:1", "host"}, {"cpu", "host"}, "host_copy"}).ok())
      std::exit(1);
    auto prepared = p.rt->prepare(program, {describe_input(x, Endpoint{"cpu", "host"})}).get();
    if (!prepared.ok()) {
      std::fprintf(stderr, "runtime_bench (v): %s\n", prepared.error().to_string().c_str());
      std::exit(1);
    }
    p.prepared = *prepared;
    if (!p.rt->run(program, {x}).get().ok()) std::exit(1);  // warm
  }
  for (int block = 0; block < runs; ++block)
    for (Path& p : paths) {
      std::promise<Result<std::vector<Tensor>>> done;
      const auto t0 = Clock::now();
      p.rt->execute(p.prepared, {x}, [&](Result<std::vector<Tensor>> r) { done.set_value(std::move(r)); });
      auto out = done.get_future().get();
      p.us.push_back(us_since(t0));
      if (!out.ok()) {
        std::fprintf(stderr, "runtime_bench (v): %s\n", out.error().to_string().c_str());
        std::exit(1);
      }
    }
  const double mediated = percentile(paths[0].us, 0.5), behind = percentile(paths[1].us, 0.5);
  info("(v) 1,000-node chain over 2 engines, host-mediated", mediated, "us", "median per run");
  info("(v) 1,000-node chain over 2 engines, behind events", behind, "us", "median per run");
  char note[96];
  std::snprintf(note, sizeof note, "host-mediated / behind events (per node %.2f vs %.2f us)", mediated / nodes,
                behind / nodes);
  info("(v) speed-up of enqueueing behind events", mediated / behind, "x", note);
}

// -- (vi) the mlp example at batch 4 -------------------------------------------------

// y = relu(x . w1 + b1) . w2 + b2, x: f32[4, 16], w1: [16, 32], w2: [32, 10].
void bench_mlp(const Options& o) {
  auto program = load(bench::mlp_program_json());
  const std::vector<HostTensor> inputs{filled(DType::F32, {4, 16}, 0.5f), filled(DType::F32, {16, 32}, 0.25f),
                                       filled(DType::F32, {32}, -1.0f), filled(DType::F32, {32, 10}, 0.125f),
                                       filled(DType::F32, {10}, 2.0f)};
  Runtime rt;
  cpu::CpuEngineOptions eo;
  eo.threads = o.threads;
  if (!rt.register_engine(make_engine(eo)).ok()) std::exit(1);
  auto first = rt.run(program, inputs).get();
  if (!first.ok()) std::exit(1);
  // By hand, into buffers made once.
  const float* x = inputs[0].data_as<float>();
  const float* w1 = inputs[1].data_as<float>();
  const float* b1 = inputs[2].data_as<float>();
  const float* w2 = inputs[3].data_as<float>();
  const float* b2 = inputs[4].data_as<float>();
  std::vector<float> h(4 * 32), y(4 * 10);
  auto by_hand = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 4, 32, 16, 1.0f, x, 16, w1, 32, 0.0f, h.data(), 32);
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 32; ++c) h[r * 32 + c] = std::max(h[r * 32 + c] + b1[c], 0.0f);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 4, 10, 32, 1.0f, h.data(), 32, w2, 10, 0.0f, y.data(), 10);
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 10; ++c) y[r * 10 + c] += b2[c];
  };
  by_hand();
  for (int i = 0; i < 40; ++i)
    if ((*first)[0].data_as<float>()[i] != y[i]) {
      std::fprintf(stderr, "runtime_bench: mlp output %d differs from the hand-written one\n", i);
      std::exit(1);
    }
  const int n = o.quick ? 2000 : 20000, rounds = 5;
  std::vector<double> runtime_lat, sync_lat, hand_lat;
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < n / rounds; ++i) {
      const auto t0 = Clock::now();
      auto r = rt.run(program, inputs).get();
      runtime_lat.push_back(us_since(t0));
      if (!r.ok()) std::exit(1);
    }
    for (int i = 0; i < n / rounds; ++i) {
      const auto t0 = Clock::now();
      auto r = rt.run_sync(program, inputs);
      sync_lat.push_back(us_since(t0));
      if (!r.ok()) std::exit(1);
    }
    // The hand-written version is timed over 100 calls at once (one call
    // is near the clock's resolution).
    for (int i = 0; i < n / rounds / 100; ++i) {
      const auto t0 = Clock::now();
      for (int k = 0; k < 100; ++k) by_hand();
      hand_lat.push_back(us_since(t0) / 100);
    }
  }
  const double future = percentile(runtime_lat, 0.5), runtime = percentile(sync_lat, 0.5),
               hand = percentile(hand_lat, 0.5);
  info("(vi) mlp B=4 through Runtime::run().get(): median", future, "us", "");
  info("(vi) mlp B=4 through Runtime::run_sync: median", runtime, "us", "");
  info("(vi) mlp B=4 by hand (cblas_sgemm + loops)", hand, "us", "");
  char note[96];
  std::snprintf(note, sizeof note, "issue #17's target <= 1.5x");
  row("(vi) mlp B=4: run_sync / by hand", runtime / hand, "x", "<= 1.5", runtime / hand <= 1.5, note);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) o.quick = true;
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) o.threads = std::strtoul(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--profile-small") && i + 1 < argc) o.profile_small = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--profile-mlp") && i + 1 < argc) o.profile_mlp = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--profile-chain") && i + 1 < argc) o.profile_chain = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: runtime_bench [--quick] [--threads N] [--profile-small RUNS] [--profile-mlp RUNS] "
                   "[--profile-chain RUNS]\n");
      return 2;
    }
  }
  if (o.profile_chain > 0) {
    // Only the per-node chain, as (iii) runs it with the direct single batch.
    Runtime rt;
    cpu::CpuEngineOptions eo;
    eo.threads = o.threads;
    eo.fuse_regions = false;
    if (!rt.register_engine(make_engine(eo)).ok()) return 1;
    auto program = chain_program(10000);
    std::vector<HostTensor> inputs{filled(DType::F32, {}, 1), filled(DType::F32, {}, 0)};
    for (int i = 0; i < o.profile_chain; ++i)
      if (!rt.run(program, inputs).get().ok()) return 1;
    return 0;
  }
  if (o.profile_small > 0 || o.profile_mlp > 0) {
    // Only the small-program or mlp loop, for a profiler; prints nothing else.
    Runtime rt;
    cpu::CpuEngineOptions eo;
    eo.threads = o.threads;
    if (!rt.register_engine(make_engine(eo)).ok()) return 1;
    auto program = o.profile_mlp > 0 ? load(bench::mlp_program_json()) : small_program();
    std::vector<HostTensor> inputs{filled(DType::F32, {1000}, 1), filled(DType::F32, {1000}, 2)};
    if (o.profile_mlp > 0)
      inputs = {filled(DType::F32, {4, 16}, 0.5f), filled(DType::F32, {16, 32}, 0.25f), filled(DType::F32, {32}, -1.0f),
                filled(DType::F32, {32, 10}, 0.125f), filled(DType::F32, {10}, 2.0f)};
    for (int i = 0; i < std::max(o.profile_small, o.profile_mlp); ++i)
      if (!rt.run_sync(program, inputs).ok()) return 1;  // as the headline figures
    return 0;
  }
  std::printf("%-46s %12s %-8s %-10s %-5s %s\n", "figure", "value", "unit", "target", "", "note");
  {
    Runtime rt;
    cpu::CpuEngineOptions eo;
    eo.threads = o.threads;
    if (!rt.register_engine(make_engine(eo)).ok()) return 1;
    bench_cache_hits(rt, o);
  }
  bench_small_program(o);
  for (bool direct : {false, true}) {
    // Per-node overhead: regions off, so every add is a node of its own.
    // The target applies to the pipeline actor (every node's bookkeeping
    // in the actor); the direct single-batch path is informational.
    RuntimeOptions ro;
    ro.direct_single_batch = direct;
    Runtime rt{ro};
    cpu::CpuEngineOptions eo;
    eo.threads = o.threads;
    eo.fuse_regions = false;
    auto engine = make_engine(eo);
    if (!rt.register_engine(engine).ok()) return 1;
    const std::string suffix = direct ? ", direct" : "";
    const double chain = bench_nodes(rt, *engine, ("chain of 10,000 scalar adds" + suffix).c_str(),
                                     chain_program(10000), o, !direct);
    const double wide = bench_nodes(rt, *engine, ("100 branches of 100 scalar adds" + suffix).c_str(),
                                    wide_program(100, 100), o, !direct);
    if (!direct) bench_tbb_nodes(o, chain, wide);
  }
  bench_behind_events(o);
  bench_mlp(o);
  std::printf("%d target(s) missed\n", g_misses);
  return 0;
}
