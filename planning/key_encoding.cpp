#include "planning/key_encoding.hpp"

#include <xxhash.h>

namespace tenact {

void KeyEncoder::u64(uint64_t v) {
  for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void KeyEncoder::str(std::string_view s) {
  u64(s.size());
  bytes_.append(s);
}

Fingerprint KeyEncoder::digest128(uint64_t seed) const {
  const XXH128_hash_t h = XXH3_128bits_withSeed(bytes_.data(), bytes_.size(), seed);
  return Fingerprint{h.high64, h.low64};
}

uint64_t KeyEncoder::digest64(uint64_t seed) const {
  return XXH3_64bits_withSeed(bytes_.data(), bytes_.size(), seed);
}

Fingerprint xxh3_128(std::string_view bytes) {
  const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  return Fingerprint{h.high64, h.low64};
}

}  // namespace tenact
