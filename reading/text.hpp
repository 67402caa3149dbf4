#pragma once
// Small text helpers for the rules extractor: ASCII case folding, trimming, word tests.
// Internal to reading/. All functions are pure and allocation-light.

#include "base/text.hpp"
#include <string>
#include <string_view>
#include <vector>

namespace engram::reading::text {

[[nodiscard]] std::string_view trim(std::string_view s);
[[nodiscard]] bool starts_with_ci(std::string_view s, std::string_view prefix);
/// Case-insensitive (ASCII) search for a lower-case `needle`, without allocating.
[[nodiscard]] bool contains_ci(std::string_view s, std::string_view lower_needle);
/// True when `word` occurs in `lowered` at word boundaries (`lowered` is lower-case).
[[nodiscard]] bool has_word(std::string_view lowered, std::string_view word);
/// True when any of `phrases` occurs at word boundaries in `lowered`.
[[nodiscard]] bool has_any(std::string_view lowered, std::initializer_list<std::string_view> phrases);
[[nodiscard]] std::vector<std::string_view> lines(std::string_view s);
[[nodiscard]] bool is_upper(char c);
/// Whether a word starts with a capital: ASCII, Latin-1 or Latin Extended-A in UTF-8
/// ("Zoë", "Élodie", "Łukasz", "Ōta").
[[nodiscard]] bool starts_upper(std::string_view w);
[[nodiscard]] bool is_alpha(char c);
[[nodiscard]] bool is_digit(char c);
/// Splits on whitespace, keeping punctuation attached.
[[nodiscard]] std::vector<std::string_view> words(std::string_view s);
/// Strips surrounding punctuation from a word ("(Globex)," -> "Globex").
[[nodiscard]] std::string_view strip_punct(std::string_view w);

}  // namespace engram::reading::text
