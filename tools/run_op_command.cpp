// tenact run-op FAMILY [--attr KEY=VALUE ...] --input NAME=FILE ... [--engine ID]
//               [--threads N] [--print-json] [--out DIR]
//
// One extension op, eagerly (Runtime::run_op): the op is validated by its
// family's inference, prepared directly on the one engine named (default
// cpu) without a program or the prepare cache, and run; it falls back to the
// compiled path where the engine refuses it. The built-in module `tenact`
// is registered. Operands are the --input files in the order given (NAME
// only labels them); results are named y (one) or y0, y1, ... (several).
#include <set>

#include "actors/runtime.hpp"
#include "core/json_text.hpp"
#include "core/output_folder.hpp"
#include "core/program_json.hpp"
#include "core/tensor_io.hpp"
#include "core/value_file_name.hpp"
#include "setup/engine_setup.hpp"
#include "tools/cli.hpp"
#include "tools/cli_args.hpp"
#include "util/worker_pool.hpp"

namespace tenact::cli {

namespace {

struct RunOpArgs {
  std::string family;
  std::vector<std::pair<std::string, std::string>> attrs;   // key, JSON value text
  std::vector<std::pair<std::string, std::string>> inputs;  // label, file
  setup::EngineSpec engine{setup::EngineSpec::Kind::Cpu, "cpu"};
  size_t threads = 0;
  bool print_json = false;
  std::string out_dir;
};

// VALUE as JSON text: itself when it is a JSON value (1, 1e-5, [0, 1],
// "x", true), else the JSON string holding it (--attr approximate=tanh).
std::string json_value_text(const std::string& value) {
  if (canonical_attributes_json("{\"v\":" + value + "}").ok()) return value;
  return json_quoted(value);
}

std::optional<RunOpArgs> parse_run_op_args(const std::vector<std::string>& args, std::ostream& err, int& status) {
  RunOpArgs r;
  std::set<std::string> keys;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* flag) -> std::optional<std::string> {
      if (i + 1 >= args.size()) {
        status = usage_error("run-op", std::string{flag} + " needs a value", err);
        return std::nullopt;
      }
      return args[++i];
    };
    if (a == "--attr" || a == "--input" || a == "-i") {
      const bool attr = a == "--attr";
      auto v = value(attr ? "--attr" : "--input");
      if (!v) return std::nullopt;
      auto pair = parse_name_value(*v, attr ? "--attr" : "--input", attr ? "VALUE" : "FILE");
      if (auto* why = std::get_if<std::string>(&pair)) {
        status = usage_error("run-op", *why, err);
        return std::nullopt;
      }
      auto [name, text] = std::get<0>(std::move(pair));
      if (!attr) {
        r.inputs.emplace_back(std::move(name), std::move(text));
      } else if (!keys.insert(name).second) {
        status = usage_error("run-op", "--attr " + name + " is given twice", err);
        return std::nullopt;
      } else {
        r.attrs.emplace_back(std::move(name), json_value_text(text));
      }
    } else if (a == "--engine") {
      auto v = value("--engine");
      if (!v) return std::nullopt;
      auto list = setup::parse_engine_list(*v);
      if (!list.ok() || list->size() != 1) {
        status = usage_error("run-op", "--engine expects one engine (cpu, cpu:N or sim:N), got '" + *v + "'", err);
        return std::nullopt;
      }
      r.engine = list->front();
    } else if (a == "--threads") {
      auto v = value("--threads");
      if (!v) return std::nullopt;
      auto n = parse_count(*v, WorkerPool::kMaxThreads);
      if (!n) {
        status = usage_error("run-op", "--threads expects a positive count up to " +
                                           std::to_string(WorkerPool::kMaxThreads) + ", got '" + *v + "'",
                             err);
        return std::nullopt;
      }
      r.threads = static_cast<size_t>(*n);
    } else if (a == "--print-json") {
      r.print_json = true;
    } else if (a == "--out") {
      auto v = value("--out");
      if (!v) return std::nullopt;
      r.out_dir = *v;
    } else if (!a.empty() && a[0] == '-') {
      status = usage_error("run-op", "unknown option '" + a + "'", err);
      return std::nullopt;
    } else if (r.family.empty()) {
      r.family = a;
    } else {
      status = usage_error("run-op", "unexpected argument '" + a + "' (one FAMILY only)", err);
      return std::nullopt;
    }
  }
  if (r.family.empty()) {
    status = usage_error("run-op", "expects an extension FAMILY, e.g. tenact.softmax", err);
    return std::nullopt;
  }
  return r;
}

