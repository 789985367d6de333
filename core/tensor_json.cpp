// The JSON tensor form: {"dtype": "f32", "shape": [2, 2], "data": [1, 2, 3, 4]}.
//
// Reading: the object has exactly the keys dtype, shape and data; data is
// always a flat row-major list (a lone scalar is not accepted, even for a
// one-element shape: unlike a program's constant `value`, the tensor form
// has no fill shorthand). Writing: floats of every width are printed as the
// exact double value of the element in the shortest text that reads back to
// that double, so reading the text back gives the same bits (NaN payloads
// aside: every NaN is written "nan").
#include <string>

#include "core/json_internal.hpp"
#include "core/tensor_io.hpp"

namespace tenact {

using json_io::Json;

namespace {

constexpr const char* kKeys[] = {"dtype", "shape", "data"};

Result<std::vector<int64_t>> shape_from_json(const Json& j) {
  if (!j.is_array())
    return Error{ErrorCode::Schema,
                 "tensor: \"shape\" must be a list of integers, got " + json_io::json_type_name(j)};
  std::vector<int64_t> shape;
  shape.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    const Json& d = j[i];
    const std::string where = "tensor: \"shape\" element " + std::to_string(i);
    if (d.is_number_unsigned()) {
      if (d.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
        return Error{ErrorCode::Overflow, where + " does not fit a 64-bit signed integer"};
      shape.push_back(static_cast<int64_t>(d.get<uint64_t>()));
    } else if (d.is_number_integer()) {
      return Error{ErrorCode::ShapeMismatch,
                   where + " is " + std::to_string(d.get<int64_t>()) + ", must be non-negative"};
    } else {
      return Error{ErrorCode::Schema,
                   where + " must be a non-negative integer, got " + json_io::json_type_name(d)};
    }
  }
  return shape;
}

}  // namespace

Result<HostTensor> parse_tensor_json(std::string_view text) {
  TENACT_ASSIGN_OR_RETURN(Json doc, json_io::parse_json(text, "tensor"));
  return json_io::tensor_from_json(doc);
}

Result<HostTensor> json_io::tensor_from_json(const Json& doc) {
  if (!doc.is_object())
    return Error{ErrorCode::Schema,
                 "tensor: expected an object with keys dtype, shape, data, got " +
                     json_io::json_type_name(doc)};
  for (const auto& item : doc.items()) {
    bool known = false;
    for (const char* k : kKeys) known = known || item.key() == k;
    if (!known)
      return Error{ErrorCode::Schema, "tensor: unknown key \"" + item.key().substr(0, 64) +
                                          "\" (the keys are dtype, shape, data)"};
  }
  for (const char* k : kKeys)
    if (!doc.contains(k))
      return Error{ErrorCode::Schema, std::string("tensor: missing key \"") + k + "\""};

  const Json& dtype_json = doc["dtype"];
  if (!dtype_json.is_string())
    return Error{ErrorCode::Schema, "tensor: \"dtype\" must be a string, got " +
                                        json_io::json_type_name(dtype_json)};
  const auto& dtype_name = dtype_json.get_ref<const std::string&>();
  auto dtype = parse_dtype(dtype_name);
  if (!dtype)
    return Error{ErrorCode::Schema, "tensor: unknown dtype \"" + dtype_name.substr(0, 64) + "\""};
  TENACT_ASSIGN_OR_RETURN(auto shape, shape_from_json(doc["shape"]));
  return json_io::tensor_from_json_data(doc["data"], *dtype, shape, "tensor data");
}

std::string tensor_to_json(const HostTensor& tensor) {
  // Keys in the documented order (nlohmann's object would sort them); the
  // shape spaced as in the documentation, the data compact.
  std::string out = "{\"dtype\": \"";
  out += to_string(tensor.dtype());
  out += "\", \"shape\": [";
  for (size_t i = 0; i < tensor.shape().size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(tensor.shape()[i]);
  }
  out += "]";
  out += ", \"data\": ";
  out += json_io::tensor_data_to_json(tensor).dump();
  out += "}";
  return out;
}

}  // namespace tenact
