// tenact plan MODEL.json [--weights DIR] [--input NAME=DTYPE[SHAPE] ...] [--json]
//             [--tensor NAME=DTYPE[SHAPE] ...] [--engines LIST] [--platform FILE]
//             [--materializer ID] [--retain NAME ... | --retain-all] [--no-pack]
//             [--prefer NODE=PROVIDER ...] [--require NODE=CAPABILITY ...]
// and the model path of `tenact run` (a program with weights or states).
#include "tools/model_commands.hpp"

#include <chrono>
#include <map>
#include <optional>

#include "actors/runtime.hpp"
#include "core/model_weights.hpp"
#include "core/program_json.hpp"
#include "engines/sim/sim_platform.hpp"
#include "extensions/builtin_extensions.hpp"
#include "planning/model/model_plan.hpp"
#include "planning/model/model_plan_report.hpp"
#include "planning/model/provider_catalog.hpp"
#include "tools/cli.hpp"
#include "tools/cli_args.hpp"
#include "tools/run_output.hpp"

namespace tenact::cli {

namespace {

struct PlanArgs {
  std::string program;
  std::string weights_dir;
  std::vector<std::pair<std::string, ResolvedTensorSpec>> inputs;
  std::vector<std::pair<std::string, ResolvedTensorSpec>> tensors;
  std::vector<setup::EngineSpec> engines;
  std::string platform;
  ModelCompileOptions compile;
  bool json = false;
};

std::optional<PlanArgs> parse_plan_args(const std::vector<std::string>& args, std::ostream& err, int& status) {
  PlanArgs r;
  auto usage = [&](const std::string& message) {
    status = usage_error("plan", message, err);
    return std::nullopt;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= args.size()) return std::nullopt;
      return args[++i];
    };
    auto pair_of = [&](const std::string& text, const std::string& word)
        -> std::optional<std::pair<std::string, std::string>> {
      auto pair = parse_name_value(text, a, word);
      if (auto* why = std::get_if<std::string>(&pair)) {
        status = usage_error("plan", *why, err);
        return std::nullopt;
      }
      return std::get<0>(std::move(pair));
    };
    if (a == "--json") {
      r.json = true;
      continue;
    }
    if (a == "--retain-all") {
      r.compile.retain_all = true;
      continue;
    }
    if (a == "--no-pack") {
      r.compile.pack_activations = false;
      continue;
    }
    if (!a.empty() && a[0] == '-') {
      static const char* kWithValue[] = {"--weights", "--input",  "--tensor", "--engines", "--platform",
                                         "--materializer", "--retain", "--prefer", "--require"};
      bool known = false;
      for (const char* f : kWithValue) known = known || a == f;
      if (!known) return usage("unknown option '" + a + "'");
      auto v = value();
      if (!v) return usage(a + " needs a value");
      if (a == "--weights") {
        r.weights_dir = *v;
      } else if (a == "--platform") {
        r.platform = *v;
      } else if (a == "--materializer") {
        r.compile.weight_materializer = *v;
      } else if (a == "--retain") {
        r.compile.retain.push_back(*v);
      } else if (a == "--engines") {
        auto list = setup::parse_engine_list(*v);
        if (!list.ok()) return usage("--engines: " + list.error().message());
        r.engines = std::move(*list);
      } else if (a == "--input" || a == "--tensor") {
        auto pair = pair_of(*v, "DTYPE[SHAPE]");
        if (!pair) return std::nullopt;
        auto spec = parse_tensor_spec(pair->second);
        if (auto* why = std::get_if<std::string>(&spec)) return usage(a + " " + pair->first + ": " + *why);
        (a == "--input" ? r.inputs : r.tensors).emplace_back(pair->first, std::get<ResolvedTensorSpec>(spec));
      } else if (a == "--prefer") {
        auto pair = pair_of(*v, "PROVIDER");
        if (!pair) return std::nullopt;
        r.compile.preferred_providers[pair->first] = pair->second;
      } else {  // --require
        auto pair = pair_of(*v, "CAPABILITY");
        if (!pair) return std::nullopt;
        r.compile.required_capabilities[pair->first].push_back(pair->second);
      }
      continue;
    }
    if (!r.program.empty()) return usage("unexpected argument '" + a + "' (one MODEL.json only)");
    r.program = a;
  }
  if (r.program.empty()) return usage("expects a MODEL.json");
  if (r.engines.empty()) r.engines = {setup::EngineSpec{setup::EngineSpec::Kind::Cpu, "cpu"}};
  return r;
}

// The engines of --engines (and --platform) registered with `runtime`.
Result<setup::RegisteredEngines> register_listed(Runtime& runtime, const std::vector<setup::EngineSpec>& engines,
                                                 setup::EngineSetupOptions options, const std::string& platform) {
  if (!platform.empty()) {
    TENACT_ASSIGN_OR_RETURN(auto loaded, sim::load_platform(platform));
    options.platform = std::move(loaded);
  }
  return setup::register_engines(runtime, engines, std::move(options));
}

}  // namespace

