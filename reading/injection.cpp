#include "reading/injection.hpp"

#include "reading/text.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <utility>

namespace engram::reading {
namespace {

// The patterns, by what they try, matched on lower-case text at word boundaries ("ignore
// prior" is not "ignore priority", "admin mode" not "sysadmin mode"). A pattern must be
// specific: "Please disregard my last email" and "New instructions for the night shift" are
// mail, not injections.
//
// Instruction overrides that flag a message (its entries are kept, marked suspicious).
// clang-format off
constexpr std::string_view overrides[] = {
    "ignore previous instructions", "ignore all previous", "ignore the previous", "ignore prior instructions",
    "ignore all prior", "ignore the above", "ignore your instructions", "disregard previous", "disregard all previous",
    "disregard the above", "forget your instructions", "forget all previous", "new instructions:", "from now on you",
    "system prompt", "developer mode", "admin mode", "jailbreak", "do anything now", "pretend to be"};
// Overrides that make a sentence an instruction, never an entry: narrower than the flags
// ("From now on you'll be invoiced quarterly" is flagged, and kept as a decision).
constexpr std::string_view instruction_overrides[] = {
    "ignore previous", "ignore all previous", "ignore the previous", "ignore prior", "ignore all prior",
    "ignore the above", "ignore your instructions", "disregard previous", "disregard all previous",
    "disregard the above", "forget your instructions", "forget all previous", "system prompt", "new instructions:",
    "admin mode", "developer mode", "jailbreak", "pretend to be"};
constexpr std::string_view tags[] = {"<system",   "</system",   "[system]", "[/system]", "### system", "system:",
                                     "assistant:", "<|im_start|>", "<|im_end|>", "<|system|>", "[inst]",
                                     "<<sys>>",   "<instructions>", "<assistant", "</assistant", "[assistant]"};
constexpr std::string_view delimiters[] = {"<<<end",    "end of message>>>", "<<<message", "message>>>",
                                           "```system", "---end---",         "</message>", "<message>",
                                           "</document>", "end_of_text",     "</context>", "<context>",
                                           "</instructions>", "</prompt>",    "</user>"};

/// A role-tagged block: opening tag (a prefix: "<system" also opens "<system role=x>") and
/// closing tag.
constexpr std::pair<std::string_view, std::string_view> blocks[] = {
    {"<system", "</system>"},     {"<|im_start|>", "<|im_end|>"}, {"[system]", "[/system]"},
    {"[inst]", "[/inst]"},        {"<<sys>>", "<</sys>>"},        {"<instructions>", "</instructions>"},
    {"<|system|>", "<|end|>"},    {"<assistant", "</assistant>"}, {"[assistant]", "[/assistant]"}};
// clang-format on

/// Verbs that, with one of override_objects within override_reach words in the same clause,
/// make an override of any wording ("Please ignore all the instructions you were given").
constexpr std::string_view override_verbs[] = {"ignore", "disregard", "forget", "override", "bypass"};
constexpr std::string_view override_objects[] = {"instruction", "instructions", "prompt",
                                                 "prompts",     "directive",    "directives"};
constexpr std::size_t override_reach = 8;

/// Decodes one UTF-8 code point at `i`; advances `i` (invalid input: one byte at a time).
std::uint32_t next_cp(std::string_view s, std::size_t& i) {
  auto c = static_cast<unsigned char>(s[i]);
  std::size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
  if (i + len > s.size())
    len = 1;
  std::uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (std::size_t k = 1; k < len; ++k)
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += len;
  return cp;
}

bool invisible(std::uint32_t cp) {
  return cp == 0x200B || cp == 0x200C || cp == 0x200D || cp == 0x2060 || cp == 0xFEFF || cp == 0x00AD;
}

bool bidi_control(std::uint32_t cp) { return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069); }

/// The Latin letter a Cyrillic or Greek letter passes for, or 0.
char lookalike(std::uint32_t cp) {
  // clang-format off
  static constexpr std::pair<std::uint32_t, char> table[] = {
      // Cyrillic
      {0x0405, 's'}, {0x0406, 'i'}, {0x0408, 'j'}, {0x0410, 'a'}, {0x0412, 'b'}, {0x0415, 'e'}, {0x041A, 'k'},
      {0x041C, 'm'}, {0x041D, 'h'}, {0x041E, 'o'}, {0x0420, 'p'}, {0x0421, 'c'}, {0x0422, 't'}, {0x0423, 'y'},
      {0x0425, 'x'}, {0x0430, 'a'}, {0x0435, 'e'}, {0x043E, 'o'}, {0x0440, 'p'}, {0x0441, 'c'}, {0x0443, 'y'},
      {0x0445, 'x'}, {0x0455, 's'}, {0x0456, 'i'}, {0x0458, 'j'}, {0x04BB, 'h'}, {0x04CF, 'l'}, {0x0501, 'd'},
      {0x051B, 'q'}, {0x051D, 'w'},
      // Greek
      {0x0391, 'a'}, {0x0392, 'b'}, {0x0395, 'e'}, {0x0396, 'z'}, {0x0397, 'h'}, {0x0399, 'i'}, {0x039A, 'k'},
      {0x039C, 'm'}, {0x039D, 'n'}, {0x039F, 'o'}, {0x03A1, 'p'}, {0x03A4, 't'}, {0x03A5, 'y'}, {0x03A7, 'x'},
      {0x03B1, 'a'}, {0x03B5, 'e'}, {0x03B9, 'i'}, {0x03BA, 'k'}, {0x03BD, 'v'}, {0x03BF, 'o'}, {0x03C1, 'p'},
      {0x03C4, 't'}, {0x03C5, 'u'}, {0x03C7, 'x'}};
  // clang-format on
  auto it = std::lower_bound(std::begin(table), std::end(table), cp,
                             [](const auto& e, std::uint32_t c) { return e.first < c; });
  return it != std::end(table) && it->first == cp ? it->second : 0;
}

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         static_cast<unsigned char>(c) >= 0x80;
}

