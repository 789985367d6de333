// tenact run PROGRAM.json --input NAME=FILE ... [--print-json] [--out DIR]
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "core/program_json.hpp"
#include "core/tensor_io.hpp"
#include "engines/cpu/cpu_program_runner.hpp"
#include "tools/cli.hpp"
#include "tools/input_files.hpp"

namespace tenact::cli {

namespace {

struct RunArgs {
  std::string program;
  std::vector<std::pair<std::string, std::string>> inputs;  // name, file
  bool print_json = false;
  std::string out_dir;
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
      auto eq = v->find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v->size()) {
        status = usage_error("run", "--input expects NAME=FILE, got '" + *v + "'", err);
        return std::nullopt;
      }
      r.inputs.emplace_back(v->substr(0, eq), v->substr(eq + 1));
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
    out << (first ? "\n  " : ",\n  ") << "\"" << name << "\": " << tensor_to_json(outputs[i]);
    first = false;
  }
  out << "\n}}\n";
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
  auto program = load_program_file(parsed->program);
  if (!program.ok()) return fail(program.error());
  auto inputs = read_input_files(*program, parsed->inputs);
  if (!inputs.ok()) return fail(inputs.error());
  cpu::CpuEngine engine;
  auto outputs = cpu::run_program_on_cpu(*program, *inputs, engine);
  if (!outputs.ok()) return fail(outputs.error());
  if (!parsed->out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parsed->out_dir, ec);
    if (ec) return fail(Error{ErrorCode::Io, "cannot create '" + parsed->out_dir + "': " + ec.message()});
    for (size_t i = 0; i < outputs->size(); ++i) {
      const std::string path = parsed->out_dir + "/" + program->value(program->outputs()[i]).name + ".npy";
      if (auto s = write_tensor_file(path, (*outputs)[i]); !s.ok()) return fail(s.error());
    }
  }
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
