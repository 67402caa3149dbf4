#pragma once
// Bytes as lower-case hexadecimal: digests shown and stored as text (token digests, person keys).

#include <cstddef>
#include <string>

namespace engram {

[[nodiscard]] inline std::string to_hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

}  // namespace engram
