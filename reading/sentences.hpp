#pragma once
// Sentence and clause splitting of cleaned message text: paragraphs (blank lines, bullets,
// salutation lines), sentence ends (abbreviations, initials and decimals excepted; chat
// written in lower case and emoji), then clauses at ';' and at a conjunction before a new
// subject. Called by the rules extractor (rules.cpp) for every message, and by tests.
// Pure and thread-safe.

#include <string>
#include <string_view>
#include <vector>

namespace engram::reading {

/// How split_sentences joins lines.
enum class line_joining {
  /// A line that does not end a sentence continues on the next (the reader before the
  /// relation classifier).
  wrapped,
  /// The same, except that a short line (under 40 bytes: a signature's name, title and
  /// company, an address, a list) keeps its line break: wrapping breaks long lines only, and
  /// a name never runs from one line of a block into the next.
  short_lines_apart,
  /// Every line ends a sentence: chat, whose lines are never wrapped ("we locked cert
  /// submission for aug 24\nnoah pls draft the test plan by mon" are two).
  every_line,
};

/// Splits cleaned text into sentences and clauses (exposed for tests).
[[nodiscard]] std::vector<std::string> split_sentences(std::string_view text,
                                                       line_joining lines = line_joining::wrapped);

}  // namespace engram::reading
