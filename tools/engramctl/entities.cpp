#include "tools/engramctl/entities.hpp"

#include "query/entity_graph.hpp"
#include "storage/graph_store.hpp"

#include <nlohmann/json.hpp>

#include <limits>
#include <memory>

namespace engram::ctl {

std::unique_ptr<query::entity_reader> open_reader(const std::string& data_dir, std::string_view command,
                                                  std::ostream& err) {
  auto store = storage::open_graph_store({data_dir, /*read_only=*/true});
  if (!store) {
    err << command << ": " << store.error() << "\n";
    return nullptr;
  }
  return std::make_unique<query::entity_reader>(std::shared_ptr<const storage::graph_store>(std::move(*store)),
                                                std::map<std::string, std::string>{});
}

namespace {

using json = nlohmann::json;

json relation_json(const query::entity_reader& r, const std::string& org, const storage::entity_edge& e) {
  std::string from, to, type;
  r.store().entity_name(org, e.from_id, &from, &type);
  r.store().entity_name(org, e.to_id, &to, &type);
  json j{{"from", from}, {"to", to}, {"relationType", e.label}, {"weight", e.weight}, {"createdAt", e.created_at}};
  if (!e.attributes.empty())
    j["attributes"] = e.attributes;
  return j;
}

}  // namespace

int entities_search(const entities_options& o, std::ostream& out, std::ostream& err) {
  auto r = open_reader(o.data_dir, "entities", err);
  if (!r)
    return 1;
  for (const auto& [e, score] : r->search(o.organization, o.query, o.limit))
    out << json{{"name", e.name}, {"entity_type", e.entity_type}, {"score", score}}.dump() << "\n";
  return 0;
}

int entities_show(const entities_options& o, std::ostream& out, std::ostream& err) {
  auto r = open_reader(o.data_dir, "entities", err);
  if (!r)
    return 1;
  auto e = r->by_name(o.organization, o.query);
  if (!e) {
    err << "entities show: no entity '" << o.query << "' in organisation '" << o.organization << "'\n";
    return 1;
  }
  json rel = json::array();
  for (const auto& edge : r->edges(o.organization, e->id, query::edge_direction::both))
    rel.push_back(relation_json(*r, o.organization, edge));
  out << json{{"id", e->id},
              {"name", e->name},
              {"entity_type", e->entity_type},
              {"aliases", e->aliases},
              {"attributes", e->attributes},
              {"observations", e->observations},
              {"relations", rel}}
             .dump(2)
      << "\n";
  return 0;
}

int entities_export(const entities_options& o, std::ostream& out, std::ostream& err) {
  if (o.format != "jsonl" && o.format != "mermaid") {
    err << "entities export: --format must be jsonl or mermaid\n";
    return 2;
  }
  auto r = open_reader(o.data_dir, "entities", err);
  if (!r)
    return 1;
  if (o.format == "mermaid") {
    std::size_t shown = 0, omitted = 0;
    out << r->mermaid(o.organization, "", 0, std::numeric_limits<std::size_t>::max(), &shown, &omitted);
    return 0;
  }
  // The memory server's file: every entity line, then every relation line (each once, from its source).
  std::vector<std::string> ids;
  for (std::string after;;) {
    auto page = r->list(o.organization, after, 1000);
    if (page.empty())
      break;
    after = page.back().id;
    for (const auto& e : page) {
      out << json{{"type", "entity"}, {"name", e.name}, {"entityType", e.entity_type}, {"observations", e.observations}}
                 .dump()
          << "\n";
      ids.push_back(e.id);
    }
  }
  for (const auto& id : ids)
    for (const auto& edge : r->edges(o.organization, id, query::edge_direction::outgoing)) {
      auto j = relation_json(*r, o.organization, edge);
      out << json{{"type", "relation"}, {"from", j["from"]}, {"to", j["to"]}, {"relationType", j["relationType"]}}
                 .dump()
          << "\n";
    }
  return 0;
}

}  // namespace engram::ctl
