#pragma once
// Entity resolution: which known entity a mention names when its words are not an
// entity's name as written. Pure: the store gives the candidates it knows (by a shared word)
// and applies the answer, in log order, so a replay resolves the same way.
//
//   Folding      "José Álvarez" = "Jose Alvarez"; "Pipewell, Inc." = "Pipewell Inc."
//   Legal form   "Acme Corp" = "Acme Corporation" = "ACME" (organisations)
//   Aliases      "k8s" = "Kubernetes", "München" = "Munich" (knowledge/aliases.txt, data)
//   Short forms  "Marcus", "Mr. Chen", "priya r", "Lan" -> the one person whose name has
//                those words; when several do, the one taking part in the message, else in
//                the thread, then the one known to the message's participants (named in
//                or party to an earlier message with one of them); else none ("Priya"
//                with two Priyas known and no such sign stays unresolved). A person known
//                only from text by the same full name as a contact is that contact; a
//                mail address "seun.adeyemi@" gives its owner the words "seun adeyemi".
//   Identifiers  "CT-88213", "PO#77812", "INV-2026-0042" are never people or organisations
//
// docs/entity-graph.md#resolution says what each rule joins and how it was measured.

#include "base/names.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram::knowledge {

using names::canonical_alias;
using names::fold_name;
using names::is_identifier;
using names::organisation_key;

/// A person or organisation the store knows that shares a word with the mention.
struct resolution_candidate {
  std::string id;
  /// Folded words of its name and of each alias (one list per name).
  std::vector<std::vector<std::string>> names;
  /// Takes part in the message being applied (from, to, cc) / in its thread / took part in
  /// or was named in an earlier message with one of this message's participants.
  bool in_message = false, in_thread = false, acquainted = false;
  /// Known by its mail address (a contact), not only by a name read in text.
  bool has_address = false;
};

struct resolved_mention {
  std::string id;
  /// Why, for the evidence the entity keeps: "short form of the only person named ...".
  std::string reason;
  /// The mention is a short form of the entity's name ("Marcus" for "Marcus Chen"): it is
  /// not kept as a name of the entity, since another person may share it.
  bool short_form = true;
};

/// The person a person mention names when it is not a known name: its words (titles such as
/// "Mr." dropped; a one-letter word matches a word's initial) are all words of exactly one
/// candidate's name, preferring candidates in the message, then in the thread. A full name
/// also joins a person known only by one of its words, read in text, when that person is
/// the only candidate ("Marcus" seen first, then "Marcus Chen"). nullopt: none or ambiguous.
[[nodiscard]] std::optional<resolved_mention> resolve_person(std::string_view mention,
                                                             const std::vector<resolution_candidate>& candidates);

/// The organisation a one-word organisation mention names: the only candidate whose
/// organisation_key starts with that word ("Brightmoor" -> "Brightmoor Bank plc").
[[nodiscard]] std::optional<resolved_mention> resolve_organisation(std::string_view mention,
                                                                   const std::vector<resolution_candidate>& candidates);

/// The words of a folded name, split at spaces, with titles ("mr", "ms", "mrs", "dr",
/// "prof") dropped.
[[nodiscard]] std::vector<std::string> person_words(std::string_view folded);

/// The name words a mail address gives its owner: the local part's words when it is two or
/// more words of letters joined by '.', '_' or '-' ("seun.adeyemi@..." -> seun, adeyemi);
/// none otherwise ("info@", "jsmith@", "ops2@").
[[nodiscard]] std::vector<std::string> address_words(std::string_view address);

}  // namespace engram::knowledge
