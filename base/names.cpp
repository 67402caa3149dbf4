#include "base/names.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace engram::names {

namespace {

// The base letter of each code point U+00C0..U+017F ('\0': keep it; '2': a two-letter base,
// see two_letter_base). Latin-1 Supplement, then Latin Extended-A in its upper/lower pairs.
// clang-format off
constexpr std::string_view latin_base =
    "aaaaaa2ceeeeiiii" "dnooooo-ouuuuy22"   // U+00C0 (Æ: ae, Þ: th, ß: ss; × kept)
    "aaaaaa2ceeeeiiii" "dnooooo-ouuuuy2y"   // U+00E0 (æ: ae, þ: th; ÷ kept)
    "aaaaaaccccccccdd"                      // U+0100
    "ddeeeeeeeeeegggg"                      // U+0110
    "gggghhhhiiiiiiii"                      // U+0120
    "ii22jjkkklllllll"                      // U+0130 (Ĳ ĳ: ij)
    "lllnnnnnnnnnoooo"                      // U+0140
    "oo22rrrrrrssssss"                      // U+0150 (Œ œ: oe)
    "ssttttttuuuuuuuu"                      // U+0160
    "uuuuwwyyyzzzzzzs";                     // U+0170
static_assert(latin_base.size() == 0x180 - 0xC0);
// Vietnamese, U+1EA0..U+1EF9: ạ ả ấ ầ ẩ ẫ ậ ắ ằ ẳ ẵ ặ, ẹ ... ỹ, in upper/lower pairs.
constexpr std::string_view vietnamese_base =
    "aaaaaaaaaaaaaaaaaaaaaaaa" "eeeeeeeeeeeeeeee" "iiii"
    "oooooooooooooooooooooooo" "uuuuuuuuuuuuuu" "yyyyyyyy";
static_assert(vietnamese_base.size() == 0x1EFA - 0x1EA0);
// clang-format on

std::string_view two_letter_base(char32_t c) {
  switch (c) {
    case 0xC6:
    case 0xE6: return "ae";
    case 0xDE:
    case 0xFE: return "th";
    case 0xDF: return "ss";
    case 0x132:
    case 0x133: return "ij";
    case 0x152:
    case 0x153: return "oe";
    default: return {};
  }
}

/// The ASCII a code point folds to ("" for a combining mark, nullopt: keep it as written).
std::optional<std::string> base_of(char32_t c) {
  if (c >= 0x300 && c <= 0x36F)  // combining diacritical marks (decomposed text)
    return std::string();
  char b = '-';
  if (c >= 0xC0 && c <= 0x17F)
    b = latin_base[c - 0xC0];
  else if (c >= 0x1EA0 && c <= 0x1EF9)
    b = vietnamese_base[c - 0x1EA0];
  else if (c == 0x1A0 || c == 0x1A1)  // Ơ ơ
    b = 'o';
  else if (c == 0x1AF || c == 0x1B0)  // Ư ư
    b = 'u';
  else if (c == 0x218 || c == 0x219)  // Ș ș
    b = 's';
  else if (c == 0x21A || c == 0x21B)  // Ț ț
    b = 't';
  if (b == '2')
    return std::string(two_letter_base(c));
  if (b == '-')
    return std::nullopt;
  return std::string(1, b);
}

/// Marks a byte that starts no well-formed code point (kept as written).
constexpr char32_t malformed = 0x80000000;

/// Decodes one UTF-8 code point at s[i] (advancing i); a malformed byte comes back as
/// `malformed | byte`.
char32_t next_code_point(std::string_view s, std::size_t& i) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) {
    ++i;
    return b;
  }
  std::size_t len = (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 1;
  if (len == 1 || i + len > s.size()) {
    ++i;
    return malformed | b;
  }
  char32_t c = b & (0x7F >> len);
  for (std::size_t k = 1; k < len; ++k) {
    const auto cont = static_cast<unsigned char>(s[i + k]);
    if ((cont & 0xC0) != 0x80) {
      ++i;
      return malformed | b;
    }
    c = (c << 6) | (cont & 0x3F);
  }
  i += len;
  return c;
}

/// base/aliases.txt (data; written by a helper from general knowledge, never fitted to
/// a test set): "[section]" lines, "# comments", and "Canonical = alias, alias".
constexpr std::string_view alias_data =
#include "aliases.inc"
    ;

/// Declared before fold_name's definition below.
std::string fold(std::string_view name);

