// The tools generated from knowledge bundles (docs/bundles.md): list_<type>, get_<type> and
// list_<type>_ids for each type of each visible bundle version, owned by (organisation,
// bundle) and shown only to tokens of that organisation bound to the bundle
// (auth.tokens[].bundles). They are made again from the store whenever it makes a version
// visible or deletes one; reads go to RocksDB through graph_store::kg_list / kg_get (the
// filter index), never to a copy. Also the workflow prompt the seed says agents need.
#include "mcp/internal/tool_context.hpp"

#include "mcp/jsonrpc.hpp"
#include "knowledge/write_rules.hpp"

#include <algorithm>

namespace engram::mcp {

namespace {

constexpr std::size_t max_limit = 500, default_limit = 50;

std::string owner_of(const std::string& org, const std::string& bundle) {
  return std::string("kg") + '\0' + org + '\0' + bundle;
}

std::string joined(const std::vector<std::string>& xs) {
  std::string out;
  for (const auto& x : xs)
    out += (out.empty() ? "" : ", ") + x;
  return out;
}

/// The filter schema of one indexed field: its type and enum (an array field filters by one element).
json filter_schema(const json& property) {
  json p = property.is_object() ? property : json::object();
  if (p.value("type", json()) == "array" && p.contains("items") && p["items"].is_object())
    p = p["items"];
  json out = json::object();
  for (const char* k : {"type", "enum", "description"})
    if (p.contains(k))
      out[k] = p[k];
  return out;
}

struct type_view {
  std::string org, bundle;
  schemas::kg_type_spec spec;
  json schema;  // an object (an unreadable schema is read as {})
};

/// The type schema's property `field` as an object, {} when the schema has none or is not
/// shaped so: the schema came off engram-log, where a record may hold any JSON, and a wrong
/// shape must cost a tool its details, never the process.
json property(const type_view& t, const std::string& field) {
  const auto props = t.schema.find("properties");
  if (props == t.schema.end() || !props->is_object())
    return json::object();
  const auto f = props->find(field);
  return f != props->end() && f->is_object() ? *f : json::object();
}

/// A filter value that matched nothing: the code it most likely meant (a display name of an
/// entity, an enum value in another case), as a sentence; "" when there is none.
std::string meant(const storage::graph_store& store, const type_view& t, const std::string& field, const json& value) {
  if (!value.is_string())
    return "";
  const auto want = lower_ascii(value.get<std::string>());
  const json f = filter_schema(property(t, field));
  if (f.contains("enum"))
    for (const auto& e : f["enum"])
      if (e.is_string() && lower_ascii(e.get<std::string>()) == want)
        return "filters." + field + ": '" + value.get<std::string>() + "' is not a code; did you mean '" +
               e.get<std::string>() + "'?";
  // The type whose ids the field holds: a reference, or this type's own id.
  std::string target;
  if (auto r = t.spec.refs.find(field); r != t.spec.refs.end())
    target = r->second;
  else if (field == t.spec.id_field)
    target = t.spec.name;
  if (target.empty())
    return "";
  auto page = store.kg_list(t.org, t.bundle, target, {}, 0, 5000, true);
  for (std::size_t i = 0; i < page.ids.size(); ++i) {
    auto e = json::parse(page.items[i], nullptr, false);
    for (const char* label : {"name", "title", "label", "display_name"})
      if (e.is_object() && e.contains(label) && e[label].is_string() &&
          lower_ascii(e[label].get<std::string>()) == want)
        return "filters." + field + ": '" + value.get<std::string>() + "' is a display name, not a code; the " +
               target + " it names has the code '" + page.ids[i] + "'";
    if (lower_ascii(page.ids[i]) == want)
      return "filters." + field + ": '" + value.get<std::string>() + "' is not a code; did you mean '" + page.ids[i] +
             "'?";
  }
  return "";
}

/// Repairs and checks list arguments before the schema check (the seed's messages).
std::optional<std::string> prepare_list(const std::string& tool, const std::vector<std::string>& indexed, json& a) {
  if (a.contains("filters") && a["filters"].is_string()) {
    auto parsed = json::parse(a["filters"].get<std::string>(), nullptr, false);
    if (!parsed.is_object())
      return "[INVALID_INPUT] filters must be an object, e.g. {\"" + (indexed.empty() ? "field" : indexed[0]) +
             "\": \"...\"}";
    a["filters"] = std::move(parsed);
  }
  if (a.contains("filters") && a["filters"].is_null())
    a.erase("filters");
  if (a.contains("limit") && !a["limit"].is_null()) {
    const auto& l = a["limit"];
    if (!l.is_number() || l.get<double>() < 1 || l.get<double>() > static_cast<double>(max_limit) ||
        l.get<double>() != static_cast<double>(static_cast<long long>(l.get<double>())))
      return std::string("[INVALID_INPUT] limit must be between 1 and 500");
  }
  if (a.contains("offset") && !a["offset"].is_null()) {
    const auto& o = a["offset"];
    if (!o.is_number() || o.get<double>() < 0 ||
        o.get<double>() != static_cast<double>(static_cast<long long>(o.get<double>())))
      return std::string("[INVALID_INPUT] offset must be an integer of 0 or more");
  }
  if (a.contains("filters") && a["filters"].is_object())
    for (auto it = a["filters"].begin(); it != a["filters"].end(); ++it)
      if (std::find(indexed.begin(), indexed.end(), it.key()) == indexed.end())
        return "[INVALID_INPUT] unknown filter '" + it.key() + "' for " + tool + "; allowed: " +
               (indexed.empty() ? std::string("none (no field of this type is indexed)") : joined(indexed));
  return std::nullopt;
}

json list_definition(const type_view& t, const std::string& name, bool ids) {
  json filters{{"type", "object"}, {"properties", json::object()}, {"additionalProperties", false}};
  for (const auto& f : t.spec.indexed)
    filters["properties"][f] = filter_schema(property(t, f));
  filters["description"] =
      t.spec.indexed.empty()
          ? std::string("No field of this type is indexed: leave filters out.")
          : "An object: field -> value (entity codes, not display names); fields: " + joined(t.spec.indexed) + ".";
  std::string what = ids ? "Lists the ids of " : "Lists ";
  json d{
      {"name", name},
      {"description", what + "'" + t.spec.name + "' entities of the '" + t.bundle + "' knowledge bundle, in id order" +
                          (t.spec.description.empty() ? "." : ". " + t.spec.description)},
      {"inputSchema",
       {{"type", "object"},
        {"properties",
         {{"filters", filters},
          {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", max_limit}, {"default", default_limit}}},
          {"offset", {{"type", "integer"}, {"minimum", 0}, {"default", 0}}}}},
        {"additionalProperties", false}}},
      {"annotations", {{"readOnlyHint", true}}}};
  return d;
}

json get_definition(const type_view& t, const std::string& name) {
  const json id_prop = property(t, t.spec.id_field);
  const auto about = id_prop.find("description");
  json id{{"type", "string"},
          {"description", "The entity's " + t.spec.id_field + " (its id)" +
                              (about != id_prop.end() && about->is_string() ? ": " + about->get<std::string>() : "")}};
  return {{"name", name},
          {"description", "Gets one '" + t.spec.name + "' entity of the '" + t.bundle + "' knowledge bundle by its " +
                              t.spec.id_field + " (null when there is none)" +
                              (t.spec.description.empty() ? "." : ". " + t.spec.description)},
          {"inputSchema",
           {{"type", "object"}, {"properties", {{"id", id}}}, {"required", {"id"}}, {"additionalProperties", false}}},
          {"annotations", {{"readOnlyHint", true}}}};
}

void list(const storage::graph_store& store, const type_view& t, bool ids, const json& a, tool_reply reply) {
  std::vector<std::pair<std::string, std::string>> filters;
  const json given = a.value("filters", json::object());
  for (auto it = given.begin(); it != given.end(); ++it)
    filters.emplace_back(it.key(), it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
  const auto limit = a.contains("limit") && a["limit"].is_number() ? a["limit"].get<std::size_t>() : default_limit;
  const auto offset = a.contains("offset") && a["offset"].is_number() ? a["offset"].get<std::size_t>() : 0;
  auto page = store.kg_list(t.org, t.bundle, t.spec.name, filters, offset, limit, !ids);
  json out = json::object();
  if (ids) {
    out["ids"] = page.ids;
  } else {
    out["items"] = json::array();
    for (const auto& x : page.items)
      out["items"].push_back(json::parse(x, nullptr, false));
  }
  out["total"] = page.total;
  if (page.total == 0)
    for (auto it = given.begin(); it != given.end(); ++it)
      if (store.kg_list(t.org, t.bundle, t.spec.name, {filters[std::distance(given.begin(), it)]}, 0, 1, false).total ==
          0)
        if (auto note = meant(store, t, it.key(), it.value()); !note.empty())
          out["note"] = note;
  reply(tool_result(std::move(out)));
}

void get(const storage::graph_store& store, const type_view& t, const json& a, tool_reply reply) {
  auto found = store.kg_get(t.org, t.bundle, t.spec.name, a["id"].get<std::string>());
  if (!found)
    return reply({{"content", json::array({{{"type", "text"}, {"text", "null"}}})}, {"isError", false}});
  reply(tool_result(json::parse(*found, nullptr, false)));
}

}  // namespace

void refresh_bundle_tools(registry& r, const std::shared_ptr<const storage::graph_store>& store,
                          const std::string& org) {
  std::vector<tool> made;
  for (const auto& b : store->kg_bundles(org)) {
    for (const auto& spec : b.types) {
      auto t = std::make_shared<type_view>();
      t->org = b.organization_id;
      t->bundle = b.name;
      t->spec = spec;
      t->schema = json::parse(spec.schema, nullptr, false);
      if (!t->schema.is_object())
        t->schema = json::object();
      auto base = [&](json definition) {
        tool x;
        x.definition = std::move(definition);
        x.scope = "read";
        x.owner = owner_of(t->org, t->bundle);
        x.visible_to = [org = t->org, bundle = t->bundle](const grant& g) {
          return g.organization_id == org && g.bundles.count(bundle) > 0;
        };
        return x;
      };
      for (const auto& name : schemas::kg_tool_names(spec)) {
        const bool ids = name.ends_with("_ids");
        if (name.starts_with("get_")) {
          auto x = base(get_definition(*t, name));
          x.handler = [store, t](const grant&, const json& a, tool_reply reply) {
            get(*store, *t, a, std::move(reply));
          };
          made.push_back(std::move(x));
        } else {
          auto x = base(list_definition(*t, name, ids));
          x.prepare = [name, indexed = spec.indexed](json& a) { return prepare_list(name, indexed, a); };
          x.handler = [store, t, ids](const grant&, const json& a, tool_reply reply) {
            list(*store, *t, ids, a, std::move(reply));
          };
          made.push_back(std::move(x));
        }
      }
    }
  }
  r.replace_owned(org.empty() ? std::string("kg") + '\0' : std::string("kg") + '\0' + org + '\0', std::move(made));
}

namespace {

std::string prompt_name(const std::string& bundle) { return "kg_workflow_" + bundle; }

std::string prompt_text(const storage::kg_bundle_info& b) {
  std::string tools, example_filter;
  for (const auto& t : b.types)
    for (const auto& name : schemas::kg_tool_names(t)) {
      if (name.starts_with("get_"))
        tools += name + "(id) -> fetches one " + t.name + " by its " + t.id_field + "\n";
      else if (name.ends_with("_ids"))
        tools += name + "(filters?, limit?, offset?) -> the ids of " + t.name + " entities\n";
      else
        tools += name + "(filters?, limit?, offset?) -> enumerates " + t.name + " entities" +
                 (t.indexed.empty() ? std::string() : "; filters: " + joined(t.indexed)) + "\n";
    }
  for (const auto& t : b.types)
    if (!t.indexed.empty() && example_filter.empty())
      example_filter = "list_" + t.name + "(filters={\"" + t.indexed[0] + "\": \"<code>\"}, limit=50)";
  std::string types;
  for (const auto& t : b.types)
    types += (types.empty() ? "" : ", ") + t.name;
  return "You are bound to the \"" + b.name + "\" knowledge graph (entity types: " + types +
         "). You have access to these read-only tools for navigating it deterministically:\n" + tools +
         "MANDATORY workflow on every user question:\n"
         "1. Identify which entity_types the question is about. If unclear, call list_<entity_type> on the most "
         "general type first to discover the domain.\n"
         "2. Use the list_/get_ tools to retrieve the actual entities. NEVER invent entity ids, codes, or attribute "
         "values from general knowledge.\n"
         "3. If a tool returns 0 results, say so explicitly. Suggest the closest existing entities by querying a "
         "related type (do not fabricate).\n"
         "4. Prefer popularity=high entities first when the user has not specified.\n"
         "5. Cite the entity id of every record you recommend, so the user can verify.\n"
         "Filter argument format:\n"
         "- Filter values must be ENTITY CODES (lowercase snake_case or kebab-case identifiers), NOT display names.\n"
         "- `filters` is an object, not a JSON-encoded string." +
         (example_filter.empty() ? std::string() : " Example call:\n" + example_filter) + "\n";
}

}  // namespace

json bundle_prompts(const storage::graph_store& store, const grant& g) {
  json out = json::array();
  for (const auto& b : store.kg_bundles(g.organization_id))
    if (g.bundles.count(b.name))
      out.push_back({{"name", prompt_name(b.name)},
                     {"title", "Workflow for the " + b.name + " knowledge graph"},
                     {"description", "The system prompt that makes an agent use the '" + b.name +
                                         "' bundle's tools instead of guessing."}});
  return out;
}

std::optional<json> bundle_prompt(const storage::graph_store& store, const grant& g, const std::string& name) {
  for (const auto& b : store.kg_bundles(g.organization_id))
    if (g.bundles.count(b.name) && prompt_name(b.name) == name)
      return json{
          {"description", "Workflow for the " + b.name + " knowledge graph, version " + b.version},
          {"messages", json::array({{{"role", "user"}, {"content", {{"type", "text"}, {"text", prompt_text(b)}}}}})}};
  return std::nullopt;
}

json bundles_json(const storage::graph_store& store, const std::string& org, const std::string& name) {
  auto status = [&](const std::string& bundle) {
    auto st = store.kg_status(org, bundle);
    return st ? json::parse(*st, nullptr, false) : json(nullptr);
  };
  json out = json::array();
  for (const auto& b : store.kg_bundles(org)) {
    if (!name.empty() && b.name != name)
      continue;
    json types = json::array();
    for (const auto& t : b.types)
      types.push_back({{"name", t.name},
                       {"idField", t.id_field},
                       {"indexed", t.indexed},
                       {"refs", t.refs},
                       {"tools", schemas::kg_tool_names(t)},
                       {"entities", b.counts.count(t.name) ? b.counts.at(t.name) : 0}});
    out.push_back({{"name", b.name},
                   {"version", b.version},
                   {"description", b.description},
                   {"applyId", b.apply_id},
                   {"appliedAt", b.applied_at},
                   {"types", std::move(types)},
                   {"lastApply", status(b.name)}});
  }
  if (!name.empty() && out.empty())  // not visible: what its last apply did, if any
    if (auto st = status(name); !st.is_null())
      out.push_back({{"name", name}, {"visible", false}, {"lastApply", st}});
  return {{"organizationId", org}, {"bundles", out}};
}

}  // namespace engram::mcp
