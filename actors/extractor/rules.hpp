#pragma once
// The rules extractor: deterministic, no network, written for this project. Cleans the
// message, finds entities (people, organisations, dates, amounts) and reads one typed
// entry per knowledge-bearing sentence or clause. The validator runs after it.

#include "schemas/knowledge.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace engram::extractor {

/// Reads an inbound message. Pure and thread-safe. `cleaned`, when given, receives the text
/// the entries were read from (the message without quotes, signature and footers).
[[nodiscard]] schemas::extraction extract_rules(const schemas::inbound_message& m, std::string* cleaned = nullptr);

/// Splits cleaned text into sentences and clauses (exposed for tests).
[[nodiscard]] std::vector<std::string> split_sentences(std::string_view text);

}  // namespace engram::extractor