std::map<std::string, known_name> load_aliases() {
  std::map<std::string, known_name> out;
  known_kind kind = known_kind::technology;
  std::size_t from = 0;
  while (from < alias_data.size()) {
    auto eol = alias_data.find('\n', from);
    if (eol == std::string_view::npos)
      eol = alias_data.size();
    auto line = std::string(alias_data.substr(from, eol - from));
    from = eol + 1;
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == '\t'))
      line.pop_back();
    line.erase(0, line.find_first_not_of(" \t"));
    if (line.rfind("[place]", 0) == 0)
      kind = known_kind::place;
    else if (line.rfind("[technology]", 0) == 0)
      kind = known_kind::technology;
    if (line.empty() || line[0] == '#' || line[0] == '[')
      continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos)
      continue;
    auto written = line.substr(0, eq);
    while (!written.empty() && written.back() == ' ')
      written.pop_back();
    const auto canonical = fold(written);
    if (canonical.empty())
      continue;
    out.emplace(canonical, known_name{canonical, written, kind});
    std::size_t at = eq + 1;
    while (at <= line.size()) {
      auto comma = line.find(',', at);
      if (comma == std::string::npos)
        comma = line.size();
      if (auto alias = fold(line.substr(at, comma - at)); !alias.empty())
        out.emplace(alias, known_name{canonical, written, kind});  // the first canonical an alias is given wins
      at = comma + 1;
    }
  }
  return out;
}

std::string fold(std::string_view name) { return fold_name(name); }

}  // namespace

std::string fold_name(std::string_view name) {
  std::string out;
  bool space = false;
  for (std::size_t i = 0; i < name.size();) {
    const auto start = i;
    const char32_t c = next_code_point(name, i);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0xA0) {
      space = !out.empty();
      continue;
    }
    if (c == '.' || c == ',')
      continue;
    std::string piece;
    if (c < 0x80)
      piece.assign(1, c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : static_cast<char>(c));
    else if (auto base = (c & malformed) ? std::nullopt : base_of(c))
      piece = *base;
    else
      piece.assign(name.substr(start, i - start));
    if (piece.empty())
      continue;
    if (space)
      out += ' ';
    space = false;
    out += piece;
  }
  return out;
}

std::string organisation_key(std::string_view name) {
  static const std::set<std::string_view> legal_forms{
      "inc", "incorporated", "corp", "corporation", "co",  "company", "ltd", "limited", "llc", "llp", "lp",
      "plc", "gmbh",         "ag",   "sa",          "sas", "sarl",    "as",  "asa",     "ab",  "oy",  "oyj",
      "bv",  "nv",           "srl",  "spa",         "kk",  "pty",     "pte", "kg",      "se",  "&",   "and"};
  auto words = split_words(fold_name(name));
  while (words.size() > 1 && legal_forms.count(words.back()))
    words.pop_back();
  std::string out;
  for (const auto& w : words)
    out += (out.empty() ? "" : " ") + w;
  return out;
}

const known_name* known(std::string_view folded) {
  static const auto aliases = load_aliases();
  auto it = aliases.find(std::string(folded));
  return it == aliases.end() ? nullptr : &it->second;
}

std::optional<std::string> canonical_alias(std::string_view name) {
  if (const auto* k = known(fold_name(name)))
    return k->canonical;
  return std::nullopt;
}

bool is_identifier(std::string_view name) {
  const auto words = split_words(name);
  auto letters = [](std::string_view w) {
    return std::count_if(w.begin(), w.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
  };
  auto digits = [](std::string_view w) {
    return std::count_if(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  };
  for (std::size_t i = 0; i < words.size(); ++i) {
    const auto& w = words[i];
    if (digits(w) >= 2 && (letters(w) > 0 || w.find_first_of("#-/") != std::string::npos))
      return true;
    // All capitals joined by two or more hyphens: "LF-INS-PRO".
    if (std::count(w.begin(), w.end(), '-') >= 2 &&
        std::none_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; }))
      return true;
    // "PO 7731", "SR 102334": a short word in capitals, then a number.
    if (i + 1 < words.size() && w.size() <= 4 && letters(w) == static_cast<long>(w.size()) &&
        std::none_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; }) && digits(words[i + 1]) >= 3 &&
        digits(words[i + 1]) == static_cast<long>(words[i + 1].size()))
      return true;
  }
  return false;
}

std::vector<std::string> split_words(std::string_view folded) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < folded.size()) {
    auto end = folded.find(' ', at);
    if (end == std::string_view::npos)
      end = folded.size();
    if (end > at)
      out.emplace_back(folded.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

}  // namespace engram::names
