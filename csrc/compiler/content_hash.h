// Content hashes of text the compiler names things by (generated sources, kernels, cache keys):
// FNV-1a, stable across processes and builds, so a name made from it means the same on disk and
// in another process.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace txla::compiler {

inline uint64_t Fnv1a(const std::string& data, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// FNV-1a over 8-byte words (the tail bytewise): for large files such as the compiler's own build,
// hashed at every process start, eight times fewer steps than Fnv1a.
inline uint64_t Fnv1aWords(const std::string& data, uint64_t h = 1469598103934665603ull) {
  size_t n = data.size() / 8;
  for (size_t k = 0; k < n; ++k) {
    uint64_t word;
    std::memcpy(&word, data.data() + 8 * k, 8);
    h ^= word;
    h *= 1099511628211ull;
  }
  return Fnv1a(data.substr(8 * n), h);
}

// 16 lowercase hex digits.
inline std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// 128 bits of two differently seeded passes, as hex: collisions are not a concern at any number
// of kernels or graphs.
inline std::string ContentHash(const std::string& data) {
  return Hex(Fnv1a(data)) + Hex(Fnv1a(data, 0x9e3779b97f4a7c15ull));
}

}  // namespace txla::compiler
