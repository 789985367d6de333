// A fixed-order binary encoding of key fields and its XXH3 digests: the one
// way planning turns identities into hashes (prepared-entry keys,
// projections, extension payloads).
//
// Encoding rules (so that no two different field sequences share bytes):
// integers little-endian at fixed width, strings and lists prefixed by
// their length, optional values by a presence byte, each top-level field
// preceded by a one-byte tag chosen by the caller.
//
// Not thread-safe (one encoder per thread). The encoding is explicitly
// little-endian, so digests are stable across runs, builds and platforms.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/program.hpp"

namespace tenact {

class KeyEncoder {
 public:
  void tag(uint8_t t) { u8(t); }
  void u8(uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void boolean(bool v) { u8(v ? 1 : 0); }
  void u64(uint64_t v);
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void str(std::string_view s);
  void fingerprint(const Fingerprint& f) {
    u64(f.hi);
    u64(f.lo);
  }
  template <class T, class F>
  void optional(const std::optional<T>& v, F&& put) {
    boolean(v.has_value());
    if (v) put(*v);
  }

  const std::string& bytes() const { return bytes_; }
  /// XXH3-128 of the bytes, seeded.
  Fingerprint digest128(uint64_t seed = 0) const;
  /// XXH3-64 of the bytes, seeded.
  uint64_t digest64(uint64_t seed = 0) const;

 private:
  std::string bytes_;
};

/// XXH3-128 of `bytes` (seed 0): the fingerprint of a payload.
Fingerprint xxh3_128(std::string_view bytes);

}  // namespace tenact
