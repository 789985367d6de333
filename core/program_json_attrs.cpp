#include "core/program_json_attrs.hpp"

#include "core/shape.hpp"

#include <set>
#include <string>

namespace tenact::json_io {

namespace {

Error schema(const std::string& msg) { return Error{ErrorCode::Schema, msg}; }

// Tracks which keys of one op object were consumed, so that any key left
// over is reported as unknown.
class OpReader {
 public:
  explicit OpReader(const Json& op) : op_(op) {}

  const Json* find(const char* key) {
    used_.insert(key);
    auto it = op_.find(key);
    return it == op_.end() ? nullptr : &*it;
  }
  Result<const Json*> require(const char* key) {
    const Json* j = find(key);
    if (!j) return schema(std::string{"missing attribute '"} + key + "'");
    return j;
  }

  Result<int64_t> integer(const Json& j, const std::string& where) {
    if (j.is_number_integer()) {
      if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
        return Error{ErrorCode::InvalidAttribute, where + ": integer out of range"};
      return j.get<int64_t>();
    }
    return schema(where + ": expected an integer, got " + json_type_name(j));
  }
  Result<int64_t> int_attr(const char* key, std::optional<int64_t> fallback = std::nullopt) {
    const Json* j = find(key);
    if (!j) {
      if (fallback) return *fallback;
      return schema(std::string{"missing attribute '"} + key + "'");
    }
    return integer(*j, std::string{"attribute '"} + key + "'");
  }
  Result<std::vector<int64_t>> ints_attr(const char* key, bool required = true) {
    const Json* j = find(key);
    std::vector<int64_t> out;
    if (!j) {
      if (required) return schema(std::string{"missing attribute '"} + key + "'");
      return out;
    }
    if (!j->is_array())
      return schema(std::string{"attribute '"} + key + "': expected a list of integers, got " +
                    json_type_name(*j));
    for (size_t i = 0; i < j->size(); ++i) {
      TENACT_ASSIGN_OR_RETURN(int64_t v, integer((*j)[i], std::string{"attribute '"} + key +
                                                             "' element " + std::to_string(i)));
      out.push_back(v);
    }
    return out;
  }
  Result<std::vector<DimExpr>> dims_attr(const char* key, bool required = true) {
    const Json* j = find(key);
    std::vector<DimExpr> out;
    if (!j) {
      if (required) return schema(std::string{"missing attribute '"} + key + "'");
      return out;
    }
    if (!j->is_array())
      return schema(std::string{"attribute '"} + key + "': expected a list of dimensions, got " +
                    json_type_name(*j));
    for (size_t i = 0; i < j->size(); ++i) {
      TENACT_ASSIGN_OR_RETURN(DimExpr e, dim_from_json((*j)[i], std::string{"attribute '"} + key +
                                                                    "' element " + std::to_string(i)));
      out.push_back(std::move(e));
    }
    return out;
  }
  Result<bool> bool_attr(const char* key, bool fallback) {
    const Json* j = find(key);
    if (!j) return fallback;
    if (!j->is_boolean())
      return schema(std::string{"attribute '"} + key + "': expected true or false, got " +
                    json_type_name(*j));
    return j->get<bool>();
  }
  Result<std::string> string_attr(const char* key) {
    TENACT_ASSIGN_OR_RETURN(const Json* j, require(key));
    if (!j->is_string())
      return schema(std::string{"attribute '"} + key + "': expected a string, got " +
                    json_type_name(*j));
    return j->get<std::string>();
  }
  Result<DType> dtype_attr(const char* key) {
    TENACT_ASSIGN_OR_RETURN(std::string s, string_attr(key));
    if (auto t = parse_dtype(s)) return *t;
    return Error{ErrorCode::InvalidAttribute,
                 std::string{"attribute '"} + key + "': unknown element type '" + s + "'"};
  }

  /// Errors on the first key that was never asked for.
  Status check_no_unknown_keys() {
    for (auto it = op_.begin(); it != op_.end(); ++it) {
      const std::string& k = it.key();
      if (k == "op" || k == "in" || k == "out" || used_.count(k)) continue;
      return schema("unknown attribute '" + k + "'");
    }
    return ok_status();
  }

