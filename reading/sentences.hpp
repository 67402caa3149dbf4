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

/// Splits cleaned text into sentences and clauses (exposed for tests).
[[nodiscard]] std::vector<std::string> split_sentences(std::string_view text);

}  // namespace engram::reading
