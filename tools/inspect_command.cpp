// tenact inspect PROGRAM.json [--input NAME=FILE ...] [--engines LIST]
//                [--placement NAME=ENGINE[/STORAGE] ...] [--json]
//
// Prepares the program (planning/prepared_program.hpp) against CPU engines
// registered under the ids in --engines (default "cpu"), in that
// preference order, with host_copy routes between every two of them, and
// prints the plan (planning/plan_report.hpp). Nothing runs. The engines
// are registered with context identity 0, so a plan's key digest is the
// same in every run of the command (a runtime's engines carry their
// process's identity instead).
#include <map>
#include <optional>
#include <set>

#include "core/program_json.hpp"
#include "core/tensor_io.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "planning/plan_report.hpp"
#include "planning/prepared_program.hpp"
#include "tools/cli.hpp"
#include "tools/cli_args.hpp"
#include "tools/input_files.hpp"

namespace tenact::cli {

namespace {

struct InspectArgs {
  std::string program;
  std::vector<std::pair<std::string, std::string>> inputs;      // name, file
  std::vector<std::string> engines;                             // preference order
  std::vector<std::pair<std::string, std::string>> placements;  // name, engine[/storage]
  bool json = false;
};

std::vector<std::string> split_list(const std::string& v) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= v.size()) {
    const size_t comma = v.find(',', start);
    const size_t end = comma == std::string::npos ? v.size() : comma;
    out.push_back(v.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

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
        if (auto endpoint = parse_endpoint_arg(where, "host"); std::holds_alternative<std::string>(endpoint)) {
          status = usage_error("inspect", "--placement " + name + "=" + where + ": " + std::get<std::string>(endpoint), err);
          return std::nullopt;
        }
      (placement ? r.placements : r.inputs).push_back(std::move(std::get<0>(pair)));
    } else if (a == "--engines") {
      auto v = value("--engines");
      if (!v) return std::nullopt;
      r.engines = split_list(*v);
      std::set<std::string> seen;
      for (const std::string& id : r.engines)
        if (id.empty() || !seen.insert(id).second) {
          status = usage_error("inspect", "--engines expects distinct, non-empty ids separated by commas, got '" + *v + "'", err);
          return std::nullopt;
        }
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
  if (r.engines.empty()) r.engines = {"cpu"};
  return r;
}

// A descriptor per input: from its file, or from its declared shape when
// every dimension is a constant (a fresh row-major, 64-byte-aligned buffer).
Result<std::vector<InputDescriptor>> describe_program_inputs(const SemanticProgram& p, const InspectArgs& args) {
  TENACT_ASSIGN_OR_RETURN(const auto files, pairs_by_input(p, args.inputs, "given twice"));
  TENACT_ASSIGN_OR_RETURN(const auto placed_at, pairs_by_input(p, args.placements, "placed twice"));
  std::map<std::string, Endpoint> placements;
  for (const auto& [name, where] : placed_at) {
    const auto arg = std::get<EndpointArg>(parse_endpoint_arg(where, "host"));  // checked when parsed
    Endpoint e{arg.engine, arg.storage_class};
    if (std::find(args.engines.begin(), args.engines.end(), e.engine) == args.engines.end())
      return Error{ErrorCode::InputMismatch, "--placement " + name + "=" + where + ": engine '" + e.engine +
                                                 "' is not among --engines"};
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
  auto loaded = load_program_file(parsed->program);
  if (!loaded.ok()) return fail(loaded.error());
  auto program = std::make_shared<const SemanticProgram>(std::move(*loaded));
  auto inputs = describe_program_inputs(*program, *parsed);
  if (!inputs.ok()) return fail(inputs.error());

  RuntimeConfigPtr config = RuntimeConfig::initial(1);
  std::map<std::string, std::shared_ptr<Engine>, std::less<>> engines;
  for (size_t i = 0; i < parsed->engines.size(); ++i) {
    cpu::CpuEngineOptions options;
    options.id = parsed->engines[i];
    options.threads = 1;
    auto created = cpu::CpuEngine::create(options);
    if (!created.ok()) return fail(created.error());
    std::shared_ptr<cpu::CpuEngine> engine = std::move(*created);
    // Context identity 0 instead of the process id: these engines live only
    // for this command, and equal plans then print equal digests in every run.
    EngineIdentity identity = engine->identity();
    identity.context = 0;
    auto next = config->with_engine(EngineRegistration{identity, engine->capabilities(),
                                                       static_cast<uint32_t>(i), {}});
    if (!next.ok()) return fail(next.error());
    config = *next;
    engines[options.id] = engine;
  }
  for (const std::string& from : parsed->engines)
    for (const std::string& to : parsed->engines)
      if (from != to) {
        auto next = config->with_route(TransferRoute{{from, "host"}, {to, "host"}, "host_copy"});
        if (!next.ok()) return fail(next.error());
        config = *next;
      }
  EngineLookup lookup = [&engines](std::string_view id) -> std::shared_ptr<Engine> {
    auto it = engines.find(id);
    return it == engines.end() ? nullptr : it->second;
  };
  PrepareReport report;
  auto prepared = prepare_program(config, program, *inputs, {}, lookup, {}, &report);
  if (!prepared.ok()) return fail(prepared.error());
  auto text = parsed->json ? plan_to_json(**prepared, report) : plan_to_text(**prepared, report);
  if (!text.ok()) return fail(text.error());
  out << *text;
  return kOk;
}

}  // namespace tenact::cli
