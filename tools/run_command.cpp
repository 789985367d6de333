// tenact run PROGRAM.json --input NAME=FILE ... [--print-json] [--out DIR]
//            [--repeat N] [--stats] [--threads N] [--trace FILE]
//
// Runs through the Runtime (actors/runtime.hpp) with one CPU engine: the
// program is prepared through the prepare cache and executed as a pipeline.
// --out writes through core/output_folder.hpp: one file per distinct
// output name (escaped by core/value_file_name.hpp), never outside DIR,
// all files complete or none.
#include <map>
#include <optional>
#include <chrono>
#include <set>

#include "core/json_text.hpp"
#include "core/output_folder.hpp"
#include "core/program_json.hpp"
#include "core/tensor_io.hpp"
#include "core/value_file_name.hpp"
#include "actors/runtime.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "tools/cli.hpp"
#include "tools/cli_args.hpp"
#include "tools/input_files.hpp"

namespace tenact::cli {

namespace {

constexpr uint64_t kMaxRepeat = 1000000;

struct RunArgs {
  std::string program;
  std::vector<std::pair<std::string, std::string>> inputs;  // name, file
  bool print_json = false;
  std::string out_dir;
  uint64_t repeat = 1;
  bool stats = false;
  size_t threads = 0;
  std::string trace;
};

// Returns the parsed arguments or prints a usage error (returns nullopt).
std::optional<RunArgs> parse_run_args(const std::vector<std::string>& args, std::ostream& err, int& status) {
  RunArgs r;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* flag) -> std::optional<std::string> {
      if (i + 1 >= args.size()) {
        status = usage_error("run", std::string{flag} + " needs a value", err);
        return std::nullopt;
      }
      return args[++i];
    };
    if (a == "--input" || a == "-i") {
      auto v = value("--input");
      if (!v) return std::nullopt;
      auto pair = parse_name_value(*v, "--input", "FILE");
      if (auto* why = std::get_if<std::string>(&pair)) {
        status = usage_error("run", *why, err);
        return std::nullopt;
      }
      r.inputs.push_back(std::move(std::get<0>(pair)));
    } else if (a == "--repeat" || a == "--threads") {
      auto v = value(a == "--repeat" ? "--repeat" : "--threads");
      if (!v) return std::nullopt;
      const uint64_t max = a == "--repeat" ? kMaxRepeat : WorkerPool::kMaxThreads;
      auto n = parse_count(*v, max);
      if (!n) {
        status = usage_error("run", a + " expects a positive count up to " + std::to_string(max) + ", got '" + *v + "'",
                             err);
        return std::nullopt;
      }
      if (a == "--repeat") r.repeat = *n;
      else r.threads = static_cast<size_t>(*n);
    } else if (a == "--stats") {
      r.stats = true;
    } else if (a == "--trace") {
      auto v = value("--trace");
      if (!v) return std::nullopt;
      r.trace = *v;
    } else if (a == "--print-json") {
      r.print_json = true;
    } else if (a == "--out") {
      auto v = value("--out");
      if (!v) return std::nullopt;
      r.out_dir = *v;
    } else if (!a.empty() && a[0] == '-') {
      status = usage_error("run", "unknown option '" + a + "'", err);
      return std::nullopt;
    } else if (r.program.empty()) {
      r.program = a;
    } else {
      status = usage_error("run", "unexpected argument '" + a + "' (one PROGRAM.json only)", err);
      return std::nullopt;
    }
  }
  if (r.program.empty()) {
    status = usage_error("run", "expects a PROGRAM.json", err);
    return std::nullopt;
  }
  return r;
}

void print_outputs_json(const SemanticProgram& p, const std::vector<HostTensor>& outputs, std::ostream& out) {
  out << "{\"outputs\": {";
  std::set<std::string> seen;
  bool first = true;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = p.value(p.outputs()[i]).name;
    if (!seen.insert(name).second) continue;
    out << (first ? "\n  " : ",\n  ") << json_quoted(name) << ": " << tensor_to_json(outputs[i]);
    first = false;
  }
  out << "\n}}\n";
}

