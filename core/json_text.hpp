// JSON text for tools that print JSON by hand: a string as a quoted JSON
// string literal, escaped (quotes, backslashes, control characters).
// Thread-safe, no state.
#pragma once

#include <string>
#include <string_view>

namespace tenact {

/// "\"" + escaped text + "\"". Invalid UTF-8 bytes are replaced by U+FFFD.
std::string json_quoted(std::string_view text);

}  // namespace tenact
