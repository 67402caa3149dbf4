#pragma once
// Scores dedup and contradiction on the labelled sets (tests/data/dedup/pairs.jsonl,
// tests/data/contradiction/cases.jsonl) through the engine's own path: each statement is
// read (reading::read_statement), embedded with the real encoder, resolved by dedup and
// contradiction and applied to a real store; each pair or case in its own organisation.
// Shared by the quality test (which asserts the floors) and the bench (which prints).

#include "embedding/embedder.hpp"

#include <map>
#include <string>
#include <vector>

namespace engram::evaluation {

struct dedup_report {
  /// Pairs per kind, and how many of them were merged, and linked (the second kept apart
  /// but linked to the first as restating or complementing it).
  std::map<std::string, std::size_t> pairs, merged, linked;
  /// Ids of pairs decided against their label (a near-duplicate kept apart, another merged).
  std::vector<std::string> wrong;
  std::string error;

  /// Merges that joined statements labelled near_duplicate or paraphrase, over all merges.
  [[nodiscard]] double precision() const;
  /// near_duplicate pairs merged, over near_duplicate pairs.
  [[nodiscard]] double recall() const;
  [[nodiscard]] std::string table() const;
};

struct contradiction_report {
  std::size_t cases = 0;
  /// Conflicts expected (supersedes or contradicts), raised, and raised with the right kind.
  std::size_t expected = 0, raised = 0, correct = 0;
  /// Conflicts raised in different_subject cases (must be zero).
  std::size_t cross_subject = 0;
  std::map<std::string, std::size_t> per_kind, per_kind_correct;
  std::vector<std::string> wrong;
  std::string error;

  [[nodiscard]] double precision() const { return raised ? double(correct) / double(raised) : 1.0; }
  [[nodiscard]] double recall() const { return expected ? double(correct) / double(expected) : 1.0; }
  [[nodiscard]] std::string table() const;
};

/// `work_dir` receives a scratch store (removed first).
[[nodiscard]] dedup_report evaluate_dedup(const std::string& pairs_jsonl, const embedding::embedder& e,
                                          const std::string& work_dir, double threshold = 0.92);
/// The pairs of every file, in order, as one set.
[[nodiscard]] dedup_report evaluate_dedup(const std::vector<std::string>& pair_files, const embedding::embedder& e,
                                          const std::string& work_dir, double threshold = 0.92);
/// The `.jsonl` files of a directory, sorted by name.
[[nodiscard]] std::vector<std::string> jsonl_files(const std::string& dir);
[[nodiscard]] contradiction_report evaluate_contradictions(const std::string& cases_jsonl, const embedding::embedder& e,
                                                           const std::string& work_dir, double threshold = 0.92);

}  // namespace engram::evaluation
