#pragma once
// The rules extractor: deterministic, no network, written for this project. Cleans the
// message, finds entities (people, organisations, dates, amounts) and reads one typed
// entry per knowledge-bearing sentence or clause. The validator runs after it. rules.cpp
// is the driver; split_sentences is declared in sentences.hpp (included here), and the
// classifier, the people/organisation finder and the slot vocabulary are in internal/.

#include "reading/sentences.hpp"
#include "schemas/knowledge.hpp"
#include "schemas/knowledge_save.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace engram::embedding {
class type_model;
}  // namespace engram::embedding

namespace engram::reading {

class relation_model;
class relation_classifier;
class sentence_parser;
class name_tagger;

/// What the rules read with besides their cues; each optional.
struct reading_models {
  /// The type model weighs in on every sentence the cues typed or left uncued
  /// (type_model.hpp; type_choice); without it, the cues alone decide.
  const embedding::type_model* types = nullptr;
  /// The relation model reads the relations of names the cue rules leave unrelated
  /// (relation_model.hpp); without it, the cue rules alone.
  const relation_model* relations = nullptr;
  /// With the relation model: only names the sentence's structure links closely are weighed
  /// (parse.hpp); without it, neighbouring names.
  const sentence_parser* parser = nullptr;
  /// The name model reads people, organisations, products, places and identifiers, the rules'
  /// names fill in where it found none (name_tagger.hpp); without it, the rules alone.
  const name_tagger* names = nullptr;
  /// The relation classifier reads the relations of names the cue rules leave unrelated
  /// (relation_classifier.hpp); without it, the cue rules (and the relation model) alone.
  const relation_classifier* classifier = nullptr;
};

/// Reads an inbound message. Pure and thread-safe. `cleaned`, when given, receives the text
/// the entries were read from (the message without quotes, signature and footers).
[[nodiscard]] schemas::extraction extract_rules(const schemas::inbound_message& m, std::string* cleaned = nullptr,
                                                const reading_models& models = {});

/// Text no one writes as a sentence: ASCII art, link lists, navigation bars, code, and
/// run-on blocks far longer than any sentence.
[[nodiscard]] bool is_noise(std::string_view sentence);

/// The passages of a message's cleaned text (schemas::passage): injected blocks cut, its
/// sentences (noise and injected instructions left out) grouped in order into windows of up to
/// passage_window_chars characters (a longer sentence is a window alone), at most
/// schemas::max_passages_per_message (the text past them is not kept as passages).
inline constexpr std::size_t passage_window_chars = 360;
/// `sent_at_ms` resolves the dates each passage names.
[[nodiscard]] std::vector<schemas::passage> make_passages(std::string_view cleaned_text, std::int64_t sent_at_ms);

/// Reads one statement an agent saves (save_knowledge): `m.body` is its content, taken as
/// one entry of `type` with the given title and confidence; its entities, subject, slot,
/// value and polarity are read as for a sentence of a message. Always exactly one entry
/// (none when the content is empty). extractor = "agent".
[[nodiscard]] schemas::extraction read_statement(const schemas::inbound_message& m, schemas::entry_type type,
                                                 std::string_view title, double confidence);

/// An agent's save read as its one entry (read_statement of its message form, with the
/// save's tags and expiry): what the extractor stage does with a save, and what a branch
/// merge does again with each of the branch's saves.
[[nodiscard]] schemas::extraction read_save(const schemas::knowledge_save& s);

}  // namespace engram::reading