/// True when `phrase` occurs in `lower` starting and ending at word boundaries.
bool has_phrase(std::string_view lower, std::string_view phrase) {
  for (auto pos = lower.find(phrase); pos != std::string_view::npos; pos = lower.find(phrase, pos + 1)) {
    const auto end = pos + phrase.size();
    const bool starts = pos == 0 || !word_char(lower[pos - 1]) || !word_char(phrase.front());
    const bool ends = end == lower.size() || !word_char(lower[end]) || !word_char(phrase.back());
    if (starts && ends)
      return true;
  }
  return false;
}

bool any_pattern(std::string_view lower) {
  auto has = [&](const auto& list) {
    return std::any_of(std::begin(list), std::end(list),
                       [&](std::string_view p) { return lower.find(p) != std::string_view::npos; });
  };
  return has(overrides) || has(tags) || has(delimiters);
}

/// True when "system:" or "assistant:" at `pos` starts its line (after spaces, '>' quotes):
/// "Operating system: Linux" is not a role tag.
bool starts_line(std::string_view l, std::size_t pos) {
  auto before = pos == 0 ? std::string_view::npos : l.find_last_not_of(" \t>", pos - 1);
  return before == std::string_view::npos || l[before] == '\n';
}

bool clause_end(char c) { return c == '.' || c == ';' || c == '!' || c == '?' || c == '\n'; }

/// The spans [begin, end) of `lower` that are overrides of any wording: from the verb (and a
/// "please" or "kindly" before it) to the end of its clause (its '.', ';', '!', '?' or line
/// end included).
std::vector<std::pair<std::size_t, std::size_t>> override_clauses(std::string_view lower) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (auto verb : override_verbs)
    for (auto pos = lower.find(verb); pos != std::string_view::npos; pos = lower.find(verb, pos + 1)) {
      const auto after = pos + verb.size();
      if ((pos > 0 && word_char(lower[pos - 1])) || (after < lower.size() && word_char(lower[after])))
        continue;
      auto end = after;
      while (end < lower.size() && !clause_end(lower[end]))
        ++end;
      // Its object within reach: the words after the verb, in the clause.
      bool found = false;
      std::size_t words = 0;
      for (std::size_t i = after; i < end && words < override_reach && !found;) {
        while (i < end && !word_char(lower[i]))
          ++i;
        const auto w0 = i;
        while (i < end && word_char(lower[i]))
          ++i;
        if (i > w0) {
          ++words;
          const auto w = lower.substr(w0, i - w0);
          found = std::find(std::begin(override_objects), std::end(override_objects), w) != std::end(override_objects);
        }
      }
      if (!found)
        continue;
      auto begin = pos;
      for (std::string_view polite : {"please ", "kindly "})
        if (begin >= polite.size() && lower.substr(begin - polite.size(), polite.size()) == polite)
          begin -= polite.size();
      out.emplace_back(begin, std::min(lower.size(), end + 1));
    }
  std::sort(out.begin(), out.end());
  return out;
}

