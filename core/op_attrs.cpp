#include "core/op_attrs.hpp"

namespace tenact {

bool operator==(const ConstantAttrs& a, const ConstantAttrs& b) {
  if (a.dtype != b.dtype || a.shape != b.shape || a.splat != b.splat) return false;
  if (a.dense.has_value() != b.dense.has_value()) return false;
  return !a.dense || a.dense->bitwise_equal(*b.dense);
}

OpAttrs default_attrs(OpKind kind) {
  switch (kind) {
#define TENACT_OP(Enum, name, family, attrs) \
  case OpKind::Enum: return OpAttrs{attrs{}};
#include "core/ops.def"
#undef TENACT_OP
  }
  return OpAttrs{NoAttrs{}};
}

bool attrs_match_kind(OpKind kind, const OpAttrs& attrs) {
  return default_attrs(kind).index() == attrs.index();
}

}  // namespace tenact
