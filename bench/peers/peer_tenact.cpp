// peer_tenact: the Tenact side of the peer comparison (bench/peers/run_peers.py
// runs the same workloads through NumPy and PyTorch and prints the ratios;
// bench/README.md, "peers").
//
// Every workload is a program run through Runtime::run_sync (run() answered
// to the calling thread; the prepare-cache hit included, as a client calls it) on one Runtime with one CPU engine;
// each call's output is dropped inside the timed call. Before its first
// timed call a workload is run once untimed and its result checked against
// an independent computation (plain loops, double accumulation); a wrong
// result ends the process with exit status 1.
//
// Usage:
//   peer_tenact [--threads N] [--workload NAME|all] [--reps N]
//       runs the workload(s), one JSON line each: {"workload", "reps",
//       "times_s": [per-call seconds], "nodes", "check", "threads"}
//   peer_tenact [--threads N] --serve
//       prints {"ready": true, ...} and then reads commands from stdin, one
//       per line: "run NAME REPS" (one JSON line as above; the workload is
//       set up and warmed on first use, untimed, then run once untimed
//       before the timed calls), "list", "quit". run_peers.py uses this so
//       that neither the process start nor the data set-up is timed.
//   peer_tenact --list
//   peer_tenact --dump NAME DIR
//       writes the workload's program as DIR/program.json and each input as
//       DIR/INPUT.npy, the files `tenact run` reads (bench/peers/
//       cli_repeat.py times the command line's repeat loop on them)
// Exit status: 0, 1 on a failed run or a wrong result, 2 on a bad command
// line.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "actors/runtime.hpp"
#include "bench/bench_programs.hpp"
#include "core/program_json.hpp"
#include "core/tensor_io.hpp"
#include "engines/cpu/cpu_engine.hpp"

using namespace tenact;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "peer_tenact: %s\n", what.c_str());
  std::fflush(stdout);
  std::exit(1);
}

std::shared_ptr<const SemanticProgram> load(const std::string& json) {
  auto p = load_program(json);
  if (!p.ok()) fail("program: " + p.error().to_string());
  return std::make_shared<const SemanticProgram>(std::move(*p));
}

// -- inputs --------------------------------------------------------------------

// A reproducible uniform draw in [lo, hi) per element (splitmix64 of the
// index and seed): cheap enough for 16M elements, no shared state.
double uniform_at(uint64_t seed, uint64_t i, double lo, double hi) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return lo + (hi - lo) * static_cast<double>(z >> 11) * 0x1.0p-53;
}

template <class T>
HostTensor uniform(DType dt, std::vector<int64_t> shape, double lo, double hi, uint64_t seed) {
  auto t = HostTensor::zeros(dt, std::move(shape));
  if (!t.ok()) fail("allocation: " + t.error().to_string());
  T* p = t->data_as<T>();
  for (int64_t i = 0; i < t->element_count(); ++i)
    p[i] = static_cast<T>(uniform_at(seed, static_cast<uint64_t>(i), lo, hi));
  return *t;
}

// runtime_bench's filled(): v + (i % 7).
HostTensor filled(DType dt, std::vector<int64_t> shape, float v) {
  auto t = HostTensor::zeros(dt, std::move(shape));
  if (!t.ok()) fail("allocation: " + t.error().to_string());
  for (int64_t i = 0; i < t->element_count(); ++i) t->data_as<float>()[i] = v + static_cast<float>(i % 7);
  return *t;
}

// -- programs ------------------------------------------------------------------

std::shared_ptr<const SemanticProgram> gemm_program(const char* dtype, int64_t n) {
  const std::string s = "[" + std::to_string(n) + ", " + std::to_string(n) + "]";
  const std::string dt = std::string{"\""} + dtype + "\"";
  return load(R"({"format": "tenact.program/1", "name": "gemm",
    "inputs": [{"name": "a", "dtype": )" + dt + R"(, "shape": )" + s + R"(},
               {"name": "b", "dtype": )" + dt + R"(, "shape": )" + s + R"(}],
    "ops": [{"op": "dot_general", "in": ["a", "b"], "out": "c",
             "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]}],
    "outputs": ["c"]})");
}

// cpu_bench's chain: y = tanh(a*b + c) * 0.5 + a, the constant first (a
// layout op; it would split the elementwise run if it stood between them).
std::shared_ptr<const SemanticProgram> chain_program() {
  return load(R"({"format": "tenact.program/1", "name": "tanh_chain",
    "inputs": [{"name": "a", "dtype": "f32", "shape": ["N"]}, {"name": "b", "dtype": "f32", "shape": ["N"]},
               {"name": "c", "dtype": "f32", "shape": ["N"]}],
    "ops": [{"op": "constant", "out": "half", "dtype": "f32", "shape": ["N"], "value": 0.5},
            {"op": "multiply", "in": ["a", "b"], "out": "ab"},
            {"op": "add", "in": ["ab", "c"], "out": "s"},
            {"op": "tanh", "in": ["s"], "out": "t"},
            {"op": "multiply", "in": ["t", "half"], "out": "h"},
            {"op": "add", "in": ["h", "a"], "out": "y"}],
    "outputs": ["y"]})");
}