 private:
  const Json& op_;
  std::set<std::string, std::less<>> used_;
};

Result<ConstantAttrs> read_constant(OpReader& r) {
  ConstantAttrs a;
  TENACT_ASSIGN_OR_RETURN(a.dtype, r.dtype_attr("dtype"));
  TENACT_ASSIGN_OR_RETURN(a.shape, r.dims_attr("shape"));
  TENACT_ASSIGN_OR_RETURN(const Json* value, r.require("value"));
  // A scalar fills the whole shape. For complex dtypes a two-element list of
  // numbers is one [re, im] scalar; the list form then holds one pair per
  // element.
  const bool complex_pair = is_complex(a.dtype) && value->is_array() && value->size() == 2 &&
                            !(*value)[0].is_array();
  if (!value->is_array() || complex_pair) {
    TENACT_ASSIGN_OR_RETURN(Scalar s, scalar_from_json(*value, "attribute 'value'"));
    if (auto fits = s.check_fits(a.dtype); !fits.ok())
      return fits.error().with_context("attribute 'value'");
    a.splat = s;
    return a;
  }
  std::vector<int64_t> dims;
  for (const auto& d : a.shape) {
    auto v = d.constant_value();
    if (!v)
      return Error{ErrorCode::InvalidAttribute,
                   "attribute 'value': a list needs a constant shape, got " + to_string(a.shape) +
                       " (use a single scalar for a symbolic shape)"};
    dims.push_back(*v);
  }
  TENACT_ASSIGN_OR_RETURN(HostTensor t, tensor_from_json_data(*value, a.dtype, dims,
                                                              "attribute 'value'"));
  a.dense = std::move(t);
  return a;
}

// One reader per attribute struct; returns the struct or the first error.
template <class A>
Result<OpAttrs> read(OpReader& r);

template <> Result<OpAttrs> read<NoAttrs>(OpReader&) { return OpAttrs{NoAttrs{}}; }
template <> Result<OpAttrs> read<CompareAttrs>(OpReader& r) {
  TENACT_ASSIGN_OR_RETURN(std::string s, r.string_attr("direction"));
  auto d = parse_compare_direction(s);
  if (!d)
    return Error{ErrorCode::InvalidAttribute,
                 "attribute 'direction': '" + s + "' is not one of EQ, NE, LT, LE, GT, GE"};
  return OpAttrs{CompareAttrs{*d}};
}
template <> Result<OpAttrs> read<TransposeAttrs>(OpReader& r) {
  TENACT_ASSIGN_OR_RETURN(auto p, r.ints_attr("permutation"));
  return OpAttrs{TransposeAttrs{std::move(p)}};
}
template <> Result<OpAttrs> read<ReshapeAttrs>(OpReader& r) {
  TENACT_ASSIGN_OR_RETURN(auto s, r.dims_attr("shape"));
  return OpAttrs{ReshapeAttrs{std::move(s)}};
}
template <> Result<OpAttrs> read<BroadcastInDimAttrs>(OpReader& r) {
  BroadcastInDimAttrs a;
  TENACT_ASSIGN_OR_RETURN(a.shape, r.dims_attr("shape"));
  TENACT_ASSIGN_OR_RETURN(a.broadcast_dimensions, r.ints_attr("broadcast_dimensions"));
  return OpAttrs{std::move(a)};
}
template <> Result<OpAttrs> read<ConvertAttrs>(OpReader& r) {
  TENACT_ASSIGN_OR_RETURN(DType t, r.dtype_attr("dtype"));
  return OpAttrs{ConvertAttrs{t}};
}
template <> Result<OpAttrs> read<ConstantAttrs>(OpReader& r) {
  TENACT_ASSIGN_OR_RETURN(ConstantAttrs a, read_constant(r));
  return OpAttrs{std::move(a)};
}
template <> Result<OpAttrs> read<IotaAttrs>(OpReader& r) {
  IotaAttrs a;
  TENACT_ASSIGN_OR_RETURN(a.dtype, r.dtype_attr("dtype"));
  TENACT_ASSIGN_OR_RETURN(a.shape, r.dims_attr("shape"));
  TENACT_ASSIGN_OR_RETURN(a.iota_dimension, r.int_attr("iota_dimension"));
  return OpAttrs{std::move(a)};
}
template <> Result<OpAttrs> read<TriangleAttrs>(OpReader& r) {
  TENACT_ASSIGN_OR_RETURN(int64_t k, r.int_attr("k", 0));
  return OpAttrs{TriangleAttrs{k}};
}
template <> Result<OpAttrs> read<ReduceAttrs>(OpReader& r) {
  TENACT_ASSIGN_OR_RETURN(auto d, r.ints_attr("dimensions"));
  return OpAttrs{ReduceAttrs{std::move(d)}};
}
template <> Result<OpAttrs> read<SliceAttrs>(OpReader& r) {
  SliceAttrs a;
  TENACT_ASSIGN_OR_RETURN(a.start_indices, r.dims_attr("start_indices"));
  TENACT_ASSIGN_OR_RETURN(a.limit_indices, r.dims_attr("limit_indices"));
  TENACT_ASSIGN_OR_RETURN(a.strides, r.ints_attr("strides", false));
  if (!r.find("strides")) a.strides.assign(a.start_indices.size(), 1);
  return OpAttrs{std::move(a)};
}
template <> Result<OpAttrs> read<DynamicSliceAttrs>(OpReader& r) {
  TENACT_ASSIGN_OR_RETURN(auto s, r.dims_attr("slice_sizes"));
  return OpAttrs{DynamicSliceAttrs{std::move(s)}};
}
template <> Result<OpAttrs> read<PadAttrs>(OpReader& r) {
  PadAttrs a;
  TENACT_ASSIGN_OR_RETURN(a.edge_padding_low, r.dims_attr("edge_padding_low"));
  TENACT_ASSIGN_OR_RETURN(a.edge_padding_high, r.dims_attr("edge_padding_high"));
  TENACT_ASSIGN_OR_RETURN(a.interior_padding, r.dims_attr("interior_padding", false));
  if (!r.find("interior_padding"))
    a.interior_padding.assign(a.edge_padding_low.size(), DimExpr::constant(0));
  return OpAttrs{std::move(a)};
}
template <> Result<OpAttrs> read<ConcatenateAttrs>(OpReader& r) {
  TENACT_ASSIGN_OR_RETURN(int64_t d, r.int_attr("dimension"));
  return OpAttrs{ConcatenateAttrs{d}};
}
template <> Result<OpAttrs> read<ReverseAttrs>(OpReader& r) {
  TENACT_ASSIGN_OR_RETURN(auto d, r.ints_attr("dimensions"));
  return OpAttrs{ReverseAttrs{std::move(d)}};
}
template <> Result<OpAttrs> read<GatherAttrs>(OpReader& r) {
  GatherAttrs a;
  TENACT_ASSIGN_OR_RETURN(a.offset_dims, r.ints_attr("offset_dims"));
  TENACT_ASSIGN_OR_RETURN(a.collapsed_slice_dims, r.ints_attr("collapsed_slice_dims"));
  TENACT_ASSIGN_OR_RETURN(a.start_index_map, r.ints_attr("start_index_map"));
  TENACT_ASSIGN_OR_RETURN(a.index_vector_dim, r.int_attr("index_vector_dim"));
  TENACT_ASSIGN_OR_RETURN(a.slice_sizes, r.dims_attr("slice_sizes"));
  TENACT_ASSIGN_OR_RETURN(a.operand_batching_dims, r.ints_attr("operand_batching_dims", false));
  TENACT_ASSIGN_OR_RETURN(a.start_indices_batching_dims,
                          r.ints_attr("start_indices_batching_dims", false));
  return OpAttrs{std::move(a)};
}
template <> Result<OpAttrs> read<ScatterAttrs>(OpReader& r) {
  ScatterAttrs a;
  TENACT_ASSIGN_OR_RETURN(a.update_window_dims, r.ints_attr("update_window_dims"));
  TENACT_ASSIGN_OR_RETURN(a.inserted_window_dims, r.ints_attr("inserted_window_dims"));
  TENACT_ASSIGN_OR_RETURN(a.scatter_dims_to_operand_dims,
                          r.ints_attr("scatter_dims_to_operand_dims"));
  TENACT_ASSIGN_OR_RETURN(a.index_vector_dim, r.int_attr("index_vector_dim"));
  TENACT_ASSIGN_OR_RETURN(a.input_batching_dims, r.ints_attr("input_batching_dims", false));
  TENACT_ASSIGN_OR_RETURN(a.scatter_indices_batching_dims,
                          r.ints_attr("scatter_indices_batching_dims", false));
  if (r.find("update")) {
    TENACT_ASSIGN_OR_RETURN(std::string s, r.string_attr("update"));
    auto u = parse_scatter_update(s);
    if (!u)
      return Error{ErrorCode::InvalidAttribute, "attribute 'update': '" + s +
                                                    "' is not one of replace, add, multiply, max, min"};
    a.update = *u;
  }
  return OpAttrs{std::move(a)};
}
template <> Result<OpAttrs> read<DynamicTruncateAttrs>(OpReader& r) {
  TENACT_ASSIGN_OR_RETURN(int64_t d, r.int_attr("dimension"));
  return OpAttrs{DynamicTruncateAttrs{d}};
}
template <> Result<OpAttrs> read<PadToMatchAttrs>(OpReader& r) {
  PadToMatchAttrs a;
  if (const Json* v = r.find("value")) {
    TENACT_ASSIGN_OR_RETURN(a.value, scalar_from_json(*v, "attribute 'value'"));
  }
  return OpAttrs{std::move(a)};
}
template <> Result<OpAttrs> read<DotGeneralAttrs>(OpReader& r) {
  DotGeneralAttrs a;
  TENACT_ASSIGN_OR_RETURN(a.lhs_batching_dimensions, r.ints_attr("lhs_batching_dimensions", false));
  TENACT_ASSIGN_OR_RETURN(a.rhs_batching_dimensions, r.ints_attr("rhs_batching_dimensions", false));
  TENACT_ASSIGN_OR_RETURN(a.lhs_contracting_dimensions, r.ints_attr("lhs_contracting_dimensions"));
  TENACT_ASSIGN_OR_RETURN(a.rhs_contracting_dimensions, r.ints_attr("rhs_contracting_dimensions"));
  TENACT_ASSIGN_OR_RETURN(a.conj_lhs, r.bool_attr("conj_lhs", false));
  TENACT_ASSIGN_OR_RETURN(a.conj_rhs, r.bool_attr("conj_rhs", false));
  return OpAttrs{std::move(a)};
}
template <> Result<OpAttrs> read<ExtensionAttrs>(OpReader& r) {
  ExtensionAttrs a;
  TENACT_ASSIGN_OR_RETURN(a.family, r.string_attr("family"));
  if (const Json* attrs = r.find("attributes")) {
    if (!attrs->is_object())
      return schema("attribute 'attributes': expected an object, got " + json_type_name(*attrs));
    a.attributes_json = attrs->dump();  // keys sorted: nlohmann objects are ordered maps
  }
  return OpAttrs{std::move(a)};
}

Json dims_json(const std::vector<DimExpr>& v) {
  Json j = Json::array();
  for (const auto& e : v) j.push_back(dim_to_json(e));
  return j;
}

}  // namespace

Json dim_to_json(const DimExpr& e) {
  if (auto v = e.constant_value()) return Json(*v);
  return Json(e.to_string());
}

Result<DimExpr> dim_from_json(const Json& j, const std::string& where) {
  if (j.is_number_integer()) {
    if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      return Error{ErrorCode::Overflow, where + ": dimension out of range"};
    return DimExpr::constant(j.get<int64_t>());
  }
  if (j.is_string()) {
    auto e = DimExpr::parse(j.get<std::string>());
    if (!e.ok()) return e.error().with_context(where);
    return e;
  }
  return schema(where + ": expected an integer or a dimension expression string, got " +
                json_type_name(j));
}

Result<OpAttrs> read_op_attrs(OpKind kind, const Json& op) {
  OpReader reader{op};
  Result<OpAttrs> attrs = Error{ErrorCode::Internal, "unreachable"};
  switch (kind) {
#define TENACT_OP(Enum, name, family, A) \
  case OpKind::Enum: attrs = read<A>(reader); break;
#include "core/ops.def"
#undef TENACT_OP
  }
  if (!attrs.ok()) return attrs;
  TENACT_TRY(reader.check_no_unknown_keys());
  return attrs;
}

void write_op_attrs(const OpAttrs& attrs, Json& op) {
  std::visit(
      [&](const auto& a) {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, CompareAttrs>) {
          op["direction"] = std::string{to_string(a.direction)};
        } else if constexpr (std::is_same_v<A, TransposeAttrs>) {
          op["permutation"] = a.permutation;
        } else if constexpr (std::is_same_v<A, ReshapeAttrs>) {
          op["shape"] = dims_json(a.shape);
        } else if constexpr (std::is_same_v<A, BroadcastInDimAttrs>) {
          op["shape"] = dims_json(a.shape);
          op["broadcast_dimensions"] = a.broadcast_dimensions;
        } else if constexpr (std::is_same_v<A, ConvertAttrs>) {
          op["dtype"] = std::string{to_string(a.dtype)};
        } else if constexpr (std::is_same_v<A, ConstantAttrs>) {
          op["dtype"] = std::string{to_string(a.dtype)};
          op["shape"] = dims_json(a.shape);
          if (a.splat) op["value"] = scalar_to_json(*a.splat);
          else if (a.dense) op["value"] = tensor_data_to_json(*a.dense);
        } else if constexpr (std::is_same_v<A, IotaAttrs>) {
          op["dtype"] = std::string{to_string(a.dtype)};
          op["shape"] = dims_json(a.shape);
          op["iota_dimension"] = a.iota_dimension;
        } else if constexpr (std::is_same_v<A, TriangleAttrs>) {
          op["k"] = a.k;
        } else if constexpr (std::is_same_v<A, ReduceAttrs> || std::is_same_v<A, ReverseAttrs>) {
          op["dimensions"] = a.dimensions;
        } else if constexpr (std::is_same_v<A, SliceAttrs>) {
          op["start_indices"] = dims_json(a.start_indices);
          op["limit_indices"] = dims_json(a.limit_indices);
          op["strides"] = a.strides;
        } else if constexpr (std::is_same_v<A, DynamicSliceAttrs>) {
          op["slice_sizes"] = dims_json(a.slice_sizes);
        } else if constexpr (std::is_same_v<A, PadAttrs>) {
          op["edge_padding_low"] = dims_json(a.edge_padding_low);
          op["edge_padding_high"] = dims_json(a.edge_padding_high);
          op["interior_padding"] = dims_json(a.interior_padding);
        } else if constexpr (std::is_same_v<A, ConcatenateAttrs> ||
                             std::is_same_v<A, DynamicTruncateAttrs>) {
          op["dimension"] = a.dimension;
        } else if constexpr (std::is_same_v<A, GatherAttrs>) {
          op["offset_dims"] = a.offset_dims;
          op["collapsed_slice_dims"] = a.collapsed_slice_dims;
          op["start_index_map"] = a.start_index_map;
          op["index_vector_dim"] = a.index_vector_dim;
          op["slice_sizes"] = dims_json(a.slice_sizes);
          op["operand_batching_dims"] = a.operand_batching_dims;
          op["start_indices_batching_dims"] = a.start_indices_batching_dims;
        } else if constexpr (std::is_same_v<A, ScatterAttrs>) {
          op["update_window_dims"] = a.update_window_dims;
          op["inserted_window_dims"] = a.inserted_window_dims;
          op["scatter_dims_to_operand_dims"] = a.scatter_dims_to_operand_dims;
          op["index_vector_dim"] = a.index_vector_dim;
          op["input_batching_dims"] = a.input_batching_dims;
          op["scatter_indices_batching_dims"] = a.scatter_indices_batching_dims;
          op["update"] = std::string{to_string(a.update)};
        } else if constexpr (std::is_same_v<A, PadToMatchAttrs>) {
          if (a.value) op["value"] = scalar_to_json(*a.value);
        } else if constexpr (std::is_same_v<A, DotGeneralAttrs>) {
          op["lhs_batching_dimensions"] = a.lhs_batching_dimensions;
          op["rhs_batching_dimensions"] = a.rhs_batching_dimensions;
          op["lhs_contracting_dimensions"] = a.lhs_contracting_dimensions;
          op["rhs_contracting_dimensions"] = a.rhs_contracting_dimensions;
          op["conj_lhs"] = a.conj_lhs;
          op["conj_rhs"] = a.conj_rhs;
        } else if constexpr (std::is_same_v<A, ExtensionAttrs>) {
          op["family"] = a.family;
          op["attributes"] = Json::parse(a.attributes_json, nullptr, false);
        }
      },
      attrs);
}

}  // namespace tenact::json_io
