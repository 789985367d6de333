#include "tools/run_output.hpp"

#include <set>

#include "core/json_text.hpp"
#include "core/output_folder.hpp"
#include "core/tensor_io.hpp"
#include "core/value_file_name.hpp"

namespace tenact::cli {

// Outputs left in memory the host cannot address are read back along the
// registered routes.
Status outputs_to_host(Runtime& runtime, std::vector<HostTensor>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].is_host()) continue;
    auto copied = runtime.copy(outputs[i], Endpoint::unowned_host()).get();
    if (!copied.ok()) return copied.error().with_context("reading output " + std::to_string(i) + " back");
    outputs[i] = std::move(*copied);
  }
  return ok_status();
}

void print_outputs_json(const SemanticProgram& p, const std::vector<HostTensor>& outputs, std::ostream& out,
                        const std::vector<std::pair<std::string, HostTensor>>& retained) {
  out << "{\"outputs\": {";
  std::set<std::string> seen;
  bool first = true;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = p.value(p.outputs()[i]).name;
    if (!seen.insert(name).second) continue;
    out << (first ? "\n  " : ",\n  ") << json_quoted(name) << ": " << tensor_to_json(outputs[i]);
    first = false;
  }
  out << "\n}";
  if (!retained.empty()) {
    out << ", \"retained\": {";
    for (size_t i = 0; i < retained.size(); ++i)
      out << (i ? ",\n  " : "\n  ") << json_quoted(retained[i].first) << ": " << tensor_to_json(retained[i].second);
    out << "\n}";
  }
  out << "}\n";
}

void print_outputs_text(const SemanticProgram& p, const std::vector<HostTensor>& outputs, std::ostream& out,
                        const std::vector<std::pair<std::string, HostTensor>>& retained) {
  auto line = [&out](const std::string& name, const HostTensor& t) {
    out << name << ": " << to_string(t.dtype()) << to_string(t.shape());
    if (t.element_count() <= 64) out << " = " << tensor_to_json(t);
    out << "\n";
  };
  for (size_t i = 0; i < outputs.size(); ++i) line(p.value(p.outputs()[i]).name, outputs[i]);
  for (const auto& [name, t] : retained) line("retained " + name, t);
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

}  // namespace tenact::cli
