#pragma once
// What dedup and contradiction read of an entry: its type, subject, slot, signature,
// polarity, source and status. Built the same way from a new entry and from a stored one,
// and never from anything a merge changes, so a decision does not depend on how earlier
// events were batched.

#include "knowledge/entry.hpp"
#include "knowledge/markers.hpp"
#include "schemas/inbound_message.hpp"
#include "schemas/knowledge.hpp"
#include "storage/graph_store.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>

namespace engram::dedup {

/// A word of a title, lower-case, and whether it was written capitalised past the first
/// word (a name).
struct order_word {
  std::string word;
  bool name = false;
  bool operator==(const order_word&) const = default;
};

/// The words of a title in order, without articles, forms of "to be" and the prepositions
/// that only place a word ("in", "at", "on", "of"); a possessive "'s" is cut.
[[nodiscard]] std::vector<order_word> order_of(std::string_view title);

/// What a title says of time, modality, standing and whose: the words that turn a statement
/// into another without being a value, a name or a negation ("will" / "might", "is" / "was",
/// "the CFO" / "the former CFO", "decided to" / "decided against", "our favour" / "their
/// favour"). Read at decision time from the title (nothing stored), compared by sense_differs.
struct sense {
  /// "past", "present" or "" (neither, or both).
  std::string tense;
  /// Modal verbs, contractions read as theirs ("won't" is will).
  std::set<std::string> modal;
  /// Words that end, oppose or qualify what follows: former, ex, against, non, stop, longer, …
  std::set<std::string> standing;
  /// Possessive pronouns: our, their, my, your, his, her.
  std::set<std::string> owner;
  bool operator==(const sense&) const = default;
};

[[nodiscard]] sense sense_of(std::string_view title);

/// The two say something else of time, modality, standing or whose: a side that says nothing of
/// tense, modality or whose leaves that part open; standing words must be the same.
[[nodiscard]] bool sense_differs(const sense& a, const sense& b);

struct facts {
  std::string id;
  schemas::entry_type type = schemas::entry_type::fact;
  /// The title's content words (signature key): what exact-title dedup compares.
  std::string title;
  /// Normal form (schemas::normal_form); empty when unknown.
  std::string subject;
  std::string slot;
  schemas::signature sig;
  bool positive = true;
  /// The title's meaning markers (markers_of): words the content-word signature leaves out
  /// that change what a statement says ("this" / "next" year, "to 5%" / "by 5%", a weekday,
  /// "some" / "every"). Two statements whose markers differ are never duplicates.
  std::string markers;
  /// The title's words in order (order_of): what the wording check's order guard reads.
  std::vector<order_word> order;
  /// The title's sense words (sense_of).
  dedup::sense sense;
  /// Lower-case sender address of the statement's source.
  std::string author;
  schemas::source_type source = schemas::source_type::email;
  /// "active", "flagged" or "superseded".
  std::string status = "active";
};

/// Facts of the index-th entry of an event about to be applied.
[[nodiscard]] facts facts_of(const schemas::inbound_message& m, const schemas::entry& e, std::size_t index);

/// Facts of a stored entry.
[[nodiscard]] facts facts_of(const knowledge::stored_entry& e);

/// Ranks sources when statements disagree: manual saves outrank messages.
[[nodiscard]] int authority(schemas::source_type s);

/// Entries created by the event being resolved, by id: candidates for the event's later
/// entries before the event is written.
using event_overlay = std::map<std::string, facts>;

/// Reads a candidate: from the overlay, else from the store (nullopt when missing).
[[nodiscard]] std::optional<facts> load_facts(const storage::graph_store& store, const event_overlay& overlay,
                                              const std::string& org, const std::string& id);

}  // namespace engram::dedup
