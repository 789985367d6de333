// Element types of the program format (all fifteen), their sizes and names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tenact {

enum class DType : uint8_t {
  Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64, C64, C128,
};

inline constexpr int kDTypeCount = 15;

/// Every dtype, in declaration order (for tests and tables).
inline constexpr DType kAllDTypes[kDTypeCount] = {
    DType::Bool, DType::I8,  DType::I16, DType::I32,  DType::I64,
    DType::U8,   DType::U16, DType::U32, DType::U64,  DType::F16,
    DType::BF16, DType::F32, DType::F64, DType::C64,  DType::C128};

/// Format name: "bool", "i8", ..., "c128".
std::string_view to_string(DType t) noexcept;
/// Parses a format name; nullopt for anything else.
std::optional<DType> parse_dtype(std::string_view name) noexcept;

/// Bytes per element (bool is one byte).
constexpr size_t size_of(DType t) noexcept {
  switch (t) {
    case DType::Bool: case DType::I8: case DType::U8: return 1;
    case DType::I16: case DType::U16: case DType::F16: case DType::BF16: return 2;
    case DType::I32: case DType::U32: case DType::F32: return 4;
    case DType::I64: case DType::U64: case DType::F64: case DType::C64: return 8;
    case DType::C128: return 16;
  }
  return 0;
}

constexpr bool is_bool(DType t) noexcept { return t == DType::Bool; }
constexpr bool is_signed_integer(DType t) noexcept {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64;
}
constexpr bool is_unsigned_integer(DType t) noexcept {
  return t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64;
}
constexpr bool is_integer(DType t) noexcept {
  return is_signed_integer(t) || is_unsigned_integer(t);
}
constexpr bool is_float(DType t) noexcept {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64;
}
constexpr bool is_complex(DType t) noexcept { return t == DType::C64 || t == DType::C128; }
/// Integer, float or complex: the types arithmetic is defined on.
constexpr bool is_numeric(DType t) noexcept { return !is_bool(t); }

/// Real type of a complex type's components (f32 for c64); t itself otherwise.
constexpr DType real_component(DType t) noexcept {
  return t == DType::C64 ? DType::F32 : t == DType::C128 ? DType::F64 : t;
}

}  // namespace tenact
