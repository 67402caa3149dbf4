#pragma once
// The write-side rules of knowledge (docs/extraction.md): what a new statement becomes, how a
// duplicate folds into the entry it duplicates, how validation moves confidence, and the
// supersede / flag / review transitions. Pure functions of stored values and the event
// being applied (its time, never the wall clock), so replay gives the same graph. The store
// applies them inside one write transaction and keeps the index rows in step (which rows a
// transition touches is said on each function).

#include "base/text.hpp"
#include "knowledge/entry.hpp"
#include "schemas/inbound_message.hpp"
#include "schemas/knowledge.hpp"

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace engram::knowledge {

/// validate_knowledge: approved moves confidence half way to 1 (c + (1 - c) * 0.5) and
/// resets lastValidatedAt; rejected halves it.
inline constexpr double validation_boost = 0.5, validation_penalty = 0.5;

/// A merged entry's content grows by the duplicate's content while it stays under this.
inline constexpr std::size_t max_merged_content = 4000;

/// Where a message's statements come from.
[[nodiscard]] source_ref source_of(const schemas::inbound_message& m);

/// The contacts a message is scoped to: its contactIds and its sender's, sorted, unique.
[[nodiscard]] std::set<std::string> contacts_of(const schemas::inbound_message& m);

/// The index-th statement of message `m` as a new entry with id `id`. `mentions` are its
/// resolved mentions (entity ids filled); `r` the dedup decision (null: none ran).
[[nodiscard]] stored_entry new_entry(const std::string& id, const schemas::inbound_message& m, const schemas::entry& en,
                                     std::vector<mention_ref> mentions, const std::string& extractor,
                                     const schemas::resolution* r);

/// Folds a duplicate into the entry it duplicates: content combined (unless contained or
/// too long), confidence raised by noisy-or (1 - (1-a)(1-b), 6 decimals), contacts,
/// sources and mentions united, the first due date kept, the newer timestamps kept, merges
/// counted with the last reason. Index rows: none change.
void merge_into(stored_entry& e, const schemas::entry& duplicate, const std::vector<mention_ref>& mentions,
                const source_ref& source, const std::set<std::string>& contacts, const std::string& sent_at,
                const std::string& reason);

/// Moves out of `e`'s record the sources past kept_sources, oldest after the first, and
/// counts them in sources_moved: the caller stores each at its place (the first returned is
/// the (sources_moved before the call)-th moved, counting from 0).
[[nodiscard]] std::vector<source_ref> shed_sources(stored_entry& e);

/// Records an edge on both ends (from's toId, to's fromId).
void relate(stored_entry& from, stored_entry& to, schemas::relation_type type, const std::string& reason);

/// Drops every edge of `e` to or from `other` (an entry being removed).
void forget_relations_with(stored_entry& e, const std::string& other);

/// A newer statement supersedes `loser` in an applied event at `at`: status superseded,
/// supersededBy, updatedAt never going back. Index rows: its review and due rows go.
void supersede(stored_entry& loser, const std::string& winner, const std::string& at);

/// A newer statement contradicts `older`: an active entry becomes flagged and its review
/// names the newer one. Returns true when it is flagged (a review row is due).
[[nodiscard]] bool flag(stored_entry& older, const std::string& newer, const std::string& reason);

/// validate_knowledge: outcome "approved" or "rejected", at the command's time, by its issuer.
void validate(stored_entry& e, const std::string& outcome, const std::string& at, const std::string& by);

struct review_outcome {
  /// "id: …" when the entry is not awaiting review; nothing changed then.
  std::optional<std::string> error;
  /// The entry the resolution superseded (older or newer), null when none.
  stored_entry* superseded = nullptr;
};

/// resolve_review of flagged `older` against the entry that contradicted it (`newer`, null
/// when it is gone), by `by` at `at`: keep "newer" supersedes older, "older" reactivates
/// older and supersedes newer, "both" reactivates older. Index rows: older's review row
/// goes, and the due row of the superseded entry.
[[nodiscard]] review_outcome resolve_review(stored_entry& older, stored_entry* newer, const std::string& keep,
                                            const std::string& at, const std::string& by);

/// The id of the entry that contradicted a flagged entry awaiting review, or nullopt.
[[nodiscard]] std::optional<std::string> awaiting_review(const stored_entry& e);

/// Records that an action item's reminder went out. False when one was recorded before (a
/// recovered reminder recorded twice): nothing changes. Index rows: its due row goes.
[[nodiscard]] bool record_reminder(stored_entry& e, const std::string& reminder_id, const std::string& at);

/// A person's entity id from an address.
[[nodiscard]] std::string person_id(const std::string& address);

/// A person or organisation seen for the first time.
[[nodiscard]] stored_entity new_entity(const std::string& id, const char* kind, const std::string& name,
                                       const std::string& first_seen);

}  // namespace engram::knowledge
