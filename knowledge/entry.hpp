#pragma once
// The stored entry and the stored entity: what the graph store keeps of each (docs/architecture.md),
// as C++ values with two codecs. Storage writes them, dedup and the query service read
// them; nobody else reads their bytes.
//
// Entries are stored in a typed binary record (encode/decode: every field in a fixed
// order, strings length-prefixed), so a recall reads its candidates without parsing JSON;
// tools and command results show them as JSON (to_json/from_json). Entities are stored as
// JSON (encode/decode of stored_entity).
//
// The codecs' contract: decode(encode(x)) == x, and encode(decode(bytes)) == bytes for
// any bytes this codec wrote (the replay digest depends on it; in JSON: keys sorted,
// optional fields absent when unset, expiresAt and dueAt null when unset). Keys this
// version does not know are kept in `extra` and written back as they were, so nothing a
// newer version stored is lost by an older one rewriting the entry. decode(entry) also
// reads an entry stored as JSON (stores before layout 6).

#include "schemas/knowledge.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram::knowledge {

using json = nlohmann::json;

/// Where a statement came from: one per message or save that stated it (a merge adds one).
struct source_ref {
  std::string source_type;  // "email", "chat", "manual"
  std::string source_id;
  std::string event_id;
  /// Lower-case sender address; empty for saves.
  std::string author;
  /// When the message was sent (RFC 3339). Empty in entries stored before it was kept:
  /// recall then reads it from the message.
  std::string sent_at;
  bool operator==(const source_ref&) const = default;
};

/// A person, organisation, date or amount the entry mentions.
struct mention_ref {
  std::string kind;  // schemas::entity_kind's name
  std::string text;
  std::string value;
  std::string currency;   // amounts; empty: absent
  std::string entity_id;  // people and organisations; empty: absent
  bool operator==(const mention_ref&) const = default;
};

/// An edge to (or, on the other end, from) another entry. Exactly one of to_id, from_id is set.
struct relation_ref {
  std::string type;  // schemas::relation_type's name
  std::string to_id;
  std::string from_id;
  std::string reason;
  bool operator==(const relation_ref&) const = default;
};

struct validation_ref {
  std::string at, outcome, by;
  bool operator==(const validation_ref&) const = default;
};

/// A flagged entry's review: who contradicted it and, once resolved, how.
struct review_note {
  std::string contradicted_by;
  std::string reason;
  std::string resolved;  // "newer", "older" or "both"; empty while open
  std::string resolved_at;
  std::string resolved_by;
  bool operator==(const review_note&) const = default;
};

enum class entry_status : std::uint8_t { active, flagged, superseded };
[[nodiscard]] std::string_view to_string(entry_status s);

struct stored_entry {
  std::string id;
  std::string organization_id;
  schemas::entry_type type = schemas::entry_type::fact;
  std::string title;
  std::string content;
  /// The first source (also sources[0]).
  std::string source_type;
  std::string source_id;
  std::string event_id;
  std::string author;
  /// At most kept_sources: the first said, then the latest. The ones between (the 2nd to the
  /// (sources_moved + 1)-th said, oldest first) are rows of their own beside the record
  /// (storage's entry_sources), so an entry every message repeats does not grow with them.
  std::vector<source_ref> sources;
  std::uint64_t sources_moved = 0;
  /// Sorted, unique.
  std::vector<std::string> contact_ids;
  std::string thread_id;
  double confidence = 0;
  std::string last_validated_at;
  /// RFC 3339 or YYYY-MM-DD; empty: never (stored as null).
  std::string expires_at;
  std::string due_at;
  std::vector<std::string> tags;
  std::vector<mention_ref> entities;
  std::vector<relation_ref> relations;
  entry_status status = entry_status::active;
  bool suspicious = false;
  std::string subject;
  std::string slot;
  std::string value;
  bool positive = true;
  schemas::signature sig;
  std::string extractor;
  std::string outcome;         // schemas::save_outcome's name at creation
  std::string outcome_reason;  // empty: absent
  std::string created_at;
  std::string updated_at;
  /// Set when merged into at least once (merges > 0 writes merges and lastMergeReason).
  std::int64_t merges = 0;
  std::string last_merge_reason;
  std::string superseded_by;  // empty: absent
  std::optional<review_note> review;
  /// Validations by agents, oldest first; empty: absent.
  std::vector<validation_ref> validations;
  std::string reminder_id;  // empty: absent (no reminder sent)
  std::string reminder_sent_at;
  /// A branch save shown as an entry (never stored in the main graph); empty: absent.
  std::string branch_id;
  /// Keys this version does not know, written back unchanged.
  json extra = json::object();
  bool operator==(const stored_entry&) const = default;
};

/// A person or organisation: created when first seen, enriched by later messages.
/// Evidence of a resolution (knowledge/resolve.hpp): a mention that joined an entity
/// although its words are not the entity's name as written, where, and why.
struct resolution_note {
  std::string mention, event_id, reason;
  bool operator==(const resolution_note&) const = default;
};

struct stored_entity {
  std::string id;
  std::string kind;  // "person", "organization", or "entity" (another type, from the entity tools)
  std::string name;
  std::vector<std::string> aliases;
  std::string first_seen_at;
  std::uint64_t messages = 0;
  /// Empty: absent.
  std::string address, contact_id, last_seen_at, role, company, phone;
  /// The type an agent gave (entity tools; free-form, kept as given); empty: `kind` is the
  /// type (people and organisations found in mail).
  std::string entity_type;
  /// Key-value facts and free-text observations from the entity tools; empty: absent.
  std::map<std::string, std::string> attributes;
  std::vector<std::string> observations;
  /// The mentions resolution joined to it, oldest first, at most max_resolution_notes.
  std::vector<resolution_note> resolutions;
  json extra = json::object();
  bool operator==(const stored_entity&) const = default;
};

/// How many sources an entry's record keeps (stored_entry::sources).
inline constexpr std::size_t kept_sources = 16;

/// A source as its own record (the rows of sources moved out of an entry's record).
[[nodiscard]] std::string encode(const source_ref& s);
[[nodiscard]] std::optional<std::string> decode(std::string_view bytes, source_ref& out);
/// Sources as an entry's JSON lists them ("sources" of to_json(stored_entry)).
[[nodiscard]] json to_json(const std::vector<source_ref>& sources);

/// How many resolution notes an entity keeps (the first ones: evidence of how it was joined).
inline constexpr std::size_t max_resolution_notes = 32;

[[nodiscard]] json to_json(const stored_entry& e);
[[nodiscard]] json to_json(const stored_entity& e);
/// The storage record (binary, first byte 0x01).
[[nodiscard]] std::string encode(const stored_entry& e);
/// The storage record (JSON).
[[nodiscard]] std::string encode(const stored_entity& e);
/// Decodes what encode wrote (an entry also from its JSON); an error "field: reason" when
/// `bytes` is not a stored entry.
[[nodiscard]] std::optional<std::string> decode(std::string_view bytes, stored_entry& out);
[[nodiscard]] std::optional<std::string> decode(std::string_view bytes, stored_entity& out);
[[nodiscard]] std::optional<std::string> from_json(const json& j, stored_entry& out);
/// A stored entry's bytes as JSON (to_json of what decode reads); null when they are not one.
[[nodiscard]] json entry_json(std::string_view stored);

}  // namespace engram::knowledge
