#pragma once
// Knowledge as the extractor produces it and the store keeps it (DESIGN.md §3): typed
// entries and the entities they mention. Plain values; JSON in knowledge.cpp.

#include "schemas/inbound_message.hpp"

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

enum class entity_kind : std::uint8_t { person, organization, date, amount };

[[nodiscard]] std::string_view to_string(entity_kind k);

/// A mention of an entity in a message. People and organisations become stored entities
/// (once per organisation, by normalised name); dates and amounts stay attributes of the
/// entries that mention them.
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
};

/// What an extractor read from one message.
struct extraction {
  std::vector<entity_mention> mentions;
  std::vector<entry> entries;
  /// Signature facts of the sender, if the message carried a signature.
  std::optional<entity_mention> sender_signature;
  /// Entries the validator dropped for low confidence.
  std::size_t dropped_low_confidence = 0;
  /// "rules" or "llm".
  std::string extractor = "rules";
};

/// JSON of an extraction (engramctl extract's output, minus the event fields).
[[nodiscard]] std::string to_json(const extraction& x);

}  // namespace engram::schemas
