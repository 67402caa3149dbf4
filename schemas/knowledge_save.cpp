#include "schemas/knowledge_save.hpp"
#include "schemas/internal/json_fields.hpp"

#include <nlohmann/json.hpp>

namespace engram::schemas {

std::string to_json(const knowledge_save& s) {
  nlohmann::ordered_json j;
  j["eventId"] = s.event_id;
  j["organizationId"] = s.organization_id;
  j["savedAt"] = s.saved_at;
  j["savedBy"] = s.saved_by;
  j["type"] = to_string(s.type);
  j["title"] = s.title;
  j["content"] = s.content;
  j["confidence"] = s.confidence;
  if (!s.contact_id.empty())
    j["contactId"] = s.contact_id;
  if (!s.expires_at.empty())
    j["expiresAt"] = s.expires_at;
  j["tags"] = s.tags;
  if (!s.branch_id.empty()) {
    j["branchId"] = s.branch_id;
    j["branchTtlMs"] = s.branch_ttl_ms;
  }
  if (!s.embedding.empty())
    j["vector"] = detail::vector_json(s.embedding);
  return j.dump();
}

std::optional<std::string> decode(std::string_view bytes, knowledge_save& out) {
  auto j = nlohmann::json::parse(bytes, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return std::string("not a JSON object");
  // Byte limits: four bytes a character of save_knowledge's own limits; the content has
  // none of its own (the record is bounded as a whole by the broker's message size).
  constexpr std::size_t id = 256, time = 64, chars_256 = 4 * 256, unbounded = std::string::npos;
  const detail::fields f(j, "");
  std::string type;
  for (auto [k, dst, max, req] : {std::tuple{"eventId", &out.event_id, id, true},
                                  {"organizationId", &out.organization_id, id, true},
                                  {"savedAt", &out.saved_at, time, true},
                                  {"savedBy", &out.saved_by, id, false},
                                  {"type", &type, time, true},
                                  {"title", &out.title, std::size_t{4 * 200}, true},
                                  {"content", &out.content, unbounded, true},
                                  {"contactId", &out.contact_id, chars_256, false},
                                  {"expiresAt", &out.expires_at, time, false},
                                  {"branchId", &out.branch_id, chars_256, false}})
    if (auto e = f.text(k, *dst, max, req))
      return e;
  auto t = parse_entry_type(type);
  if (!t)
    return "/type: unknown entry type '" + type + "'";
  out.type = *t;
  auto ms = parse_rfc3339(out.saved_at);
  if (!ms)
    return std::string("/savedAt: not an RFC 3339 time");
  out.saved_at_ms = *ms;
  if (!out.expires_at.empty() && !parse_rfc3339(out.expires_at))
    return std::string("/expiresAt: not an RFC 3339 time");
  if (!j.contains("confidence") || !j["confidence"].is_number())
    return std::string("/confidence: required number");
  out.confidence = j["confidence"].get<double>();
  if (!(out.confidence >= 0 && out.confidence <= 1))
    return std::string("/confidence: must be within 0..1");
  if (!out.branch_id.empty()) {
    if (!j.contains("branchTtlMs") || !j["branchTtlMs"].is_number_integer() ||
        j["branchTtlMs"].get<std::int64_t>() <= 0)
      return std::string("/branchTtlMs: required positive integer with branchId");
    out.branch_ttl_ms = j["branchTtlMs"].get<std::int64_t>();
  }
  if (auto e = f.texts("tags", out.tags, 4 * 64, 20, false))
    return e;
  return f.vector("vector", out.embedding);
}

inbound_message as_message(const knowledge_save& s) {
  inbound_message m;
  m.event_id = s.event_id;
  m.organization_id = s.organization_id;
  m.source = source_type::manual;
  m.source_id = s.event_id;
  m.sent_at = s.saved_at;
  m.sent_at_ms = s.saved_at_ms;
  m.from.address = "agent:" + (s.saved_by.empty() ? std::string("anonymous") : s.saved_by);
  m.from.contact_id = s.contact_id;
  if (!s.contact_id.empty())
    m.contact_ids.push_back(s.contact_id);
  m.subject = s.title;
  m.body = s.content;
  return m;
}

std::string save_answer_json(const std::string& org, const std::string& event_id, const resolution& r) {
  nlohmann::ordered_json related = nlohmann::ordered_json::array(), contradictions = nlohmann::ordered_json::array();
  for (const auto& e : r.relations) {
    related.push_back(e.to);
    if (e.type == relation_type::contradicts)
      contradictions.push_back(e.to);
  }
  nlohmann::ordered_json j;
  j["id"] = r.outcome == save_outcome::merged ? r.merged_into : entry_id(org, event_id, 0);
  j["outcome"] = to_string(r.outcome);
  j["relatedIds"] = related;
  j["contradictions"] = contradictions;
  return j.dump();
}

}  // namespace engram::schemas
