// The reference MCP memory server's tools (npm @modelcontextprotocol/server-memory) over the
// entity graph: the same input names and result shapes, so its users switch by changing a
// URL. Its semantics are kept (duplicate names and relations skipped, observations
// de-duplicated, a delete cascades to relations, deleting what is missing is a no-op,
// open_nodes returns the relations touching the named nodes), with three deliberate
// differences: a relation to a missing entity is an error; read_graph is paged (limit,
// cursor); search_nodes ranks its matches. Names are matched case- and space-insensitively,
// and relation types are stored as lower snake case (docs/entity-graph.md).
#include "mcp/internal/entity_tools.hpp"

#include "mcp/jsonrpc.hpp"
#include "base/text.hpp"
#include "knowledge/write_rules.hpp"
#include "schemas/tools.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

namespace engram::mcp {

namespace {

using query::entity_view;

json entity_json(const entity_view& e) {
  return {{"name", e.name}, {"entityType", e.entity_type}, {"observations", e.observations}};
}

std::vector<json> json_list(json array) {
  std::vector<json> out;
  for (auto& x : array)
    out.push_back(std::move(x));
  return out;
}

std::vector<std::string> strings(const json& a) {
  std::vector<std::string> out;
  for (const auto& x : a)
    out.push_back(x.get<std::string>());
  return out;
}

json card_json(const storage::entity_card& e) {
  return {{"name", e.name}, {"entityType", e.type}, {"observations", e.observations}};
}

/// The relations touching `cards`: those leaving one of them, then (when the cards hold
/// incoming edges) those reaching one from outside the list; each once, per entity by label
/// then other end. From memory: no RocksDB read.
json relations_of(const std::vector<storage::entity_card>& cards) {
  std::set<std::string_view> ids;
  for (const auto& c : cards)
    ids.insert(c.id);
  json out = json::array();
  for (const auto& c : cards)
    for (const auto& e : c.edges) {
      if (!e.outgoing && ids.count(e.other_id))
        continue;  // listed from its source already
      out.push_back({{"from", e.outgoing ? c.name : e.other_name},
                     {"to", e.outgoing ? e.other_name : c.name},
                     {"relationType", e.label}});
    }
  return out;
}

/// The cards of `ids` (in that order) cut to the answer's size cap, with their JSON.
std::pair<std::vector<storage::entity_card>, json> capped_cards(tool_context& ctx, const std::string& org,
                                                                const std::vector<std::string>& ids, bool incoming) {
  auto cards = ctx.entities().store().entity_cards(org, ids, incoming);
  std::vector<json> listed;
  listed.reserve(cards.size());
  for (const auto& c : cards)
    listed.push_back(card_json(c));
  auto entities = ctx.capped(std::move(listed));
  cards.resize(entities.size());
  return {std::move(cards), std::move(entities)};
}

void create_entities(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  schemas::entity_command c;
  c.op = schemas::entity_op::add_entities;
  c.merge_existing = false;
  for (const auto& e : a["entities"])
    c.entities.push_back({e["name"].get<std::string>(),
                          e["entityType"].get<std::string>(),
                          {},
                          strings(e.value("observations", json::array()))});
  entity_command(ctx, g, std::move(c), std::move(reply), [&ctx, org = g.organization_id](const json& r) {
    json created = json::array();
    for (const auto& item : r["entities"])
      if (item["created"].get<bool>())
        if (auto e = ctx.entities().by_id(org, item["id"].get<std::string>()))
          created.push_back(entity_json(*e));
    return tool_result({{"entities", created}});
  });
}

void create_relations(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  schemas::entity_command c;
  c.op = schemas::entity_op::relate;
  for (std::size_t i = 0; i < a["relations"].size(); ++i) {
    const auto& r = a["relations"][i];
    c.relations.push_back(
        {r["from"].get<std::string>(), r["to"].get<std::string>(), r["relationType"].get<std::string>()});
    for (const char* end : {"from", "to"})
      if (!ctx.entities().by_name(g.organization_id, r[end].get<std::string>()))
        return reply(tool_error("relations[" + std::to_string(i) + "]." + end + ": no entity '" +
                                r[end].get<std::string>() + "' in this organisation"));
  }
  entity_command(ctx, g, std::move(c), std::move(reply), [](const json& r) {
    json created = json::array();
    for (const auto& item : r["relations"])
      if (item["created"].get<bool>())
        created.push_back({{"from", item["from"]}, {"to", item["to"]}, {"relationType", item["relationType"]}});
    return tool_result({{"relations", created}});
  });
}

void add_observations(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  schemas::entity_command c;
  c.op = schemas::entity_op::add_observations;
  for (const auto& o : a["observations"]) {
    const auto name = o["entityName"].get<std::string>();
    if (!ctx.entities().by_name(g.organization_id, name))
      return reply(tool_error("Entity with name " + name + " not found"));
    c.observations.push_back({name, strings(o["contents"])});
  }
  entity_command(ctx, g, std::move(c), std::move(reply), [](const json& r) {
    return tool_result({{"results", r["results"]}});
  });
}

void delete_entities(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  schemas::entity_command c;
  c.op = schemas::entity_op::delete_entities;
  c.names = strings(a["entityNames"]);
  entity_command(ctx, g, std::move(c), std::move(reply), [](const json& r) {
    return tool_result({{"success", true}, {"message", "Entities deleted successfully"}, {"deleted", r["deleted"]}});
  });
}

void delete_observations(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  schemas::entity_command c;
  c.op = schemas::entity_op::delete_observations;
  for (const auto& d : a["deletions"])
    c.observations.push_back({d["entityName"].get<std::string>(), strings(d["observations"])});
  entity_command(ctx, g, std::move(c), std::move(reply), [](const json&) {
    return tool_result({{"success", true}, {"message", "Observations deleted successfully"}});
  });
}

void delete_relations(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  schemas::entity_command c;
  c.op = schemas::entity_op::delete_relations;
  for (const auto& r : a["relations"])
    c.relations.push_back(
        {r["from"].get<std::string>(), r["to"].get<std::string>(), r["relationType"].get<std::string>()});
  entity_command(ctx, g, std::move(c), std::move(reply), [](const json& r) {
    return tool_result({{"success", true}, {"message", "Relations deleted successfully"}, {"deleted", r["deleted"]}});
  });
}

void read_graph(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  const auto limit = a.contains("limit") ? a["limit"].get<std::size_t>() : std::size_t{100};
  const auto after = a.value("cursor", std::string());
  auto page = ctx.entities().list(g.organization_id, after, limit + 1);
  bool more = page.size() > limit;
  if (more)
    page.resize(limit);
  std::vector<json> listed;
  for (const auto& e : page)
    listed.push_back(entity_json(e));
  // The size cap: a page of large entities ends early, and the cursor says where.
  auto entities = ctx.capped(std::move(listed));
  if (entities.size() < page.size()) {
    page.resize(entities.size());
    more = true;
  }
  // Each relation once, on the page of its source.
  std::vector<std::string> ids;
  for (const auto& e : page)
    ids.push_back(e.id);
  const auto cards = ctx.entities().store().entity_cards(g.organization_id, ids, false);
  json out{{"entities", entities}, {"relations", ctx.capped(json_list(relations_of(cards)))}};
  if (more)
    out["nextCursor"] = page.back().id;
  reply(tool_result(std::move(out)));
}

/// How an entity matches a search (lower is better; 0: no match): exact name, name prefix,
/// a word of the name, within the name, its type, an observation.
int match_rank(const storage::entity_summary& e, const std::string& q) {
  const auto& name = e.name_lc;
  if (name == q)
    return 1;
  if (name.starts_with(q))
    return 2;
  auto at = name.find(q);
  if (at != std::string::npos) {
    for (; at != std::string::npos; at = name.find(q, at + 1))
      if (!std::isalnum(static_cast<unsigned char>(name[at - 1])))
        return 3;
    return 4;
  }
  if (e.type_lc.find(q) != std::string::npos)
    return 5;
  if (e.observations_lc.find(q) != std::string::npos)
    return 6;
  return 0;
}

void search_nodes(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  // Lower-cased as the index lowers what it holds (ASCII only; std::tolower would follow a
  // locale).
  const auto q = lower_ascii(a["query"].get<std::string>());
  const auto limit = a.contains("limit") ? a["limit"].get<std::size_t>() : std::size_t{100};
  // The `limit` best matches by (rank, name, id), kept in a max-heap as the candidates go by:
  // only those are copied out of the index.
  struct hit {
    int rank;
    std::string name, id;
  };
  auto key = [](const hit& h) { return std::tie(h.rank, h.name, h.id); };
  auto worse_first = [&](const hit& x, const hit& y) { return key(x) < key(y); };
  std::vector<hit> hits;
  std::size_t total = 0;
  ctx.entities().store().scan_entities_containing(g.organization_id, q, [&](const storage::entity_summary& e) {
    const int rank = match_rank(e, q);
    if (!rank)
      return;
    ++total;
    if (hits.size() < limit) {
      hits.push_back({rank, std::string(e.name), std::string(e.id)});
      std::push_heap(hits.begin(), hits.end(), worse_first);
    } else if (limit > 0 && std::tie(rank, e.name, e.id) < std::tuple<int, std::string_view, std::string_view>(
                                                               hits.front().rank, hits.front().name, hits.front().id)) {
      std::pop_heap(hits.begin(), hits.end(), worse_first);
      hits.back() = {rank, std::string(e.name), std::string(e.id)};
      std::push_heap(hits.begin(), hits.end(), worse_first);
    }
  });
  std::sort_heap(hits.begin(), hits.end(), worse_first);
  std::vector<std::string> ids;
  for (auto& h : hits)
    ids.push_back(std::move(h.id));
  // As the reference: the relations with at least one end in the results. The size cap
  // applies; "total" still counts every match.
  auto [cards, entities] = capped_cards(ctx, g.organization_id, ids, true);
  reply(tool_result({{"entities", std::move(entities)},
                     {"relations", ctx.capped(json_list(relations_of(cards)))},
                     {"total", total}}));
}

void open_nodes(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  const auto& store = ctx.entities().store();
  std::vector<std::string> ids;
  for (const auto& n : a["names"])
    if (auto id = store.entity_id(g.organization_id, n.get<std::string>());
        !id.empty() && std::find(ids.begin(), ids.end(), id) == ids.end())
      ids.push_back(std::move(id));
  auto [cards, entities] = capped_cards(ctx, g.organization_id, ids, true);
  reply(tool_result({{"entities", std::move(entities)}, {"relations", ctx.capped(json_list(relations_of(cards)))}}));
}

}  // namespace

void add_memory_tools(registry& r, tool_context& ctx) {
  add_tools(r, ctx, schemas::memory_tool_definitions(),
            {{"create_entities", "write", create_entities},
             {"create_relations", "write", create_relations},
             {"add_observations", "write", add_observations},
             {"delete_entities", "write", delete_entities},
             {"delete_observations", "write", delete_observations},
             {"delete_relations", "write", delete_relations},
             {"read_graph", "read", read_graph},
             {"search_nodes", "read", search_nodes},
             {"open_nodes", "read", open_nodes}});
}

}  // namespace engram::mcp
