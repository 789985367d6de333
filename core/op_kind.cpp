#include "core/op_kind.hpp"

#include <array>

namespace tenact {

namespace {
struct OpRow {
  std::string_view name;
  OpFamily family;
};
constexpr std::array<OpRow, kOpKindCount> kOpRows = {{
#define TENACT_OP(Enum, name, family, attrs) {name, OpFamily::family},
#include "core/ops.def"
#undef TENACT_OP
}};
constexpr std::string_view kDirections[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
constexpr std::string_view kUpdates[] = {"replace", "add", "multiply", "max", "min"};
}  // namespace

std::string_view to_string(OpKind kind) noexcept { return kOpRows[static_cast<size_t>(kind)].name; }

OpFamily family_of(OpKind kind) noexcept { return kOpRows[static_cast<size_t>(kind)].family; }

std::optional<OpKind> parse_op_kind(std::string_view name) noexcept {
  for (size_t i = 0; i < kOpRows.size(); ++i)
    if (kOpRows[i].name == name) return static_cast<OpKind>(i);
  return std::nullopt;
}

std::string_view to_string(OpFamily family) noexcept {
  switch (family) {
    case OpFamily::Elementwise: return "elementwise";
    case OpFamily::Reduction: return "reduction";
    case OpFamily::Indexing: return "indexing";
    case OpFamily::Dot: return "dot_general";
    case OpFamily::Layout: return "layout";
    case OpFamily::Extension: return "extension";
  }
  return "?";
}

std::string_view to_string(CompareDirection d) noexcept { return kDirections[static_cast<size_t>(d)]; }
std::optional<CompareDirection> parse_compare_direction(std::string_view s) noexcept {
  for (size_t i = 0; i < 6; ++i)
    if (kDirections[i] == s) return static_cast<CompareDirection>(i);
  return std::nullopt;
}

std::string_view to_string(ScatterUpdate u) noexcept { return kUpdates[static_cast<size_t>(u)]; }
std::optional<ScatterUpdate> parse_scatter_update(std::string_view s) noexcept {
  for (size_t i = 0; i < 5; ++i)
    if (kUpdates[i] == s) return static_cast<ScatterUpdate>(i);
  return std::nullopt;
}

}  // namespace tenact
