#pragma once
// Scores the extractor against the labelled set (tests/data/extraction/labelled.jsonl):
// per-type precision/recall/F1 of entries, entity F1 and date-resolution accuracy.
// Shared by the evaluation test (which asserts the floors) and the bench (which prints).

#include "reading/validator.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace engram::evaluation {

struct counts {
  std::size_t tp = 0, fp = 0, fn = 0;
  [[nodiscard]] double precision() const { return tp + fp ? double(tp) / double(tp + fp) : 1.0; }
  [[nodiscard]] double recall() const { return tp + fn ? double(tp) / double(tp + fn) : 1.0; }
  [[nodiscard]] double f1() const { return 2 * tp + fp + fn ? 2.0 * double(tp) / double(2 * tp + fp + fn) : 1.0; }
};

struct report {
  std::size_t messages = 0;
  std::size_t gold_entries = 0;
  std::size_t predicted_entries = 0;
  /// Per entry type, in schemas::all_entry_types order.
  std::array<counts, 7> types{};
  /// confusion[gold][read]: labelled entries by their type and the type they were read
  /// with; read index 7 is "not found".
  std::array<std::array<std::size_t, 8>, 7> confusion{};
  /// People, organisations, amounts, dates.
  std::array<counts, 4> entities{};
  std::size_t dates = 0;
  std::size_t dates_correct = 0;
  /// Labelled entries with a dueAt, and those found with that due date (a statement missed
  /// counts as a wrong due date).
  std::size_t due_dates = 0;
  std::size_t due_dates_correct = 0;
  /// Entries read from sentences labelled junk.
  std::size_t junk_entries = 0;
  std::size_t injection_messages = 0;
  std::size_t injection_messages_flagged = 0;
  /// Set when the file could not be read or parsed.
  std::string error;

  [[nodiscard]] double macro_f1() const;
  [[nodiscard]] counts entities_total() const;
  [[nodiscard]] double date_accuracy() const { return dates ? double(dates_correct) / double(dates) : 1.0; }
  [[nodiscard]] double due_date_accuracy() const {
    return due_dates ? double(due_dates_correct) / double(due_dates) : 1.0;
  }
  /// Entries found with their labelled type, over all labelled (recall) and all extracted (precision).
  [[nodiscard]] double typed_recall() const;
  [[nodiscard]] double typed_precision() const;
  /// A Markdown table of everything above.
  [[nodiscard]] std::string table() const;
};

[[nodiscard]] report evaluate(const std::string& labelled_jsonl, const reading::validator_options& opts);

/// Deadlines read from sentences labelled with theirs (tests/data/dates/README.md: one
/// {"id", "sentAt", "text", "dueAt"} a line): each sentence read as an action item sent at its
/// sentAt (reading::read_statement), its due date against the label.
struct due_report {
  std::size_t sentences = 0, right = 0;
  /// "id: text -> read (want)" for each sentence read otherwise.
  std::vector<std::string> wrong;
  std::string error;
  [[nodiscard]] double accuracy() const { return sentences ? double(right) / double(sentences) : 0.0; }
};
[[nodiscard]] due_report evaluate_due_dates(const std::string& sentences_jsonl);

/// Relations between entities against tests/data/relations/*.jsonl, whose lines
/// carry labels.relations [{subject, predicate, object, ended?}]: a relation read is right
/// when its subject, predicate and object match a labelled one (names compared without case
/// and spacing); `ended` is scored apart, on the relations found.
struct relation_report {
  std::size_t messages = 0;
  /// Per predicate, in schemas::relation_predicates order, then all together; relates_to
  /// (two names in one statement, never labelled) is not scored but counted apart.
  std::array<counts, std::size(schemas::relation_predicates)> predicates{};
  std::size_t co_mentions = 0;
  counts total;
  std::size_t ended_checked = 0, ended_right = 0;
  /// The ceiling a relation reader has with the mentions reading finds: labelled relations
  /// whose two ends are both among the message's mentions, and both among one entry's.
  std::size_t ends_read = 0, ends_in_one_entry = 0;
  std::string error;
  /// A Markdown table: per predicate P / R / F1 and the total.
  [[nodiscard]] std::string table() const;
};

[[nodiscard]] relation_report evaluate_relations(const std::string& labelled_jsonl,
                                                 const reading::validator_options& opts);
/// The same over events given as JSON texts, one each; `name` names them in errors.
[[nodiscard]] relation_report evaluate_relations(const std::vector<std::string>& events, const std::string& name,
                                                 const reading::validator_options& opts);

}  // namespace engram::evaluation