std::shared_ptr<const SemanticProgram> transpose_program(int64_t n) {
  const std::string s = "[" + std::to_string(n) + ", " + std::to_string(n) + "]";
  return load(R"({"format": "tenact.program/1", "name": "transpose",
    "inputs": [{"name": "a", "dtype": "f32", "shape": )" + s + R"(}],
    "ops": [{"op": "transpose", "in": ["a"], "out": "t", "permutation": [1, 0]}],
    "outputs": ["t"]})");
}

std::shared_ptr<const SemanticProgram> reduce_program(int64_t n) {
  return load(R"({"format": "tenact.program/1", "name": "reduce",
    "inputs": [{"name": "a", "dtype": "f32", "shape": [)" + std::to_string(n) + R"(]}],
    "ops": [{"op": "reduce_sum", "in": ["a"], "out": "s", "dimensions": [0]}],
    "outputs": ["s"]})");
}

// runtime_bench's programs (bench/bench_programs.hpp).
std::shared_ptr<const SemanticProgram> small_program(int64_t n = 1000) { return load(bench::small_program_json(n)); }
std::shared_ptr<const SemanticProgram> mlp_program() { return load(bench::mlp_program_json()); }
std::shared_ptr<const SemanticProgram> scalar_chain_program(int n) { return load(bench::scalar_chain_json(n)); }

// -- checks --------------------------------------------------------------------

std::string fmt(const char* f, double a, double b) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

const HostTensor& only_output(const Result<std::vector<Tensor>>& r, const std::string& name) {
  if (!r.ok()) fail(name + ": " + r.error().to_string());
  if (r->size() != 1) fail(name + ": expected one output");
  if (!(*r)[0].is_host()) fail(name + ": output not host addressable");
  return (*r)[0];
}

// Elementwise f32 results against a reference computed per element;
// |got - want| <= tol * (1 + |want|).
std::string check_elementwise(const HostTensor& got, const std::vector<float>& want, double tol) {
  auto dense = got.contiguous();
  if (!dense.ok()) return "contiguous: " + dense.error().to_string();
  if (dense->element_count() != static_cast<int64_t>(want.size())) return "element count differs";
  const float* g = dense->data_as<float>();
  for (size_t i = 0; i < want.size(); ++i) {
    const double err = std::fabs(static_cast<double>(g[i]) - want[i]) / (1.0 + std::fabs(want[i]));
    if (!(err <= tol)) return fmt("element %.0f off by %.3g (relative)", static_cast<double>(i), err);
  }
  return "ok";
}

// -- workloads -------------------------------------------------------------------

struct Workload {
  std::string name;
  int64_t nodes = 1;  // ops in the program (per-node figures divide by it)
  std::shared_ptr<const SemanticProgram> program;
  std::vector<HostTensor> inputs;
  bool unfused = false;          // runs on the runtime whose engine has fuse_regions off
  std::string check = "not checked";
  std::function<std::string(const HostTensor&)> verify;  // "ok" or what is wrong
};

