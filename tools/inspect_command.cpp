// tenact inspect PROGRAM.json [--input NAME=FILE ...] [--engines LIST] [--platform FILE]
//                [--placement NAME=ENGINE[/STORAGE] ...] [--json]
//
// Prepares the program (planning/prepared_program.hpp) against the engines
// of --engines (default "cpu"; cpu, cpu:N and sim:N as setup/engine_setup.hpp
// makes them, sim devices from --platform FILE or the default platform), in
// that preference order, with the routes that join them, and prints the
// plan (planning/plan_report.hpp). Nothing runs. The engines are registered
// with context identity 0, so a plan's key digest is the same in every run
// of the command (a runtime's engines carry their process's identity
// instead).
#include <map>
#include <optional>
#include <set>

#include "core/program_json.hpp"
#include "extensions/builtin_extensions.hpp"
#include "core/tensor_io.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "engines/sim/sim_links.hpp"
#include "planning/plan_report.hpp"
#include "setup/engine_setup.hpp"
#include "planning/prepared_program.hpp"
#include "tools/cli.hpp"
#include "tools/cli_args.hpp"
#include "tools/input_files.hpp"

namespace tenact::cli {

namespace {

struct InspectArgs {
  std::string program;
  std::vector<std::pair<std::string, std::string>> inputs;      // name, file
  std::vector<setup::EngineSpec> engines;                       // preference order
  std::string platform;
  std::vector<std::pair<std::string, std::string>> placements;  // name, engine[/storage]
  bool json = false;
  PlacementPolicy policy = PlacementPolicy::Auto;
};

std::optional<InspectArgs> parse_inspect_args(const std::vector<std::string>& args, std::ostream& err,
                                              int& status) {
  InspectArgs r;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* flag) -> std::optional<std::string> {
      if (i + 1 >= args.size()) {
        status = usage_error("inspect", std::string{flag} + " needs a value", err);
        return std::nullopt;
      }
      return args[++i];
    };
    if (a == "--input" || a == "-i" || a == "--placement") {
      auto v = value(a == "--placement" ? "--placement" : "--input");
      if (!v) return std::nullopt;
      const bool placement = a == "--placement";
      auto pair = parse_name_value(*v, placement ? "--placement" : "--input",
                                   placement ? "ENGINE[/STORAGE]" : "FILE");
      if (auto* why = std::get_if<std::string>(&pair)) {
        status = usage_error("inspect", *why, err);
        return std::nullopt;
      }
      auto& [name, where] = std::get<0>(pair);
      if (placement)
        if (auto endpoint = parse_endpoint_arg(where, ""); std::holds_alternative<std::string>(endpoint)) {
          status = usage_error("inspect", "--placement " + name + "=" + where + ": " + std::get<std::string>(endpoint), err);
          return std::nullopt;
        }
      (placement ? r.placements : r.inputs).push_back(std::move(std::get<0>(pair)));
    } else if (a == "--policy") {
      auto v = value("--policy");
      if (!v) return std::nullopt;
      auto policy = parse_policy_arg(*v);
      if (auto* why = std::get_if<std::string>(&policy)) {
        status = usage_error("inspect", *why, err);
        return std::nullopt;
      }
      r.policy = std::get<PlacementPolicy>(policy);
    } else if (a == "--engines") {
      auto v = value("--engines");
      if (!v) return std::nullopt;
      auto list = setup::parse_engine_list(*v);
      if (!list.ok()) {
        status = usage_error("inspect", "--engines: " + list.error().message(), err);
        return std::nullopt;
      }
      r.engines = std::move(*list);
    } else if (a == "--platform") {
      auto v = value("--platform");
      if (!v) return std::nullopt;
      r.platform = *v;
    } else if (a == "--json") {
      r.json = true;
    } else if (!a.empty() && a[0] == '-') {
      status = usage_error("inspect", "unknown option '" + a + "'", err);
      return std::nullopt;
    } else if (r.program.empty()) {
      r.program = a;
    } else {
      status = usage_error("inspect", "unexpected argument '" + a + "' (one PROGRAM.json only)", err);
      return std::nullopt;
    }
  }
  if (r.program.empty()) {
    status = usage_error("inspect", "expects a PROGRAM.json", err);
    return std::nullopt;
  }
  if (r.engines.empty()) r.engines = {setup::EngineSpec{setup::EngineSpec::Kind::Cpu, "cpu"}};
  return r;
}

