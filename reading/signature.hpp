#pragma once
// The signature of a statement: the numbers, dates, amounts and named entities that must
// agree (with the polarity) before two near-identical statements count as one, and its
// content words (what the wording checks compare).

#include "schemas/knowledge.hpp"

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace engram::reading {

/// Fills every entry's `sig` from its content, its title and the mentions it refers to.
void sign(schemas::extraction& x);

/// Content words of a text, stemmed (Snowball English), in order (schemas::signature::words).
[[nodiscard]] std::string content_words(std::string_view text);

/// The words recall's BM25 index looks a text up by: its content words, one per element
/// (what recall_knowledge and kag_query pass as their `terms`).
[[nodiscard]] std::vector<std::string> index_terms(std::string_view text);

/// A number as the signature compares it: times in 24 h ("3pm", "03:00 PM" -> "15:00"),
/// integers without leading zeros, a multiplier applied ("12k" -> "12000", "3.2M" -> "3200000"),
/// a unit written onto it dropped ("500GB" -> "500", "7d" -> "7"), a version's "v" too.
[[nodiscard]] std::string normal_number(std::string n);

/// The numbers of a text outside its dates and amounts (`years`: those of its dates, left out):
/// digits as normal_number writes them, with a comma between digits ("4,000"), and a multiplier
/// word after them ("3.2 million"); numbers written as words ("fourteen", "forty-two", "five
/// thousand"; "one of" counts nothing).
[[nodiscard]] std::set<std::string> read_numbers(std::string_view text, const std::set<std::string>& years);

}  // namespace engram::reading