int run_plan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  int status = kOk;
  auto parsed = parse_plan_args(args, err, status);
  if (!parsed) return status;
  auto fail = [&](const Error& e) {
    err << "tenact plan: " << e.to_string() << "\n";
    return kInvalid;
  };
  auto loaded = load_program_file(parsed->program, builtin_extension_registry());
  if (!loaded.ok()) return fail(loaded.error());
  auto program = std::make_shared<const SemanticProgram>(std::move(*loaded));
  if (!parsed->weights_dir.empty()) {
    auto weights = load_weights_folder(*program, parsed->weights_dir);
    if (!weights.ok()) return fail(weights.error());
  }
  for (auto& [name, spec] : parsed->inputs) parsed->compile.tensors[name] = spec;
  for (auto& [name, spec] : parsed->tensors) parsed->compile.tensors[name] = spec;
  RuntimeOptions options;
  options.builtin_extensions = true;
  Runtime runtime{options};
  if (Status started = runtime.status(); !started.ok()) return fail(started.error());
  auto engines = register_listed(runtime, parsed->engines, {}, parsed->platform);
  if (!engines.ok()) return fail(engines.error());
  auto catalog = ProviderCatalog::from_config(*runtime.config(), PlacementConstraint{});
  if (!catalog.ok()) return fail(catalog.error());
  auto plan = compile_model_plan(program, *catalog, parsed->compile);
  if (!plan.ok()) return fail(plan.error());
  out << (parsed->json ? model_plan_json(**plan) : describe_model_plan(**plan));
  return kOk;
}

int run_model(const ModelRunRequest& request, std::ostream& out, std::ostream& err) {
  auto fail = [&](const Error& e) {
    err << "tenact run: " << e.to_string() << "\n";
    return kInvalid;
  };
  const SemanticProgram& program = *request.program;
  std::map<std::string, Tensor> weights;
  if (!request.weights_dir.empty()) {
    auto read = load_weights_folder(program, request.weights_dir);
    if (!read.ok()) return fail(read.error());
    weights.insert(read->begin(), read->end());
  }
  RuntimeOptions options;
  options.builtin_extensions = true;
  Runtime runtime{options};
  if (Status started = runtime.status(); !started.ok()) return fail(started.error());
  auto engines = register_listed(runtime, request.engines, request.engine_options, "");
  if (!engines.ok()) return fail(engines.error());
  ModelOptions model_options;
  for (size_t i = 0; i < program.inputs().size(); ++i) {
    const HostTensor& t = request.inputs[i];
    auto spec = ResolvedTensorSpec::make({t.shape().begin(), t.shape().end()}, t.dtype(),
                                         ResolvedTensorLayout::contiguous());
    if (!spec.ok()) return fail(spec.error());
    model_options.compile.tensors[program.value(program.inputs()[i]).name] = std::move(*spec);
  }
  model_options.compile.retain = request.retain;
  model_options.compile.retain_all = request.retain_all;
  if (!request.materializer.empty()) model_options.compile.weight_materializer = request.materializer;
  auto model = runtime.load_model(request.program, std::move(weights), model_options);
  if (!model.ok()) return fail(model.error());
  Result<ModelRunResult> result = ModelRunResult{};
  for (uint64_t i = 0; i < request.repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    result = (*model)->run(request.inputs).get();
    if (!result.ok()) return fail(result.error());
    if (request.repeat > 1 || request.stats) {
      const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
      err << ("run " + std::to_string(i + 1) + "/" + std::to_string(request.repeat) + ": " +
              std::to_string(us.count()) + " us\n");  // one write a line
    }
  }
  if (Status back = outputs_to_host(runtime, result->outputs); !back.ok()) return fail(back.error());
  std::vector<std::pair<std::string, HostTensor>> retained(result->retained.begin(), result->retained.end());
  std::vector<HostTensor> retained_tensors;
  for (auto& [name, t] : retained) retained_tensors.push_back(t);
  if (Status back = outputs_to_host(runtime, retained_tensors); !back.ok()) return fail(back.error());
  for (size_t k = 0; k < retained.size(); ++k) retained[k].second = retained_tensors[k];
  if (request.stats)
    for (const auto& [endpoint, held] : (*model)->memory())
      err << "model memory at " << endpoint << ": weights " << held.weight_bytes << " bytes, states "
          << held.state_bytes << " bytes, activation arenas " << held.arena_bytes << " bytes (" << held.arenas
          << ")\n";
  if (!request.out_dir.empty())
    if (Status written = write_outputs(program, result->outputs, request.out_dir); !written.ok())
      return fail(written.error());
  if (request.print_json) {
    print_outputs_json(program, result->outputs, out, retained);
  } else if (request.out_dir.empty()) {
    print_outputs_text(program, result->outputs, out, retained);
  }
  return kOk;
}

}  // namespace tenact::cli
