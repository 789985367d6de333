// load_bench: whether loading is linear. Prints the cost per object of
// parsing documents of 100k/200k/400k empty JSON objects and the cost per
// op of loading, validating, staging, preparing and running programs of
// 50k/100k/200k ops, each with the ratio of the largest size's per-object
// cost to the smallest's (1 = linear, 2 or 4 = quadratic), and the peak
// resident memory of the run path per program size, measured in a fresh
// child process each (see bench/README.md). A benchmark, not a test: exits
// 0 whatever the figures, 1 when a step fails, 2 on a bad command line.
//
// Usage: load_bench [--quick] [--only documents|programs|memory]
//        load_bench --memory-child OPS   (one child's measurement; internal)
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/runtime.hpp"
#include "core/json_internal.hpp"
#include "core/program_json.hpp"
#include "core/tensor_io.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "planning/exec_program.hpp"

using namespace tenact;
using Clock = std::chrono::steady_clock;

namespace {

/// Ratio of the largest size's per-object cost to the smallest's above
/// which a figure counts as not linear.
constexpr double kLinearBound = 1.5;
int g_misses = 0;
int g_failures = 0;

void fail(const std::string& what, const Error& e) {
  std::fprintf(stderr, "load_bench: %s: %s\n", what.c_str(), e.to_string().c_str());
  ++g_failures;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// -- documents ---------------------------------------------------------------------

std::string empty_objects(size_t n) {
  std::string s = "[";
  s.reserve(3 * n + 2);
  for (size_t i = 0; i < n; ++i) s += i ? ",{}" : "{}";
  return s + "]";
}

std::string tensor_of_empty_objects(size_t n) {
  return R"({"dtype": "f32", "shape": [)" + std::to_string(n) + R"(], "data": )" + empty_objects(n) + "}";
}

// A chain of `ops` adds on f32[4]: y0 = x + x, y(i) = y(i-1) + x (what
// bench/make_chain_program.py writes); its output is the last value, or
// with `every_output` every value.
std::string chain_text(size_t ops, bool every_output) {
  std::string s = R"({"format": "tenact.program/1", "name": "chain",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
  "ops": [)";
  s.reserve(s.size() + 48 * ops);
  for (size_t i = 0; i < ops; ++i) {
    s += i ? ",\n    " : "\n    ";
    s += R"({"op": "add", "in": [")" + (i ? "y" + std::to_string(i - 1) : std::string{"x"}) +
         R"(", "x"], "out": "y)" + std::to_string(i) + "\"}";
  }
  s += "\n  ],\n  \"outputs\": [";
  for (size_t i = every_output ? 0 : ops - 1; i < ops; ++i)
    s += "\"y" + std::to_string(i) + (i + 1 < ops ? "\", " : "\"");
  return s + "]\n}\n";
}

std::string chain_program(size_t ops) { return chain_text(ops, false); }

/// One figure at several sizes: best seconds per size.
struct Series {
  std::string name;
  std::string per;  // "object", "op"
  bool target = true;
  std::vector<size_t> sizes;
  std::vector<double> best;
};

void print_series(const Series& s) {
  for (size_t k = 0; k < s.sizes.size(); ++k) {
    const double per = s.best[k] / static_cast<double>(s.sizes[k]) * 1e9;
    std::printf("  %-44s %7zuk %10.1f ns/%-6s %9.1f ms\n", s.name.c_str(), s.sizes[k] / 1000, per,
                s.per.c_str(), s.best[k] * 1e3);
  }
  if (s.best.size() < 2) return;
  const double first = s.best.front() / static_cast<double>(s.sizes.front());
  const double last = s.best.back() / static_cast<double>(s.sizes.back());
  const double ratio = last / first;
  const bool ok = ratio <= kLinearBound;
  if (s.target && !ok) ++g_misses;
  std::printf("  %-44s %zuk/%zuk per-%s cost ratio %.2f  %s\n", s.name.c_str(), s.sizes.back() / 1000,
              s.sizes.front() / 1000, s.per.c_str(), ratio,
              s.target ? (ok ? "ok (<= 1.5)" : "MISS (> 1.5: not linear)") : "(baseline, info)");
}

/// Best of `reps` timings of `f` (a Status-returning step) at each size.
template <class Make, class F>
Series measure(std::string name, std::string per, const std::vector<size_t>& sizes, int reps, Make make, F f,
               bool target = true) {
  Series s{std::move(name), std::move(per), target, sizes, {}};
  for (size_t n : sizes) {
    auto input = make(n);
    double best = 1e300;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = Clock::now();
      Status st = f(input);
      const double t = seconds_since(t0);
      if (!st.ok()) {
        fail(s.name + " at " + std::to_string(n), st.error());
        break;
      }
      best = std::min(best, t);
    }
    s.best.push_back(best);
  }
  print_series(s);
  return s;
}

