// nlohmann::json glue shared by core/'s JSON readers (see json_internal.hpp).
//
// Contract: no nlohmann exception escapes; every failure is a tenact::Error.
// The nesting depth is checked on the raw text before nlohmann parses it,
// so a hostile document ("[[[[..." x 10^6) cannot exhaust the stack.
#include "core/json_internal.hpp"

#include <set>

#include <cmath>
#include <cstring>
#include <exception>
#include <limits>

namespace tenact::json_io {

namespace {

// Byte position of the first array/object opening deeper than the limit,
// or nullopt. Brackets inside strings (escapes honoured) do not count.
std::optional<size_t> first_too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t pos = 0; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (in_string) {
      if (c == '\\') ++pos;  // skip the escaped character
      else if (c == '"') in_string = false;
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        if (++depth > kMaxJsonDepth) return pos;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;  // unbalanced text is nlohmann's to report
        break;
      default: break;
    }
  }
  return std::nullopt;
}

std::string shape_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

// nlohmann's what() starts with "[json.exception.parse_error.101] "; keep
// only the part meant for a person.
std::string strip_exception_id(const char* what) {
  std::string_view w = what;
  if (!w.empty() && w.front() == '[') {
    auto close = w.find("] ");
    if (close != std::string_view::npos) w.remove_prefix(close + 2);
  }
  return std::string(w);
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

Result<Json> parse_json(std::string_view text, std::string_view what) {
  if (auto pos = first_too_deep(text))
    return Error{ErrorCode::LimitExceeded,
                 std::string(what) + ": JSON nesting deeper than " +
                     std::to_string(kMaxJsonDepth) + " levels at byte " + std::to_string(*pos)};
  // Duplicate keys are an error, not "last one wins": a typo must not be
  // silently shadowed. The callback tracks the keys of each open object.
  struct DuplicateKey {
    std::string key;
  };
  std::vector<std::set<std::string, std::less<>>> open_objects;
  auto on_event = [&](int, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start: open_objects.emplace_back(); break;
      case Json::parse_event_t::object_end:
        if (!open_objects.empty()) open_objects.pop_back();
        break;
      case Json::parse_event_t::key:
        if (!open_objects.empty() && !open_objects.back().insert(parsed.get<std::string>()).second)
          throw DuplicateKey{parsed.get<std::string>()};
        break;
      default: break;
    }
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), on_event);
  } catch (const DuplicateKey& d) {
    return Error{ErrorCode::Parse, std::string(what) + ": duplicate key '" + d.key + "' in a JSON object"};
  } catch (const Json::parse_error& e) {
    return Error{ErrorCode::Parse, std::string(what) + ": JSON syntax error at byte " +
                                       std::to_string(e.byte) + ": " +
                                       strip_exception_id(e.what())};
  } catch (const std::exception& e) {
    return Error{ErrorCode::Parse,
                 std::string(what) + ": JSON could not be parsed: " + strip_exception_id(e.what())};
  }
}

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
    const std::string item_where = std::string(where) + " element " + std::to_string(k);
    if (item.is_array() && !is_complex(dtype))
      return Error{ErrorCode::Schema, item_where + ": expected a " +
                                          std::string(to_string(dtype)) +
                                          " value, got an array (data is a flat row-major list)"};
    TENACT_ASSIGN_OR_RETURN(Scalar value, scalar_from_json(item, item_where));
    if (auto fits = value.check_fits(dtype); !fits.ok())
      return fits.error().with_context(item_where);
    value.store(dtype, dst + k * elem);
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
