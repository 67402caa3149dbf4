#pragma once
// A change to knowledge that is not a message or a save, as it travels on engram-log:
// record kind "knowledge-command", key = organizationId. Agents' validations, branch merges
// and discards and review resolutions, and the timers' expiry sweeps and sent reminders.
// Everything the store derives from a command is fixed in it when it is made (issuedAt),
// so a replay applies exactly what the live engine applied.
//
//   {"eventId": "cmd-…", "organizationId": "acme", "issuedAt": "2026-03-05T10:00:00.000Z",
//    "issuedBy": "agent-1", "op": "validate", "id": "e-…", "outcome": "approved"}
//
//   op               fields
//   validate         id, outcome (approved | rejected)
//   resolve_review   id (the flagged entry), keep (newer | older | both)
//   merge_branch     branchId, ttlMs: the branches' time to live when the merge was asked
//                    (records written before ttlMs was carried decode 0 and, as when they
//                    were first applied, find the branch expired)
//   discard_branch   branchId
//   expire           limit: removes up to `limit` entries whose expiresAt <= issuedAt, and
//                    branch saves older than issuedAt - branches.ttl (given as ttlMs)
//   reminder_sent    id (the action item), reminderId, partition, offset: the reminder is on
//                    engram-reminders at that position
//   chunk_failed     id (the document), chunk, chunks, reason, title (optional): the sequencer
//                    refused a chunk of a document (sourceType file); the event is on the
//                    dead-letter topic with the same reason, the chunk's status is failed
//   forget           what (entry | message | thread | document | contact | organization), id
//                    (the entry; the message's eventId; the thread, document; the contact's
//                    contactId or address; the organisation's own id); events and people
//                    (forgets of messages: what the requester found to forget):
//                    the store becomes what it would be had the forgotten records never been
//                    applied (docs/forgetting.md); issuedBy and the kind are kept, never content;
//                    what retention (the timers): id the cutoff, limit: up to `limit` messages
//                    sent before it lose their text and passages, their entries stay

#include "schemas/command_envelope.hpp"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

namespace engram::schemas {

inline constexpr const char* kind_knowledge_command = "knowledge-command";

enum class command_op : std::uint8_t {
  validate,
  resolve_review,
  merge_branch,
  discard_branch,
  expire,
  reminder_sent,
  chunk_failed,
  forget
};

/// What a forget command can forget.
inline constexpr std::string_view forget_kinds[] = {"entry",    "message", "thread",
                                                    "document", "contact", "organization"};
/// The timers' forget of messages past an organisation's retention (docs/forgetting.md): id is
/// the cutoff (RFC 3339; messages sent before it), limit the most messages it removes. Not one
/// of forget_kinds: no agent or operator asks for it.
inline constexpr std::string_view retention_kind = "retention";
/// The forget kinds that forget messages: applied by rebuilding the organisation from the log.
[[nodiscard]] inline bool forgets_messages(std::string_view what) {
  return what == "message" || what == "thread" || what == "document" || what == "contact";
}

[[nodiscard]] std::string_view to_string(command_op op);
[[nodiscard]] std::optional<command_op> parse_command_op(std::string_view s);

/// After its envelope (eventId, organizationId, issuedAt, issuedBy).
struct knowledge_command : command_envelope {
  command_op op = command_op::validate;
  /// validate, resolve_review, reminder_sent: the entry; chunk_failed: the document; forget:
  /// what is forgotten.
  std::string id;
  /// forget: one of forget_kinds.
  std::string what;
  /// validate: "approved" | "rejected".
  std::string outcome;
  /// resolve_review: "newer" | "older" | "both".
  std::string keep;
  /// merge_branch, discard_branch.
  std::string branch_id;
  /// expire: most entries removed by this command. ttlMs (expire, merge_branch): the
  /// branches' time to live.
  std::int64_t limit = 0;
  std::int64_t ttl_ms = 0;
  /// reminder_sent: the reminder's id and where it landed on engram-reminders (offset -1:
  /// unknown).
  std::string reminder_id;
  std::int32_t reminder_partition = 0;
  std::int64_t reminder_offset = -1;
  /// chunk_failed: the document's title, the chunk (of `chunks`) and why it was refused.
  std::string title;
  std::int32_t chunk = 0;
  std::int32_t chunks = 0;
  std::string reason;
  /// forget of messages (what: message, thread, document, contact): the eventIds it forgets and,
  /// for a contact, the people it removes from other messages ("address:", "contact:" or
  /// "name:" + graph_store::person_key, never the value itself), as the requester read them
  /// from the store: carried on the log, so a replay forgets exactly the same.
  std::vector<std::string> events;
  std::vector<std::string> people;

  friend bool operator==(const knowledge_command&, const knowledge_command&) = default;
};

/// The record's JSON: canonical key order, the op's fields and any other field set (not at
/// its default), so that nothing set is lost on the way through the log.
[[nodiscard]] std::string to_json(const knowledge_command& c);

/// Decodes and checks a record (every field present well typed, the op's fields present and
/// valid); "/field: reason" on failure.
[[nodiscard]] std::optional<std::string> decode(std::string_view bytes, knowledge_command& out);

}  // namespace engram::schemas
