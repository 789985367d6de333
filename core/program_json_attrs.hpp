// Reading and writing the attributes of each op as JSON (internal to core/).
#pragma once

#include <string>

#include "core/json_internal.hpp"
#include "core/op_attrs.hpp"

namespace tenact::json_io {

/// Reads the attributes of an op of `kind` from its JSON object. Every key
/// other than "op", "in", "out" must be an attribute of that op (unknown
/// keys are errors); required attributes must be present. Errors carry no
/// op prefix.
Result<OpAttrs> read_op_attrs(OpKind kind, const Json& op);

/// Writes the attributes of an op into `op` (an object), as read_op_attrs
/// reads them.
void write_op_attrs(const OpAttrs& attrs, Json& op);

/// A dimension as JSON: integer when constant, expression text otherwise.
Json dim_to_json(const DimExpr& e);
/// Reads one dimension: an integer or an expression string.
Result<DimExpr> dim_from_json(const Json& j, const std::string& where);

}  // namespace tenact::json_io