template <class T>
Status status_of(const Result<T>& r) {
  if (r.ok()) return ok_status();
  return r.error();
}

Status expect_error(const Status& st, ErrorCode code, const char* what) {
  if (st.ok()) return Error{ErrorCode::Internal, std::string{what} + ": expected an error, got none"};
  if (st.error().code() != code)
    return Error{ErrorCode::Internal, std::string{what} + ": unexpected error " + st.error().to_string()};
  return ok_status();
}

void bench_documents(int reps) {
  const std::vector<size_t> sizes{100000, 200000, 400000};
  std::printf("documents of N empty objects, \"[{},{},...]\" (3 bytes per object); best of %d\n", reps);
  measure("nlohmann::json::parse (plain DOM, baseline)", "object", sizes, reps, empty_objects,
          [](const std::string& text) -> Status {
            auto doc = json_io::Json::parse(text, nullptr, false);
            if (doc.is_discarded()) return Error{ErrorCode::Parse, "nlohmann rejected the document"};
            return ok_status();
          },
          false);
  measure("json_io::parse_json (keys, depth checked)", "object", sizes, reps, empty_objects,
          [](const std::string& text) -> Status {
            auto doc = json_io::parse_json(text, "bench");
            if (!doc.ok()) return doc.error();
            if (doc->size() < 1) return Error{ErrorCode::Internal, "empty DOM"};
            return ok_status();
          });
  measure("load_program (refused: not an object)", "object", sizes, reps, empty_objects,
          [](const std::string& text) -> Status {
            return expect_error(status_of(load_program(text)), ErrorCode::Schema, "load_program");
          });
  measure("parse_tensor_json (\"data\": [{}, ...])", "object", sizes, reps, tensor_of_empty_objects,
          [](const std::string& text) -> Status {
            return expect_error(status_of(parse_tensor_json(text)), ErrorCode::Schema, "parse_tensor_json");
          });
}

// -- programs ------------------------------------------------------------------------

std::unique_ptr<Runtime> fresh_runtime() {
  auto rt = std::make_unique<Runtime>();
  auto engine = cpu::CpuEngine::create();
  if (!engine.ok()) {
    fail("CpuEngine::create", engine.error());
    std::exit(1);
  }
  if (auto s = rt->register_engine(std::move(*engine)); !s.ok()) {
    fail("register_engine", s.error());
    std::exit(1);
  }
  return rt;
}

std::vector<HostTensor> chain_inputs() {
  auto x = HostTensor::zeros(DType::F32, {4});
  for (int i = 0; i < 4; ++i) x->data_as<float>()[i] = 1.0f;
  return {*x};
}

void bench_programs(int reps) {
  const std::vector<size_t> sizes{50000, 100000, 200000};
  std::printf("\nprograms: a chain of N adds on f32[4] (one fused region on the CPU engine); best of %d\n", reps);
  measure("parse_program_draft (JSON -> draft)", "op", sizes, reps, chain_program,
          [](const std::string& text) -> Status {
            DraftReport r = parse_program_draft(text);
            if (!r.errors.empty()) return r.errors.front();
            return ok_status();
          });
  auto draft_of = [](size_t n) { return *parse_program_draft(chain_program(n)).draft; };
  measure("validate_all (draft -> program)", "op", sizes, reps, draft_of,
          [](const ProgramDraft& d) -> Status { return status_of(validate(d)); });
  auto program_of = [](size_t n) {
    return std::make_shared<const SemanticProgram>(*load_program(chain_program(n)));
  };
  measure("load_program (JSON -> program)", "op", sizes, reps, chain_program,
          [](const std::string& text) -> Status { return status_of(load_program(text)); });
  measure("stage (program -> exec program)", "op", sizes, reps, program_of,
          [](const std::shared_ptr<const SemanticProgram>& p) -> Status { return status_of(stage(*p)); });
  measure("Runtime::prepare (cache miss)", "op", sizes, reps, program_of,
          [](const std::shared_ptr<const SemanticProgram>& p) -> Status {
            auto rt = fresh_runtime();
            const auto inputs = chain_inputs();
            return status_of(rt->prepare(p, describe_inputs(inputs, Endpoint{})).get());
          });
  measure("Runtime::prepare, every value an output", "op", sizes, reps,
          [](size_t n) { return std::make_shared<const SemanticProgram>(*load_program(chain_text(n, true))); },
          [](const std::shared_ptr<const SemanticProgram>& p) -> Status {
            auto rt = fresh_runtime();
            const auto inputs = chain_inputs();
            return status_of(rt->prepare(p, describe_inputs(inputs, Endpoint{})).get());
          });
  measure("Runtime::run (prepare miss + first run)", "op", sizes, reps, program_of,
          [](const std::shared_ptr<const SemanticProgram>& p) -> Status {
            auto rt = fresh_runtime();
            auto out = rt->run(p, chain_inputs()).get();
            if (!out.ok()) return out.error();
            const float want = static_cast<float>(p->ops().size() + 1);
            if (out->size() != 1 || (*out)[0].data_as<float>()[0] != want)
              return Error{ErrorCode::Internal, "wrong result"};
            return ok_status();
          });
}