// A descriptor per input: from its file, or from its declared shape when
// every dimension is a constant (a fresh row-major, 64-byte-aligned buffer).
Result<std::vector<InputDescriptor>> describe_program_inputs(const SemanticProgram& p, const InspectArgs& args,
                                                             const setup::RegisteredEngines& engines) {
  TENACT_ASSIGN_OR_RETURN(const auto files, pairs_by_input(p, args.inputs, "given twice"));
  TENACT_ASSIGN_OR_RETURN(const auto placed_at, pairs_by_input(p, args.placements, "placed twice"));
  std::map<std::string, Endpoint> placements;
  for (const auto& [name, where] : placed_at) {
    const auto arg = std::get<EndpointArg>(parse_endpoint_arg(where, ""));  // checked when parsed
    Endpoint e{arg.engine, arg.storage_class};
    const auto engine = std::find_if(engines.engines.begin(), engines.engines.end(),
                                     [&](const auto& x) { return x->identity().id == e.engine; });
    if (engine == engines.engines.end())
      return Error{ErrorCode::InputMismatch, "--placement " + name + "=" + where + ": engine '" + e.engine +
                                                 "' is not among --engines"};
    if (e.storage_class.empty()) e.storage_class = (*engine)->capabilities().default_storage_class;
    placements.emplace(name, e);
  }
  std::vector<InputDescriptor> out;
  for (ValueId id : p.inputs()) {
    const ValueInfo& v = p.value(id);
    const auto placed = placements.find(v.name);
    const Endpoint at = placed == placements.end() ? Endpoint{} : placed->second;
    if (auto f = files.find(v.name); f != files.end()) {
      auto t = read_tensor_file(f->second);
      if (!t.ok()) return t.error().with_context("input '" + v.name + "'");
      out.push_back(describe_input(*t, at));
      continue;
    }
    std::vector<int64_t> shape;
    for (const ShapeExtent& e : v.type.shape) {
      auto c = e.is_exact() ? e.expr.evaluate({}) : Result<int64_t>{Error{ErrorCode::UnboundSymbol, ""}};
      if (!c.ok())
        return Error{ErrorCode::InputMismatch, "input '" + v.name + "' (" + v.type.to_string() +
                                                   ") has a symbolic shape: pass --input " + v.name + "=FILE"};
      shape.push_back(*c);
    }
    auto t = HostTensor::zeros(v.type.dtype, shape);
    if (!t.ok()) return t.error().with_context("input '" + v.name + "'");
    out.push_back(describe_input(*t, at));
  }
  return out;
}

}  // namespace

int run_inspect(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  int status = kOk;
  auto parsed = parse_inspect_args(args, err, status);
  if (!parsed) return status;
  auto fail = [&](const Error& e) {
    err << "tenact inspect: " << e.to_string() << "\n";
    return kInvalid;
  };
  auto loaded = load_program_file(parsed->program, builtin_extension_registry());
  if (!loaded.ok()) return fail(loaded.error());
  auto program = std::make_shared<const SemanticProgram>(std::move(*loaded));
  setup::EngineSetupOptions engine_options;
  engine_options.cpu_threads = 1;
  if (!parsed->platform.empty()) {
    auto platform = sim::load_platform(parsed->platform);
    if (!platform.ok()) return fail(platform.error());
    engine_options.platform = std::move(*platform);
  }
  auto made = setup::make_engines(parsed->engines, engine_options);
  if (!made.ok()) return fail(made.error());
  auto inputs = describe_program_inputs(*program, *parsed, *made);
  if (!inputs.ok()) return fail(inputs.error());

  RuntimeConfigPtr config = RuntimeConfig::initial(1);
  std::map<std::string, std::shared_ptr<Engine>, std::less<>> engines;
  for (size_t i = 0; i < made->engines.size(); ++i) {
    const std::shared_ptr<Engine>& engine = made->engines[i];
    // Context identity 0 instead of the process id: these engines live only
    // for this command, and equal plans then print equal digests in every run.
    EngineIdentity identity = engine->identity();
    identity.context = 0;
    auto next = config->with_engine(EngineRegistration{identity, engine->capabilities(),
                                                       static_cast<uint32_t>(i), {}});
    if (!next.ok()) return fail(next.error());
    config = *next;
    engines[identity.id] = engine;
  }
  for (const ExtensionFamilyPtr& family : builtin_extension_families()) {
    auto next = config->with_extension(family);
    if (!next.ok()) return fail(next.error());
    config = *next;
  }
  if (made->world) {
    auto next = config->with_transfer_provider(sim::kSimLinkProvider);
    if (!next.ok()) return fail(next.error());
    config = *next;
  }
  for (const TransferRoute& route : made->routes) {
    auto next = config->with_route(route);
    if (!next.ok()) return fail(next.error());
    config = *next;
  }
  EngineLookup lookup = [&engines](std::string_view id) -> std::shared_ptr<Engine> {
    auto it = engines.find(id);
    return it == engines.end() ? nullptr : it->second;
  };
  PrepareReport report;
  PrepareOptions prepare_options;
  prepare_options.policy = parsed->policy;
  auto prepared = prepare_program(config, program, *inputs, prepare_options, lookup, {}, &report);
  if (!prepared.ok()) return fail(prepared.error());
  auto text = parsed->json ? plan_to_json(**prepared, report) : plan_to_text(**prepared, report);
  if (!text.ok()) return fail(text.error());
  out << *text;
  return kOk;
}

}  // namespace tenact::cli