/// The sentences of `s` that hide a word: invisible or direction-changing characters between
/// letters ("Ig\u200Bnore"), or Latin letters mixed with Cyrillic or Greek look-alikes in one
/// word ("Аdmin" with a Cyrillic А): spans [begin, end) from the sentence's start to its end
/// ('.', '!', '?' or line end included). Nobody writes a word that way but to get past a filter.
std::vector<std::pair<std::size_t, std::size_t>> obfuscated_sentences(std::string_view s) {
  std::vector<std::size_t> marks;  // where each hidden word starts
  bool latin = false, other = false, letter_before = false, hidden_in_word = false;
  std::size_t word_start = 0;
  for (std::size_t i = 0; i < s.size();) {
    const auto at = i;
    const auto cp = next_cp(s, i);
    if ((invisible(cp) && cp != 0x00AD) || bidi_control(cp)) {
      hidden_in_word = letter_before;  // inside a word when a letter follows
      continue;
    }
    const bool is_latin = (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
    const bool is_other = (cp >= 0x0370 && cp <= 0x03FF) || (cp >= 0x0400 && cp <= 0x04FF);
    if (is_latin || is_other) {
      if (!latin && !other)
        word_start = at;
      if (hidden_in_word || (is_latin && other) || (is_other && latin))
        marks.push_back(word_start);
      latin |= is_latin;
      other |= is_other;
      letter_before = true;
    } else {
      latin = other = letter_before = false;
    }
    hidden_in_word = false;
  }
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (auto mark : marks) {
    auto begin = mark;
    while (begin > 0 && !clause_end(s[begin - 1]))
      --begin;
    auto end = mark;
    while (end < s.size() && !(s[end] == '.' || s[end] == '!' || s[end] == '?' || s[end] == '\n'))
      ++end;
    end = std::min(s.size(), end + 1);
    if (!out.empty() && begin <= out.back().second)
      out.back().second = std::max(out.back().second, end);
    else
      out.emplace_back(begin, end);
  }
  return out;
}

/// `text` with `spans` (sorted; [begin, end), overlaps allowed) cut out, each a paragraph
/// break; what was cut appended to `removed` (optional), a line each.
std::string cut_spans(std::string_view text, const std::vector<std::pair<std::size_t, std::size_t>>& spans,
                      std::string* removed) {
  std::string unclaused;
  std::size_t at = 0;
  for (auto [b, e] : spans) {
    if (b < at)
      b = at;
    if (b >= e)
      continue;
    unclaused.append(text.substr(at, b - at)).append("\n\n");
    if (removed)
      removed->append(text.substr(b, e - b)).push_back('\n');
    at = e;
  }
  unclaused.append(text.substr(at));
  return unclaused;
}

/// Where a role-tagged block that opens at `i` of `l` ends: after its closing tag, or at the
/// end of the line. None when no block opens there.
std::optional<std::size_t> role_block_end(const std::string& l, std::size_t i) {
  for (auto [open, close] : blocks) {
    if (l.compare(i, open.size(), open) != 0)
      continue;
    auto end = l.find(close, i + open.size());
    if (end != std::string::npos) {
      end += close.size();
    } else {
      end = l.find('\n', i);
      end = end == std::string::npos ? l.size() : end;
    }
    return end;
  }
  return std::nullopt;
}

/// The length of a closing tag or delimiter at `i` of `l`; 0 when there is none.
std::size_t closing_markup_length(const std::string& l, std::size_t i) {
  std::size_t len = 0;
  for (auto [open, close] : blocks)
    if (l.compare(i, close.size(), close) == 0)
      len = close.size();
  for (auto d : delimiters)
    if (!len && l.compare(i, d.size(), d) == 0)
      len = d.size();
  return len;
}

/// Whether any pattern (override, tag, delimiter) occurs in `source`, in any case: one pass
/// over the text finds whether any pattern occurs (most messages have none).
bool has_pattern_anchor(std::string_view source) {
  // A pattern can start at i only if its first three (lower-case) characters are there; a
  // bigram table rules out nearly every position, a trigram list most of the rest.
  static const auto filters = [] {
    std::pair<std::vector<bool>, std::vector<std::uint32_t>> f{std::vector<bool>(1u << 16, false), {}};
    auto add = [&](std::string_view a) {
      auto c = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(a[k])); };
      f.first[c(0) << 8 | c(1)] = true;
      f.second.push_back(c(0) << 16 | c(1) << 8 | c(2));
    };
    for (auto a : overrides)
      add(a);
    for (auto a : tags)
      add(a);
    for (auto a : delimiters)
      add(a);
    return f;
  }();
  auto lower_char = [](char c) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
  };
  auto starts_here = [&](std::size_t i) {
    auto rest = source.substr(i);
    auto any = [&](const auto& list) {
      return std::any_of(std::begin(list), std::end(list),
                         [&](std::string_view a) { return text::starts_with_ci(rest, a); });
    };
    return any(overrides) || any(tags) || any(delimiters);
  };
  bool anchored = false;
  for (std::size_t i = 0; i + 2 < source.size() && !anchored; ++i) {
    std::uint32_t a = lower_char(source[i]), b = lower_char(source[i + 1]);
    if (!filters.first[a << 8 | b])
      continue;
    std::uint32_t tri = a << 16 | b << 8 | lower_char(source[i + 2]);
    if (std::find(filters.second.begin(), filters.second.end(), tri) != filters.second.end())
      anchored = starts_here(i);
  }
  return anchored;
}

