// tenact run PROGRAM.json --input NAME=FILE ... [--print-json] [--out DIR]
//            [--repeat N] [--stats] [--stats-json FILE] [--threads N]
//            [--trace FILE] [--engines LIST] [--platform FILE]
//            [--placement NAME=ENGINE[/STORAGE] ...]
//
// Runs through the Runtime (actors/runtime.hpp) with exactly the engines of
// --engines (default "cpu"; setup/engine_setup.hpp), in that preference
// order: the program is prepared through the prepare cache and executed as
// a pipeline. Inputs read from files start in host memory (a --placement
// copies one to an engine's memory first) and outputs end there: results
// left on a device are read back along the registered routes.
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
#include "extensions/builtin_extensions.hpp"
#include "core/tensor_io.hpp"
#include "core/value_file_name.hpp"
#include "actors/runtime.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "engines/sim/sim_platform.hpp"
#include "setup/engine_setup.hpp"
#include "tools/cli.hpp"
#include "tools/cli_args.hpp"
#include "tools/engine_stats.hpp"
#include "tools/input_files.hpp"
#include "tools/model_commands.hpp"
#include "tools/run_output.hpp"

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
  std::string stats_json;
  size_t threads = 0;
  std::string trace;
  std::vector<setup::EngineSpec> engines;
  std::string platform;
  std::vector<std::pair<std::string, EndpointArg>> placements;  // input name, where
  PlacementPolicy policy = PlacementPolicy::Auto;
  std::optional<sim::SimFaultSpec> faults;
  // Models (a program with weights or states): tools/model_commands.hpp.
  std::string weights_dir;
  std::vector<std::string> retain;
  bool retain_all = false;
  std::string materializer;
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
    } else if (a == "--stats-json" || a == "--platform") {
      auto v = value(a == "--platform" ? "--platform" : "--stats-json");
      if (!v) return std::nullopt;
      (a == "--platform" ? r.platform : r.stats_json) = *v;
    } else if (a == "--faults") {
      auto v = value("--faults");
      if (!v) return std::nullopt;
      auto spec = sim::parse_fault_spec(*v);
      if (!spec.ok()) {
        status = usage_error("run", "--faults: " + spec.error().message(), err);
        return std::nullopt;
      }
      r.faults = std::move(*spec);
    } else if (a == "--policy") {
      auto v = value("--policy");
      if (!v) return std::nullopt;
      auto policy = parse_policy_arg(*v);
      if (auto* why = std::get_if<std::string>(&policy)) {
        status = usage_error("run", *why, err);
        return std::nullopt;
      }
      r.policy = std::get<PlacementPolicy>(policy);
    } else if (a == "--engines") {
      auto v = value("--engines");
      if (!v) return std::nullopt;
      auto list = setup::parse_engine_list(*v);
      if (!list.ok()) {
        status = usage_error("run", "--engines: " + list.error().message(), err);
        return std::nullopt;
      }
      r.engines = std::move(*list);
    } else if (a == "--placement") {
      auto v = value("--placement");
      if (!v) return std::nullopt;
      auto pair = parse_name_value(*v, "--placement", "ENGINE[/STORAGE]");
      if (auto* why = std::get_if<std::string>(&pair)) {
        status = usage_error("run", *why, err);
        return std::nullopt;
      }
      auto& [name, where] = std::get<0>(pair);
      auto endpoint = parse_endpoint_arg(where, "");
      if (auto* why = std::get_if<std::string>(&endpoint)) {
        status = usage_error("run", "--placement " + name + "=" + where + ": " + *why, err);
        return std::nullopt;
      }
      r.placements.emplace_back(name, std::get<EndpointArg>(endpoint));
    } else if (a == "--trace") {
      auto v = value("--trace");
      if (!v) return std::nullopt;
      r.trace = *v;
    } else if (a == "--print-json") {
      r.print_json = true;
    } else if (a == "--retain-all") {
      r.retain_all = true;
    } else if (a == "--weights" || a == "--retain" || a == "--materializer") {
      auto v = value(a == "--weights" ? "--weights" : a == "--retain" ? "--retain" : "--materializer");
      if (!v) return std::nullopt;
      if (a == "--weights") r.weights_dir = *v;
      else if (a == "--retain") r.retain.push_back(*v);
      else r.materializer = *v;
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
  if (r.engines.empty()) r.engines = {setup::EngineSpec{setup::EngineSpec::Kind::Cpu, "cpu"}};
  return r;
}

