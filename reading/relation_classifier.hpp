#pragma once
// The relation classifier: for each pair of names of a sentence (the name tagger's spans, or
// labelled ones in training), the predicate that relates them and its direction, or none. A
// linear model over hashed features of the pair, trained here (tools/train/train_relations.cpp
// and tools/train/relations/train.py, from the relations labelled in tools/train/data/);
// integer arithmetic at inference, so a pair reads alike on every CPU.
//
// Features (format 2), each hashed with FNV-1a into [0, buckets): the two names' types; the
// words between them (lower-cased, as the name tagger tokenizes), alone and with the type pair,
// their first and last word and each pair of neighbouring words; how many words and how many
// other names lie between (capped); up to three words before the first name and after the
// second. Across sentences (a ".", "!" or "?" token or a line break between the two, the text
// being a passage): how many sentence ends lie between (capped at 2), the first word of the
// second name's sentence, and how many names that sentence gives before it (its own subject, or
// none: "She runs procurement at X"), each with the type pair; and each word of that sentence
// before the second name ("moved off"). A pair's score for a label is
// the sum of its rows' int8 weights plus the label's bias.
//
// Model file (format 1, little-endian):
//   "ENGREL01"
//   u32 n, n bytes of JSON: {"format": 1, "featureFormat": 2, "name": "...", "labels": ["none",
//       "works_at>", ..., "works_at<", ...], "buckets": B, "margin": M}
//   B x (labels + 1) int8: the weights of each feature row, the last the row's "ended" weight
//   labels + 1 int32: the biases, the last "ended"'s
// A label "p>" reads the first name (in text order) as the subject of p, "p<" the second. A
// pair is related when its best label is not "none" and leads "none" by at least M; the
// relation has ended when its "ended" score is above 0.

#include "reading/name_tagger.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace engram::reading {

/// The feature format relation_features implements; a model names the one it was trained on.
inline constexpr int relation_feature_format = 2;

/// A name of a sentence: its bytes and type.
struct typed_name {
  std::size_t begin, end;
  name_type type;
};

/// The feature rows of the pair (names[first], names[second]), first < second in text order.
[[nodiscard]] std::vector<std::uint32_t> relation_features(std::string_view sentence, std::span<const typed_name> names,
                                                           std::size_t first, std::size_t second,
                                                           std::uint32_t buckets);

/// A relation read between two names of a sentence (indexes into the names given).
struct classified_relation {
  std::size_t subject, object;
  std::string predicate;
  /// The sentence says the relation has ended ("moved off", "no longer uses", "left").
  bool ended = false;
  /// How far the predicate's score leads "none", in the model's units (≥ its margin).
  std::int32_t lead;
  friend bool operator==(const classified_relation&, const classified_relation&) = default;
};

class relation_classifier {
public:
  /// The model compiled into this binary (reading/models/relations.bin).
  [[nodiscard]] static std::shared_ptr<const relation_classifier> builtin();
  /// Reads a model file's bytes; the error names what is wrong.
  [[nodiscard]] static std::variant<std::shared_ptr<const relation_classifier>, std::string> parse(
      std::string_view bytes);

  /// The relations among `names` (in text order, not overlapping), pairs in order: every pair
  /// of two different names (in lower case) whose best label leads "none" by at least the
  /// model's margin (or `margin` when given).
  [[nodiscard]] std::vector<classified_relation> read(std::string_view sentence,
                                                      std::span<const typed_name> names) const;
  [[nodiscard]] std::vector<classified_relation> read(std::string_view sentence, std::span<const typed_name> names,
                                                      std::int32_t margin) const;

  /// "relations-1/<16 hex digits of the file's FNV-1a>": the reader's version, for the log.
  [[nodiscard]] const std::string& version() const { return version_; }
  [[nodiscard]] std::int32_t margin() const { return margin_; }

private:
  relation_classifier() = default;
  std::string version_;
  std::vector<std::string> predicate_;  // per label: the predicate ("" for none)
  std::vector<bool> reversed_;          // per label: the second name is the subject
  std::size_t labels_ = 0, none_ = 0;
  std::uint32_t buckets_ = 0;
  std::int32_t margin_ = 0;
  std::vector<std::int8_t> weights_;
  std::vector<std::int32_t> bias_;
};

}  // namespace engram::reading
