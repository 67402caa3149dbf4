#include "mcp/internal/present.hpp"

#include <utility>

namespace engram::mcp {

json present_entry(const query::query_service& q, const knowledge::stored_entry& e) {
  return knowledge::present(e, q.now(), q.policy());
}

namespace {

json present_passage(const query::passage_hit& p, double score) {
  json out{{"kind", "passage"},
           {"id", p.id},
           {"text", p.text},
           {"eventId", p.event_id},
           {"sourceType", p.source_type},
           {"sourceId", p.source_id},
           {"threadId", p.thread_id},
           {"sentAt", p.sent_at},
           {"from", {{"name", p.from.name}, {"address", p.from.address}, {"contactId", p.from.contact_id}}},
           {"score", score}};
  if (!p.dates.empty())
    out["dates"] = p.dates;
  if (p.suspicious)
    out["suspicious"] = true;
  return out;
}

}  // namespace

json present_hit(const query::query_service& q, const query::hit& h) {
  if (h.what == query::hit::kind::passage)
    return h.passage ? present_passage(*h.passage, h.score) : json::object();
  const auto& doc = h.entry;
  auto e = knowledge::present(doc, h.at_ms, q.policy());
  e["kind"] = "entry";
  e["eventId"] = doc.event_id;
  json sources = json::array();
  for (std::size_t i = 0; i < doc.sources.size(); ++i)
    sources.push_back({{"eventId", doc.sources[i].event_id},
                       {"sourceId", doc.sources[i].source_id},
                       {"sentAt", i < h.sources_sent_at.size() ? h.sources_sent_at[i] : std::string()}});
  e["sources"] = std::move(sources);
  // An entry keeps its first source and its latest (knowledge::kept_sources); this counts all.
  e["sourceCount"] = doc.sources.size() + doc.sources_moved;
  if (!doc.sig.dates.empty()) {
    e["dates"] = doc.sig.dates;
    if (doc.type == schemas::entry_type::event)
      e["occurredAt"] = doc.sig.dates.front().substr(0, doc.sig.dates.front().find('/'));
  }
  if (h.passage)
    e["evidence"] = {{"passageId", h.passage->id}, {"text", h.passage->text}};
  e["score"] = h.score;
  return e;
}

std::vector<json> present_hits(const query::query_service& q, const std::vector<query::hit>& hits) {
  std::vector<json> out;
  out.reserve(hits.size());
  for (const auto& h : hits)
    out.push_back(present_hit(q, h));
  return out;
}

json present_found(const query::query_service& q, const query::entry_with_source& f) {
  json source = f.source.empty() ? json(nullptr) : json::parse(f.source, nullptr, false);
  if (source.is_discarded())
    source = nullptr;
  return json{{"entry", present_entry(q, f.entry)}, {"source", std::move(source)}};
}

std::vector<json> present_review(const query::query_service& q, const std::vector<query::review_item>& items) {
  const auto at = q.now();
  std::vector<json> out;
  out.reserve(items.size());
  for (const auto& i : items)
    out.push_back({{"entry", knowledge::present(i.entry, at, q.policy())},
                   {"contradictedBy",
                    i.contradicted_by ? knowledge::present(*i.contradicted_by, at, q.policy()) : json(nullptr)}});
  return out;
}

}  // namespace engram::mcp
