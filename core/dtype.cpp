#include "core/dtype.hpp"

namespace tenact {

namespace {
constexpr std::string_view kNames[kDTypeCount] = {
    "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32",
    "u64", "f16", "bf16", "f32", "f64", "c64", "c128"};
}  // namespace

std::string_view to_string(DType t) noexcept {
  auto i = static_cast<size_t>(t);
  return i < static_cast<size_t>(kDTypeCount) ? kNames[i] : std::string_view{"?"};
}

std::optional<DType> parse_dtype(std::string_view name) noexcept {
  for (int i = 0; i < kDTypeCount; ++i)
    if (kNames[i] == name) return static_cast<DType>(i);
  return std::nullopt;
}

}  // namespace tenact