// Copies each --placement input to its endpoint (the engine's default
// storage class when none is named). Errors name the input.
Status place_inputs(Runtime& runtime, const SemanticProgram& p, const RunArgs& args, std::vector<HostTensor>& inputs) {
  for (const auto& [name, where] : args.placements) {
    size_t index = p.inputs().size();
    for (size_t i = 0; i < p.inputs().size(); ++i)
      if (p.value(p.inputs()[i]).name == name) index = i;
    if (index == p.inputs().size())
      return Error{ErrorCode::InputMismatch, "--placement names '" + name + "', which is not an input of the program"};
    Endpoint to{where.engine, where.storage_class};
    if (to.storage_class.empty()) {
      auto config = runtime.config();
      const EngineEntry* entry = config->find_engine(to.engine);
      if (entry == nullptr)
        return Error{ErrorCode::InputMismatch, "--placement " + name + ": engine '" + to.engine + "' is not among --engines"};
      to.storage_class = entry->capabilities.default_storage_class;
    }
    auto placed = runtime.copy(inputs[index], to).get();
    if (!placed.ok()) return placed.error().with_context("placing input '" + name + "' at " + to.to_string());
    inputs[index] = std::move(*placed);
  }
  return ok_status();
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
  auto loaded = load_program_file(parsed->program, builtin_extension_registry());
  if (!loaded.ok()) return fail(loaded.error());
  auto shared_program = std::make_shared<const SemanticProgram>(std::move(*loaded));
  const SemanticProgram* program = shared_program.get();
  auto inputs = read_input_files(*program, parsed->inputs);
  if (!inputs.ok()) return fail(inputs.error());
  const bool model = program->is_model() || !parsed->weights_dir.empty() || !parsed->retain.empty() ||
                     parsed->retain_all || !parsed->materializer.empty();
  if (model) {
    if (!parsed->placements.empty() || !parsed->trace.empty() || !parsed->stats_json.empty())
      return usage_error("run", "--placement, --trace and --stats-json are for programs without weights or states",
                         err);
    ModelRunRequest request;
    request.program = shared_program;
    request.inputs = std::move(*inputs);
    request.engines = parsed->engines;
    request.engine_options.cpu_threads = parsed->threads;
    request.engine_options.faults = parsed->faults;
    if (!parsed->platform.empty()) {
      auto platform = sim::load_platform(parsed->platform);
      if (!platform.ok()) return fail(platform.error());
      request.engine_options.platform = std::move(*platform);
    }
    request.weights_dir = parsed->weights_dir;
    request.retain = parsed->retain;
    request.retain_all = parsed->retain_all;
    request.materializer = parsed->materializer;
    request.repeat = parsed->repeat;
    request.stats = parsed->stats;
    request.print_json = parsed->print_json;
    request.out_dir = parsed->out_dir;
    return run_model(request, out, err);
  }

  RuntimeOptions options;
  options.builtin_extensions = true;
  if (!parsed->trace.empty()) options.trace = std::make_shared<TraceRecorder>();
  Runtime runtime{options};
  if (Status started = runtime.status(); !started.ok()) return fail(started.error());
  setup::EngineSetupOptions engine_options;
  engine_options.cpu_threads = parsed->threads;
  engine_options.faults = parsed->faults;
  if (!parsed->platform.empty()) {
    auto platform = sim::load_platform(parsed->platform);
    if (!platform.ok()) return fail(platform.error());
    engine_options.platform = std::move(*platform);
  }
  auto engines = setup::register_engines(runtime, parsed->engines, engine_options);
  if (!engines.ok()) return fail(engines.error());
  if (Status placed = place_inputs(runtime, *program, *parsed, *inputs); !placed.ok()) return fail(placed.error());
  Result<std::vector<HostTensor>> outputs = std::vector<HostTensor>{};
  uint64_t productions = 0;
  RunStats run_stats;
  // Per-run lines, written in blocks: a write per run would cost a
  // system call in the loop a user times.
  std::string run_lines;
  auto flush_run_lines = [&] {
    err << run_lines;
    run_lines.clear();
  };
  for (uint64_t i = 0; i < parsed->repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    ExecutionStats execution;
    PrepareOptions prepare_options;
    prepare_options.policy = parsed->policy;
    // run_sync: answered to this thread; a cached small program then costs
    // no future (Runtime::run_sync).
    outputs = runtime.run_sync(shared_program, *inputs, prepare_options, &execution);
    if (!outputs.ok()) {
      flush_run_lines();
      return fail(outputs.error());
    }
    const auto elapsed = std::chrono::steady_clock::now() - start;
    run_stats.add_run(execution,
                      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count()));
    if (parsed->repeat > 1 || parsed->stats) {
      // The cache's counters are asked for (a message round trip) only when
      // the run's prepare was not a memo hit.
      const auto us = std::chrono::duration_cast<std::chrono::microseconds>(elapsed);
      const uint64_t now = execution.prepare_requests > 0 ? runtime.cache_stats().productions : productions;
      run_lines += "run " + std::to_string(i + 1) + "/" + std::to_string(parsed->repeat) + ": " +
                   std::to_string(us.count()) + " us, prepare " + (now > productions ? "produced" : "cache hit") + "\n";
      productions = now;
      if (run_lines.size() >= 64 * 1024) flush_run_lines();
    }
  }
  flush_run_lines();
  if (Status back = outputs_to_host(runtime, *outputs); !back.ok()) return fail(back.error());
  run_stats.cache = runtime.cache_stats();
  run_stats.queues = runtime.queue_stats();
  if (parsed->stats) {
    const CacheStats& s = run_stats.cache;
    err << "cache: hits " << s.hits << ", misses " << s.misses << ", in-flight joins " << s.in_flight_joins
        << ", productions " << s.productions << ", redirects " << s.redirects << ", deterministic failures "
        << s.deterministic_failures << " (served " << s.deterministic_failures_served << "), evictions "
        << s.evictions << ", entries " << s.entries << ", bytes " << s.bytes << "\n";
    print_engine_stats(*engines, run_stats, err);
  }
  if (!parsed->stats_json.empty())
    if (Status w = write_file(parsed->stats_json, engine_stats_json(*engines, run_stats)); !w.ok()) return fail(w.error());
  if (options.trace)
    if (auto s = options.trace->write(parsed->trace); !s.ok()) return fail(s.error());
  if (!parsed->out_dir.empty())
    if (Status written = write_outputs(*program, *outputs, parsed->out_dir); !written.ok()) return fail(written.error());
  if (parsed->print_json) {
    print_outputs_json(*program, *outputs, out);
  } else if (parsed->out_dir.empty()) {
    print_outputs_text(*program, *outputs, out);
  }
  return kOk;
}

}  // namespace tenact::cli
