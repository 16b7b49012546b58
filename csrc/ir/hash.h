// 64-bit hashing for the lazy IR. A node's hash covers its op, attributes, operand hashes,
// shapes and dtypes, never data; graph hashes combine root hashes with the parameter pattern.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace txla::ir {

using hash_t = uint64_t;

// Mixes one 64-bit word into a running hash (a multiply-xorshift finalizer, so that equal
// words at different positions and small integers both spread over all bits).
inline hash_t Mix(hash_t h, uint64_t v) {
  v *= 0x9e3779b97f4a7c15ULL;
  v ^= v >> 29;
  h ^= v + 0x632be59bd9b4e019ULL + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 32;
  return h;
}

inline hash_t HashBytes(const void* data, size_t n, hash_t h = 0xcbf29ce484222325ULL) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;  // FNV-1a
  return Mix(h, n);
}

inline hash_t HashString(std::string_view s) { return HashBytes(s.data(), s.size()); }

inline hash_t HashDouble(hash_t h, double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof(bits));
  return Mix(h, bits);
}

}  // namespace txla::ir
