#include "schemas/tools.hpp"

#include <nlohmann/json.hpp>

namespace engram::schemas {

namespace {

// An entry as the tools return it (docs/architecture.md).
#define ENGRAM_ENTRY_SCHEMA                                                                            \
  R"({"type": "object", "required": ["id", "entryType", "title", "content", "confidence", "status"],)" \
  R"( "properties": {"id": {"type": "string"}, "organizationId": {"type": "string"},)"                 \
  R"( "entryType": {"type": "string"}, "title": {"type": "string"}, "content": {"type": "string"},)"   \
  R"( "sourceType": {"type": "string"}, "sourceId": {"type": "string"},)"                              \
  R"( "contactIds": {"type": "array", "items": {"type": "string"}}, "threadId": {"type": "string"},)"  \
  R"( "confidence": {"type": "number"}, "effectiveConfidence": {"type": "number"},)"                   \
  R"( "lastValidatedAt": {"type": "string"}, "expiresAt": {"type": ["string", "null"]},)"              \
  R"( "dueAt": {"type": ["string", "null"]}, "tags": {"type": "array", "items": {"type": "string"}},)" \
  R"( "entities": {"type": "array"}, "relations": {"type": "array"}, "status": {"type": "string"},)"   \
  R"( "createdAt": {"type": "string"}, "updatedAt": {"type": "string"}, "score": {"type": "number"}}})"

// A recall or search result: an entry (with its sources and the passage it was read from as
// evidence) or a passage no entry covers.
#define ENGRAM_RESULT_SCHEMA                                                                                               \
  R"({"type": "object", "required": ["kind", "id", "eventId", "score"],)"                                                  \
  R"( "properties": {"kind": {"type": "string", "enum": ["entry", "passage"]}, "id": {"type": "string"},)"                 \
  R"( "eventId": {"type": "string"}, "score": {"type": "number"},)"                                                        \
  R"( "entryType": {"type": "string"}, "title": {"type": "string"}, "content": {"type": "string"},)"                       \
  R"( "text": {"type": "string"}, "sourceId": {"type": "string"}, "threadId": {"type": "string"},)"                        \
  R"( "sentAt": {"type": "string"}, "from": {"type": "object"}, "dates": {"type": "array", "items": {"type": "string"}},)" \
  R"( "occurredAt": {"type": "string"}, "evidence": {"type": "object"},)"                                                  \
  R"( "sources": {"type": "array", "items": {"type": "object", "required": ["eventId"],)"                                  \
  R"(   "properties": {"eventId": {"type": "string"}, "sourceId": {"type": "string"}, "sentAt": {"type": "string"}}}},)"   \
  R"( "sourceCount": {"type": "integer", "minimum": 1},)"                                                                  \
  R"( "confidence": {"type": "number"}, "effectiveConfidence": {"type": "number"}, "status": {"type": "string"},)"         \
  R"( "suspicious": {"type": "boolean"}},)"                                                                                \
  R"( "if": {"properties": {"kind": {"const": "entry"}}},)"                                                                \
  R"( "then": {"required": ["entryType", "title", "content", "confidence", "status", "sources"]},)"                        \
  R"( "else": {"required": ["text", "sentAt", "from"]}})"

constexpr std::string_view definitions = R"([
{"name": "save_knowledge",
 "description": "Save a piece of knowledge for this organisation. It goes through the same dedup and contradiction checks as knowledge read from mail, and the answer says whether it was created, merged into an existing entry, linked to one, or superseded one.",
 "inputSchema": {"type": "object", "additionalProperties": false,
   "required": ["type", "title", "content", "confidence"],
   "properties": {
     "type": {"type": "string", "enum": ["fact", "decision", "event", "preference", "goal", "relationship", "action_item"]},
     "title": {"type": "string", "minLength": 1, "maxLength": 200},
     "content": {"type": "string", "minLength": 1, "maxLength": 8000},
     "contactId": {"type": "string", "minLength": 1, "maxLength": 256},
     "confidence": {"type": "number", "minimum": 0, "maximum": 1},
     "expiresInDays": {"type": "integer", "minimum": 1, "maximum": 36500},
     "tags": {"type": "array", "maxItems": 20, "items": {"type": "string", "minLength": 1, "maxLength": 64}},
     "branchId": {"type": "string", "minLength": 1, "maxLength": 256, "description": "Save into this speculative branch: seen only by recalls with the same branchId until merge_branch."}}},
 "outputSchema": {"type": "object", "required": ["id", "outcome", "relatedIds", "contradictions"],
   "properties": {"id": {"type": "string"},
     "outcome": {"type": "string", "enum": ["created", "merged", "linked", "superseded"]},
     "relatedIds": {"type": "array", "items": {"type": "string"}},
     "contradictions": {"type": "array", "items": {"type": "string"}},
     "branchId": {"type": "string"}}}},
{"name": "recall_knowledge",
 "description": "Recall what is most relevant to a query: knowledge entries and the passages of messages they were read from (kind entry or passage; a passage no entry covers is returned as itself), meaning (sentence embeddings) and words (BM25) fused, organisation-wide knowledge plus the contact's (weighted up), a person the query names weighted up, dated matches first for a question that asks when. When nothing stored is close to the query, no results and a note saying so.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["query"],
   "properties": {
     "query": {"type": "string", "minLength": 1, "maxLength": 2000},
     "contactId": {"type": "string", "minLength": 1, "maxLength": 256},
     "type": {"type": "string", "enum": ["fact", "decision", "event", "preference", "goal", "relationship", "action_item"], "description": "Entries of this type only (no passages)."},
     "kinds": {"type": "array", "minItems": 1, "uniqueItems": true, "items": {"type": "string", "enum": ["entry", "passage"]}, "default": ["entry", "passage"]},
     "since": {"type": "string", "format": "date-time", "description": "Only what happened (its date, else when it was said) at or after this time (RFC 3339)."},
     "until": {"type": "string", "format": "date-time", "description": "Only what happened before this time (RFC 3339)."},
     "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5},
     "branchId": {"type": "string", "minLength": 1, "maxLength": 256, "description": "Also see this branch's own saves (never another branch's)."}}},
 "outputSchema": {"type": "object", "required": ["results"],
   "properties": {"results": {"type": "array", "items": )" ENGRAM_RESULT_SCHEMA R"(},
                  "note": {"type": "string", "description": "Why there are no results: nothing stored is close to the query."}}}},
{"name": "get_knowledge",
 "description": "One knowledge entry by id, with its relations and the message or save it came from.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["id"],
   "properties": {"id": {"type": "string", "minLength": 1, "maxLength": 256}}},
 "outputSchema": {"type": "object", "required": ["entry"],
   "properties": {"entry": )" ENGRAM_ENTRY_SCHEMA R"(, "source": {"type": ["object", "null"]}}}},
{"name": "search_knowledge",
 "description": "Full-text search (BM25 over stemmed words) of this organisation's knowledge entries (title and content) and message passages (kind entry or passage).",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["query"],
   "properties": {
     "query": {"type": "string", "minLength": 1, "maxLength": 2000},
     "type": {"type": "string", "enum": ["fact", "decision", "event", "preference", "goal", "relationship", "action_item"], "description": "Entries of this type only (no passages)."},
     "kinds": {"type": "array", "minItems": 1, "uniqueItems": true, "items": {"type": "string", "enum": ["entry", "passage"]}, "default": ["entry", "passage"]},
     "limit": {"type": "integer", "minimum": 1, "maximum": 25, "default": 10}}},
 "outputSchema": {"type": "object", "required": ["results"],
   "properties": {"results": {"type": "array", "items": )" ENGRAM_RESULT_SCHEMA R"(}}}},
{"name": "validate_knowledge",
 "description": "Confirm or reject an entry. approved moves its confidence half way to 1 and restarts its decay; rejected halves its confidence.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["id", "outcome"],
   "properties": {"id": {"type": "string", "minLength": 1, "maxLength": 256},
     "outcome": {"type": "string", "enum": ["approved", "rejected"]}}},
 "outputSchema": {"type": "object", "required": ["id", "outcome", "confidence", "effectiveConfidence", "lastValidatedAt"],
   "properties": {"id": {"type": "string"}, "outcome": {"type": "string"}, "confidence": {"type": "number"},
     "effectiveConfidence": {"type": "number"}, "lastValidatedAt": {"type": "string"}}}},
{"name": "merge_branch",
 "description": "Apply a branch's saves to the organisation's knowledge, in save order, through dedup and contradiction; returns each save's outcome. The branch is empty afterwards.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["branchId"],
   "properties": {"branchId": {"type": "string", "minLength": 1, "maxLength": 256}}},
 "outputSchema": {"type": "object", "required": ["branchId", "merged"],
   "properties": {"branchId": {"type": "string"},
     "merged": {"type": "array", "items": {"type": "object", "required": ["saveId", "id", "outcome"],
       "properties": {"saveId": {"type": "string"}, "id": {"type": "string"},
         "outcome": {"type": "string", "enum": ["created", "merged", "linked", "superseded", "applied before"]},
         "relatedIds": {"type": "array", "items": {"type": "string"}},
         "contradictions": {"type": "array", "items": {"type": "string"}}}}}}}},
{"name": "discard_branch",
 "description": "Drop a branch's saves: nothing of them reaches the organisation's knowledge.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["branchId"],
   "properties": {"branchId": {"type": "string", "minLength": 1, "maxLength": 256}}},
 "outputSchema": {"type": "object", "required": ["branchId", "discarded"],
   "properties": {"branchId": {"type": "string"}, "discarded": {"type": "integer"}}}},
{"name": "list_review_queue",
 "description": "Entries flagged because a newer entry contradicts them, each with the entry that contradicts it.",
 "inputSchema": {"type": "object", "additionalProperties": false,
   "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}}},
 "outputSchema": {"type": "object", "required": ["items"],
   "properties": {"items": {"type": "array", "items": {"type": "object", "required": ["entry"],
     "properties": {"entry": )" ENGRAM_ENTRY_SCHEMA R"(, "contradictedBy": {"type": ["object", "null"]}}}}}}},
{"name": "resolve_review",
 "description": "Resolve a flagged entry: keep the newer statement (the flagged one is superseded), the older (the newer is superseded), or both (both stay active).",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["id", "keep"],
   "properties": {"id": {"type": "string", "minLength": 1, "maxLength": 256},
     "keep": {"type": "string", "enum": ["newer", "older", "both"]}}},
 "outputSchema": {"type": "object", "required": ["id", "keep", "entries"],
   "properties": {"id": {"type": "string"}, "keep": {"type": "string"},
     "entries": {"type": "array", "items": )" ENGRAM_ENTRY_SCHEMA R"(}}}},
{"name": "forget_knowledge",
 "description": "Forget, for good. kind entry: one entry (its indexes, its vector, and what it did to other entries: one it superseded is active again, one it flagged is no longer flagged). kind message, thread or document: those messages (by eventId, threadId or documentId) and everything read from them; kind contact (by contactId or e-mail address; the admin scope): every message the person sent or that only they received, their entity, names and aliases, and their mentions in other messages' entries. Each makes the organisation what it would be had those messages never been applied (it is rebuilt from engram-log without them). kind organization: everything stored for this token's organisation (the admin scope). Written to engram-log, so a replay forgets the same; answers once applied, with counts of what was removed.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["kind"],
   "properties": {"kind": {"type": "string", "enum": ["entry", "message", "thread", "document", "contact", "organization"]},
     "id": {"type": "string", "minLength": 1, "maxLength": 256, "description": "The entry's id, the message's eventId, the threadId, the documentId, the contact's contactId or e-mail address; for kind organization, the token's own organisation (the default)."}}},
 "outputSchema": {"type": "object", "required": ["kind", "id", "forgotten"],
   "properties": {"kind": {"type": "string"}, "id": {"type": "string"},
     "forgotten": {"type": "object", "additionalProperties": {"type": "integer"}}}}}
])";

}  // namespace

std::string_view tool_definitions() { return definitions; }

std::set<std::string> server_tool_names() {
  std::set<std::string> out;
  for (auto defs : {tool_definitions(), entity_tool_definitions(), kag_tool_definitions(), memory_tool_definitions()})
    for (const auto& t : nlohmann::json::parse(defs))
      out.insert(t.value("name", std::string()));
  return out;
}

}  // namespace engram::schemas