/// The overrides, role or system tags and delimiters that occur in `l` (lower-case or folded).
void pattern_signals(const std::string& l, std::vector<std::string>& out) {
  for (auto p : overrides)
    if (has_phrase(l, p))
      out.push_back("instruction override: \"" + std::string(p) + "\"");
  for (auto p : tags) {
    const bool role_prefix = p == "system:" || p == "assistant:";
    for (auto pos = l.find(p); pos != std::string::npos; pos = l.find(p, pos + 1)) {
      if (!role_prefix || starts_line(l, pos)) {
        out.push_back("role or system tag: \"" + std::string(p) + "\"");
        break;
      }
    }
  }
  for (auto p : delimiters)
    if (l.find(p) != std::string::npos)
      out.push_back("delimiter breaking: \"" + std::string(p) + "\"");
}

/// Unicode obfuscation: invisible or direction-changing characters, and words that mix
/// Latin with Cyrillic or Greek letters (look-alikes).
void obfuscation_signals(std::string_view source, bool ascii, std::vector<std::string>& out) {
  bool hidden = false, bidi = false, mixed = false;
  std::size_t i = ascii ? source.size() : 0;  // only non-ASCII text can hide characters
  bool word_latin = false, word_other = false;
  while (i < source.size()) {
    auto byte = static_cast<unsigned char>(source[i]);
    if (byte < 0x80) {  // ASCII: only the word state changes
      ++i;
      bool latin = (byte | 0x20) >= 'a' && (byte | 0x20) <= 'z';
      if (latin) {
        word_latin = true;
        mixed |= word_other;
      } else {
        word_latin = word_other = false;
      }
      continue;
    }
    auto cp = next_cp(source, i);
    hidden |= invisible(cp) && cp != 0x00AD;  // a soft hyphen is typography
    bidi |= bidi_control(cp);
    bool other = (cp >= 0x0370 && cp <= 0x03FF) || (cp >= 0x0400 && cp <= 0x04FF);
    if (other) {
      word_other = true;
      mixed |= word_latin;
    } else {
      word_latin = word_other = false;
    }
  }
  if (hidden)
    out.push_back("unicode obfuscation: invisible characters");
  if (bidi)
    out.push_back("unicode obfuscation: bidirectional control characters");
  if (mixed)
    out.push_back("unicode obfuscation: a word mixes Latin with Cyrillic or Greek letters");
}

}  // namespace

std::string fold_lookalikes(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t at = i;
    auto cp = next_cp(s, i);
    if (cp < 0x80) {
      out += static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp - 'A' + 'a' : cp);
    } else if (invisible(cp) || bidi_control(cp)) {
      continue;
    } else if (cp >= 0xFF01 && cp <= 0xFF5E) {  // fullwidth ASCII
      auto c = static_cast<char>(cp - 0xFEE0);
      out += c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    } else if (char latin = lookalike(cp)) {
      out += latin;
    } else {
      out.append(s.substr(at, i - at));
    }
  }
  return out;
}

