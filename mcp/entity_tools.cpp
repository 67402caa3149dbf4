// The entity tools (entity_*, and the traversal graph_*; docs/entity-graph.md): reads through the
// entity reader, changes as entity-command records on engram-log answered once applied.
// Arguments arrive checked against each tool's inputSchema (schemas/entity_tools.cpp); what
// is left here is what a schema cannot say (string-valued attributes, a missing entity).
#include "mcp/internal/entity_tools.hpp"

#include "mcp/jsonrpc.hpp"
#include "query/kag.hpp"
#include "schemas/time.hpp"
#include "schemas/tools.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

namespace engram::mcp {

namespace {

using query::edge_direction;
using query::entity_view;

std::string str(const json& a, const char* k) {
  return a.contains(k) && a[k].is_string() ? a[k].get<std::string>() : std::string();
}

std::size_t count(const json& a, const char* k, std::size_t dflt) {
  return a.contains(k) && a[k].is_number() ? static_cast<std::size_t>(a[k].get<double>()) : dflt;
}

edge_direction direction_arg(const json& a) {
  const auto d = str(a, "direction");
  return d == "outgoing" ? edge_direction::outgoing : d == "incoming" ? edge_direction::incoming : edge_direction::both;
}

std::set<std::string> labels_arg(const json& a) {
  std::set<std::string> out;
  for (const auto& t : a.value("edge_types", json::array()))
    out.insert(schemas::relation_label(t.get<std::string>()));
  return out;
}

std::string no_entity(const char* field, const std::string& name) {
  return std::string(field) + ": no entity '" + name + "' in this organisation";
}

/// "competes_with" -> "competes with".
std::string spoken(std::string label) {
  std::replace(label.begin(), label.end(), '_', ' ');
  return label;
}

json relationships_of(tool_context& ctx, const std::string& org, const entity_view& e) {
  json out = json::array();
  for (const auto& edge : ctx.entities().edges(org, e.id, edge_direction::both)) {
    const bool outgoing = edge.from_id == e.id;
    auto other = ctx.entities().by_id(org, outgoing ? edge.to_id : edge.from_id);
    if (!other)
      continue;
    out.push_back({{outgoing ? "to" : "from", other->name}, {"relationship", edge.label}});
  }
  return out;
}

void entity_add(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  schemas::entity_spec spec;
  spec.name = str(a, "name");
  spec.entity_type = str(a, "entity_type");
  if (auto bad = read_attributes(a, spec.attributes))
    return reply(tool_error(*bad));
  for (const auto& o : a.value("observations", json::array()))
    spec.observations.push_back(o.get<std::string>());
  schemas::entity_command c;
  c.op = schemas::entity_op::add_entities;
  c.merge_existing = true;
  c.entities.push_back(spec);
  entity_command(ctx, g, std::move(c), std::move(reply), [&ctx, org = g.organization_id](const json& r) {
    const auto& item = r["entities"][0];
    auto e = ctx.entities().by_id(org, item["id"].get<std::string>());
    if (!e)
      return tool_error("internal: the entity was not found after it was applied");
    json out{{"name", e->name},
             {"entity_type", e->entity_type},
             {"attributes", e->attributes},
             {"created", item["created"]}};
    if (!e->observations.empty())
      out["observations"] = e->observations;
    return tool_result(out);
  });
}

}  // namespace

json resolution_json(const knowledge::resolution_note& r) {
  return {{"mention", r.mention}, {"eventId", r.event_id}, {"reason", r.reason}};
}

namespace {

void entity_relate(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  schemas::relation_spec r;
  r.from = str(a, "from");
  r.to = str(a, "to");
  r.relation_type = str(a, "relationship");
  if (schemas::relation_label(r.relation_type).empty())
    return reply(tool_error("relationship: has no letters or digits"));
  r.weight = a.value("weight", 1.0);
  if (auto bad = read_attributes(a, r.attributes))
    return reply(tool_error(*bad));
  for (auto [field, name] : {std::pair{"from", &r.from}, {"to", &r.to}})
    if (!ctx.entities().by_name(g.organization_id, *name))
      return reply(tool_error(no_entity(field, *name)));
  schemas::entity_command c;
  c.op = schemas::entity_op::relate;
  c.relations.push_back(r);
  entity_command(ctx, g, std::move(c), std::move(reply), [](const json& res) {
    const auto& r = res["relations"][0];
    return tool_result(
        {{"from", r["from"]}, {"to", r["to"]}, {"relationship", r["relationType"]}, {"created", r["created"]}});
  });
}

void entity_merge(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  schemas::entity_command c;
  c.op = schemas::entity_op::merge_entities;
  c.name_a = str(a, "name_a");
  c.name_b = str(a, "name_b");
  auto a_entity = ctx.entities().by_name(g.organization_id, c.name_a);
  if (!a_entity)
    return reply(tool_error(no_entity("name_a", c.name_a)));
  auto b_entity = ctx.entities().by_name(g.organization_id, c.name_b);
  if (!b_entity)
    return reply(tool_error(no_entity("name_b", c.name_b)));
  if (a_entity->id == b_entity->id)
    return reply(tool_error("name_b: '" + c.name_b + "' and '" + c.name_a + "' are already one entity"));
  entity_command(ctx, g, std::move(c), std::move(reply), [](const json& res) { return tool_result(res); });
}

void entity_search(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  std::vector<json> results;
  for (const auto& [e, score] : ctx.entities().search(g.organization_id, str(a, "query"), count(a, "limit", 10)))
    results.push_back({{"name", e.name}, {"entity_type", e.entity_type}, {"score", std::round(score * 1000) / 1000}});
  reply(tool_result({{"results", ctx.capped(std::move(results))}}));
}

void entity_find_related(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  const auto name = str(a, "name");
  auto e = ctx.entities().by_name(g.organization_id, name);
  if (!e)
    return reply(tool_error(no_entity("name", name)));
  std::vector<json> related;
  const auto limit = count(a, "limit", 200);
  for (const auto& edge : ctx.entities().edges(g.organization_id, e->id, edge_direction::both)) {
    if (related.size() == limit)
      break;
    const bool outgoing = edge.from_id == e->id;
    auto other = ctx.entities().by_id(g.organization_id, outgoing ? edge.to_id : edge.from_id);
    if (other)
      related.push_back(
          {{"name", other->name}, {"relationship", edge.label}, {"direction", outgoing ? "outgoing" : "incoming"}});
  }
  reply(tool_result({{"entity", e->name}, {"related", ctx.capped(std::move(related))}}));
}

void entity_visualize(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  std::string center;
  if (const auto name = str(a, "name"); !name.empty()) {
    auto e = ctx.entities().by_name(g.organization_id, name);
    if (!e)
      return reply(tool_error(no_entity("name", name)));
    center = e->id;
  }
  std::size_t shown = 0, omitted = 0;
  auto text =
      ctx.entities().mermaid(g.organization_id, center, count(a, "depth", 2), count(a, "limit", 100), &shown, &omitted);
  reply(tool_result({{"mermaid", std::move(text)}, {"nodes", shown}, {"omitted", omitted}}));
}

void graph_traverse(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  const auto start = str(a, "start");
  auto e = ctx.entities().by_name(g.organization_id, start);
  if (!e)
    return reply(tool_error(no_entity("start", start)));
  const auto type = str(a, "entity_type");
  bool truncated = false;
  // A type filter keeps walking through entities of other types; only the listing is filtered.
  const auto limit = count(a, "limit", 100);
  auto nodes = ctx.entities().traverse(g.organization_id, e->id, count(a, "max_depth", 1), labels_arg(a),
                                       direction_arg(a), type.empty() ? limit : SIZE_MAX, &truncated);
  std::vector<json> out;
  for (const auto& n : nodes) {
    double confidence = 1.0;
    if (!type.empty()) {
      confidence = ctx.entities().type_match(type, n.entity.entity_type);
      if (confidence == 0)
        continue;
      if (out.size() == limit) {
        truncated = true;
        break;
      }
    }
    json j{{"name", n.entity.name},
           {"entity_type", n.entity.entity_type},
           {"distance", n.distance},
           {"similarity", n.similarity}};
    if (!type.empty())
      j["type_confidence"] = confidence;
    if (!n.via.empty()) {
      j["via"] = n.via;
      j["relationship"] = n.relationship;
    }
    out.push_back(std::move(j));
  }
  reply(tool_result({{"start", e->name}, {"nodes", ctx.capped(std::move(out))}, {"truncated", truncated}}));
}

void graph_path(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  const auto from = str(a, "from"), to = str(a, "to");
  auto x = ctx.entities().by_name(g.organization_id, from);
  if (!x)
    return reply(tool_error(no_entity("from", from)));
  auto y = ctx.entities().by_name(g.organization_id, to);
  if (!y)
    return reply(tool_error(no_entity("to", to)));
  const auto depth = count(a, "max_depth", 4);
  auto p = ctx.entities().path(g.organization_id, x->id, y->id, depth, labels_arg(a), direction_arg(a),
                               str(a, "by") == "weight");
  if (!p)
    return reply(
        tool_error("no path from '" + x->name + "' to '" + y->name + "' within " + std::to_string(depth) + " hops"));
  json edges = json::array();
  for (const auto& s : p->edges)
    edges.push_back({{"from", s.from}, {"to", s.to}, {"relationship", s.relationship}, {"weight", s.weight}});
  reply(tool_result({{"from", x->name},
                     {"to", y->name},
                     {"hops", p->edges.size()},
                     {"total_weight", p->total_weight},
                     {"nodes", p->nodes},
                     {"edges", edges}}));
}

// --- entity_query: a question answered from the facts found, without a model ---

const std::set<std::string> question_words{
    "a",    "about", "all",  "an",  "and",  "any",   "are",  "at",   "by",   "can", "do",    "does",
    "for",  "from",  "have", "has", "how",  "i",     "in",   "is",   "it",   "its", "know",  "list",
    "many", "me",    "of",   "on",  "or",   "our",   "show", "tell", "that", "the", "their", "there",
    "they", "this",  "to",   "we",  "what", "which", "who",  "whom", "with", "you", "your",  "known"};

std::vector<std::string> question_tokens(const std::string& q) {
  std::vector<std::string> out;
  std::string w;
  auto flush = [&] {
    if (w.size() > 2 && w.ends_with("'s"))
      w.resize(w.size() - 2);
    if (!w.empty())
      out.push_back(w);
    w.clear();
  };
  for (unsigned char c : q) {
    if (std::isalnum(c) || c >= 0x80 || c == '\'' || c == '-' || c == '.')
      w += static_cast<char>(std::tolower(c));
    else
      flush();
  }
  flush();
  for (auto& t : out)
    while (!t.empty() && (t.back() == '.' || t.back() == '\'' || t.back() == '-'))
      t.pop_back();
  std::erase_if(out, [](const std::string& t) { return t.empty(); });
  return out;
}

/// Singular forms a plural word may stand for ("companies" -> "company").
std::vector<std::string> singulars(const std::string& w) {
  std::vector<std::string> out{w};
  if (w.size() > 3 && w.ends_with("ies"))
    out.push_back(w.substr(0, w.size() - 3) + "y");
  if (w.size() > 2 && w.ends_with("es"))
    out.push_back(w.substr(0, w.size() - 2));
  if (w.size() > 1 && w.ends_with("s"))
    out.push_back(w.substr(0, w.size() - 1));
  return out;
}

/// Whether a question word names a relationship label ("use" ~ "uses", "employ" ~ "employs").
bool names_label(const std::string& word, const std::string& label) {
  const auto first = label.substr(0, label.find('_'));
  for (const auto& s : singulars(word))
    for (const auto& l : singulars(first))
      if (s.size() >= 3 && s == l)
        return true;
  return false;
}

/// Entities named in the question: the longest word runs that are a name or an alias
/// (their words marked in `used`).
std::vector<entity_view> named_in(const query::entity_reader& graph, const std::string& org,
                                  const std::vector<std::string>& tokens, std::vector<bool>& used) {
  std::vector<entity_view> named;
  for (std::size_t len = std::min<std::size_t>(6, tokens.size()); len >= 1; --len)
    for (std::size_t i = 0; i + len <= tokens.size(); ++i) {
      if (std::any_of(used.begin() + i, used.begin() + i + len, [](bool u) { return u; }))
        continue;
      std::string phrase;
      for (std::size_t k = i; k < i + len; ++k)
        phrase += (k > i ? " " : "") + tokens[k];
      if (len == 1 && question_words.count(phrase))
        continue;
      if (auto e = graph.by_name(org, phrase)) {
        if (std::none_of(named.begin(), named.end(), [&](const entity_view& n) { return n.id == e->id; }))
          named.push_back(std::move(*e));
        std::fill(used.begin() + i, used.begin() + i + len, true);
      }
    }
  return named;
}

/// The first rest word that names a type some entity has (or inherits); "" when none.
std::string type_named(const query::entity_reader& graph, const std::vector<entity_view>& all,
                       const std::vector<std::string>& rest) {
  std::string type;
  for (const auto& w : rest) {
    for (const auto& s : singulars(w))
      if (std::any_of(all.begin(), all.end(),
                      [&](const entity_view& e) { return graph.type_match(s, e.entity_type) > 0; })) {
        type = s;
        break;
      }
    if (!type.empty())
      break;
  }
  return type;
}

/// The relationship words: rest words naming a label at one of the named entities.
std::vector<std::string> label_words_at(const query::entity_reader& graph, const std::string& org,
                                        const std::vector<entity_view>& named, const std::vector<std::string>& rest) {
  std::vector<std::string> label_words;
  for (const auto& n : named)
    for (const auto& edge : graph.edges(org, n.id, edge_direction::both))
      for (const auto& w : rest)
        if (names_label(w, edge.label) && std::find(label_words.begin(), label_words.end(), w) == label_words.end())
          label_words.push_back(w);
  return label_words;
}

/// An answer being written: the entities it is about and its sentences.
struct query_answer {
  std::vector<entity_view> found;
  std::vector<std::string> sentences;
};

/// "which companies use Rust?": neighbours of the named entity of that type, over the
/// relationship the question names (any when it names none).
void answer_related(const query::entity_reader& graph, const std::string& org, const std::vector<entity_view>& named,
                    const std::string& type, const std::vector<std::string>& label_words, query_answer& out) {
  auto& [found, sentences] = out;
  auto label_wanted = [&](const std::string& label) {
    return label_words.empty() || std::any_of(label_words.begin(), label_words.end(),
                                              [&](const std::string& w) { return names_label(w, label); });
  };
  for (const auto& n : named)
    for (const auto& edge : graph.edges(org, n.id, edge_direction::both)) {
      if (!label_wanted(edge.label))
        continue;
      const bool outgoing = edge.from_id == n.id;
      auto other = graph.by_id(org, outgoing ? edge.to_id : edge.from_id);
      if (!other || graph.type_match(type, other->entity_type) == 0)
        continue;
      const auto& subject = outgoing ? n.name : other->name;
      const auto& object = outgoing ? other->name : n.name;
      sentences.push_back(subject + " " + spoken(edge.label) + " " + object + ".");
      if (std::none_of(found.begin(), found.end(), [&](const entity_view& f) { return f.id == other->id; }))
        found.push_back(std::move(*other));
    }
  if (found.empty())
    sentences.push_back("No " + type + " in the graph is related to " + named[0].name + " that way.");
}

/// A named entity in a sentence or two: its type and attributes, then its relationships.
std::string described(const query::entity_reader& graph, const std::string& org, const entity_view& n) {
  std::string s = n.name + " is a " + spoken(schemas::type_key(n.entity_type));
  if (!n.attributes.empty()) {
    s += " (";
    bool first = true;
    for (const auto& [k, v] : n.attributes) {
      s += (first ? "" : ", ") + spoken(k) + ": " + v;
      first = false;
    }
    s += ")";
  }
  s += ".";
  std::vector<std::string> facts;
  for (const auto& edge : graph.edges(org, n.id, edge_direction::both)) {
    const bool outgoing = edge.from_id == n.id;
    auto other = graph.by_id(org, outgoing ? edge.to_id : edge.from_id);
    if (other)
      facts.push_back(outgoing ? spoken(edge.label) + " " + other->name
                               : "is the object of " + other->name + "'s " + spoken(edge.label));
  }
  for (std::size_t i = 0; i < facts.size(); ++i)
    s += (i == 0 ? " It " : i + 1 == facts.size() ? " and " : ", ") + facts[i];
  if (!facts.empty())
    s += ".";
  return s;
}

/// Entities of the type, up to `limit`, named in one sentence.
void answer_of_type(const query::entity_reader& graph, const std::vector<entity_view>& all, const std::string& type,
                    std::size_t limit, query_answer& out) {
  std::string names;
  for (const auto& e : all)
    if (graph.type_match(type, e.entity_type) > 0 && out.found.size() < limit) {
      names += (names.empty() ? "" : ", ") + e.name;
      out.found.push_back(e);
    }
  out.sentences.push_back("Entities of type " + type + ": " + names + ".");
}

/// Words found in attributes or observations.
void answer_mentioning(const std::vector<entity_view>& all, const std::vector<std::string>& rest, std::size_t limit,
                       query_answer& out) {
  auto& [found, sentences] = out;
  for (const auto& e : all) {
    std::string text;
    for (const auto& [k, v] : e.attributes)
      text += " " + k + " " + v;
    for (const auto& o : e.observations)
      text += " " + o;
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    if (std::any_of(rest.begin(), rest.end(),
                    [&](const std::string& w) { return w.size() > 2 && text.find(w) != std::string::npos; }) &&
        found.size() < limit)
      found.push_back(e);
  }
  if (!found.empty()) {
    std::string names;
    for (const auto& e : found)
      names += (names.empty() ? "" : ", ") + e.name;
    sentences.push_back("Entities whose attributes or observations mention it: " + names + ".");
  }
}

void entity_query(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  const auto& org = g.organization_id;
  const auto& graph = ctx.entities();
  const auto limit = count(a, "limit", 10);
  const auto tokens = question_tokens(str(a, "question"));
  // 1. Entities named in the question: the longest word runs that are a name or an alias.
  std::vector<bool> used(tokens.size(), false);
  const auto named = named_in(graph, org, tokens, used);
  // 2. The rest: type words and relationship words, judged against the graph.
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (!used[i] && !question_words.count(tokens[i]))
      rest.push_back(tokens[i]);
  const auto all = graph.list(org, "", 100000);
  const auto type = type_named(graph, all, rest);
  const auto label_words = label_words_at(graph, org, named, rest);

  query_answer out;
  auto& [found, sentences] = out;
  if (!named.empty() && !type.empty()) {
    answer_related(graph, org, named, type, label_words, out);
  } else if (!named.empty()) {
    for (const auto& n : named) {
      sentences.push_back(described(graph, org, n));
      found.push_back(n);
    }
  } else if (!type.empty()) {
    answer_of_type(graph, all, type, limit, out);
  } else if (!rest.empty()) {
    answer_mentioning(all, rest, limit, out);
  }
  if (found.size() > limit)
    found.resize(limit);
  std::string answer;
  for (const auto& s : sentences)
    answer += (answer.empty() ? "" : " ") + s;
  if (found.empty() && answer.empty())
    answer = "Nothing in the graph matches the question.";
  std::vector<json> entities;
  for (const auto& e : found) {
    entities.push_back({{"name", e.name},
                        {"entity_type", e.entity_type},
                        {"attributes", e.attributes},
                        {"relationships", relationships_of(ctx, org, e)}});
    // How mentions that are not its name were joined to it (resolution's evidence).
    for (const auto& r : e.resolutions)
      entities.back()["resolved"].push_back(resolution_json(r));
  }
  reply(tool_result({{"entities", ctx.capped(std::move(entities))}, {"answer", answer}}));
}

void kag_query(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  query::kag_request r;
  r.query = str(a, "query");
  for (const auto& e : a.value("entities", json::array()))
    r.entities.push_back(e.get<std::string>());
  r.include_relations = a.value("include_relations", true);
  r.max_hops = count(a, "max_hops", 2);
  r.limit = count(a, "limit", 20);
  r.source_id = str(a, "source_id");
  if (auto bad = query::check(r))
    return reply(tool_error(*bad));
  r.terms = [&ctx](std::string_view text) { return ctx.query().terms(text); };
  const auto answer = query::kag_query(ctx.entities(), g.organization_id, r);
  json entities = json::array(), relations = json::array();
  for (const auto& e : answer.entities) {
    json j{{"id", e.id},
           {"name", e.name},
           {"type", e.type},
           {"description", e.description},
           {"confidence", e.confidence},
           {"distance", e.distance}};
    if (!e.source_document_id.empty()) {
      j["source_document_id"] = e.source_document_id;
      j["source_document_title"] = e.source_document_title;
    }
    entities.push_back(std::move(j));
  }
  for (const auto& rel : answer.relations) {
    json j{
        {"subject", rel.subject}, {"predicate", rel.predicate}, {"object", rel.object}, {"confidence", rel.confidence}};
    for (auto [k, v] : {std::pair{"valid_from", &rel.valid_from},
                        {"valid_to", &rel.valid_to},
                        {"statement", &rel.statement},
                        {"source_document_id", &rel.source_document_id},
                        {"source_document_title", &rel.source_document_title}})
      if (!v->empty())
        j[k] = *v;
    relations.push_back(std::move(j));
  }
  json out{{"entities", std::move(entities)},
           {"relations", std::move(relations)},
           {"context", answer.context},
           {"total_entities", answer.total_entities}};
  if (!answer.note.empty())
    out["note"] = answer.note;
  reply(tool_result(out));
}

}  // namespace

std::optional<std::string> read_attributes(const json& a, schemas::attribute_map& out) {
  if (!a.contains("attributes"))
    return std::nullopt;
  const auto& m = a["attributes"];
  if (m.size() > schemas::entity_limits::attributes)
    return "attributes: at most " + std::to_string(schemas::entity_limits::attributes) + " keys";
  for (auto it = m.begin(); it != m.end(); ++it) {
    if (!it.value().is_string())
      return "attributes." + it.key() + ": must be a string";
    if (it.key().empty() || it.key().size() > schemas::entity_limits::attribute_key)
      return "attributes: key '" + it.key().substr(0, 80) + "' must be 1.." +
             std::to_string(schemas::entity_limits::attribute_key) + " bytes";
    if (it.value().get_ref<const std::string&>().size() > schemas::entity_limits::attribute_value)
      return "attributes." + it.key() + ": longer than " + std::to_string(schemas::entity_limits::attribute_value) +
             " bytes";
    out[it.key()] = it.value().get<std::string>();
  }
  return std::nullopt;
}

void entity_command(tool_context& ctx, const grant& g, schemas::entity_command c, tool_reply reply,
                    std::function<json(const json& result)> answer) {
  stamp(ctx, g, c, "ent-");
  // The store reads the record through the same decoder: refuse here what it would refuse.
  schemas::entity_command check;
  if (auto bad = schemas::decode(schemas::to_json(c), check))
    return reply(tool_error(*bad));
  ctx.append_and_answer(c, std::move(reply), answer_applied(std::move(answer)));
}

void add_entity_tools(registry& r, tool_context& ctx) {
  add_tools(r, ctx, schemas::entity_tool_definitions(),
            {{"entity_add", "write", entity_add},
             {"entity_relate", "write", entity_relate},
             {"entity_query", "read", entity_query},
             {"entity_merge", "write", entity_merge},
             {"entity_search", "read", entity_search},
             {"entity_find_related", "read", entity_find_related},
             {"entity_visualize", "read", entity_visualize},
             {"graph_traverse", "read", graph_traverse},
             {"graph_path", "read", graph_path}});
  add_tools(r, ctx, schemas::kag_tool_definitions(), {{"kag_query", "read", kag_query}});
  add_memory_tools(r, ctx);
}

}  // namespace engram::mcp
