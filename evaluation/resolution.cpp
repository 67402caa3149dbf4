#include "evaluation/resolution.hpp"

#include "base/text.hpp"
#include "knowledge/entry.hpp"
#include "knowledge/resolve.hpp"
#include "reading/extract.hpp"
#include "storage/graph_store.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>

namespace engram::evaluation {

namespace {

using json = nlohmann::json;

struct read_event {
  std::string org;
  /// Folded texts of what extraction read in the event (mentions, participants' names),
  /// each with the name it was read as (a mention's value: "marcus" -> "Marcus Chen").
  std::map<std::string, std::string> read;
};

/// The entity a mention (as written in an event) resolved to; "" when the event did not
/// read it.
std::string entity_of(const storage::graph_store& store, const std::vector<knowledge::stored_entity>& entities,
                      const read_event& ev, const std::string& event_id, const std::string& text) {
  const auto folded = knowledge::fold_name(text);
  for (const auto& e : entities)
    for (const auto& n : e.resolutions)
      if (n.event_id == event_id && knowledge::fold_name(n.mention) == folded)
        return e.id;
  auto it = ev.read.find(folded);
  if (it == ev.read.end())  // a company read without its legal form ("Brightmoor Bank" of "... plc")
    it = ev.read.find("org:" + knowledge::organisation_key(text));
  if (it == ev.read.end())
    return {};
  for (const auto* name : {&it->second, &text, &folded})
    if (auto id = store.entity_id(ev.org, *name); !id.empty())
      return id;
  return {};
}

std::size_t kind_index(const std::string& kind) {
  for (std::size_t i = 0; i < resolution_report::kinds.size(); ++i)
    if (kind == resolution_report::kinds[i])
      return i;
  return resolution_report::kinds.size();
}

}  // namespace

double resolution_report::precision(const resolution_counts& c) {
  return c.joined + c.wrongly_joined ? double(c.joined) / double(c.joined + c.wrongly_joined) : 1.0;
}

double resolution_report::recall(const resolution_counts& c) {
  return c.same ? double(c.joined) / double(c.same) : 1.0;
}

std::string resolution_report::table() const {
  std::string out =
      "| kind | pairs same / different | joined right | joined wrong | unread | precision | recall |\n"
      "|---|---|---|---|---|---|---|\n";
  char line[256];
  for (std::size_t i = 0; i < by_kind.size(); ++i) {
    const auto& c = by_kind[i];
    std::snprintf(line, sizeof line, "| %s | %zu / %zu | %zu | %zu | %zu | %.2f | %.2f |\n",
                  i < kinds.size() ? kinds[i] : "**all**", c.same, c.different, c.joined, c.wrongly_joined, c.unread,
                  precision(c), recall(c));
    out += line;
  }
  std::snprintf(line, sizeof line, "\nIdentifiers read as a person or an organisation: %zu of %zu.\n",
                identifiers_as_people_or_organisations, identifiers);
  return out + line;
}

resolution_report evaluate_resolution(const std::string& path, const reading::validator_options& opts,
                                      resolution_mentions mentions) {
  resolution_report rep;
  std::ifstream in(path);
  if (!in) {
    rep.error = "cannot read " + path;
    return rep;
  }
  auto store = storage::make_memory_graph_store();
  std::map<std::string, read_event> events;
  std::vector<json> pairs, identifiers, event_lines;
  for (std::string line; std::getline(in, line);) {
    if (line.empty())
      continue;
    auto j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      rep.error = path + ": a line is not a JSON object";
      return rep;
    }
    if (j.contains("pair"))
      pairs.push_back(j["pair"]);
    if (j.contains("identifier"))
      identifiers.push_back(j["identifier"]);
    if (j.contains("event"))
      event_lines.push_back(j["event"]);
  }
  // With the labelled mentions: each pair's texts as mentions of their labelled kind, in
  // the events they are written in, besides what reading found.
  std::map<std::string, std::vector<schemas::entity_mention>> labelled;
  if (mentions == resolution_mentions::labelled)
    for (const auto& p : pairs) {
      const auto kind = p.value("kind", "");
      const auto k = kind == "person"         ? schemas::entity_kind::person
                     : kind == "organization" ? schemas::entity_kind::organization
                     : kind == "place"        ? schemas::entity_kind::location
                                              : schemas::entity_kind::technology;
      for (const char* side : {"a", "b"}) {
        const auto text = p[side].value("text", "");
        labelled[p[side].value("eventId", "")].push_back({k, text, text, {}, {}, {}, {}, {}});
      }
    }
  std::int64_t offset = 0;
  for (const auto& event : event_lines) {
    schemas::inbound_message m;
    if (auto bad = schemas::decode(event.dump(), {}, m)) {
      rep.error = path + ": " + bad->to_string();
      return rep;
    }
    ++rep.events;
    auto x = reading::extract_validated(m, opts);
    for (auto& mention : labelled[m.event_id])
      x.mentions.push_back(mention);
    auto& ev = events[m.event_id];
    ev.org = m.organization_id;
    for (const auto& mention : x.mentions) {
      for (const auto* t : {&mention.text, &mention.value})
        ev.read.emplace(knowledge::fold_name(*t), mention.value);
      if (mention.kind == schemas::entity_kind::organization)
        ev.read.emplace("org:" + knowledge::organisation_key(mention.value), mention.value);
    }
    ev.read.emplace(knowledge::fold_name(m.from.name), m.from.name);
    for (const auto& p : m.to)
      ev.read.emplace(knowledge::fold_name(p.name), p.name);
    storage::apply_outcome out{};
    if (store->apply({"eval", 0, offset++, "eval"}, &m, &x, nullptr, &out) != storage::errc::ok) {
      rep.error = "the store refused " + m.event_id;
      return rep;
    }
  }
  // Every entity of the organisations read, with its names and resolution evidence.
  std::vector<knowledge::stored_entity> entities;
  std::set<std::string> orgs;
  for (const auto& [_, ev] : events)
    orgs.insert(ev.org);
  for (const auto& org : orgs)
    for (const auto& [id, text] : store->list_entities(org, "", 1000000)) {
      knowledge::stored_entity e;
      if (!knowledge::decode(text, e))
        entities.push_back(std::move(e));
    }
  for (const auto& p : pairs) {
    const auto kind = p.value("kind", "");
    const bool same = p.value("same", false);
    const auto a_event = p["a"].value("eventId", ""), b_event = p["b"].value("eventId", "");
    const auto a_text = p["a"].value("text", ""), b_text = p["b"].value("text", "");
    const auto a = events.count(a_event) ? entity_of(*store, entities, events[a_event], a_event, a_text) : "";
    const auto b = events.count(b_event) ? entity_of(*store, entities, events[b_event], b_event, b_text) : "";
    for (auto* c : {&rep.by_kind[kind_index(kind)], &rep.by_kind.back()}) {
      (same ? c->same : c->different)++;
      if (a.empty() || b.empty()) {
        c->unread += same;
      } else if (a == b) {
        (same ? c->joined : c->wrongly_joined)++;
      }
    }
    if (!same && !a.empty() && a == b) {
      std::string why;
      for (const auto& e : entities)
        if (e.id == a)
          for (const auto& n : e.resolutions)
            if (n.event_id == a_event || n.event_id == b_event)
              why += "; " + n.event_id + " \"" + n.mention + "\": " + n.reason;
      rep.errors.push_back("joined " + a_event + " \"" + a_text + "\" and " + b_event + " \"" + b_text + "\" (" + a +
                           why + ")");
    }
    if (same && std::getenv("ENGRAM_BENCH_RESOLUTION_SHOW"))
      std::fprintf(stderr, "%s %s \"%s\" [%s] ~ %s \"%s\" [%s]\n", a == b && !a.empty() ? "ok  " : "MISS",
                   a_event.c_str(), a_text.c_str(), a.c_str(), b_event.c_str(), b_text.c_str(), b.c_str());
  }
  for (const auto& idf : identifiers) {
    ++rep.identifiers;
    const auto folded = knowledge::fold_name(idf.value("text", ""));
    for (const auto& e : entities) {
      if (e.kind != "person" && e.kind != "organization")
        continue;
      bool named = knowledge::fold_name(e.name) == folded;
      for (const auto& a : e.aliases)
        named = named || knowledge::fold_name(a) == folded;
      if (named) {
        ++rep.identifiers_as_people_or_organisations;
        rep.errors.push_back("identifier \"" + idf.value("text", "") + "\" is the " + e.kind + " " + e.id);
        break;
      }
    }
  }
  return rep;
}

}  // namespace engram::evaluation
