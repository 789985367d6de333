#include "tools/input_files.hpp"

#include <map>

#include "core/tensor_io.hpp"

namespace tenact::cli {

Result<std::vector<HostTensor>> read_input_files(
    const SemanticProgram& p, const std::vector<std::pair<std::string, std::string>>& given) {
  std::map<std::string, std::string> files;
  for (const auto& [name, file] : given)
    if (!files.emplace(name, file).second)
      return Error{ErrorCode::InputMismatch, "input '" + name + "' is given twice"};
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
    files.erase(it);
  }
  if (!files.empty())
    return Error{ErrorCode::InputMismatch, "the program has no input named '" + files.begin()->first + "'"};
  return out;
}

}  // namespace tenact::cli
