// nlohmann::json glue shared by core/'s JSON readers and writers.
// Internal: included only by .cpp files of core/ and by
// engines/sim/sim_platform.cpp (which uses parse_json and json_type_name
// for platform files); keeps the heavy JSON header out of widely included
// headers.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/scalar.hpp"
#include "core/tensor.hpp"

namespace tenact::json_io {

using Json = nlohmann::json;

/// Deepest nesting of arrays/objects any document may have. Checked on the
/// raw text before parsing, so a hostile document cannot exhaust the stack.
inline constexpr int kMaxJsonDepth = 64;

/// Parses text to JSON (json_parse.cpp), in time linear in the text.
/// `what` names the document ("program", "tensor") in every message.
/// Errors: LimitExceeded for nesting deeper than kMaxJsonDepth (naming the
/// byte) or a DOM that does not fit in memory; Parse for a syntax error
/// (naming the byte), a duplicate key in an object (naming the key) or a
/// number out of range.
Result<Json> parse_json(std::string_view text, std::string_view what);

/// A scalar literal: number, bool, "nan"/"inf"/"-inf", or [re, im].
/// `where` names the location for errors ("constant value element 3").
Result<Scalar> scalar_from_json(const Json& j, std::string_view where);
Json scalar_to_json(const Scalar& s);

/// Fills a dense tensor of `dtype` and concrete `shape` from a flat JSON
/// list (length checked against the shape before allocating). Every
/// element is checked with Scalar::check_fits.
Result<HostTensor> tensor_from_json_data(const Json& data, DType dtype,
                                         const std::vector<int64_t>& shape,
                                         std::string_view where);
/// The JSON tensor form ({"dtype", "shape", "data"}, tensor_io.hpp) of an
/// already parsed document: what parse_tensor_json reads, and a weight's
/// inline data. Errors start "tensor: ".
Result<HostTensor> tensor_from_json(const Json& doc);
/// The flat row-major JSON list of a tensor's elements.
Json tensor_data_to_json(const HostTensor& tensor);

/// "an array", "a string", ...: for "expected X, got Y" messages.
std::string json_type_name(const Json& j);

}  // namespace tenact::json_io
