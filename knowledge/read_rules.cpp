#include "knowledge/read_rules.hpp"

#include "schemas/inbound_message.hpp"
#include "schemas/knowledge.hpp"
#include "schemas/time.hpp"

#include <cmath>

namespace engram::knowledge {

double effective_confidence(const json& doc, std::int64_t at_ms, const read_policy& p) {
  const double c = doc.value("confidence", 0.0);
  auto type = schemas::parse_entry_type(doc.value("entryType", ""));
  auto validated = schemas::parse_rfc3339(doc.value("lastValidatedAt", ""));
  if (!type || !validated)
    return c;
  return schemas::effective_confidence(c, *validated, at_ms, p.decay.half_life_days[static_cast<std::size_t>(*type)]);
}

bool visible(const json& doc, const std::string& now) {
  if (doc.value("status", "active") == "superseded")
    return false;
  return !(doc.contains("expiresAt") && doc["expiresAt"].is_string() && doc["expiresAt"].get<std::string>() <= now);
}

bool recallable(const json& doc, std::int64_t at_ms, const read_policy& p) {
  return visible(doc, schemas::format_rfc3339(at_ms)) && effective_confidence(doc, at_ms, p) >= p.decay.hide_below;
}

json present(const json& doc, std::int64_t at_ms, const read_policy& p) {
  json e = json::object();
  for (const char* k : {"id", "organizationId", "entryType", "title", "content", "sourceType", "sourceId", "contactIds",
                        "threadId", "confidence", "lastValidatedAt", "expiresAt", "dueAt", "tags", "entities",
                        "relations", "status", "createdAt", "updatedAt", "branchId", "review", "supersededBy",
                        "reminderSentAt", "suspicious"})
    if (doc.contains(k))
      e[k] = doc[k];
  if (e.contains("content") && e["content"].is_string() && e["content"].get<std::string>().size() > max_presented_content)
    e["content"] = e["content"].get<std::string>().substr(0, max_presented_content);
  e["effectiveConfidence"] = std::round(effective_confidence(doc, at_ms, p) * 1e6) / 1e6;
  return e;
}

bool branch_alive(std::int64_t last_save_ms, std::int64_t at_ms, const read_policy& p) {
  return last_save_ms + p.branch_ttl_ms >= at_ms;
}

json branch_entry(const schemas::knowledge_save& s) {
  json contacts = json::array();
  if (!s.contact_id.empty())
    contacts.push_back(s.contact_id);
  return {{"id", schemas::entry_id(s.organization_id, s.event_id, 0)},
          {"organizationId", s.organization_id},
          {"entryType", schemas::to_string(s.type)},
          {"title", s.title},
          {"content", s.content},
          {"sourceType", "manual"},
          {"sourceId", s.event_id},
          {"contactIds", contacts},
          {"confidence", s.confidence},
          {"lastValidatedAt", s.saved_at},
          {"expiresAt", s.expires_at.empty() ? json(nullptr) : json(s.expires_at)},
          {"tags", s.tags},
          {"relations", json::array()},
          {"status", "active"},
          {"branchId", s.branch_id},
          {"createdAt", s.saved_at},
          {"updatedAt", s.saved_at}};
}

}  // namespace engram::knowledge
