#pragma once
// The one hash of bytes: 64-bit FNV-1a, for ids (entry ids, document ids), cue-phrase
// tables and file fingerprints. Not for anything an attacker chooses to collide.

#include <cstdint>
#include <string_view>

namespace engram {

/// The starting value every stored id was made with. It is a digit short of FNV's published
/// offset basis (14695981039346656037); ids on existing logs and stores depend on it, so it
/// stays.
inline constexpr std::uint64_t fnv1a_seed = 1469598103934665603ull;
inline constexpr std::uint64_t fnv1a_prime = 1099511628211ull;

/// FNV-1a of `bytes`, continuing from `h` (fnv1a_seed for a new hash).
[[nodiscard]] constexpr std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = fnv1a_seed) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= fnv1a_prime;
  }
  return h;
}

/// FNV-1a of one more byte.
[[nodiscard]] constexpr std::uint64_t fnv1a(unsigned char byte, std::uint64_t h) { return (h ^ byte) * fnv1a_prime; }

}  // namespace engram
