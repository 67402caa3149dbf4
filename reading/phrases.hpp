#pragma once
// Fast phrase lookup for the rules. Every phrase_set registers its phrases in one shared
// index; a sentence is tokenised once (lower-case words) and matched against the whole
// index in one pass, so asking "does any phrase of this set occur?" is a bit test.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace engram::reading {

/// A sentence as lower-case text and its word tokens (letters, digits, apostrophes and
/// inner hyphens; other characters separate words).
struct token_view {
  std::string lower;
  std::vector<std::string_view> tokens;
  explicit token_view(std::string_view s);

  /// Bit i: phrase set i occurs (filled on first use).
  mutable std::uint64_t matched = 0;
  mutable bool computed = false;
};

/// A set of phrases matched at word boundaries. Construct at namespace scope (static
/// initialisation), at most 64 sets per program; matching is thread-safe.
class phrase_set {
public:
  phrase_set(std::initializer_list<std::string_view> phrases);
  /// True when one of the phrases occurs in `t` at word boundaries.
  [[nodiscard]] bool any(const token_view& t) const;

private:
  unsigned id_;
};

}  // namespace engram::reading
