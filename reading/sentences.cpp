#include "reading/sentences.hpp"

#include "reading/lexicon.hpp"
#include "reading/text.hpp"

#include <algorithm>
#include <set>

namespace engram::reading {
namespace {

using text::has_any;

bool is_abbreviation(std::string_view before) {
  auto raw = before.substr(before.rfind(' ') == std::string_view::npos ? 0 : before.rfind(' ') + 1);
  auto w = lower_ascii(raw);
  static const std::set<std::string> abbrev{"e.g", "i.e", "inc",  "ltd", "corp", "vs",   "etc", "approx", "a.m",
                                            "p.m", "u.s", "dept", "ext", "(e.g", "(i.e", "cf",  "incl",   "esp"};
  // Titles and month abbreviations only when capitalised: "ms" after a number is a unit.
  static const std::set<std::string> titled{"mr",  "mrs",  "ms",  "dr",  "st",  "jr",  "sr",  "no",
                                            "co",  "jan",  "feb", "mar", "apr", "jun", "jul", "aug",
                                            "sep", "sept", "oct", "nov", "dec", "fig"};
  if (abbrev.count(w))
    return true;
  if (!raw.empty() && text::is_upper(raw[0]) && titled.count(w))
    return true;
  return w.size() == 1 && text::is_alpha(w[0]) && text::is_upper(before.back());  // an initial
}

bool is_bullet(std::string_view line) {
  auto t = text::trim(line);
  if (t.empty())
    return false;
  if (t[0] == '-' || t[0] == '*' || t.substr(0, 3) == "\xE2\x80\xA2")
    return true;
  std::size_t i = 0;
  while (i < t.size() && text::is_digit(t[i]))
    ++i;
  return i > 0 && i < t.size() && (t[i] == '.' || t[i] == ')');
}

std::string strip_bullet(std::string_view line) {
  auto t = text::trim(line);
  if (t.substr(0, 3) == "\xE2\x80\xA2")
    t.remove_prefix(3);
  else if (!t.empty() && (t[0] == '-' || t[0] == '*'))
    t.remove_prefix(1);
  else {
    std::size_t i = 0;
    while (i < t.size() && text::is_digit(t[i]))
      ++i;
    if (i > 0 && i < t.size() && (t[i] == '.' || t[i] == ')'))
      t.remove_prefix(i + 1);
  }
  return std::string(text::trim(t));
}

/// Up to `n` whitespace-separated words of `s`, without scanning further.
std::vector<std::string_view> first_words(std::string_view s, std::size_t n) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size() && out.size() < n) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n'))
      ++i;
    std::size_t b = i;
    while (i < s.size() && !(s[i] == ' ' || s[i] == '\t' || s[i] == '\n'))
      ++i;
    if (i > b)
      out.push_back(s.substr(b, i - b));
  }
  return out;
}

/// Splits a sentence into clauses at ';' and at ", and"/", but"/" and" before a new subject
/// (" and" before a determiner only after a comma).
void split_clauses(std::string_view s, std::vector<std::string>& out) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == ';') {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(s.substr(start));
  for (auto part : parts) {
    part = text::trim(part);
    std::size_t from = 0;
    for (std::string_view conj : {", and ", ", but ", " and ", ", so "}) {
      std::size_t pos = part.find(conj, from);
      while (pos != std::string_view::npos) {
        auto rest = part.substr(pos + conj.size());
        auto next = first_words(rest, 3);
        auto left_words = first_words(part.substr(from, pos - from), 4).size();
        bool new_subject =
            next.size() >= 3 && left_words >= 4 &&
            (has_any(lower_ascii(next[0]),
                     {"i",     "we",      "you",    "they",   "he",     "she",     "i'll",     "we'll", "we've",
                      "i've",  "they'll", "she'll", "he'll",  "please", "could",   "can",      "would", "let's",
                      "pls",   "i'd",     "we'd",   "they'd", "it's",   "there's", "everyone", "the",   "our",
                      "their", "his",     "her",    "its",    "my",     "your"}) ||
             (text::is_upper(next[0][0]) && lexicon::is_first_name(lower_ascii(text::strip_punct(next[0])))));
        // "confirm the root cause and the service credit": without a comma, "and" before a
        // determiner joins two things of one clause.
        if (conj == " and " &&
            has_any(lower_ascii(next[0]), {"the", "our", "their", "his", "her", "its", "my", "your"}))
          new_subject = false;
        if (new_subject) {
          out.emplace_back(text::trim(part.substr(from, pos - from)));
          from = pos + conj.size();
        }
        pos = part.find(conj, pos + conj.size());
      }
    }
    auto last = text::trim(part.substr(from));
    if (!last.empty())
      out.emplace_back(last);
  }
}

/// Words that carry a sentence on to the next line: a line that ends with one, or a line
/// after which the next starts with one in lower case, is wrapped ("the whole platform\nto
/// the new region").
bool carries_on(std::string_view word) {
  static const std::set<std::string_view> words{
      "a",    "an",      "the",   "to",     "of",    "in",    "on",    "at",   "by",    "for",   "from",
      "with", "and",     "or",    "but",    "nor",   "that",  "than",  "as",   "into",  "onto",  "about",
      "over", "under",   "per",   "via",    "is",    "are",   "was",   "were", "be",    "been",  "our",
      "your", "their",   "its",   "this",   "these", "those", "which", "who",  "whom",  "whose", "if",
      "so",   "because", "until", "before", "after", "since", "while", "when", "where", "then",  "also",
      "not",  "will",    "would", "can",    "could", "should"};
  return words.count(word) > 0;
}

