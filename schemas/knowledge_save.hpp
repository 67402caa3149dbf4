#pragma once
// An agent's save (MCP save_knowledge) as it travels on engram-log: record kind
// "knowledge-save", key = organizationId, value the JSON below. Everything the store derives
// from it is fixed here, when the save is made (savedAt, expiresAt), so a replay applies
// exactly what the live engine applied.
//
//   {"eventId": "save-…", "organizationId": "acme", "savedAt": "2026-03-05T10:00:00Z",
//    "savedBy": "agent-1", "type": "fact", "title": "…", "content": "…", "confidence": 0.8,
//    "contactId": "c-17", "expiresAt": "2026-04-04T10:00:00Z", "tags": ["pricing"],
//    "branchId": "b-1", "branchTtlMs": 86400000,          (the two only for a branch save)
//    "vector": {"scale": 0.0071, "q": "<base64 int8>"}}    (the content's embedding, made by the
//                                                         MCP side; records written before it
//                                                         carried none are embedded when applied)

#include "schemas/inbound_message.hpp"
#include "schemas/knowledge.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram::schemas {

inline constexpr const char* kind_knowledge_save = "knowledge-save";

struct knowledge_save {
  std::string event_id;
  std::string organization_id;
  std::string saved_at;
  std::int64_t saved_at_ms = 0;
  /// Who saved it (the token's name); becomes the statement's author "agent:<savedBy>".
  std::string saved_by;
  entry_type type = entry_type::fact;
  std::string title;
  std::string content;
  double confidence = 0;
  std::string contact_id;
  /// RFC 3339, or empty for never.
  std::string expires_at;
  std::vector<std::string> tags;
  /// Set when saved into a branch (speculative): the branch's time to live, fixed at save.
  std::string branch_id;
  std::int64_t branch_ttl_ms = 0;
  /// The content's embedding, quantised; empty when the saver had no embedder.
  vector8 embedding;

  friend bool operator==(const knowledge_save&, const knowledge_save&) = default;
};

/// The record's JSON (canonical key order).
[[nodiscard]] std::string to_json(const knowledge_save& s);

/// Decodes a record; returns "field: reason" on failure.
[[nodiscard]] std::optional<std::string> decode(std::string_view bytes, knowledge_save& out);

/// The save as the message the pipeline applies: source manual, from "agent:<savedBy>",
/// body = content, contactIds = [contactId].
[[nodiscard]] inbound_message as_message(const knowledge_save& s);

/// What save_knowledge answers for an applied save (also each save of a branch merge):
/// {"id", "outcome", "relatedIds", "contradictions"} as JSON text.
[[nodiscard]] std::string save_answer_json(const std::string& organization_id, const std::string& event_id,
                                           const resolution& r);

}  // namespace engram::schemas