// -- memory --------------------------------------------------------------------------

// Peak resident set so far, in KiB (VmHWM).
long peak_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

long current_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  return 0;
}

// In a fresh process: the peak after each step of `tenact run`'s path.
int memory_child(size_t ops) {
  const long start = current_kib();
  const std::string text = chain_program(ops);
  const long after_text = peak_kib();
  auto loaded = load_program(text);
  if (!loaded.ok()) {
    fail("load_program", loaded.error());
    return 1;
  }
  auto program = std::make_shared<const SemanticProgram>(std::move(*loaded));
  const long after_load = peak_kib();
  auto rt = fresh_runtime();
  const auto inputs = chain_inputs();
  auto prepared = rt->prepare(program, describe_inputs(inputs, Endpoint{})).get();
  if (!prepared.ok()) {
    fail("prepare", prepared.error());
    return 1;
  }
  const long after_prepare = peak_kib();
  auto out = rt->execute(*prepared, inputs).get();
  if (!out.ok()) {
    fail("execute", out.error());
    return 1;
  }
  const long after_run = peak_kib();
  std::printf("%ld %ld %ld %ld %ld\n", start, after_text, after_load, after_prepare, after_run);
  return 0;
}

void bench_memory(const char* self) {
  std::printf("\npeak resident memory of load + prepare + run (the path of `tenact run`), a fresh process per size\n");
  std::printf("  %8s %10s %10s %10s %10s %10s %12s\n", "ops", "start MB", "+text MB", "+load MB", "+prepare MB",
              "+run MB", "bytes/op");
  std::vector<double> per_op;
  const std::vector<size_t> sizes{50000, 100000, 200000};
  for (size_t n : sizes) {
    const std::string cmd = std::string{self} + " --memory-child " + std::to_string(n);
    std::FILE* child = popen(cmd.c_str(), "r");
    long v[5] = {0, 0, 0, 0, 0};
    const bool read = child && std::fscanf(child, "%ld %ld %ld %ld %ld", &v[0], &v[1], &v[2], &v[3], &v[4]) == 5;
    if (child) pclose(child);
    if (!read) {
      fail("memory child " + std::to_string(n), Error{ErrorCode::Internal, "no figures"});
      continue;
    }
    auto mb = [](long kib) { return static_cast<double>(kib) / 1024.0; };
    const double bytes = static_cast<double>(v[4] - v[1]) * 1024.0 / static_cast<double>(n);
    per_op.push_back(bytes);
    std::printf("  %7zuk %10.1f %10.1f %10.1f %11.1f %10.1f %12.0f\n", n / 1000, mb(v[0]), mb(v[1] - v[0]),
                mb(v[2] - v[1]), mb(v[3] - v[2]), mb(v[4] - v[3]), bytes);
  }
  std::printf("  (peak growth past the program text, per op: load, prepare and run together)\n");
  if (per_op.size() == sizes.size())
    std::printf("  %zuk/%zuk bytes-per-op ratio %.2f\n", sizes.back() / 1000, sizes.front() / 1000,
                per_op.back() / per_op.front());
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--memory-child" && i + 1 < argc) return memory_child(std::strtoull(argv[i + 1], nullptr, 10));
    if (a == "--quick") {
      quick = true;
    } else if (a == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: load_bench [--quick] [--only documents|programs|memory]\n");
      return 2;
    }
  }
  const int reps = quick ? 1 : 3;
  if (only.empty() || only == "documents") bench_documents(reps);
  if (only.empty() || only == "programs") bench_programs(reps);
  if (only.empty() || only == "memory") {
    // The child is this executable (popen's shell would read its own /proc/self/exe).
    char self[4096] = {};
    const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len > 0) bench_memory(self);
    else fail("readlink /proc/self/exe", Error{ErrorCode::Io, std::strerror(errno)});
  }
  std::printf("\n%d figure(s) not linear, %d failure(s)\n", g_misses, g_failures);
  return g_failures ? 1 : 0;
}
