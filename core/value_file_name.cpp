#include "core/value_file_name.hpp"

namespace tenact {

namespace {

constexpr char kHex[] = "0123456789ABCDEF";

bool stands_for_itself(char c, bool first) {
  if (c == '.') return !first;
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;  // lower-case hex is not the encoder's output
}

}  // namespace

std::string escape_value_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (stands_for_itself(c, i == 0)) {
      out.push_back(c);
      continue;
    }
    const auto byte = static_cast<unsigned char>(c);
    out.push_back('%');
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 0xF]);
  }
  return out;
}

std::optional<std::string> unescape_value_name(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  for (size_t i = 0; i < escaped.size(); ++i) {
    const char c = escaped[i];
    if (c != '%') {
      if (!stands_for_itself(c, out.empty())) return std::nullopt;
      out.push_back(c);
      continue;
    }
    if (escaped.size() - i < 3) return std::nullopt;  // '%' needs two hex digits
    const int hi = hex_value(escaped[i + 1]);
    const int lo = hex_value(escaped[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    const char decoded = static_cast<char>(hi * 16 + lo);
    if (stands_for_itself(decoded, out.empty())) return std::nullopt;  // not canonical
    out.push_back(decoded);
    i += 2;
  }
  return out;
}

Result<std::string> value_file_name(std::string_view name, std::string_view suffix) {
  if (name.empty()) return Error{ErrorCode::Schema, "a value with an empty name has no file name"};
  std::string file = escape_value_name(name);
  file += suffix;
  if (file.size() > kMaxFileNameBytes)
    return Error{ErrorCode::LimitExceeded,
                 "value '" + std::string{name.substr(0, 64)} + (name.size() > 64 ? "...'" : "'") +
                     " needs a file name of " + std::to_string(file.size()) +
                     " bytes once escaped; file systems take at most " +
                     std::to_string(kMaxFileNameBytes)};
  return file;
}

}  // namespace tenact
