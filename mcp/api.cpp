#include "mcp/internal/api.hpp"
#include "mcp/internal/entity_tools.hpp"
#include "mcp/internal/present.hpp"
#include "mcp/jsonrpc.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <set>

namespace engram::mcp {

namespace {

using query_list = std::vector<std::pair<std::string, std::string>>;

/// "a,b,,c" -> {"a", "b", "", "c"}; "" -> {}.

net::response error(int status, const std::string& message) { return json_response(status, {{"error", message}}); }

/// A tool error that names something this organisation does not have ("id: no entry 'x' in
/// this organisation", "name: no entity 'y' ...").
bool not_found(const std::string& message) {
  return message.find(": no entry '") != std::string::npos || message.find(": no entity '") != std::string::npos;
}

/// The API's answer for a tool's: its structured content, or {"error"} with 400 (404 for an
/// unknown id or name, 403 without the scope).
net::response answer_of(call_outcome o) {
  switch (o.kind) {
    case call_outcome::unknown_tool: return error(404, o.message);
    case call_outcome::forbidden: return error(403, o.message);
    case call_outcome::answered: break;
  }
  if (o.result.value("isError", false)) {
    std::string text = "the tool failed";
    if (o.result.contains("content") && o.result["content"].is_array() && !o.result["content"].empty())
      text = o.result["content"][0].value("text", text);
    return error(not_found(text) ? 404 : 400, text);
  }
  return json_response(200, o.result.value("structuredContent", json::object()));
}

struct call {
  api_context& ctx;
  const grant& g;
  const net::request& req;
  std::map<std::string, std::string> path;
  query_list query;
  net::responder respond;

  [[nodiscard]] const std::string& org() const { return g.organization_id; }

  /// The query parameter `name` ("" when absent).
  [[nodiscard]] std::string param(const std::string& name) const {
    for (const auto& [k, v] : query)
      if (k == name)
        return v;
    return {};
  }

