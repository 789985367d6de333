#include "tools/input_files.hpp"

#include "core/tensor_io.hpp"

namespace tenact::cli {

Result<std::map<std::string, std::string>> pairs_by_input(
    const SemanticProgram& p, const std::vector<std::pair<std::string, std::string>>& pairs,
    const std::string& repeated) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : pairs)
    if (!out.emplace(name, value).second)
      return Error{ErrorCode::InputMismatch, "input '" + name + "' is " + repeated};
  for (const auto& [name, value] : out) {
    bool known = false;
    for (ValueId id : p.inputs()) known = known || p.value(id).name == name;
    if (!known) return Error{ErrorCode::InputMismatch, "the program has no input named '" + name + "'"};
  }
  return out;
}

Result<std::vector<HostTensor>> read_input_files(
    const SemanticProgram& p, const std::vector<std::pair<std::string, std::string>>& given) {
  TENACT_ASSIGN_OR_RETURN(const auto files, pairs_by_input(p, given, "given twice"));
  std::vector<HostTensor> out;
  for (ValueId id : p.inputs()) {
    const std::string& name = p.value(id).name;
    auto it = files.find(name);
    if (it == files.end())
      return Error{ErrorCode::InputMismatch, "input '" + name + "' (" + p.value(id).type.to_string() +
                                                 ") is missing: pass --input " + name + "=FILE"};
    auto t = read_tensor_file(it->second);
    if (!t.ok()) return t.error().with_context("input '" + name + "'");
    out.push_back(std::move(*t));
  }
  return out;
}

}  // namespace tenact::cli
