// The /v1/stats document: per organisation what the store holds, per partition of engram-log
// where applying stands, and the gaps met (docs/operations.md).
#include "actors/engine/internal/engine_impl.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace engram::engine {

using json = nlohmann::json;

json engine::impl::organization_rows(const std::string& only) {
  auto& m = *this;
  // Documents (ingest-docs) per organisation: how many, their chunks applied, refused and
  // pending, and what extraction read from them.
  std::map<std::string, json> documents;
  for (const auto& d : m.store->documents(only)) {
    auto& j = documents[d.organization_id];
    if (j.is_null())
      j = {{"documents", 0},    {"chunks", 0},   {"chunksDone", 0}, {"chunksPending", 0},
           {"chunksFailed", 0}, {"entities", 0}, {"relations", 0}};
    j["documents"] = j["documents"].get<std::uint64_t>() + 1;
    j["chunks"] = j["chunks"].get<std::uint64_t>() + d.chunks;
    j["chunksDone"] = j["chunksDone"].get<std::uint64_t>() + d.done;
    j["chunksFailed"] = j["chunksFailed"].get<std::uint64_t>() + d.failed;
    j["chunksPending"] = j["chunksPending"].get<std::uint64_t>() + d.pending();
    j["entities"] = j["entities"].get<std::uint64_t>() + d.entities;
    j["relations"] = j["relations"].get<std::uint64_t>() + d.relations;
  }
  json orgs = json::array();
  for (const auto& s : m.store->stats()) {
    if (!only.empty() && s.organization_id != only)
      continue;
    // Clustered: the organisations of the partitions assigned here (the store may keep
    // others, from partitions it held before, until they come back).
    if (m.members &&
        m.status.state(m.members->partition_of(s.organization_id)).first == actors::partition_state::not_owned)
      continue;
    json by_type = json::object();
    for (auto t : schemas::all_entry_types)
      if (auto n = m.store->entries_of_type(s.organization_id, t).size())
        by_type[std::string(schemas::to_string(t))] = n;
    json row{{"organizationId", s.organization_id},
             {"events", s.events},
             {"contacts", s.contacts},
             {"entities", s.entities},
             {"entries", s.entries},
             {"entriesByType", std::move(by_type)},
             {"relations", s.relations},
             {"passages", s.passages},
             {"bundles", m.store->kg_bundles(s.organization_id).size()}};
    if (auto d = documents.find(s.organization_id); d != documents.end())
      row["documents"] = d->second;
    orgs.push_back(std::move(row));
  }
  return orgs;
}

json engine::impl::partition_rows() {
  auto& m = *this;
  // Every partition with a stored offset or assigned now.
  json parts = json::array();
  auto live = m.status.partitions();
  auto stored = m.store->offsets(m.cfg.kafka.topics.log);
  std::set<std::int32_t> ids;
  for (const auto& [p, _] : stored)
    ids.insert(p);
  for (const auto& [p, _] : live)
    ids.insert(p);
  for (auto p : ids) {
    // While assigned, the consumer's view is current (a stored offset may be from another
    // cluster); otherwise the stored one.
    auto st = stored.find(p);
    auto it = live.find(p);
    std::int64_t applied = it != live.end() ? it->second.next_offset : st != stored.end() ? st->second.next_offset : 0;
    json row{{"topic", m.cfg.kafka.topics.log}, {"partition", p}, {"appliedOffset", applied}};
    if (it != live.end()) {
      row["highWatermark"] = it->second.high_watermark;
      row["lag"] = std::max<std::int64_t>(0, it->second.high_watermark - applied);
      // Where reading started when it was assigned here, and the records read since (a
      // standby taking over reads only what it had not followed yet).
      row["assignedAt"] = it->second.assigned_at;
      std::uint64_t read = 0;
      for (const auto& [_, n] : it->second.kinds)
        read += n;
      row["readSinceAssignment"] = read;
    }
    parts.push_back(std::move(row));
  }
  return parts;
}

json engine::impl::gap_rows() {
  auto& m = *this;
  // Gaps: partitions stopped at records deleted before they were read, and gaps an operator
  // accepted (recorded in the store).
  json gaps_json = json::array();
  for (const auto& g : m.gaps.open())
    gaps_json.push_back({{"topic", g.topic},
                         {"partition", g.partition},
                         {"from", g.from},
                         {"to", g.to},
                         {"lost", g.lost()},
                         {"status", "stopped"}});
  for (const auto& g : m.store->gaps())
    gaps_json.push_back({{"topic", g.topic},
                         {"partition", g.partition},
                         {"from", g.from},
                         {"to", g.to},
                         {"lost", g.to - g.from},
                         {"status", "accepted"}});
  return gaps_json;
}

std::string engine::impl::stats(const mcp::grant& g) {
  auto& m = *this;
  json orgs = m.organization_rows(g.allows("admin") ? std::string() : g.organization_id);
  json parts = m.partition_rows();
  json gaps_json = m.gap_rows();
  auto [dups, skipped] = m.store->redelivery_counts();
  const auto by_class = m.metrics.messages_by_class();
  json doc{{"organizations", orgs},
           {"partitions", parts},
           {"duplicatesSkipped", dups},
           {"recordsSkipped", skipped},
           {"deadLettered", m.metrics.dead_lettered()},
           {"messagesByClass", {{"person", by_class[0]}, {"bulk", by_class[1]}, {"spam", by_class[2]}}},
           {"logGaps", gaps_json},
           {"ready", m.readiness().first}};
  if (g.allows("admin")) {  // the engine's own figures, for operators
    json actors = json::object();
    for (const auto& [name, f] : m.metrics.actors())
      actors[name] = {
          {"messages", f.messages}, {"busySeconds", f.busy_seconds}, {"mailbox", f.mailbox}, {"restarts", f.restarts}};
    doc["actors"] = std::move(actors);
  }
  return doc.dump();
}

}  // namespace engram::engine