  /// An integer query parameter within [lo, hi] (`fallback` when absent); an error names it.
  std::optional<std::size_t> bounded(const std::string& name, std::size_t lo, std::size_t hi, std::size_t fallback) {
    const auto v = param(name);
    if (v.empty())
      return fallback;
    std::size_t n = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size() || n < lo || n > hi) {
      respond(error(400, name + ": must be an integer within " + std::to_string(lo) + ".." + std::to_string(hi)));
      return std::nullopt;
    }
    return n;
  }
};

/// A route through a tool: query parameters, path parameters and (POST) the body's members
/// become its arguments.
void through_tool(call& c, const std::string& tool) {
  auto t = c.ctx.tool_registry().find(tool, c.g);
  if (!t)
    return c.respond(error(404, "unknown tool: " + tool));
  json arguments = json::object();
  if (auto bad = arguments_from_query(c.query, t->definition.value("inputSchema", json::object()), arguments))
    return c.respond(error(400, *bad));
  for (const auto& [k, v] : c.path)
    arguments[k] = v;
  if (c.req.method == "POST" && !c.req.body.empty()) {
    auto body = json::parse(c.req.body, nullptr, false);
    if (!body.is_object())
      return c.respond(error(400, "body: must be a JSON object"));
    for (auto& [k, v] : body.items()) {
      if (arguments.contains(k))
        return c.respond(error(400, k + ": given twice (path or query, and body)"));
      arguments[k] = v;
    }
  }
  c.ctx.invoke(c.g, tool, std::move(arguments),
               [respond = c.respond](call_outcome o) { respond(answer_of(std::move(o))); });
}

bool can_read(call& c) {
  if (c.g.allows("read"))
    return true;
  c.respond(error(403, "this token lacks the read scope"));
  return false;
}

json entity_json(const query::entity_view& e) {
  json resolved = json::array();
  for (const auto& r : e.resolutions)
    resolved.push_back(resolution_json(r));
  return {{"id", e.id},
          {"name", e.name},
          {"type", e.entity_type},
          {"aliases", e.aliases},
          {"attributes", e.attributes},
          {"observations", e.observations},
          {"resolved", resolved}};
}

/// GET /v1/whoami: the organisation and scopes of the token (the console's login check).
void whoami(call& c) {
  c.respond(json_response(200, {{"organizationId", c.org()},
                                {"name", c.g.name},
                                {"scopes", c.g.scopes},
                                {"canRead", c.g.allows("read")},
                                {"canWrite", c.g.allows("write")},
                                {"admin", c.g.allows("admin")}}));
}

/// GET /v1/entities/{name}: the entity, its degree and the entries that mention it.
void entity_page(call& c) {
  if (!can_read(c))
    return;
  auto limit = c.bounded("limit", 1, 200, 50);
  if (!limit)
    return;
  const auto& reader = c.ctx.entities();
  auto e = reader.by_name(c.org(), c.path["name"]);
  if (!e)
    return c.respond(error(404, "name: no entity '" + c.path["name"] + "' in this organisation"));
  json out = entity_json(*e);
  out["edges"] = c.ctx.store().entity_neighbours(c.org(), e->id, true, true).size();
  json entries = json::array();
  for (const auto& id : c.ctx.store().entity_entries(c.org(), e->id, *limit))
    if (auto doc = c.ctx.query().load(c.org(), id)) {
      const auto shown = present_entry(c.ctx.query(), *doc);
      entries.push_back({{"id", id},
                         {"entryType", shown.value("entryType", "")},
                         {"title", shown.value("title", "")},
                         {"status", shown.value("status", "")},
                         {"effectiveConfidence", shown.value("effectiveConfidence", 0.0)}});
    }
  out["entries"] = std::move(entries);
  c.respond(json_response(200, out));
}

/// GET /v1/entities/{name}/neighbourhood: the entities within `depth` hops (1-3), at most
/// `limit` (1-500), edge labels and an entity type to keep, the edges between the shown nodes
/// with their validity, and per node how many of its neighbours are not shown.
void neighbourhood(call& c) {
  if (!can_read(c))
    return;
  auto depth = c.bounded("depth", 1, 3, 1);
  if (!depth)
    return;
  auto limit = c.bounded("limit", 1, 500, 100);
  if (!limit)
    return;
  std::set<std::string> labels;
  for (auto& label : split_commas(c.param("edge_types")))
    if (!label.empty())
      labels.insert(std::move(label));
  const auto type = c.param("entity_type");
  const auto& reader = c.ctx.entities();
  auto start = reader.by_name(c.org(), c.path["name"]);
  if (!start)
    return c.respond(error(404, "name: no entity '" + c.path["name"] + "' in this organisation"));
  bool truncated = false;
  auto walked = reader.traverse(c.org(), start->id, *depth, labels, query::edge_direction::both, *limit, &truncated);
  std::map<std::string, std::size_t> shown;  // id -> index in nodes
  json nodes = json::array();
  std::size_t filtered = 0;
  for (const auto& n : walked) {
    if (!type.empty() && n.entity.id != start->id && reader.type_match(type, n.entity.entity_type) <= 0) {
      ++filtered;
      continue;
    }
    shown[n.entity.id] = nodes.size();
    nodes.push_back({{"id", n.entity.id},
                     {"name", n.entity.name},
                     {"type", n.entity.entity_type},
                     {"distance", n.distance},
                     {"hidden", 0}});
  }
  json edges = json::array();
  const auto& store = c.ctx.store();
  for (const auto& [id, index] : shown) {
    std::size_t hidden = 0;
    for (const auto& nb : store.entity_neighbours(c.org(), id, true, true))
      hidden += !shown.count(nb.other_id);
    nodes[index]["hidden"] = hidden;
    for (const auto& e : reader.edges(c.org(), id, query::edge_direction::outgoing)) {
      if (!shown.count(e.to_id) || (!labels.empty() && !labels.count(e.label)))
        continue;
      json edge{{"from", e.from_id}, {"to", e.to_id}, {"label", e.label}, {"weight", e.weight}};
      for (const char* k : {"validFrom", "validTo", "role", "entry", "message", "source"})
        if (auto it = e.attributes.find(k); it != e.attributes.end())
          edge[k] = it->second;
      edges.push_back(std::move(edge));
    }
  }
  json out{{"start", start->id},
           {"nodes", std::move(nodes)},
           {"edges", std::move(edges)},
           {"truncated", truncated},
           {"filteredByType", filtered}};
  if (truncated)
    out["note"] = "more entities are within " + std::to_string(*depth) + " hops than the limit of " +
                  std::to_string(*limit) + "; each node's \"hidden\" counts its neighbours not shown";
  c.respond(json_response(200, out));
}

/// GET /v1/entries/{id}: what get_knowledge answers, and the entry's history: the messages
/// merged into it, its validations, merges and relations as stored.
void entry_page(call& c) {
  if (!can_read(c))
    return;
  const auto& id = c.path["id"];
  auto found = c.ctx.query().get(c.org(), id);
  if (!found)
    return c.respond(error(404, "id: no entry '" + id + "' in this organisation"));
  auto got = present_found(c.ctx.query(), *found);
  const json stored = knowledge::to_json(found->entry);
  json history = json::object();
  for (const char* k :
       {"sources", "sourcesMoved", "validations", "merges", "lastMergeReason", "supersededBy", "review", "outcome",
        "outcomeReason", "eventId", "author", "extractor", "polarity", "subject", "slot", "value"})
    if (stored.contains(k))
      history[k] = stored[k];
  got["history"] = std::move(history);
  c.respond(json_response(200, got));
}

/// GET /v1/entries/{id}/sources?offset=&limit=: every message the entry was read from, oldest
/// first, a page at a time: the record's first source, the ones moved out of the record
/// (storage's entry_sources), then the record's latest. "total" counts them all; "next" is the
/// offset of the next page when there is one.
void entry_sources(call& c) {
  if (!can_read(c))
    return;
  const auto offset = c.bounded("offset", 0, std::numeric_limits<std::uint32_t>::max(), 0);
  if (!offset)
    return;
  const auto limit = c.bounded("limit", 1, 500, 100);
  if (!limit)
    return;
  const auto& id = c.path["id"];
  auto found = c.ctx.query().get(c.org(), id);
  if (!found)
    return c.respond(error(404, "id: no entry '" + id + "' in this organisation"));
  const auto& kept = found->entry.sources;
  // Positions: 0 the first kept, 1..moved the moved rows, then kept[1..].
  const std::uint64_t moved = kept.empty() ? 0 : found->entry.sources_moved;
  const std::uint64_t total = kept.size() + moved, end = std::min<std::uint64_t>(total, *offset + *limit);
  std::vector<knowledge::source_ref> page;
  std::uint64_t i = *offset;
  if (i == 0 && i < end)
    page.push_back(kept[i++]);
  if (i <= moved && i < end) {
    const std::uint64_t want = std::min(end, moved + 1) - i;
    auto rows = c.ctx.store().moved_sources(c.org(), id, i - 1, want);
    if (!rows)
      return c.respond(error(500, "the entry's moved sources cannot be read: " + storage::to_string(rows.error())));
    if (rows->size() != want)
      return c.respond(
          error(500, "the entry's record counts " + std::to_string(moved) + " moved sources; the store holds fewer"));
    for (const auto& raw : *rows) {
      knowledge::source_ref src;
      if (auto why = knowledge::decode(raw, src))
        return c.respond(error(500, "a moved source of the entry is not a source record: " + *why));
      page.push_back(std::move(src));
    }
    i += want;
  }
  for (; i < end; ++i)
    page.push_back(kept[i - moved]);
  json out{{"id", id}, {"total", total}, {"offset", *offset}, {"sources", knowledge::to_json(page)}};
  if (end < total)
    out["next"] = end;
  c.respond(json_response(200, out));
}

/// GET /v1/messages/{id}: a stored message (or save) of this organisation.
void message(call& c) {
  if (!can_read(c))
    return;
  auto m = c.ctx.store().get_message(c.org(), c.path["id"]);
  if (!m)
    return c.respond(error(404, "id: no message '" + c.path["id"] + "' in this organisation"));
  auto j = json::parse(*m, nullptr, false);
  c.respond(j.is_discarded() ? error(500, "the stored message is not JSON") : json_response(200, j));
}

/// GET /v1/documents: each document with its chunks applied, pending and refused (the first
/// refusal's reason), and what was read from it.
void documents(call& c) {
  if (!can_read(c))
    return;
  json out = json::array();
  for (const auto& d : c.ctx.store().documents(c.org()))
    out.push_back({{"id", d.id},
                   {"title", d.title},
                   {"chunks", d.chunks},
                   {"done", d.done},
                   {"pending", d.pending()},
                   {"failed", d.failed},
                   {"error", d.error},
                   {"entries", d.entries},
                   {"entities", d.entities},
                   {"relations", d.relations}});
  c.respond(json_response(200, {{"documents", std::move(out)}}));
}

/// GET /v1/bundles: the organisation's bundles (as GET /v1/kg/bundles) and the tools this
/// token is given from them.
void bundles(call& c) {
  if (!can_read(c))
    return;
  json out = bundles_json(c.ctx.store(), c.org(), "");
  json generated = json::array();
  const auto& tools = c.ctx.tool_registry();
  for (const auto& t : tools.list(c.g)) {
    auto name = t.value("name", "");
    auto found = tools.find(name, c.g);
    if (!found || found->owner.empty())
      continue;
    // owner: "kg\0<org>\0<bundle>"
    const auto& owner = found->owner;
    const auto last = owner.rfind('\0');
    generated.push_back({{"name", name},
                         {"bundle", last == std::string::npos ? std::string() : owner.substr(last + 1)},
                         {"scope", found->scope}});
  }
  out["tools"] = std::move(generated);
  c.respond(json_response(200, out));
}

/// GET /v1/action-items: open action items, by due date (undated last), at most `limit`.
void action_items(call& c) {
  if (!can_read(c))
    return;
  auto limit = c.bounded("limit", 1, 500, 100);
  if (!limit)
    return;
  std::vector<json> items;
  for (const auto& id : c.ctx.store().entries_of_type(c.org(), schemas::entry_type::action_item))
    if (auto doc = c.ctx.query().load(c.org(), id); doc && doc->status == knowledge::entry_status::active)
      items.push_back(present_entry(c.ctx.query(), *doc));
  std::stable_sort(items.begin(), items.end(), [](const json& a, const json& b) {
    auto due = [](const json& j) {
      return j.contains("dueAt") && j["dueAt"].is_string() ? j["dueAt"].get<std::string>() : std::string("~");
    };
    return due(a) < due(b);
  });
  const auto total = items.size();
  if (items.size() > *limit)
    items.resize(*limit);
  c.respond(json_response(200, {{"items", items}, {"total", total}}));
}

/// GET /v1/events: what the overview listens to.
void events(call& c) {
  if (!can_read(c))
    return;
  c.ctx.open_events(c.g, std::move(c.respond));
}

/// GET /v1/audit: the organisation's forgets (who, when, what kind), for the admin scope.
void audit(call& c) {
  if (!c.g.allows("admin"))
    return c.respond(error(403, "this token lacks the admin scope"));
  json rows = json::array();
  for (const auto& row : c.ctx.store().forget_audit(c.org()))
    rows.push_back(json::parse(row, nullptr, false));
  c.respond(json_response(200, {{"forgets", std::move(rows)}}));
}

using handler = void (*)(call&);

struct route {
  const char* method;
  /// Segments after /v1/, "{x}" a parameter.
  std::vector<std::string> pattern;
  /// A tool route's tool, else null and `fn` answers.
  const char* tool;
  handler fn;
};

const std::vector<route>& routes() {
  static const std::vector<route> table{
      {"GET", {"whoami"}, nullptr, whoami},
      {"GET", {"events"}, nullptr, events},
      {"GET", {"recall"}, "recall_knowledge", nullptr},
      {"GET", {"search"}, "search_knowledge", nullptr},
      {"GET", {"entries", "{id}"}, nullptr, entry_page},
      {"GET", {"entries", "{id}", "sources"}, nullptr, entry_sources},
      {"POST", {"entries", "{id}", "validate"}, "validate_knowledge", nullptr},
      {"GET", {"review"}, "list_review_queue", nullptr},
      {"POST", {"review", "{id}", "resolve"}, "resolve_review", nullptr},
      {"GET", {"entities"}, "entity_search", nullptr},
      {"GET", {"entities", "{name}"}, nullptr, entity_page},
      {"GET", {"entities", "{name}", "neighbourhood"}, nullptr, neighbourhood},
      {"GET", {"path"}, "graph_path", nullptr},
      {"GET", {"messages", "{id}"}, nullptr, message},
      {"GET", {"documents"}, nullptr, documents},
      {"GET", {"bundles"}, nullptr, bundles},
      {"GET", {"action-items"}, nullptr, action_items},
      {"GET", {"audit"}, nullptr, audit},
  };
  return table;
}

}  // namespace

