// OpKind: every op of the program format, its JSON name and its family.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tenact {

enum class OpKind : uint8_t {
#define TENACT_OP(Enum, name, family, attrs) Enum,
#include "core/ops.def"
#undef TENACT_OP
};

inline constexpr int kOpKindCount = 0
#define TENACT_OP(Enum, name, family, attrs) +1
#include "core/ops.def"
#undef TENACT_OP
    ;

/// The capability family an engine declares to serve an op.
enum class OpFamily : uint8_t { Elementwise, Reduction, Indexing, Dot, Layout, Extension };

std::string_view to_string(OpKind kind) noexcept;
std::string_view to_string(OpFamily family) noexcept;
std::optional<OpKind> parse_op_kind(std::string_view name) noexcept;
OpFamily family_of(OpKind kind) noexcept;

enum class CompareDirection : uint8_t { EQ, NE, LT, LE, GT, GE };
std::string_view to_string(CompareDirection d) noexcept;
std::optional<CompareDirection> parse_compare_direction(std::string_view s) noexcept;

enum class ScatterUpdate : uint8_t { Replace, Add, Multiply, Max, Min };
std::string_view to_string(ScatterUpdate u) noexcept;
std::optional<ScatterUpdate> parse_scatter_update(std::string_view s) noexcept;

}  // namespace tenact
