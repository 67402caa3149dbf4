#pragma once
// The validator, applied to every extractor's output (rules or LLM) before anything is
// stored: confidence threshold, length limits, and prompt-injection screening of the
// source text. Pure functions.

#include "reading/injection.hpp"
#include "reading/bulk.hpp"
#include "reading/name_tagger.hpp"
#include "reading/relation_classifier.hpp"
#include "schemas/knowledge.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace engram::embedding {
class type_model;
}  // namespace engram::embedding

namespace engram::reading {

class relation_model;
class sentence_parser;

struct validator_options {
  /// Person messages are also kept as passages (extraction.passages). Default: true.
  bool passages = true;
  /// What to do with bulk, automated and spam messages (bulk.hpp; extraction.bulk). Default:
  /// skip (nothing is read from them).
  bulk_policy bulk = bulk_policy::skip;
  /// Entries below are dropped (and counted). Default 0.6 (extraction.confidence_threshold).
  double confidence_threshold = 0.6;
  /// Longer content is cut at a character boundary. Default 2,000 characters.
  std::size_t max_content_chars = 2000;
  /// Mentions with longer names are dropped. Default 120 characters.
  std::size_t max_entity_chars = 120;
  /// Confidence taken off entries of a message that looks like a prompt injection.
  double suspicious_penalty = 0.3;
  /// Entries kept per message at most, its first ones (a mail of thousands of statements
  /// is a dump: its message is stored whole, its knowledge bounded). Default 200
  /// (extraction.max_entries_per_message); 0: no bound.
  std::size_t max_entries = 200;
  /// The entry-type model (type_model.hpp), weighed with the cues; null: the cues alone
  /// (extraction.type_model: off, or where no encoder is loaded).
  std::shared_ptr<const embedding::type_model> types;
  /// The relation model (relation_model.hpp), after the cue rules; null: the cue rules alone
  /// (extraction.relation_model: off, or where no encoder is loaded).
  std::shared_ptr<const relation_model> relations;
  /// The sentence parser the relation model's pairs are chosen by (parse.hpp); null: neighbours.
  std::shared_ptr<const sentence_parser> parser;
  /// The name model (name_tagger.hpp), before the rules' names; null: the rules alone
  /// (extraction.name_model: off). Default: the model compiled in.
  std::shared_ptr<const name_tagger> names = name_tagger::builtin();
  /// The relation classifier (relation_classifier.hpp), after the cue rules; null: the cue
  /// rules alone (extraction.relation_classifier: off). Default: the model compiled in.
  std::shared_ptr<const relation_classifier> classifier = relation_classifier::builtin();
};

struct validation_report {
  std::size_t dropped_low_confidence = 0;
  std::size_t dropped_invalid = 0;
  /// Entries that were an injected instruction (or read from one).
  std::size_t dropped_injected = 0;
  /// Entries past validator_options::max_entries.
  std::size_t dropped_over_cap = 0;
  /// Relations refused: an end or its statement dropped, an unknown predicate, too little
  /// confidence, or a message that looks like a prompt injection.
  std::size_t dropped_relations = 0;
  /// The message's class (bulk.hpp) and why.
  message_verdict verdict;
  /// Why the source text looks like a prompt injection (empty when it does not).
  std::vector<std::string> injection_signals;
};

/// Validates `x` in place against `source` (the message text the entries came from). When
/// the source looks like a prompt injection (injection.hpp), entries that are the injected
/// instruction are dropped and the others kept, marked suspicious, with lower confidence.
validation_report validate(schemas::extraction& x, std::string_view source, const validator_options& opts);

/// Characters of a UTF-8 string.
[[nodiscard]] std::size_t utf8_chars(std::string_view s);

}  // namespace engram::reading