// Each distinct output name once, as DIR/<escaped name>.npy; every file
// complete or none of them (OutputFolder).
Status write_outputs(const SemanticProgram& p, const std::vector<HostTensor>& outputs, const std::string& dir) {
  TENACT_ASSIGN_OR_RETURN(OutputFolder folder, OutputFolder::open(dir));
  std::set<std::string> seen;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = p.value(p.outputs()[i]).name;
    if (!seen.insert(name).second) continue;
    auto file = value_file_name(name, ".npy");
    if (!file.ok()) return file.error().with_context("output '" + name + "'");
    TENACT_TRY(folder.stage(*file, tensor_to_npy(outputs[i])));
  }
  return folder.commit();
}

}  // namespace

int run_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  int status = kOk;
  auto parsed = parse_run_args(args, err, status);
  if (!parsed) return status;
  auto fail = [&](const Error& e) {
    err << "tenact run: " << e.to_string() << "\n";
    return kInvalid;
  };
  auto loaded = load_program_file(parsed->program);
  if (!loaded.ok()) return fail(loaded.error());
  auto shared_program = std::make_shared<const SemanticProgram>(std::move(*loaded));
  const SemanticProgram* program = shared_program.get();
  auto inputs = read_input_files(*program, parsed->inputs);
  if (!inputs.ok()) return fail(inputs.error());

  RuntimeOptions options;
  if (!parsed->trace.empty()) options.trace = std::make_shared<TraceRecorder>();
  Runtime runtime{options};
  cpu::CpuEngineOptions engine_options;
  engine_options.threads = parsed->threads;
  if (Status started = runtime.status(); !started.ok()) return fail(started.error());
  auto engine = cpu::CpuEngine::create(engine_options);
  if (!engine.ok()) return fail(engine.error());
  if (auto s = runtime.register_engine(std::move(*engine)); !s.ok()) return fail(s.error());
  Result<std::vector<HostTensor>> outputs = std::vector<HostTensor>{};
  uint64_t productions = 0;
  for (uint64_t i = 0; i < parsed->repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    outputs = runtime.run(shared_program, *inputs).get();
    if (!outputs.ok()) return fail(outputs.error());
    if (parsed->repeat > 1 || parsed->stats) {
      const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
      const uint64_t now = runtime.cache_stats().productions;
      err << "run " << (i + 1) << "/" << parsed->repeat << ": " << us.count() << " us, prepare "
          << (now > productions ? "produced" : "cache hit") << "\n";
      productions = now;
    }
  }
  if (parsed->stats) {
    const CacheStats s = runtime.cache_stats();
    err << "cache: hits " << s.hits << ", misses " << s.misses << ", in-flight joins " << s.in_flight_joins
        << ", productions " << s.productions << ", redirects " << s.redirects << ", deterministic failures "
        << s.deterministic_failures << " (served " << s.deterministic_failures_served << "), evictions "
        << s.evictions << ", entries " << s.entries << ", bytes " << s.bytes << "\n";
  }
  if (options.trace)
    if (auto s = options.trace->write(parsed->trace); !s.ok()) return fail(s.error());
  if (!parsed->out_dir.empty())
    if (Status written = write_outputs(*program, *outputs, parsed->out_dir); !written.ok()) return fail(written.error());
  if (parsed->print_json) {
    print_outputs_json(*program, *outputs, out);
  } else if (parsed->out_dir.empty()) {
    for (size_t i = 0; i < outputs->size(); ++i) {
      const HostTensor& t = (*outputs)[i];
      out << program->value(program->outputs()[i]).name << ": " << to_string(t.dtype())
          << to_string(t.shape());
      if (t.element_count() <= 64) out << " = " << tensor_to_json(t);
      out << "\n";
    }
  }
  return kOk;
}

}  // namespace tenact::cli
