// tenact check PROGRAM.json
#include <iomanip>
#include <sstream>

#include "core/program_json.hpp"
#include "extensions/builtin_extensions.hpp"
#include "core/tensor_io.hpp"
#include "tools/cli.hpp"

namespace tenact::cli {

namespace {

void print_program(const SemanticProgram& p, std::ostream& out) {
  size_t width = 4;
  for (const auto& v : p.values()) width = std::max(width, v.name.size());
  auto row = [&](const ValueInfo& v, const std::string& origin) {
    out << "  " << std::left << std::setw(static_cast<int>(width)) << v.name << "  "
        << std::setw(24) << v.type.to_string() << " " << origin << "\n";
  };
  out << "program" << (p.name().empty() ? "" : " '" + p.name() + "'") << ": valid\n";
  out << "inputs:\n";
  for (ValueId id : p.inputs()) row(p.value(id), "");
  out << "values:\n";
  for (size_t i = 0; i < p.ops().size(); ++i)
    for (ValueId id : p.ops()[i].outputs)
      row(p.value(id), std::string{to_string(p.ops()[i].kind)} + " (op #" + std::to_string(i) + ")");
  out << "outputs:";
  for (ValueId id : p.outputs()) out << " " << p.value(id).name;
  out << "\n";
  if (!p.constraints().empty()) {
    out << "checked against each input signature:\n";
    for (const auto& c : p.constraints())
      out << "  " << c.lhs.to_string() << " " << to_string(c.rel) << " " << c.rhs.to_string()
          << "   (" << c.origin << ")\n";
  }
  out << "fingerprint: " << p.fingerprint().to_hex() << "\n";
}

}  // namespace

int run_check(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  for (const std::string& a : args)
    if (a.size() > 1 && a[0] == '-') return usage_error("check", "unknown option '" + a + "'", err);
  if (args.size() != 1) return usage_error("check", "expects exactly one PROGRAM.json", err);
  auto text = read_file(args[0], uint64_t{64} << 20);
  if (!text.ok()) {
    err << "tenact check: " << text.error().to_string() << "\n";
    return kInvalid;
  }
  ValidationReport report = load_program_all(*text, builtin_extension_registry());
  if (!report.errors.empty()) {
    err << args[0] << ": invalid program, " << report.errors.size() << " error"
        << (report.errors.size() == 1 ? "" : "s") << ":\n";
    for (const auto& e : report.errors) err << "  " << e.to_string() << "\n";
    return kInvalid;
  }
  print_program(*report.program, out);
  return kOk;
}

}  // namespace tenact::cli
