#pragma once
// Knowledge as the extractor produces it and the store keeps it (docs/architecture.md): typed
// entries and the entities they mention. Plain values; JSON in knowledge.cpp.

#include "schemas/inbound_message.hpp"
#include "schemas/vector.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram::schemas {

enum class entry_type : std::uint8_t { fact, decision, event, preference, goal, relationship, action_item };

inline constexpr entry_type all_entry_types[] = {entry_type::fact,       entry_type::decision, entry_type::event,
                                                 entry_type::preference, entry_type::goal,     entry_type::relationship,
                                                 entry_type::action_item};

[[nodiscard]] std::string_view to_string(entry_type t);
[[nodiscard]] std::optional<entry_type> parse_entry_type(std::string_view s);

/// technology (a product, tool or platform an organisation uses) and location (a city,
/// country or site) name the far ends of relations (entity_relation).
enum class entity_kind : std::uint8_t { person, organization, date, amount, technology, location };

[[nodiscard]] std::string_view to_string(entity_kind k);
[[nodiscard]] std::optional<entity_kind> parse_entity_kind(std::string_view s);

/// People, organisations, technologies and places: the kinds that are nodes of the entity
/// graph (dates and amounts are values).
[[nodiscard]] constexpr bool is_named_entity(entity_kind k) {
  return k != entity_kind::date && k != entity_kind::amount;
}

/// A mention of an entity in a message. People, organisations, technologies and locations
/// become stored entities (once per organisation, by normalised name); dates and amounts
/// stay attributes of the entries that mention them.
struct entity_mention {
  entity_kind kind = entity_kind::person;
  /// As written ("next Friday", "$12,500", "Sarah Lee").
  std::string text;
  /// Canonical form: a person's or organisation's name; a date "YYYY-MM-DD" or a period
  /// "YYYY-MM-DD/YYYY-MM-DD"; an amount's number ("12500").
  std::string value;
  /// ISO currency of an amount ("USD"); empty otherwise.
  std::string currency;
  /// Person: e-mail address or handle when known.
  std::string address;
  /// Person: role ("VP Sales"); organisation of a person: company.
  std::string role;
  std::string company;
  std::string phone;
  bool operator==(const entity_mention&) const = default;
};

/// What must agree for two statements to say the same thing (docs/extraction.md), read once
/// when the statement is extracted and stored with the entry (merges never change it).
/// Every list is sorted and unique.
struct signature {
  /// Numbers outside dates and amounts ("180", "3").
  std::vector<std::string> numbers;
  /// Resolved dates and periods ("2026-06-30", "2026-07-01/2026-09-30").
  std::vector<std::string> dates;
  /// Amounts with currency ("50000 USD").
  std::vector<std::string> amounts;
  /// Normal forms of the people and organisations named.
  std::vector<std::string> entities;
  /// The statement's content words, stemmed, in order: no fillers (articles, auxiliaries,
  /// greetings, negations: polarity is compared apart), no numbers or calendar words
  /// (compared above). "Hi team, the Q3 budget was approved" -> "budget approv".
  std::string words;
  /// The title's content words the same way: the exact-match key of dedup.
  std::string key;
  bool operator==(const signature&) const = default;
};

/// One knowledge entry read from one sentence or clause.
struct entry {
  entry_type type = entry_type::fact;
  /// At most 80 characters.
  std::string title;
  std::string content;
  /// 0..1, from the strength of the evidence (after the validator's adjustments).
  double confidence = 0;
  /// The entity the entry is about (a name), the attribute and its value, when readable.
  std::string subject;
  std::string slot;
  std::string value;
  /// False when the statement is negated ("no longer", "not").
  bool positive = true;
  /// An action item's due date, "YYYY-MM-DD", when one is named.
  std::string due_at;
  /// Set by the validator when the source text looks like a prompt injection.
  bool suspicious = false;
  /// Indexes into extraction::mentions of what this entry mentions.
  std::vector<std::size_t> mentions;
  /// Filled by the extractor after validation.
  signature sig;
  /// Set by an agent's save: its tags and when it expires (RFC 3339; empty: never).
  std::vector<std::string> tags;
  std::string expires_at;
  /// The content's sentence embedding, quantised (schemas/vector.hpp), set where the entry
  /// is extracted; empty when no embedder ran. Stored in the `vectors` column family, not
  /// in the entry.
  vector8 embedding;
  bool operator==(const entry&) const = default;
};

/// Relations between entities the extractors read (docs/graph-queries.md): who works
/// where, who reports to whom, what an organisation uses, where it is, which organisation
/// is part of, a partner, a customer or a competitor of another; and relates_to, two
/// entities one statement names together that no other predicate relates (the seed's
/// general relationship: "Hugo Martin signed Globex's renewal"); defines ("RFC 6749 defines
/// OAuth 2.0": a standard, policy or document and the concept it defines); and a document's
/// structure: a document contains its sections, a section mentions what it names; makes,
/// an organisation and a product it makes or sells ("the vendor behind Harbormind").
inline constexpr std::string_view relation_predicates[] = {
    "works_at",      "reports_to", "uses",    "located_in", "part_of",  "partner_of", "customer_of",
    "competes_with", "relates_to", "defines", "mentions",   "contains", "makes"};

/// The confidence of a relates_to read from two names in one statement.
inline constexpr double co_mention_confidence = 0.6;

[[nodiscard]] bool is_relation_predicate(std::string_view p);