bool is_injected_instruction(std::string_view sentence) {
  const auto l = fold_lookalikes(sentence);
  std::string flat;  // whitespace runs as one space: "ignore   previous"
  for (char c : l)
    if (!(c == ' ' || c == '\t' || c == '\n' || c == '\r') || (!flat.empty() && flat.back() != ' '))
      flat += (c == '\t' || c == '\n' || c == '\r') ? ' ' : c;
  if (std::any_of(std::begin(instruction_overrides), std::end(instruction_overrides),
                  [&](std::string_view p) { return has_phrase(flat, p); }) ||
      !override_clauses(flat).empty())
    return true;
  for (auto t : tags) {
    const bool role_prefix = t == "system:" || t == "assistant:";
    auto pos = flat.find(t);
    if (pos != std::string::npos && (!role_prefix || pos == 0))
      return true;
  }
  return std::any_of(std::begin(delimiters), std::end(delimiters),
                     [&](std::string_view p) { return flat.find(p) != std::string::npos; });
}

std::string cut_injected_blocks(std::string_view text, std::string* removed) {
  const bool ascii = std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  std::string l = lower_ascii(text);  // same byte offsets as `text`
  // Sentences that hide a word (invisible characters, look-alike letters) and overrides of
  // any wording go first, out to the end of their sentence or clause.
  std::string unclaused;
  auto spans = override_clauses(l);
  if (!ascii)
    for (auto span : obfuscated_sentences(text))
      spans.push_back(span);
  std::sort(spans.begin(), spans.end());
  if (!spans.empty()) {
    unclaused = cut_spans(text, spans, removed);
    text = unclaused;
    l = lower_ascii(text);
  }
  if (!any_pattern(l))
    return std::string(text);
  constexpr std::string_view brk = "\n\n";
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    // A role-tagged block: out to its closing tag, or to the end of the line.
    if (const auto end = role_block_end(l, i)) {
      out += brk;
      if (removed)
        removed->append(text.substr(i, *end - i)).push_back('\n');
      i = *end;
      continue;
    }
    // A role prefix at the start of a line: the whole line.
    if ((l.compare(i, 7, "system:") == 0 || l.compare(i, 10, "assistant:") == 0) && starts_line(l, i)) {
      auto end = l.find('\n', i);
      end = end == std::string::npos ? l.size() : end;
      out += brk;
      if (removed)
        removed->append(text.substr(i, end - i)).push_back('\n');
      i = end;
      continue;
    }
    // A closing tag or delimiter on its own: a break, with the markup around it.
    if (const std::size_t len = closing_markup_length(l, i)) {
      std::size_t end = i + len;
      // The markup after it, not a tag that opens there ("</context><assistant>").
      while (end < l.size() && std::string_view(">-#`=").find(l[end]) != std::string_view::npos)
        ++end;
      while (!out.empty() && std::string_view("<>-#`=").find(out.back()) != std::string_view::npos)
        out.pop_back();
      out += brk;
      i = end;
      continue;
    }
    out += text[i++];
  }
  return out;
}

std::vector<std::string> injection_signals(std::string_view source) {
  std::vector<std::string> out;
  const bool anchored = has_pattern_anchor(source);
  // Without an ASCII anchor, look-alike letters may still spell an override.
  const bool ascii =
      std::all_of(source.begin(), source.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  const std::string l = anchored ? lower_ascii(source) : ascii ? std::string() : fold_lookalikes(source);
  if (!l.empty())
    pattern_signals(l, out);
  // An override of any wording ("Please ignore all the instructions you were given").
  const std::string clauses_of = l.empty() ? lower_ascii(source) : l;
  if (const auto spans = override_clauses(clauses_of); !spans.empty())
    if (std::none_of(out.begin(), out.end(),
                     [](const std::string& x) { return x.starts_with("instruction override"); }))
      out.push_back("instruction override: \"" +
                    std::string(text::trim(
                        std::string_view(clauses_of)
                            .substr(spans[0].first, std::min<std::size_t>(60, spans[0].second - spans[0].first)))) +
                    "\"");
  // Unicode obfuscation: invisible or direction-changing characters, and words that mix
  // Latin with Cyrillic or Greek letters (look-alikes).
  obfuscation_signals(source, ascii, out);
  return out;
}

}  // namespace engram::reading
