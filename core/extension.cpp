#include "core/extension.hpp"

namespace tenact {

Status check_extension_family(const ExtensionFamily& family) {
  if (family.name.empty()) return Error{ErrorCode::InvalidAttribute, "an extension family needs a name"};
  if (first_control_character(family.name) != std::string_view::npos)
    return Error{ErrorCode::InvalidAttribute,
                 "extension family name '" + printable_name(family.name) + "' holds a control character"};
  if (!family.infer)
    return Error{ErrorCode::InvalidAttribute,
                 "extension family '" + family.name + "' has no result inference (infer)"};
  return ok_status();
}

}  // namespace tenact
