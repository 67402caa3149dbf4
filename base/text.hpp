#pragma once
// Text helpers every module uses.

#include <string>
#include <string_view>

namespace engram {

/// `s` with A-Z lowered; every other byte (UTF-8 included) as it is. Locale-free.
[[nodiscard]] inline std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

/// A name as it is matched and keyed: lower case (ASCII), every run of white space one
/// space, none at either end. "  Mei   CHEN " -> "mei chen".
[[nodiscard]] inline std::string normalise_name(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space)
      out += ' ';
    space = false;
    out += c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

}  // namespace engram
