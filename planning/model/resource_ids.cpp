#include "planning/model/resource_ids.hpp"

#include <openssl/sha.h>

#include <array>

namespace tenact {

std::string sha256_hex(std::string_view bytes) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest.data());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * digest.size());
  for (unsigned char b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 0xF];
  }
  return out;
}

std::string hashed_resource_id(std::string_view kind, std::string_view fingerprint, std::string_view identity) {
  std::string bytes;
  bytes.reserve(kind.size() + fingerprint.size() + identity.size() + 2);
  bytes.append(kind).append(1, '\0').append(fingerprint).append(1, '\0').append(identity);
  return "resource/" + std::string{kind} + "/sha256/" + sha256_hex(bytes);
}

}  // namespace tenact
