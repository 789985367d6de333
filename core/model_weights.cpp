#include "core/model_weights.hpp"

#include <filesystem>

#include "core/tensor_io.hpp"
#include "core/value_file_name.hpp"

namespace tenact {

namespace {

std::string type_text(DType dtype, const std::vector<int64_t>& shape) {
  return std::string{to_string(dtype)} + to_string(shape);
}

std::string weight_text(const ValueInfo& weight) { return "weight '" + printable_name(weight.name) + "'"; }

// InputMismatch unless `tensor` has the weight's dtype and concrete shape;
// `holder` says where the tensor came from ("w.npy holds").
Status check_type(const ValueInfo& weight, const HostTensor& tensor, const std::string& holder) {
  std::vector<int64_t> dims;
  for (const auto& e : weight.type.shape) dims.push_back(e.expr.constant_value().value_or(-1));
  if (tensor.dtype() == weight.type.dtype && tensor.shape() == dims) return ok_status();
  return Error{ErrorCode::InputMismatch, weight_text(weight) + " is " + weight.type.to_string() + "; " +
                                             holder + " " + type_text(tensor.dtype(), tensor.shape())};
}

Result<HostTensor> read_weight_file(const ValueInfo& weight, const std::string& dir) {
  if (dir.empty())
    return Error{ErrorCode::InputMismatch,
                 weight_text(weight) + " has no inline data and no weights folder was given"};
  auto file = value_file_name(weight.name, ".npy");
  if (!file.ok()) return file.error().with_context(weight_text(weight));
  const std::string path = (std::filesystem::path{dir} / *file).string();
  auto tensor = read_tensor_file(path);
  if (!tensor.ok()) return tensor.error().with_context(weight_text(weight));
  TENACT_TRY(check_type(weight, *tensor, path + " holds"));
  return tensor;
}

}  // namespace

Result<std::map<std::string, HostTensor>> load_weights_folder(const SemanticProgram& program,
                                                              const std::string& dir) {
  std::map<std::string, HostTensor> out;
  for (const WeightInfo& w : program.weights()) {
    const ValueInfo& weight = program.value(w.value);
    if (w.inline_data) {
      out.emplace(weight.name, *w.inline_data);
      continue;
    }
    TENACT_ASSIGN_OR_RETURN(HostTensor tensor, read_weight_file(weight, dir));
    out.emplace(weight.name, std::move(tensor));
  }
  return out;
}

Status check_weights(const SemanticProgram& program, const std::map<std::string, HostTensor>& weights) {
  std::map<std::string, const ValueInfo*, std::less<>> declared;
  for (const WeightInfo& w : program.weights()) {
    const ValueInfo& weight = program.value(w.value);
    declared.emplace(weight.name, &weight);
    auto given = weights.find(weight.name);
    if (given == weights.end()) {
      if (w.inline_data) continue;
      return Error{ErrorCode::InputMismatch, weight_text(weight) + " is missing (it has no inline data)"};
    }
    const HostTensor& tensor = given->second;
    if (!tensor.is_host())
      return Error{ErrorCode::InputMismatch, weight_text(weight) + " is in " +
                                                 tensor.endpoint().to_string() +
                                                 " memory; weights are passed in host memory"};
    if (!tensor.buffer() && tensor.element_count() > 0)
      return Error{ErrorCode::InputMismatch, weight_text(weight) + " is a tensor without data"};
    TENACT_TRY(check_type(weight, tensor, "the tensor given is"));
  }
  for (const auto& [name, tensor] : weights)
    if (!declared.count(name))
      return Error{ErrorCode::InputMismatch, "'" + printable_name(name) + "' is not a weight of program '" +
                                                 program.name() + "'"};
  return ok_status();
}

}  // namespace tenact
