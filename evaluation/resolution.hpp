#pragma once
// Scores entity resolution against a labelled set of mention pairs
// (tests/data/entities/heldout_pairs.jsonl): the events are read and applied to a store in
// memory as engramd would, then each pair's two mentions are looked up (the entity whose
// resolution evidence names the mention in that event, else the entity the name is known
// by) and compared with the label. Shared by the quality test (floors) and the bench (prints).

#include "reading/validator.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace engram::evaluation {

struct resolution_counts {
  std::size_t same = 0, different = 0;
  /// Labelled the same and resolved to one entity; labelled different and resolved to one.
  std::size_t joined = 0, wrongly_joined = 0;
  /// Labelled the same, and a mention was not read at all (no entity to join).
  std::size_t unread = 0;
};

struct resolution_report {
  std::size_t events = 0;
  /// Per kind in `kinds` order, then all together.
  static constexpr std::array<const char*, 5> kinds{"person", "organization", "technology", "place", "product"};
  std::array<resolution_counts, kinds.size() + 1> by_kind{};
  std::size_t identifiers = 0, identifiers_as_people_or_organisations = 0;
  /// One line per wrong join and per identifier read as a person or organisation.
  std::vector<std::string> errors;
  std::string error;

  [[nodiscard]] const resolution_counts& total() const { return by_kind.back(); }
  /// Joins right over all joins (1 when none), and over the pairs labelled the same.
  [[nodiscard]] static double precision(const resolution_counts& c);
  [[nodiscard]] static double recall(const resolution_counts& c);
  /// A Markdown table per kind and in total.
  [[nodiscard]] std::string table() const;
};

/// Which mentions resolution is given: what reading found in each event (end to end), or
/// also every mention the pairs label, with its labelled kind (resolution alone).
enum class resolution_mentions : std::uint8_t { read, labelled };

[[nodiscard]] resolution_report evaluate_resolution(const std::string& pairs_jsonl,
                                                    const reading::validator_options& opts,
                                                    resolution_mentions mentions);

}  // namespace engram::evaluation
