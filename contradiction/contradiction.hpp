#pragma once
// Contradiction (docs/extraction.md). Candidates for a new entry are the entries with the same
// subject and slot, and the near-duplicates dedup found that disagree with it; never an
// entry about another subject, never another organisation's (the store's keys start with
// the organisation). Two statements conflict when, for the same qualifiers (the period or
// date they are about), they give another value or the opposite polarity.
//
// The newer statement (later in engram-log) from the same source, or from a more
// authoritative one (a manual save outranks a message), supersedes the older; otherwise
// both stay, `contradicts` joins them and the older is flagged for review.

#include "dedup/dedup.hpp"
#include "dedup/facts.hpp"
#include "storage/graph_store.hpp"

#include <memory>
#include <vector>

namespace engram::contradiction {

enum class conflict : std::uint8_t { none, value, negation };

/// Whether `newer` and `older` (same subject and slot) disagree; `why` says how.
[[nodiscard]] conflict compare(const dedup::facts& newer, const dedup::facts& older, std::string* why);

class contradiction_finder {
public:
  /// `reads`: how a candidate's facts are read (dedup's reader(), which keeps what it read);
  /// none: from the overlay and the store.
  explicit contradiction_finder(std::shared_ptr<const storage::graph_store> store, dedup::facts_reader reads = {})
      : store_(std::move(store)), reads_(std::move(reads)) {}

  /// Adds supersedes / contradicts edges, superseded and flagged ids to the resolutions of
  /// one event's entries (those not merged). `near` and `overlay` come from dedup.
  void resolve(const schemas::inbound_message& m, const schemas::extraction& x, std::vector<schemas::resolution>& out,
               const std::vector<std::vector<dedup::near_conflict>>& near, const dedup::event_overlay& overlay) const;

private:
  std::shared_ptr<const storage::graph_store> store_;
  dedup::facts_reader reads_;
};

}  // namespace engram::contradiction
