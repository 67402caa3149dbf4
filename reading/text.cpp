#include "reading/text.hpp"

namespace engram::reading::text {

std::string_view trim(std::string_view s) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; };
  while (!s.empty() && is_space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && is_space(s.back()))
    s.remove_suffix(1);
  return s;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size())
    return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    char a = s[i], b = prefix[i];
    if (a >= 'A' && a <= 'Z')
      a = static_cast<char>(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z')
      b = static_cast<char>(b - 'A' + 'a');
    if (a != b)
      return false;
  }
  return true;
}

bool contains_ci(std::string_view s, std::string_view needle) {
  if (needle.empty())
    return true;
  char first = needle[0];
  char first_upper = first >= 'a' && first <= 'z' ? static_cast<char>(first - 'a' + 'A') : first;
  for (std::size_t i = 0; i + needle.size() <= s.size(); ++i) {
    if (s[i] != first && s[i] != first_upper)
      continue;
    if (starts_with_ci(s.substr(i), needle))
      return true;
  }
  return false;
}

bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }

bool starts_upper(std::string_view w) {
  if (w.empty())
    return false;
  const auto b0 = static_cast<unsigned char>(w[0]);
  if (b0 < 0x80)
    return is_upper(w[0]);
  if (w.size() < 2 || (b0 & 0xE0) != 0xC0)
    return false;
  const unsigned cp = ((b0 & 0x1Fu) << 6) | (static_cast<unsigned char>(w[1]) & 0x3Fu);
  // Latin-1 capitals (À..Þ without ×), and Latin Extended-A, where a capital is the even
  // code point of its pair (Ā ā ... Ž ž; the pairs shift by one from Ĺ to Ň, and Ÿ is alone).
  if (cp >= 0xC0 && cp <= 0xDE)
    return cp != 0xD7;
  if (cp >= 0x100 && cp <= 0x137)
    return cp % 2 == 0;
  if (cp >= 0x139 && cp <= 0x148)
    return cp % 2 == 1;
  if (cp >= 0x14A && cp <= 0x177)
    return cp % 2 == 0;
  return cp == 0x178 || cp == 0x179 || cp == 0x17B || cp == 0x17D;
}
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

namespace {
bool word_char(char c) { return is_alpha(c) || is_digit(c) || c == '\'' || static_cast<unsigned char>(c) >= 0x80; }
}  // namespace

bool has_word(std::string_view lowered, std::string_view word) {
  std::size_t pos = 0;
  while ((pos = lowered.find(word, pos)) != std::string_view::npos) {
    // A phrase starting with an apostrophe ("'d rather") ends a word: no left boundary.
    bool left = pos == 0 || !word_char(lowered[pos - 1]) || !word_char(word.front()) || word.front() == '\'';
    std::size_t end = pos + word.size();
    bool right = end >= lowered.size() || !word_char(lowered[end]) || !word_char(word.back());
    if (left && right)
      return true;
    ++pos;
  }
  return false;
}

bool has_any(std::string_view lowered, std::initializer_list<std::string_view> phrases) {
  for (auto p : phrases)
    if (has_word(lowered, p))
      return true;
  return false;
}

std::vector<std::string_view> lines(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    auto nl = s.find('\n', start);
    if (nl == std::string_view::npos) {
      out.push_back(s.substr(start));
      break;
    }
    auto line = s.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    out.push_back(line);
    start = nl + 1;
  }
  return out;
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
      ++i;
    std::size_t start = i;
    while (i < s.size() && !(s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
      ++i;
    if (i > start)
      out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::string_view strip_punct(std::string_view w) {
  auto punct = [](char c) {
    return c == ',' || c == '.' || c == ';' || c == ':' || c == '!' || c == '?' || c == '(' || c == ')' || c == '"' ||
           c == '\'' || c == '[' || c == ']' || c == '*' || c == '<' || c == '>';
  };
  while (!w.empty() && punct(w.front()))
    w.remove_prefix(1);
  while (!w.empty() && punct(w.back()))
    w.remove_suffix(1);
  if (w.size() > 2 && w.substr(w.size() - 2) == "'s")
    w.remove_suffix(2);
  else if (w.size() > 4 && w.substr(w.size() - 4) == "\xE2\x80\x99s")  // typographic apostrophe
    w.remove_suffix(4);
  return w;
}

}  // namespace engram::reading::text
