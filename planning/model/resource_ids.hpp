// Content-addressed storage resource ids of a model plan:
//   resource/<kind>/sha256/<hex>
// where <hex> is the lower-case SHA-256 (OpenSSL) of the bytes
//   <kind> NUL <fingerprint> NUL <identity>
// — equal inputs give the same id in every process and build, and a
// change of kind, fingerprint or identity gives another.
//
// The kinds and what the plan compiler feeds them (docs/design.md,
// "Models"):
//   weight-arena      execution-weight fingerprint, "<engine>/<storage class>:<dtype>"
//   weight-probe      execution-weight fingerprint, component id (the probe pass only)
//   state             family fingerprint, state name
//   activation        family fingerprint, value name
//   activation-arena  family fingerprint, "<engine>/<storage class>"
// The family fingerprint is the program's fingerprint (32 hex digits).
//
// Thread-safe, pure.
#pragma once

#include <string>
#include <string_view>

namespace tenact {

/// The lower-case hex SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);
/// "resource/<kind>/sha256/<sha256_hex(kind NUL fingerprint NUL identity)>".
std::string hashed_resource_id(std::string_view kind, std::string_view fingerprint,
                               std::string_view identity);

}  // namespace tenact