std::string attributes_text(const RunOpArgs& args) {
  std::string text = "{";
  for (size_t i = 0; i < args.attrs.size(); ++i)
    text += (i ? "," : "") + json_quoted(args.attrs[i].first) + ":" + args.attrs[i].second;
  return text + "}";
}

std::string result_name(size_t i, size_t count) { return count == 1 ? "y" : "y" + std::to_string(i); }

Status write_results(const std::vector<HostTensor>& results, const std::string& dir) {
  TENACT_ASSIGN_OR_RETURN(OutputFolder folder, OutputFolder::open(dir));
  for (size_t i = 0; i < results.size(); ++i) {
    TENACT_ASSIGN_OR_RETURN(std::string file, value_file_name(result_name(i, results.size()), ".npy"));
    TENACT_TRY(folder.stage(file, tensor_to_npy(results[i])));
  }
  return folder.commit();
}

}  // namespace

int run_run_op(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  int status = kOk;
  auto parsed = parse_run_op_args(args, err, status);
  if (!parsed) return status;
  auto fail = [&](const Error& e) {
    err << "tenact run-op: " << e.to_string() << "\n";
    return kInvalid;
  };
  std::vector<HostTensor> inputs;
  for (const auto& [label, file] : parsed->inputs) {
    auto t = read_tensor_file(file);
    if (!t.ok()) return fail(t.error().with_context("input '" + label + "'"));
    inputs.push_back(std::move(*t));
  }
  RuntimeOptions options;
  options.builtin_extensions = true;
  Runtime runtime{options};
  if (Status started = runtime.status(); !started.ok()) return fail(started.error());
  setup::EngineSetupOptions engine_options;
  engine_options.cpu_threads = parsed->threads;
  const std::vector<setup::EngineSpec> engines{parsed->engine};
  if (auto registered = setup::register_engines(runtime, engines, engine_options); !registered.ok())
    return fail(registered.error());
  auto results = runtime.run_op(parsed->family, attributes_text(*parsed), std::move(inputs), parsed->engine.id).get();
  if (!results.ok()) return fail(results.error());
  for (size_t i = 0; i < results->size(); ++i)
    if (!(*results)[i].is_host()) {
      auto copied = runtime.copy((*results)[i], Endpoint::unowned_host()).get();
      if (!copied.ok()) return fail(copied.error().with_context("reading result " + std::to_string(i) + " back"));
      (*results)[i] = std::move(*copied);
    }
  if (!parsed->out_dir.empty())
    if (Status written = write_results(*results, parsed->out_dir); !written.ok()) return fail(written.error());
  if (parsed->print_json) {
    out << "{\"outputs\": {";
    for (size_t i = 0; i < results->size(); ++i)
      out << (i ? ",\n  " : "\n  ") << json_quoted(result_name(i, results->size())) << ": "
          << tensor_to_json((*results)[i]);
    out << "\n}}\n";
  } else if (parsed->out_dir.empty()) {
    for (size_t i = 0; i < results->size(); ++i) {
      const HostTensor& t = (*results)[i];
      out << result_name(i, results->size()) << ": " << to_string(t.dtype()) << to_string(t.shape());
      if (t.element_count() <= 64) out << " = " << tensor_to_json(t);
      out << "\n";
    }
  }
  return kOk;
}

}  // namespace tenact::cli
