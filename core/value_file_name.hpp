// File names for program values: a reversible escaping that lets a tool
// write any value name (names may hold '/', "..", spaces, any Unicode; see
// docs/program-format.md, "Names") as one file inside a folder it was given.
//
// The escaping: ASCII letters, digits, '_', '-' and '.' stand for
// themselves, except a '.' that starts the name; every other byte of the
// name's UTF-8 (including '%' itself, '/', a leading '.', spaces and every
// byte of a non-ASCII character) is written %XX, two upper-case hex digits.
// So "layer1/w" is "layer1%2Fw", ".." is "%2E.", "ü" is "%C3%BC".
//
// Guarantees: the result is never empty, never "." or "..", never starts
// with '.', and holds no '/' or NUL: it names a file directly inside the
// folder. Distinct names give distinct file names (decoding inverts the
// encoding exactly). Pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace tenact {

/// The longest file name a POSIX file system takes (NAME_MAX).
inline constexpr size_t kMaxFileNameBytes = 255;

/// The escaped form of `name` (see above). Empty `name` gives "".
std::string escape_value_name(std::string_view name);

/// The name `escaped` stands for, or nullopt when it is not an escaping's
/// output (a malformed %XX, a byte that should have been escaped, a '%XX'
/// for a byte that should not have been).
std::optional<std::string> unescape_value_name(std::string_view escaped);

/// escape_value_name(name) + suffix, or LimitExceeded naming the value when
/// it is longer than kMaxFileNameBytes, or Schema for an empty name.
Result<std::string> value_file_name(std::string_view name, std::string_view suffix);

}  // namespace tenact
