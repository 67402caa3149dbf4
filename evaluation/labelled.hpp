#pragma once
// Labelled sentences (tools/train/data/GUIDE.md: JSON Lines, names marked [[TYPE:text]]) and the
// name tagger's score on them: typed exact-span precision and recall, by type and by style.
// Shared by engram_train_names and the tagger's quality test.

#include "reading/name_tagger.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace engram::evaluation::labelled {

struct gold_span {
  std::size_t begin, end;  // bytes of the plain text
  std::string type;        // PER, ORG, PROD, LOC or ID
};

/// A relation an item states: its ends as marked, the predicate, whether it has ended.
struct gold_relation {
  std::string subject, predicate, object;
  bool ended = false;
};

/// A labelled item: its plain text (marks removed), its spans and its relations.
struct labelled_item {
  std::string id, writer, style, text;
  std::vector<gold_span> spans;
  std::vector<gold_relation> relations;
};

/// The items of JSON Lines files, in order; throws std::runtime_error naming the file or item.
[[nodiscard]] std::vector<labelled_item> read_labelled(const std::vector<std::string>& files);

/// The tag of a type: PER, ORG, PROD, LOC, ID.
[[nodiscard]] std::string type_tag(reading::name_type t);

struct counts {
  std::size_t tp = 0, fp = 0, fn = 0;
  [[nodiscard]] double p() const { return tp + fp ? double(tp) / double(tp + fp) : 1.0; }
  [[nodiscard]] double r() const { return tp + fn ? double(tp) / double(tp + fn) : 1.0; }
  [[nodiscard]] double f() const { return p() + r() > 0 ? 2 * p() * r() / (p() + r()) : 0.0; }
};

struct name_scores {
  counts all;      // typed exact spans
  counts untyped;  // exact spans, type not compared
  std::map<std::string, counts> by_type, by_style;
  /// "missed TYPE name | text" and "extra TYPE name | text" lines, up to the number asked for.
  std::vector<std::string> errors;
};

/// The tagger's spans against the labels; spans compare without the punctuation at their edges
/// ("Acme Inc." = "Acme Inc"). `threshold`: the span score kept (the model's by default).
[[nodiscard]] name_scores score_names(const reading::name_tagger& tagger, const std::vector<labelled_item>& items,
                                      std::int32_t threshold, std::size_t errors_wanted = 0);

}  // namespace engram::evaluation::labelled
