#include "knowledge/read_rules.hpp"

#include "knowledge/write_rules.hpp"
#include "schemas/inbound_message.hpp"
#include "schemas/knowledge.hpp"
#include "schemas/time.hpp"

#include <cmath>

namespace engram::knowledge {

double effective_confidence(const stored_entry& e, std::int64_t at_ms, const read_policy& p) {
  auto validated = schemas::parse_rfc3339(e.last_validated_at);
  if (!validated)
    return e.confidence;
  return schemas::effective_confidence(e.confidence, *validated, at_ms,
                                       p.decay.half_life_days[static_cast<std::size_t>(e.type)]);
}

bool visible(const stored_entry& e, const std::string& now) {
  return e.status != entry_status::superseded && (e.expires_at.empty() || e.expires_at > now);
}

bool recallable(const stored_entry& e, std::int64_t at_ms, const read_policy& p) {
  return visible(e, schemas::format_rfc3339(at_ms)) && effective_confidence(e, at_ms, p) >= p.decay.hide_below;
}

json present(const stored_entry& entry, std::int64_t at_ms, const read_policy& p) {
  const json doc = to_json(entry);
  json e = json::object();
  for (const char* k : {"id",        "organizationId", "entryType", "title",        "content",         "sourceType",
                        "sourceId",  "contactIds",     "threadId",  "confidence",   "lastValidatedAt", "expiresAt",
                        "dueAt",     "tags",           "entities",  "relations",    "status",          "createdAt",
                        "updatedAt", "branchId",       "review",    "supersededBy", "reminderSentAt",  "suspicious"})
    if (doc.contains(k))
      e[k] = doc[k];
  if (entry.content.size() > max_presented_content)
    e["content"] = entry.content.substr(0, max_presented_content);
  e["effectiveConfidence"] = std::round(effective_confidence(entry, at_ms, p) * 1e6) / 1e6;
  return e;
}

bool branch_alive(std::int64_t last_save_ms, std::int64_t at_ms, const read_policy& p) {
  return last_save_ms + p.branch_ttl_ms >= at_ms;
}

stored_entry branch_entry(const schemas::knowledge_save& s) {
  const schemas::entry en{.type = s.type,
                          .title = s.title,
                          .content = s.content,
                          .confidence = s.confidence,
                          .tags = s.tags,
                          .expires_at = s.expires_at};
  auto e = new_entry(schemas::entry_id(s.organization_id, s.event_id, 0), schemas::as_message(s), en, {}, "", nullptr);
  e.branch_id = s.branch_id;
  return e;
}

}  // namespace engram::knowledge
