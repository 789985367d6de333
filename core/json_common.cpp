// nlohmann::json glue shared by core/'s JSON readers (see json_internal.hpp);
// parse_json is in json_parse.cpp.
//
// Contract: no nlohmann exception escapes; every failure is a tenact::Error.
#include "core/json_internal.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace tenact::json_io {

namespace {

std::string shape_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

// A real part of a literal: a JSON number or "nan"/"inf"/"-inf".
std::optional<double> real_from_json(const Json& j) {
  if (j.is_number_integer() || j.is_number_float()) return j.get<double>();
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  return std::nullopt;
}

Json real_to_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  return v;  // nlohmann prints the shortest text that reads back exactly
}

}  // namespace

std::string json_type_name(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "a bool";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    case Json::value_t::string: return "a string";
    case Json::value_t::array: return "an array";
    case Json::value_t::object: return "an object";
    case Json::value_t::binary: return "binary data";
    case Json::value_t::discarded: return "a discarded value";
  }
  return "an unknown JSON value";
}

Result<Scalar> scalar_from_json(const Json& j, std::string_view where) {
  switch (j.type()) {
    case Json::value_t::boolean: return Scalar::of_bool(j.get<bool>());
    case Json::value_t::number_integer: return Scalar::of_int(j.get<int64_t>());
    case Json::value_t::number_unsigned: {
      const auto u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return Scalar::of_int(static_cast<int64_t>(u));
      return Scalar::of_uint(u);
    }
    case Json::value_t::number_float: return Scalar::of_float(j.get<double>());
    case Json::value_t::string:
      if (auto v = real_from_json(j)) return Scalar::of_float(*v);
      return Error{ErrorCode::Schema, std::string(where) +
                                          ": expected a number, bool or [re, im] pair; the only "
                                          "strings allowed are \"nan\", \"inf\", \"-inf\", got \"" +
                                          j.get_ref<const std::string&>().substr(0, 40) + "\""};
    case Json::value_t::array:
      if (j.size() == 2) {
        auto re = real_from_json(j[0]);
        auto im = real_from_json(j[1]);
        if (re && im) return Scalar::of_complex(*re, *im);
      }
      return Error{ErrorCode::Schema,
                   std::string(where) + ": an array literal must be a [re, im] pair of numbers"};
    default: break;
  }
  return Error{ErrorCode::Schema, std::string(where) +
                                      ": expected a number, bool or [re, im] pair, got " +
                                      json_type_name(j)};
}

Json scalar_to_json(const Scalar& s) {
  switch (s.kind) {
    case Scalar::Kind::Bool: return s.b;
    case Scalar::Kind::Int: return s.i;
    case Scalar::Kind::UInt: return s.u;
    case Scalar::Kind::Float: return real_to_json(s.re);
    case Scalar::Kind::Complex: return Json::array({real_to_json(s.re), real_to_json(s.im)});
  }
  return nullptr;
}

Result<HostTensor> tensor_from_json_data(const Json& data, DType dtype,
                                         const std::vector<int64_t>& shape,
                                         std::string_view where) {
  TENACT_ASSIGN_OR_RETURN(int64_t count, checked_element_count(shape));
  if (!data.is_array())
    return Error{ErrorCode::Schema, std::string(where) + ": expected a flat list of " +
                                        std::to_string(count) + " elements, got " +
                                        json_type_name(data)};
  if (data.size() != static_cast<uint64_t>(count))
    return Error{ErrorCode::ShapeMismatch,
                 std::string(where) + ": shape " + shape_text(shape) + " holds " +
                     std::to_string(count) + " elements, the list has " +
                     std::to_string(data.size())};
  TENACT_ASSIGN_OR_RETURN(HostTensor tensor, HostTensor::zeros(dtype, shape));
  const size_t elem = size_of(dtype);
  std::byte* dst = tensor.data();
  for (size_t k = 0; k < data.size(); ++k) {
    const Json& item = data[k];
    // The element's name is spelled only for an error (no string per element).
    auto item_where = [&] { return std::string(where) + " element " + std::to_string(k); };
    if (item.is_array() && !is_complex(dtype))
      return Error{ErrorCode::Schema, item_where() + ": expected a " +
                                          std::string(to_string(dtype)) +
                                          " value, got an array (data is a flat row-major list)"};
    auto value = scalar_from_json(item, {});
    if (!value.ok()) return scalar_from_json(item, item_where()).error();
    if (auto fits = value->check_fits(dtype); !fits.ok())
      return fits.error().with_context(item_where());
    value->store(dtype, dst + k * elem);
  }
  return tensor;
}

Json tensor_data_to_json(const HostTensor& tensor) {
  Json out = Json::array();
  if (tensor.element_count() == 0 || !tensor.buffer()) return out;
  const size_t elem = size_of(tensor.dtype());
  const std::byte* base = tensor.buffer()->data();
  out.get_ref<Json::array_t&>().reserve(static_cast<size_t>(tensor.element_count()));
  for_each_offset(tensor.shape(), tensor.strides(), tensor.offset(), [&](int64_t, int64_t off) {
    out.push_back(
        scalar_to_json(Scalar::load(tensor.dtype(), base + static_cast<size_t>(off) * elem)));
  });
  return out;
}

}  // namespace tenact::json_io
