#pragma once
// The words a question is searched by (BM25), as recall and kag_query ask them.

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace engram::query {

/// Function words the index keeps (reading's filler list drops the commonest) that a
/// question adds nothing to search with: the rest of the English stop list of Lucene's
/// EnglishAnalyzer, spelled as the index spells them. In mail "for" and "with" are in most
/// texts: their postings were most of what a search walked, for the least of its scores.
[[nodiscard]] inline bool stop_word(std::string_view term) {
  static constexpr std::array<std::string_view, 10> words{"but", "by",   "for",  "if",    "into",
                                                          "or",  "such", "then", "there", "with"};
  return std::find(words.begin(), words.end(), term) != words.end();
}

/// `terms` less the stop words, or all of them when nothing else is left (a question of
/// only such words is searched by them).
[[nodiscard]] inline std::vector<std::string> without_stop_words(std::vector<std::string> terms) {
  std::vector<std::string> rest;
  for (const auto& t : terms)
    if (!stop_word(t))
      rest.push_back(t);
  if (rest.empty())
    return terms;
  return rest;
}

}  // namespace engram::query