template <class T>
std::string check_gemm(const HostTensor& a, const HostTensor& b, const HostTensor& c, int64_t n) {
  // 64 entries spread over the result, each an f64 dot product; error bound
  // of a blocked sum of n products (|a|, |b| < 1).
  auto dense = c.contiguous();
  if (!dense.ok()) return "contiguous: " + dense.error().to_string();
  const T* pa = a.data_as<T>();
  const T* pb = b.data_as<T>();
  const T* pc = dense->data_as<T>();
  const double eps = std::is_same_v<T, float> ? 0x1.0p-24 : 0x1.0p-53;
  for (int k = 0; k < 64; ++k) {
    const int64_t i = static_cast<int64_t>(uniform_at(99, 2 * k, 0, static_cast<double>(n)));
    const int64_t j = static_cast<int64_t>(uniform_at(99, 2 * k + 1, 0, static_cast<double>(n)));
    double want = 0, mag = 0;
    for (int64_t l = 0; l < n; ++l) {
      want += static_cast<double>(pa[i * n + l]) * static_cast<double>(pb[l * n + j]);
      mag += std::fabs(static_cast<double>(pa[i * n + l]) * static_cast<double>(pb[l * n + j]));
    }
    const double err = std::fabs(static_cast<double>(pc[i * n + j]) - want);
    if (err > 2.0 * std::ceil(std::log2(static_cast<double>(n))) * eps * mag + 1e-300)
      return fmt("c[%.0f, .] off by %.3g", static_cast<double>(i), err);
  }
  return "ok";
}

Workload make_workload(const std::string& name) {
  Workload w;
  w.name = name;
  for (const char* dt : {"f32", "f64"})
    for (int64_t n : {512, 1024, 2048})
      if (name == "gemm_" + std::string{dt} + "_" + std::to_string(n)) {
        const bool f32 = std::strcmp(dt, "f32") == 0;
        w.program = gemm_program(dt, n);
        if (f32)
          w.inputs = {uniform<float>(DType::F32, {n, n}, -1, 1, 1), uniform<float>(DType::F32, {n, n}, -1, 1, 2)};
        else
          w.inputs = {uniform<double>(DType::F64, {n, n}, -1, 1, 1), uniform<double>(DType::F64, {n, n}, -1, 1, 2)};
        const HostTensor a = w.inputs[0], b = w.inputs[1];
        w.verify = [a, b, n, f32](const HostTensor& c) {
          return f32 ? check_gemm<float>(a, b, c, n) : check_gemm<double>(a, b, c, n);
        };
        return w;
      }
  if (name == "chain_16m") {
    const int64_t n = int64_t{16} << 20;
    w.program = chain_program();
    w.nodes = 6;
    w.inputs = {uniform<float>(DType::F32, {n}, -2, 2, 11), uniform<float>(DType::F32, {n}, -2, 2, 12),
                uniform<float>(DType::F32, {n}, -2, 2, 13)};
    const HostTensor a = w.inputs[0], b = w.inputs[1], c = w.inputs[2];
    w.verify = [a, b, c, n](const HostTensor& y) {
      std::vector<float> want(static_cast<size_t>(n));
      const float *pa = a.data_as<float>(), *pb = b.data_as<float>(), *pc = c.data_as<float>();
      for (int64_t i = 0; i < n; ++i) {
        const float s = pa[i] * pb[i] + pc[i];  // -ffp-contract=off: two roundings, as the program
        want[static_cast<size_t>(i)] = static_cast<float>(std::tanh(static_cast<double>(s))) * 0.5f + pa[i];
      }
      return check_elementwise(y, want, 1e-6);  // tanh within 4 ulps
    };
    return w;
  }
  if (name == "transpose_4096") {
    const int64_t n = 4096;
    w.program = transpose_program(n);
    w.inputs = {uniform<float>(DType::F32, {n, n}, -1, 1, 21)};
    const HostTensor a = w.inputs[0];
    w.verify = [a, n](const HostTensor& t) -> std::string {
      if (!t.is_contiguous()) return "result is a strided view, not materialized";
      const float *pa = a.data_as<float>(), *pt = t.data_as<float>();
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j)
          if (pt[i * n + j] != pa[j * n + i]) return fmt("t[%.0f, %.0f] differs", static_cast<double>(i), static_cast<double>(j));
      return "ok";
    };
    return w;
  }
  if (name == "reduce_16m") {
    const int64_t n = int64_t{16} << 20;
    w.program = reduce_program(n);
    w.inputs = {uniform<float>(DType::F32, {n}, 0, 1, 31)};
    const HostTensor a = w.inputs[0];
    w.verify = [a, n](const HostTensor& s) -> std::string {
      double want = 0, mag = 0;
      const float* pa = a.data_as<float>();
      for (int64_t i = 0; i < n; ++i) {
        want += pa[i];
        mag += std::fabs(pa[i]);
      }
      const double got = *s.data_as<float>();
      const double bound = 2.0 * 24.0 * 0x1.0p-24 * mag;  // 2 ceil(log2 n) eps sum|x| (docs/program-format.md)
      if (!(std::fabs(got - want) <= bound)) return fmt("sum %.9g, want %.9g", got, want);
      return "ok";
    };
    return w;
  }
  if (name == "small_1000") {
    w.program = small_program();
    w.nodes = 5;
    w.inputs = {filled(DType::F32, {1000}, 1), filled(DType::F32, {1000}, 2)};
    const HostTensor x = w.inputs[0], y = w.inputs[1];
    w.verify = [x, y](const HostTensor& e) {
      std::vector<float> want(1000);
      const float *px = x.data_as<float>(), *py = y.data_as<float>();
      for (size_t i = 0; i < 1000; ++i) {
        const float b = px[i] * py[i] + px[i];
        const float c = static_cast<float>(std::tanh(static_cast<double>(b)));
        want[i] = std::max(c - py[i], px[i]);
      }
      return check_elementwise(e, want, 1e-6);
    };
    return w;
  }
  if (name == "mlp_b4") {
    w.program = mlp_program();
    w.nodes = 8;
    w.inputs = {filled(DType::F32, {4, 16}, 0.5f), filled(DType::F32, {16, 32}, 0.25f), filled(DType::F32, {32}, -1.0f),
                filled(DType::F32, {32, 10}, 0.125f), filled(DType::F32, {10}, 2.0f)};
    const std::vector<HostTensor> in = w.inputs;
    w.verify = [in](const HostTensor& y) {
      const float *x = in[0].data_as<float>(), *w1 = in[1].data_as<float>(), *b1 = in[2].data_as<float>(),
                  *w2 = in[3].data_as<float>(), *b2 = in[4].data_as<float>();
      std::vector<double> h(4 * 32);
      std::vector<float> want(4 * 10);
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 32; ++c) {
          double s = b1[c];
          for (int k = 0; k < 16; ++k) s += static_cast<double>(x[r * 16 + k]) * w1[k * 32 + c];
          h[static_cast<size_t>(r * 32 + c)] = std::max(s, 0.0);
        }
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 10; ++c) {
          double s = b2[c];
          for (int k = 0; k < 32; ++k) s += h[static_cast<size_t>(r * 32 + k)] * w2[k * 10 + c];
          want[static_cast<size_t>(r * 10 + c)] = static_cast<float>(s);
        }
      return check_elementwise(y, want, 1e-5);
    };
    return w;
  }
  if (name == "nodes_10k" || name == "nodes_10k_fused") {
    w.program = scalar_chain_program(10000);
    w.nodes = 10000;
    w.unfused = name == "nodes_10k";
    w.inputs = {filled(DType::F32, {}, 1), filled(DType::F32, {}, 0)};
    *w.inputs[1].data_as<float>() = 0.25f;
    const HostTensor x = w.inputs[0], c = w.inputs[1];
    w.verify = [x, c](const HostTensor& v) -> std::string {
      float want = *x.data_as<float>();
      for (int i = 0; i < 10000; ++i) want += *c.data_as<float>();
      const float got = *v.data_as<float>();
      if (got != want) return fmt("%.9g, want %.9g", got, want);
      return "ok";
    };
    return w;
  }
  fail("unknown workload '" + name + "'");
}