/// Whether `line` (trimmed, of five words or more) is a sentence of its own rather than a
/// wrapped part of a longer one, given the line after it: mail wraps lines near 72
/// characters, so a line that stops well short of that, not on a comma, a hyphen or a word
/// that carries on, before a line that does not start with such a word, ends where its
/// writer ended it (a chat line, an unpunctuated list).
bool is_line_sentence(std::string_view line, std::string_view next) {
  if (line.size() >= 50 || first_words(line, 5).size() < 5)
    return false;
  const char last = line.back();
  if (last == ',' || last == '-' || last == '(' || last == '&' || last == ':')
    return false;
  const auto space = line.find_last_of(" \t");
  const auto last_word = space == std::string_view::npos ? line : line.substr(space + 1);
  if (carries_on(lower_ascii(last_word)))
    return false;
  const auto first = first_words(next, 1);
  return first.empty() || !carries_on(first[0]);
}

/// Paragraphs: blank lines, bullets, short salutation lines, a line that starts with an @
/// mention and a line that is a sentence of its own (is_line_sentence) end them.
std::vector<std::string> paragraphs_of(std::string_view body, line_joining lines) {
  constexpr std::size_t short_line = 40;
  std::vector<std::string> paragraphs;
  std::string cur;
  std::size_t last_line = 0;
  std::string_view last_text;
  auto flush = [&] {
    auto t = text::trim(cur);
    if (!t.empty())
      paragraphs.emplace_back(t);
    cur.clear();
  };
  for (auto line : text::lines(body)) {
    auto t = text::trim(line);
    if (t.empty()) {
      flush();
      continue;
    }
    if (is_bullet(t)) {
      flush();
      cur = strip_bullet(t);
      flush();
      continue;
    }
    bool salutation = t.size() < 40 && (t.back() == ',' || t.back() == ':' || t.back() == '!');
    if (salutation) {
      flush();
      cur = std::string(t);
      flush();
      continue;
    }
    // A short line is a line of its own (a signature's name, title and company, an address, a
    // list): wrapping breaks long lines only.
    if (!cur.empty() && (t.front() == '@' || is_line_sentence(last_text, t)))
      flush();
    if (!cur.empty())
      cur += lines == line_joining::short_lines_apart && last_line < short_line ? '\n' : ' ';
    cur += t;
    last_line = t.size();
    last_text = t;
    if (lines == line_joining::every_line)
      flush();
    // A chat line or a line ending a sentence on its own is one paragraph per line when
    // the next line starts a new thought; joining is for wrapped lines only.
    if (t.back() == '.' || t.back() == '!' || t.back() == '?')
      flush();
  }
  flush();
  return paragraphs;
}

/// Appends the sentences (split into clauses) of paragraph `p` to `out`.
void split_paragraph(const std::string& p, std::vector<std::string>& out) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if ((static_cast<unsigned char>(c) & 0xF8) == 0xF0 && i + 4 < p.size() && p[i + 4] == ' ' &&
        first_words(std::string_view(p).substr(start, i - start), 3).size() >= 3) {
      // An emoji followed by a space ends a chat sentence.
      split_clauses(std::string_view(p).substr(start, i + 4 - start), out);
      start = i + 5;
      i += 3;
      continue;
    }
    if (c != '.' && c != '!' && c != '?')
      continue;
    std::size_t j = i;
    while (j + 1 < p.size() &&
           (p[j + 1] == '.' || p[j + 1] == '!' || p[j + 1] == '?' || p[j + 1] == '"' || p[j + 1] == ')'))
      ++j;
    bool end = j + 1 >= p.size() ||
               (p[j + 1] == ' ' && j + 2 < p.size() &&
                (text::is_upper(p[j + 2]) || text::is_digit(p[j + 2]) || p[j + 2] == '"' || p[j + 2] == '@' ||
                 static_cast<unsigned char>(p[j + 2]) >= 0x80 || p[j + 2] == '(' || p[j + 2] == '*'));
    // Chat writes sentences in lower case: ". it's" ends one when both sides are long enough.
    if (!end && j + 2 < p.size() && p[j + 1] == ' ' && text::is_alpha(p[j + 2]) &&
        first_words(std::string_view(p).substr(start, i - start), 3).size() >= 3 &&
        first_words(std::string_view(p).substr(j + 2), 3).size() >= 3)
      end = true;
    if (!end)
      continue;
    if (c == '.' && is_abbreviation(std::string_view(p).substr(start, i - start)))
      continue;
    if (c == '.' && i > 0 && text::is_digit(p[i - 1]) && j + 1 < p.size() && text::is_digit(p[j + 1]))
      continue;
    split_clauses(std::string_view(p).substr(start, j + 1 - start), out);
    start = j + 1;
  }
  if (start < p.size())
    split_clauses(std::string_view(p).substr(start), out);
}

}  // namespace

std::vector<std::string> split_sentences(std::string_view body, line_joining lines) {
  const std::vector<std::string> paragraphs = paragraphs_of(body, lines);
  std::vector<std::string> out;
  for (const auto& p : paragraphs)
    split_paragraph(p, out);
  out.erase(std::remove_if(out.begin(), out.end(), [](const std::string& s) { return text::trim(s).empty(); }),
            out.end());
  return out;
}

}  // namespace engram::reading