/// A relation between two entities that one message states ("Mei Chen joined Contoso as
/// CTO": Mei Chen works_at Contoso, role CTO). It holds from the message's sentAt; `ended`
/// says the message ends it ("Mei left Contoso"), which closes it without deleting it.
struct entity_relation {
  /// Indexes into extraction::mentions.
  std::size_t subject = 0, object = 0;
  /// One of relation_predicates.
  std::string predicate;
  double confidence = 0;
  /// The index of the entry (into extraction::entries) that states it, when one does (a
  /// signature's works_at has none).
  std::optional<std::size_t> entry;
  bool ended = false;
  /// works_at: the role named with it ("CTO"); empty otherwise.
  std::string role;
  bool operator==(const entity_relation&) const = default;
};

/// A window of a person message's cleaned text (quoted replies, signature and boilerplate
/// left out; injected spans cut), kept beside the entries so that recall never loses what
/// was said: indexed for BM25 and vectors, returned as itself when no entry covers it.
struct passage {
  std::string text;
  /// Its BM25 terms (the stemmed content words, as an entry's signature words), read once
  /// by the extractor: the store indexes what the record says.
  std::string words;
  /// The dates it names, resolved against the message's sentAt ("YYYY-MM-DD", or a period
  /// "YYYY-MM-DD/YYYY-MM-DD"; "yesterday", "last Saturday", "in three weeks"), in order.
  std::vector<std::string> dates;
  /// The message carried a prompt injection (its injected spans are not in `text`).
  bool suspicious = false;
  /// The window's embedding (an entry's vector when the window is that entry's sentence:
  /// never embedded twice); empty when no embedder ran.
  vector8 embedding;
  bool operator==(const passage&) const = default;
};

/// At most this many passages a message (a record stays well under the broker's limit).
inline constexpr std::size_t max_passages_per_message = 24;

/// What an extractor read from one message.
struct extraction {
  std::vector<entity_mention> mentions;
  std::vector<entry> entries;
  std::vector<entity_relation> relations;
  /// Signature facts of the sender, if the message carried a signature.
  std::optional<entity_mention> sender_signature;
  /// Entries the validator dropped for low confidence.
  std::size_t dropped_low_confidence = 0;
  /// "rules" or "llm".
  std::string extractor = "rules";
  /// The version of the model that read the names ("names-1/<16 hex digits>", name_tagger.hpp);
  /// empty when the rules alone read them (and in records written before the name model).
  std::string reader;
  /// The message's passages (person mail, chat and document chunks; none for bulk, spam and
  /// agents' saves).
  std::vector<passage> passages;
  bool operator==(const extraction&) const = default;
};

/// The id of the index-th entry read from an event: "e-" + 16 hex digits of FNV-1a over
/// (organisation, eventId, index). Derived, never random: the same everywhere.
[[nodiscard]] std::string entry_id(std::string_view organization_id, std::string_view event_id, std::size_t index);

/// Lower-case ASCII letters and digits, every other run of bytes one space, trimmed: the
/// exact-match form of titles and subjects ("Re: The Q3 budget!" -> "re the q3 budget").
/// Non-ASCII bytes are kept as they are.
[[nodiscard]] std::string normal_form(std::string_view s);

/// The space-separated words of `s` (normal forms and signature words), empty ones skipped.
/// The views point into `s`.
[[nodiscard]] std::vector<std::string_view> split_words(std::string_view s);

/// Relations between entries (docs/architecture.md), stored in both directions.
enum class relation_type : std::uint8_t { supports, contradicts, supersedes, relates_to, causes, blocks };

[[nodiscard]] std::string_view to_string(relation_type t);
[[nodiscard]] std::optional<relation_type> parse_relation_type(std::string_view s);

/// What became of a new entry (save_knowledge's `outcome`).
enum class save_outcome : std::uint8_t { created, merged, linked, superseded };

[[nodiscard]] std::string_view to_string(save_outcome o);

struct relation_edge {
  relation_type type = relation_type::relates_to;
  /// The other entry's id.
  std::string to;
  /// Why, in words ("cosine 0.95, same numbers, dates, amounts, entities and polarity").
  std::string reason;
};

/// What the dedup and contradiction stages decided for one new entry. The decision names
/// entries; the store combines their fields when it applies the event, so a decision stays
/// valid whatever was applied just before it.
struct resolution {
  save_outcome outcome = save_outcome::created;
  /// merged: the entry this one was merged into (the new entry is not stored on its own).
  std::string merged_into;
  /// Why this outcome.
  std::string reason;
  /// Edges from the new entry (from merged_into when merged) to older entries.
  std::vector<relation_edge> relations;
  /// Older entries this one supersedes (their status becomes superseded).
  std::vector<std::string> superseded;
  /// Older entries that now contradict a newer one and wait for review (status flagged).
  std::vector<std::string> flagged;
  /// The organisation's vector sequence number of the new entry's embedding (0: none).
  std::uint64_t vector_seq = 0;
};

/// JSON of an extraction (engramctl extract's output, minus the event fields).
[[nodiscard]] std::string to_json(const extraction& x);

/// Decay (docs/extraction.md), evaluated at read time: confidence × 0.5^(age / half-life), age
/// the days from lastValidatedAt to now (never negative); a half-life of 0 means no decay.
[[nodiscard]] double effective_confidence(double confidence, std::int64_t last_validated_ms, std::int64_t now_ms,
                                          double half_life_days);

}  // namespace engram::schemas