const std::vector<std::string>& workload_names() {
  static const std::vector<std::string> names{
      "gemm_f32_512", "gemm_f32_1024", "gemm_f32_2048", "gemm_f64_512", "gemm_f64_1024", "gemm_f64_2048",
      "chain_16m",    "transpose_4096", "reduce_16m",   "small_1000",   "mlp_b4",        "nodes_10k",
      "nodes_10k_fused"};
  return names;
}

std::string list_json() {
  std::string s = "[";
  for (const auto& n : workload_names()) s += std::string{s.size() > 1 ? ", " : ""} + "\"" + n + "\"";
  return s + "]";
}

// -- the bench --------------------------------------------------------------------

class Bench {
 public:
  explicit Bench(size_t threads) : threads_(threads) {
    for (int k = 0; k < 2; ++k) {
      rts_[k] = std::make_unique<Runtime>();
      cpu::CpuEngineOptions eo;
      eo.threads = threads;
      eo.fuse_regions = k == 0;  // [1]: every op a node of its own (runtime_bench (iii))
      auto engine = cpu::CpuEngine::create(eo);
      if (!engine.ok()) fail(engine.error().to_string());
      if (k == 0) threads_ = (*engine)->pool().thread_count();
      if (!rts_[k]->register_engine(std::move(*engine)).ok()) fail("register_engine");
    }
  }

