#include "actors/extractor/validator.hpp"

#include "actors/extractor/text.hpp"

#include <algorithm>
#include <array>

namespace engram::extractor {
namespace {

/// Decodes one UTF-8 code point at `i` (input already valid UTF-8); advances `i`.
std::uint32_t next_cp(std::string_view s, std::size_t& i) {
  auto c = static_cast<unsigned char>(s[i]);
  std::size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
  std::uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (std::size_t k = 1; k < len && i + k < s.size(); ++k)
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += len;
  return cp;
}

std::string cut_chars(std::string_view s, std::size_t max) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && chars++ == max)
      return std::string(s.substr(0, i));
  return std::string(s);
}

}  // namespace

std::size_t utf8_chars(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

std::vector<std::string> injection_signals(std::string_view source) {
  std::vector<std::string> out;
  // The patterns, by what they try. One pass over the text finds whether any occurs (most
  // messages have none); only then is each named.
  static constexpr std::string_view overrides[] = {
      "ignore previous instructions", "ignore all previous", "ignore the previous", "ignore prior instructions",
      "ignore all prior", "ignore the above", "ignore your instructions", "disregard previous", "disregard all previous",
      "disregard the above", "forget your instructions", "forget all previous", "new instructions:", "from now on you",
      "system prompt", "developer mode", "admin mode", "jailbreak", "do anything now", "pretend to be"};
  static constexpr std::string_view tags[] = {"<system", "</system", "[system]", "[/system]", "### system", "system:",
                                              "assistant:", "<|im_start|>", "<|im_end|>", "<|system|>", "[inst]",
                                              "<<sys>>", "<instructions>"};
  static constexpr std::string_view delimiters[] = {"<<<end", "end of message>>>", "<<<message", "message>>>",
                                                    "```system", "---end---", "</message>", "<message>",
                                                    "</document>", "end_of_text"};
  // A pattern can start at i only if its first three (lower-case) characters are there: a
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
    for (auto a : overrides)
      if (text::starts_with_ci(rest, a))
        return true;
    for (auto a : tags)
      if (text::starts_with_ci(rest, a))
        return true;
    for (auto a : delimiters)
      if (text::starts_with_ci(rest, a))
        return true;
    return false;
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
  if (anchored) {
    const std::string l = text::lower(source);
    for (auto p : overrides)
      if (l.find(p) != std::string::npos)
        out.push_back("instruction override: \"" + std::string(p) + "\"");
    for (auto p : tags) {
      // "system:" and "assistant:" count only at the start of a line ("Operating system:
      // Linux" is not a role tag).
      bool role_prefix = p == "system:" || p == "assistant:";
      for (auto pos = l.find(p); pos != std::string::npos; pos = l.find(p, pos + 1)) {
        auto line_start = pos == 0 ? std::string::npos : l.find_last_not_of(" \t>", pos - 1);
        if (!role_prefix || line_start == std::string::npos || l[line_start] == '\n') {
          out.push_back("role or system tag: \"" + std::string(p) + "\"");
          break;
        }
      }
    }
    for (auto p : delimiters)
      if (l.find(p) != std::string::npos)
        out.push_back("delimiter breaking: \"" + std::string(p) + "\"");
  }
  // Unicode obfuscation: invisible or direction-changing characters, and words that mix
  // Latin with Cyrillic or Greek letters (look-alikes).
  bool invisible = false, bidi = false, mixed = false;
  bool ascii = std::all_of(source.begin(), source.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
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
    if (cp == 0x200B || cp == 0x200C || cp == 0x200D || cp == 0x2060 || cp == 0xFEFF)  // not U+00AD: typography
      invisible = true;
    if ((cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069))
      bidi = true;
    bool latin = (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
    bool other = (cp >= 0x0370 && cp <= 0x03FF) || (cp >= 0x0400 && cp <= 0x04FF);
    if (latin || other) {
      word_latin |= latin;
      word_other |= other;
      if (word_latin && word_other)
        mixed = true;
    } else {
      word_latin = word_other = false;
    }
  }
  if (invisible)
    out.push_back("unicode obfuscation: invisible characters");
  if (bidi)
    out.push_back("unicode obfuscation: bidirectional control characters");
  if (mixed)
    out.push_back("unicode obfuscation: a word mixes Latin with Cyrillic or Greek letters");
  return out;
}

validation_report validate(schemas::extraction& x, std::string_view source, const validator_options& opts) {
  validation_report r;
  r.injection_signals = injection_signals(source);
  // Mentions: names within limits; keep indexes stable by blanking, then remap.
  std::vector<std::size_t> remap(x.mentions.size(), SIZE_MAX);
  std::vector<schemas::entity_mention> kept;
  for (std::size_t i = 0; i < x.mentions.size(); ++i) {
    auto& m = x.mentions[i];
    auto n = utf8_chars(m.value);
    if (n == 0 || n > opts.max_entity_chars || utf8_chars(m.text) > opts.max_entity_chars) {
      ++r.dropped_invalid;
      continue;
    }
    remap[i] = kept.size();
    kept.push_back(std::move(m));
  }
  x.mentions = std::move(kept);
  std::vector<schemas::entry> entries;
  for (auto& e : x.entries) {
    if (!(e.confidence >= 0 && e.confidence <= 1) || schemas::to_string(e.type).empty() || text::trim(e.content).empty()) {
      ++r.dropped_invalid;
      continue;
    }
    if (e.confidence < opts.confidence_threshold) {
      ++r.dropped_low_confidence;
      continue;
    }
    if (utf8_chars(e.content) > opts.max_content_chars)
      e.content = cut_chars(e.content, opts.max_content_chars);
    if (utf8_chars(e.title) > 80)
      e.title = cut_chars(e.title, 79) + "\xE2\x80\xA6";
    std::vector<std::size_t> ms;
    for (auto i : e.mentions)
      if (i < remap.size() && remap[i] != SIZE_MAX)
        ms.push_back(remap[i]);
    e.mentions = std::move(ms);
    // Kept, but never handed to agents unmarked.
    if (!r.injection_signals.empty()) {
      e.suspicious = true;
      e.confidence = std::max(0.05, e.confidence - opts.suspicious_penalty);
    }
    entries.push_back(std::move(e));
  }
  x.entries = std::move(entries);
  x.dropped_low_confidence += r.dropped_low_confidence;
  return r;
}

}  // namespace engram::extractor
