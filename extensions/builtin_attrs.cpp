#include "extensions/builtin_attrs.hpp"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace tenact::builtin {

namespace {

using nlohmann::json;

Error schema(std::string message) { return Error{ErrorCode::Schema, std::move(message)}; }
Error invalid(std::string message) { return Error{ErrorCode::InvalidAttribute, std::move(message)}; }

std::string list_text(std::span<const int64_t> axes) {
  std::string s = "[";
  for (size_t i = 0; i < axes.size(); ++i) s += (i ? ", " : "") + std::to_string(axes[i]);
  return s + "]";
}

/// The keys each family admits, in the order error messages list them.
std::vector<std::string_view> allowed_keys(BuiltinOp op) {
  switch (op) {
    case BuiltinOp::Softmax:
    case BuiltinOp::LogSoftmax: return {"dimension"};
    case BuiltinOp::LayerNorm:
    case BuiltinOp::RmsNorm: return {"dimensions", "epsilon"};
    case BuiltinOp::Gelu: return {"approximate"};
  }
  return {};
}

Status check_keys(BuiltinOp op, const json& attrs) {
  const auto allowed = allowed_keys(op);
  for (const auto& item : attrs.items()) {
    bool known = false;
    for (std::string_view k : allowed) known = known || item.key() == k;
    if (known) continue;
    std::string names;
    for (std::string_view k : allowed) names += (names.empty() ? "'" : ", '") + std::string{k} + "'";
    return schema("unknown attribute '" + item.key() + "' (the attributes are " + names + ")");
  }
  return ok_status();
}

/// An axis of a rank-`rank` operand x: a JSON integer in [0, rank).
Result<int64_t> parse_axis(const json& v, size_t rank, const std::string& what) {
  if (!v.is_number_integer())
    return schema(what + " must be an integer, got " + v.dump());
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    return invalid(what + " " + v.dump() + " is out of range for x of rank " + std::to_string(rank));
  const int64_t axis = v.get<int64_t>();
  if (axis < 0 || static_cast<uint64_t>(axis) >= rank)
    return invalid(what + " " + std::to_string(axis) + " is out of range for x of rank " +
                   std::to_string(rank) + " (axes are 0 to " + std::to_string(rank) + " - 1)");
  return axis;
}

Result<std::vector<int64_t>> parse_dimensions(const json& attrs, size_t rank) {
  const auto it = attrs.find("dimensions");
  if (it == attrs.end()) return schema("missing attribute 'dimensions' (a list of axes of x)");
  if (!it->is_array())
    return schema("attribute 'dimensions' must be a list of integers, got " + it->dump());
  std::vector<int64_t> dims;
  for (size_t i = 0; i < it->size(); ++i) {
    TENACT_ASSIGN_OR_RETURN(int64_t axis,
                            parse_axis((*it)[i], rank, "attribute 'dimensions': entry " + std::to_string(i)));
    if (!dims.empty() && axis <= dims.back())
      return invalid("attribute 'dimensions' " + it->dump() +
                     " must list distinct axes in increasing order (" + std::to_string(axis) +
                     " follows " + std::to_string(dims.back()) + ")");
    dims.push_back(axis);
  }
  return dims;
}

Result<double> parse_epsilon(const json& attrs, double fallback) {
  const auto it = attrs.find("epsilon");
  if (it == attrs.end()) return fallback;
  if (!it->is_number()) return schema("attribute 'epsilon' must be a number, got " + it->dump());
  const double eps = it->get<double>();
  if (!std::isfinite(eps)) return invalid("attribute 'epsilon' must be finite, got " + it->dump());
  if (eps < 0) return invalid("attribute 'epsilon' must not be negative, got " + it->dump());
  return eps;
}

Result<bool> parse_approximate(const json& attrs) {
  const auto it = attrs.find("approximate");
  if (it == attrs.end()) return false;
  if (!it->is_string())
    return schema("attribute 'approximate' must be a string (\"none\" or \"tanh\"), got " + it->dump());
  const auto& s = it->get_ref<const std::string&>();
  if (s == "none") return false;
  if (s == "tanh") return true;
  return invalid("attribute 'approximate' must be \"none\" or \"tanh\", got " + it->dump());
}

std::string operand_name(size_t i) {
  static const char* const kNames[] = {"x", "scale", "bias"};
  return std::string{i < 3 ? kNames[i] : "operand"} + " (operand " + std::to_string(i) + ")";
}

Status check_arity(BuiltinOp op, size_t n) {
  const char* expected = nullptr;
  switch (op) {
    case BuiltinOp::Softmax:
    case BuiltinOp::LogSoftmax:
    case BuiltinOp::Gelu:
      if (n == 1) return ok_status();
      expected = "1 operand [x]";
      break;
    case BuiltinOp::LayerNorm:
      if (n == 1 || n == 3) return ok_status();
      expected = "1 operand [x] or 3 operands [x, scale, bias]";
      break;
    case BuiltinOp::RmsNorm:
      if (n == 1 || n == 2) return ok_status();
      expected = "1 operand [x] or 2 operands [x, scale]";
      break;
  }
  return schema(std::string{"expects "} + expected + ", got " + std::to_string(n));
}

Status check_dtypes(std::span<const ValueType> operands) {
  const DType t = operands[0].dtype;
  if (!is_float(t))
    return Error{ErrorCode::TypeMismatch, operand_name(0) + " has dtype " + std::string{to_string(t)} +
                                              ", but the family takes f16, bf16, f32 or f64"};
  for (size_t i = 1; i < operands.size(); ++i)
    if (operands[i].dtype != t)
      return Error{ErrorCode::TypeMismatch,
                   operand_name(i) + " has dtype " + std::string{to_string(operands[i].dtype)} +
                       ", but x has " + std::string{to_string(t)} + " (operands share one dtype)"};
  return ok_status();
}

/// scale and bias: x's shape restricted to `dims`, extent by extent.
Status check_parameter_shapes(std::span<const ValueType> operands, std::span<const int64_t> dims) {
  Shape want;
  for (int64_t d : dims) want.push_back(operands[0].shape[static_cast<size_t>(d)]);
  for (size_t i = 1; i < operands.size(); ++i) {
    if (operands[i].shape == want) continue;
    return Error{ErrorCode::ShapeMismatch,
                 operand_name(i) + " has shape " + to_string(operands[i].shape) + ", but x " +
                     to_string(operands[0].shape) + " restricted to dimensions " + list_text(dims) +
                     " is " + to_string(want) +
                     " (extents are compared as expressions: symbolic ones must be identical)"};
  }
  return ok_status();
}

}  // namespace