  size_t threads() const { return threads_; }

  // Sets up (first use), runs once untimed and checks, then `reps` timed calls.
  std::string run(const std::string& name, int reps) {
    auto it = workloads_.find(name);
    if (it == workloads_.end()) {
      it = workloads_.emplace(name, make_workload(name)).first;
      Workload& w = it->second;
      auto r = rt(w).run_sync(w.program, w.inputs);
      w.check = w.verify(only_output(r, name));
      if (w.check != "ok") fail(name + ": wrong result: " + w.check);
    }
    Workload& w = it->second;
    Runtime& runtime = rt(w);
    {  // warm-up of this batch of calls
      auto r = runtime.run_sync(w.program, w.inputs);
      only_output(r, name);
    }
    std::vector<double> times;
    times.reserve(static_cast<size_t>(reps));
    for (int i = 0; i < reps; ++i) {
      const auto t0 = Clock::now();
      {
        auto r = runtime.run_sync(w.program, w.inputs);
        if (!r.ok()) fail(name + ": " + r.error().to_string());
      }  // the output is released inside the timed call
      times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::ostringstream o;
    o.precision(9);
    o << "{\"workload\": \"" << name << "\", \"reps\": " << reps << ", \"nodes\": " << w.nodes
      << ", \"threads\": " << threads_ << ", \"check\": \"" << w.check << "\", \"times_s\": [";
    for (size_t i = 0; i < times.size(); ++i) o << (i ? ", " : "") << times[i];
    o << "]}";
    return o.str();
  }

 private:
  Runtime& rt(const Workload& w) { return *rts_[w.unfused ? 1 : 0]; }

  size_t threads_;
  std::unique_ptr<Runtime> rts_[2];
  std::map<std::string, Workload> workloads_;
};

int usage() {
  std::fprintf(stderr,
               "usage: peer_tenact [--threads N] [--workload NAME|all] [--reps N]\n"
               "       peer_tenact [--threads N] --serve   (commands on stdin: run NAME REPS | list | quit)\n"
               "       peer_tenact --list\n"
               "       peer_tenact --dump NAME DIR   (DIR/program.json and DIR/INPUT.npy)\n");
  return 2;
}

/// --dump: the program and its inputs as files for `tenact run`. DIR must
/// exist; files of the same names in it are replaced.
int dump_workload(const std::string& name, const std::string& dir) {
  const Workload w = make_workload(name);
  auto write = [](const std::string& path, const std::string& bytes) {
    if (Status st = write_file(path, bytes); !st.ok()) fail(st.error().to_string());
  };
  write(dir + "/program.json", save_program_json(*w.program));
  const auto& ids = w.program->inputs();
  for (size_t i = 0; i < ids.size() && i < w.inputs.size(); ++i)
    write(dir + "/" + w.program->value(ids[i]).name + ".npy", tensor_to_npy(w.inputs[i]));
  return 0;
}

bool known(const std::string& name) {
  const auto& names = workload_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

int main(int argc, char** argv) {
  size_t threads = 0;
  std::string workload = "all";
  int reps = 5;
  bool serve = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) threads = std::strtoul(argv[++i], nullptr, 10);
    else if (a == "--workload" && i + 1 < argc) workload = argv[++i];
    else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--serve") serve = true;
    else if (a == "--dump" && i + 2 < argc) {
      if (!known(argv[i + 1])) return usage();
      return dump_workload(argv[i + 1], argv[i + 2]);
    }
    else if (a == "--list") {
      std::printf("%s\n", list_json().c_str());
      return 0;
    } else return usage();
  }
  if (reps < 1 || (workload != "all" && !known(workload))) return usage();

  Bench bench(threads);
  if (!serve) {
    for (const auto& name : workload_names())
      if (workload == "all" || workload == name) std::printf("%s\n", bench.run(name, reps).c_str());
    return 0;
  }
  std::printf("{\"ready\": true, \"threads\": %zu, \"workloads\": %s}\n", bench.threads(), list_json().c_str());
  std::fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd, name;
    int n = 0;
    in >> cmd;
    if (cmd == "quit") break;
    if (cmd == "list") std::printf("%s\n", list_json().c_str());
    else if (cmd == "run" && (in >> name >> n) && n >= 1 && known(name)) std::printf("%s\n", bench.run(name, n).c_str());
    else std::printf("{\"error\": \"bad command: %s\"}\n", line.c_str());
    std::fflush(stdout);
  }
  return 0;
}