void serve_api(api_context& ctx, const grant& g, const net::request& req, net::responder respond) {
  std::vector<std::string> segments;
  query_list query;
  split_target(req.target, segments, query);
  if (segments.empty() || segments[0] != "v1")
    return respond(error(404, "no such endpoint: " + req.target.substr(0, req.target.find('?'))));
  segments.erase(segments.begin());
  std::vector<std::string> allowed;
  for (const auto& r : routes()) {
    if (r.pattern.size() != segments.size())
      continue;
    std::map<std::string, std::string> params;
    bool match = true;
    for (std::size_t i = 0; i < segments.size() && match; ++i) {
      const auto& p = r.pattern[i];
      if (p.size() > 2 && p.front() == '{' && p.back() == '}')
        params[p.substr(1, p.size() - 2)] = segments[i];
      else
        match = p == segments[i];
    }
    if (!match)
      continue;
    const bool get_like = req.method == "GET" || req.method == "HEAD";
    if (!(r.method == req.method || (std::string_view(r.method) == "GET" && get_like))) {
      allowed.emplace_back(r.method);
      continue;
    }
    call c{ctx, g, req, std::move(params), std::move(query), std::move(respond)};
    if (r.tool)
      return through_tool(c, r.tool);
    return r.fn(c);
  }
  if (!allowed.empty()) {
    std::string allow;
    for (const auto& m : allowed)
      allow += (allow.empty() ? "" : ", ") + m;
    return respond(json_response(405, {{"error", "method not allowed"}}, {{"Allow", allow}}));
  }
  respond(error(404, "no such endpoint: " + req.target.substr(0, req.target.find('?'))));
}

}  // namespace engram::mcp