std::string_view family_name(BuiltinOp op) {
  switch (op) {
    case BuiltinOp::Softmax: return "tenact.softmax";
    case BuiltinOp::LogSoftmax: return "tenact.log_softmax";
    case BuiltinOp::LayerNorm: return "tenact.layer_norm";
    case BuiltinOp::RmsNorm: return "tenact.rms_norm";
    case BuiltinOp::Gelu: return "tenact.gelu";
  }
  return "?";
}

Result<BuiltinAttrs> check_builtin_op(BuiltinOp op, std::span<const ValueType> operands,
                                      const std::string& attributes_json) {
  TENACT_TRY(check_arity(op, operands.size()));
  TENACT_TRY(check_dtypes(operands));
  const json attrs = json::parse(attributes_json, nullptr, /*allow_exceptions=*/false);
  if (attrs.is_discarded()) return Error{ErrorCode::Parse, "attributes are not valid JSON"};
  if (!attrs.is_object()) return schema("attributes must be a JSON object, got " + attrs.dump());
  TENACT_TRY(check_keys(op, attrs));
  const size_t rank = operands[0].rank();
  BuiltinAttrs out;
  out.op = op;
  switch (op) {
    case BuiltinOp::Softmax:
    case BuiltinOp::LogSoftmax: {
      const auto it = attrs.find("dimension");
      if (it == attrs.end()) return schema("missing attribute 'dimension' (the axis of x to normalize)");
      TENACT_ASSIGN_OR_RETURN(int64_t axis, parse_axis(*it, rank, "attribute 'dimension'"));
      out.dimensions = {axis};
      break;
    }
    case BuiltinOp::LayerNorm:
    case BuiltinOp::RmsNorm: {
      TENACT_ASSIGN_OR_RETURN(out.dimensions, parse_dimensions(attrs, rank));
      TENACT_ASSIGN_OR_RETURN(out.epsilon, parse_epsilon(attrs, op == BuiltinOp::LayerNorm ? 1e-5 : 1e-6));
      out.has_scale = operands.size() >= 2;
      out.has_bias = operands.size() == 3;
      TENACT_TRY(check_parameter_shapes(operands, out.dimensions));
      break;
    }
    case BuiltinOp::Gelu: {
      TENACT_ASSIGN_OR_RETURN(out.tanh_approximation, parse_approximate(attrs));
      break;
    }
  }
  return out;
}

}  // namespace tenact::builtin
