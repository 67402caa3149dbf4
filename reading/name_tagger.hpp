#pragma once
// The name tagger: people, organisations, products and technologies, places and identifiers
// in a sentence, read by a model trained here (tools/train/train_names.cpp and
// tools/train/names/train.py, from the labelled sentences of tools/train/data/) rather than by
// rules. A linear-chain CRF over hashed features (name_features.hpp), its weights int8 and
// its scores int32, so that inference is integer arithmetic: the same sentence gives the same
// spans, and the same scores, on every CPU.
//
// Model file (format 1, little-endian):
//   "ENGNAME1"
//   u32 n, n bytes of JSON: {"format": 1, "featureFormat": 1, "name": "...", "tags": ["O",
//       "B-PER", "I-PER", ...], "buckets": B, "unitsPerNat": S, "threshold": T}
//   u32 n, n bytes: the lexicon (name_features.hpp)
//   B x tags int8: the emission weights of each feature row
//   tags int32 start scores, tags x tags int32 transitions (from, to), tags int32 end scores
//   u32 n, n int32: log(1 + exp(-d / S)) * S for d = 0 .. n-1 (log-sum-exp in integers)
// Scores are in units of 1/S nats. A span's score is its log-probability under the model
// (forward-backward: the probability of the paths that tag exactly that span as a name of its
// type), kept when it is at least T.

#include "reading/name_features.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace engram::reading {

enum class name_type : std::uint8_t { person, organization, product, place, identifier };

[[nodiscard]] std::string_view to_string(name_type t);

/// A name found in a sentence.
struct name_span {
  std::size_t begin, end;  // byte range in the sentence
  name_type type;
  /// Its log-probability in the model's units (unitsPerNat); 0 is certainty.
  std::int32_t score;

  friend bool operator==(const name_span&, const name_span&) = default;
};

class name_tagger {
public:
  /// The longest name read, in tokens.
  static constexpr std::size_t max_span_tokens = 10;

  /// The model compiled into this binary (reading/models/names.bin).
  [[nodiscard]] static std::shared_ptr<const name_tagger> builtin();

  /// Reads a model file's bytes; the error names what is wrong.
  [[nodiscard]] static std::variant<std::shared_ptr<const name_tagger>, std::string> parse(std::string_view bytes);

  /// The names of `sentence`, in order: of every span of up to max_span_tokens tokens whose
  /// probability is at least the model's threshold (or `threshold` when given), the most
  /// probable first, each one overlapping none taken before it.
  [[nodiscard]] std::vector<name_span> tag(std::string_view sentence) const;
  [[nodiscard]] std::vector<name_span> tag(std::string_view sentence, std::int32_t threshold) const;
  /// Every span of up to max_span_tokens tokens (none across a line break) scored at least
  /// `threshold`, each type on its own, in no particular order: what tag() chooses from.
  [[nodiscard]] std::vector<name_span> scored_spans(std::string_view sentence, std::int32_t threshold) const;

  /// "names-1/<16 hex digits of the file's FNV-1a>": the reader's version, for the log.
  [[nodiscard]] const std::string& version() const { return version_; }
  [[nodiscard]] std::int32_t threshold() const { return threshold_; }
  [[nodiscard]] double units_per_nat() const { return units_per_nat_; }

private:
  name_tagger() = default;
  /// Emission scores of each token for each tag.
  std::vector<std::int32_t> emissions(std::string_view sentence, const std::vector<tagging::token>& tokens) const;

  std::string version_;
  std::vector<name_type> tag_type_;     // per tag: the type (unused for O)
  std::vector<bool> tag_begins_;        // per tag: B-
  std::vector<bool> tag_inside_;        // per tag: I-
  std::vector<std::size_t> inside_of_;  // per B- tag: the I- tag of its type
  std::size_t tags_ = 0;
  std::uint32_t buckets_ = 0;
  double units_per_nat_ = 1;
  std::int32_t threshold_ = 0;
  tagging::lexicon lexicon_;
  std::vector<std::int8_t> weights_;
  std::vector<std::int32_t> start_, transitions_, end_, lse_;
};

}  // namespace engram::reading
