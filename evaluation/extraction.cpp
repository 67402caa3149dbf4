#include "evaluation/extraction.hpp"

#include "base/names.hpp"
#include "reading/extract.hpp"
#include "reading/rules.hpp"
#include "schemas/inbound_message.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <tuple>
#include <optional>

namespace engram::evaluation {
namespace {

using json = nlohmann::json;

/// Lower-case, letters and digits only, single spaces: the form texts are compared in.
std::string norm(std::string_view s) {
  std::string out;
  bool space = false;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c >= 0x80) {
      if (space && !out.empty())
        out += ' ';
      space = false;
      out += static_cast<char>(std::tolower(c));
    } else {
      space = true;
    }
  }
  return out;
}

bool overlaps(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty())
    return false;
  return a.find(b) != std::string::npos || b.find(a) != std::string::npos;
}

/// "priya" matches "priya shah"; "northwind" matches "northwind traders".
bool same_name(const std::string& gold, const std::string& pred) {
  if (gold == pred)
    return true;
  auto prefix = [](const std::string& shorter, const std::string& longer) {
    return longer.rfind(shorter + " ", 0) == 0;
  };
  return prefix(gold, pred) || prefix(pred, gold);
}

std::size_t type_index(schemas::entry_type t) {
  for (std::size_t i = 0; i < 7; ++i)
    if (schemas::all_entry_types[i] == t)
      return i;
  return 0;
}

}  // namespace

double report::macro_f1() const {
  double sum = 0;
  for (const auto& c : types)
    sum += c.f1();
  return sum / static_cast<double>(types.size());
}

double report::typed_recall() const {
  std::size_t tp = 0;
  for (const auto& c : types)
    tp += c.tp;
  return gold_entries ? double(tp) / double(gold_entries) : 1.0;
}

double report::typed_precision() const {
  std::size_t tp = 0;
  for (const auto& c : types)
    tp += c.tp;
  return predicted_entries ? double(tp) / double(predicted_entries) : 1.0;
}

counts report::entities_total() const {
  counts t;
  for (const auto& c : entities) {
    t.tp += c.tp;
    t.fp += c.fp;
    t.fn += c.fn;
  }
  return t;
}

namespace {

/// Entries: greedy matching of gold sentences to extracted entries by text overlap, same type first.
void score_entries(report& r, const schemas::extraction& x, json& labels) {
  const bool show = std::getenv("ENGRAM_BENCH_ENTRIES_SHOW") != nullptr;
  std::vector<bool> used(x.entries.size(), false);
  std::vector<std::string> pred_norm;
  for (const auto& e : x.entries)
    pred_norm.push_back(norm(e.content));
  r.predicted_entries += x.entries.size();
  for (const auto& g : labels["entries"]) {
    ++r.gold_entries;
    auto gt = schemas::parse_entry_type(g["type"].get<std::string>());
    auto gi = type_index(gt.value_or(schemas::entry_type::fact));
    auto gn = norm(g["text"].get<std::string>());
    std::optional<std::size_t> match;
    for (int pass = 0; pass < 2 && !match; ++pass)
      for (std::size_t i = 0; i < x.entries.size(); ++i)
        if (!used[i] && overlaps(gn, pred_norm[i]) && (pass == 1 || x.entries[i].type == gt)) {
          match = i;
          break;
        }
    const auto due = g.value("dueAt", std::string());
    r.due_dates += !due.empty();
    if (!match) {
      if (show)
        std::fprintf(stderr, "not read, %s: %s\n", g["type"].get<std::string>().c_str(), g["text"].dump().c_str());
      if (!due.empty() && std::getenv("ENGRAM_BENCH_DUE_SHOW"))
        std::fprintf(stderr, "due %s, no entry read: %s\n", due.c_str(), g["text"].dump().c_str());
      ++r.confusion[gi][7];
      ++r.types[gi].fn;
      continue;
    }
    used[*match] = true;
    r.due_dates_correct += !due.empty() && x.entries[*match].due_at == due;
    if (!due.empty() && x.entries[*match].due_at != due && std::getenv("ENGRAM_BENCH_DUE_SHOW"))
      std::fprintf(stderr, "due %s read %s (%s): %s\n", due.c_str(), x.entries[*match].due_at.c_str(),
                   std::string(schemas::to_string(x.entries[*match].type)).c_str(), g["text"].dump().c_str());
    auto pi = type_index(x.entries[*match].type);
    if (show && pi != gi)
      std::fprintf(stderr, "%s read as %s: %s\n", g["type"].get<std::string>().c_str(),
                   std::string(schemas::to_string(x.entries[*match].type)).c_str(), g["text"].dump().c_str());
    ++r.confusion[gi][pi];
    if (pi == gi) {
      ++r.types[gi].tp;
    } else {
      ++r.types[gi].fn;
      ++r.types[pi].fp;
    }
  }
  for (std::size_t i = 0; i < x.entries.size(); ++i) {
    if (used[i])
      continue;
    ++r.types[type_index(x.entries[i].type)].fp;
    if (show)
      std::fprintf(stderr, "read, not labelled, %s: %s\n", std::string(schemas::to_string(x.entries[i].type)).c_str(),
                   json(x.entries[i].content).dump().c_str());
    for (const auto& j : labels["junk"])
      if (overlaps(norm(j.get<std::string>()), pred_norm[i])) {
        ++r.junk_entries;
        break;
      }
  }
}

/// Entities, kind by kind. A person the headers name (from, to, cc) is read from them, not
/// guessed: one the labels leave out is not a false positive (the held-out set labels the
/// people a message's text names; the development set lists its participants too).
void score_entities(report& r, const schemas::inbound_message& m, const schemas::extraction& x, json& labels) {
  auto participant = [&](const schemas::entity_mention& p) {
    if (p.kind != schemas::entity_kind::person)
      return false;
    auto named = [&](const schemas::participant& q) { return !q.name.empty() && norm(q.name) == norm(p.value); };
    return named(m.from) || std::any_of(m.to.begin(), m.to.end(), named) ||
           std::any_of(m.cc.begin(), m.cc.end(), named);
  };
  const auto& ents = labels["entities"];
  auto score = [&](std::size_t k, schemas::entity_kind kind, const json& gold, auto same) {
    std::vector<bool> taken(x.mentions.size(), false);
    for (const auto& g : gold) {
      bool found = false;
      for (std::size_t i = 0; i < x.mentions.size(); ++i)
        if (!taken[i] && x.mentions[i].kind == kind && same(g, x.mentions[i])) {
          taken[i] = found = true;
          break;
        }
      found ? ++r.entities[k].tp : ++r.entities[k].fn;
    }
    for (std::size_t i = 0; i < x.mentions.size(); ++i)
      if (!taken[i] && x.mentions[i].kind == kind && !participant(x.mentions[i])) {
        // A second mention of something already matched is not a new false positive.
        bool dup = false;
        for (std::size_t j = 0; j < x.mentions.size(); ++j)
          if (taken[j] && x.mentions[j].kind == kind && same_name(norm(x.mentions[j].value), norm(x.mentions[i].value)))
            dup = true;
        if (!dup)
          ++r.entities[k].fp;
      }
  };
  auto name_match = [](const json& g, const schemas::entity_mention& p) {
    auto gn = norm(g.get<std::string>());
    return same_name(gn, norm(p.value)) || same_name(gn, norm(p.text));
  };
  score(0, schemas::entity_kind::person, ents.value("people", json::array()), name_match);
  score(1, schemas::entity_kind::organization, ents.value("organizations", json::array()), name_match);
  score(2, schemas::entity_kind::amount, ents.value("amounts", json::array()),
        [](const json& g, const schemas::entity_mention& p) {
          return std::abs(g["value"].get<double>() - std::strtod(p.value.c_str(), nullptr)) < 0.005 &&
                 g["currency"].get<std::string>() == p.currency;
        });
  score(3, schemas::entity_kind::date, ents.value("dates", json::array()),
        [](const json& g, const schemas::entity_mention& p) {
          return overlaps(norm(g["text"].get<std::string>()), norm(p.text)) &&
                 g["resolved"].get<std::string>() == p.value;
        });
  for (const auto& g : ents.value("dates", json::array())) {
    ++r.dates;
    for (const auto& p : x.mentions)
      if (p.kind == schemas::entity_kind::date && overlaps(norm(g["text"].get<std::string>()), norm(p.text))) {
        r.dates_correct += g["resolved"].get<std::string>() == p.value;
        break;
      }
  }
}

}  // namespace

report evaluate(const std::string& path, const reading::validator_options& opts) {
  report r;
  std::ifstream in(path);
  if (!in) {
    r.error = "cannot read " + path;
    return r;
  }
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    json doc = json::parse(line, nullptr, false);
    if (doc.is_discarded() || !doc.contains("labels")) {
      r.error = "not a labelled event: " + line.substr(0, 80);
      return r;
    }
    json labels = doc["labels"];
    doc.erase("labels");
    schemas::inbound_message m;
    if (auto err = schemas::decode(doc.dump(), {}, m)) {
      r.error = doc.value("eventId", "?") + ": " + err->to_string();
      return r;
    }
    ++r.messages;
    reading::validation_report vr;
    auto x = reading::extract_validated(m, opts, &vr);
    if (labels.value("injection", false)) {
      ++r.injection_messages;
      if (!vr.injection_signals.empty())
        ++r.injection_messages_flagged;
    }

    score_entries(r, x, labels);
    score_entities(r, m, x, labels);
  }
  return r;
}

std::string report::table() const {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%zu messages, %zu labelled entries, %zu extracted\n\n", messages, gold_entries,
                predicted_entries);
  out += buf;
  out += "| entry type | precision | recall | F1 | TP | FP | FN |\n|---|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < 7; ++i) {
    const auto& c = types[i];
    std::snprintf(buf, sizeof buf, "| %s | %.2f | %.2f | %.2f | %zu | %zu | %zu |\n",
                  std::string(schemas::to_string(schemas::all_entry_types[i])).c_str(), c.precision(), c.recall(),
                  c.f1(), c.tp, c.fp, c.fn);
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "| **macro** | | | **%.2f** | | | |\n\n", macro_f1());
  out += buf;
  out +=
      "| labelled \\ read as | fact | decision | event | preference | goal | relationship | action_item | not found |\n"
      "|---|---|---|---|---|---|---|---|---|\n";
  for (std::size_t g = 0; g < 7; ++g) {
    out += "| " + std::string(schemas::to_string(schemas::all_entry_types[g]));
    for (auto n : confusion[g])
      out += " | " + std::to_string(n);
    out += " |\n";
  }
  out += "\n";
  out += "| entity kind | precision | recall | F1 |\n|---|---|---|---|\n";
  static constexpr const char* kinds[] = {"person", "organization", "amount", "date"};
  for (std::size_t i = 0; i < 4; ++i) {
    std::snprintf(buf, sizeof buf, "| %s | %.2f | %.2f | %.2f |\n", kinds[i], entities[i].precision(),
                  entities[i].recall(), entities[i].f1());
    out += buf;
  }
  auto t = entities_total();
  std::snprintf(buf, sizeof buf, "| **all** | %.2f | %.2f | **%.2f** |\n\n", t.precision(), t.recall(), t.f1());
  out += buf;
  std::snprintf(
      buf, sizeof buf,
      "typed recall %.2f, typed precision %.2f; due dates %zu of %zu right (%.2f); date resolution: %zu of %zu "
      "correct (%.2f); entries from junk sentences: %zu; injection messages flagged: %zu of %zu\n",
      typed_recall(), typed_precision(), due_dates_correct, due_dates, due_date_accuracy(), dates_correct, dates,
      date_accuracy(), junk_entries, injection_messages_flagged, injection_messages);
  out += buf;
  return out;
}

namespace {

/// A name as relations are compared: as the store resolves an organisation's name (folded,
/// without a legal form at the end: "Acme Corp" and "Acme" are one entity in the store).
std::string relation_name(const std::string& s) { return names::organisation_key(s); }

/// A relation as labels and readings are compared: its ends' names (relation_name), in
/// either order for the predicates that read the same both ways (partner_of, competes_with).
std::tuple<std::string, std::string, std::string> relation_key(const std::string& subject, const std::string& predicate,
                                                               const std::string& object) {
  auto a = relation_name(subject), b = relation_name(object);
  if ((predicate == "partner_of" || predicate == "competes_with") && b < a)
    std::swap(a, b);
  return {a, predicate, b};
}

}  // namespace

relation_report evaluate_relations(const std::string& path, const reading::validator_options& opts) {
  std::ifstream in(path);
  if (!in) {
    relation_report rep;
    rep.error = "cannot read " + path;
    return rep;
  }
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(std::move(line));
  return evaluate_relations(lines, path, opts);
}

relation_report evaluate_relations(const std::vector<std::string>& lines, const std::string& path,
                                   const reading::validator_options& opts) {
  relation_report rep;
  auto predicate_index = [](const std::string& p) -> std::size_t {
    for (std::size_t i = 0; i < std::size(schemas::relation_predicates); ++i)
      if (schemas::relation_predicates[i] == p)
        return i;
    return std::size(schemas::relation_predicates);
  };
  for (const auto& line : lines) {
    if (line.empty())
      continue;
    auto j = json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      rep.error = path + ": a line is not JSON";
      return rep;
    }
    auto labels = j.value("labels", json::object()).value("relations", json::array());
    j.erase("labels");
    schemas::inbound_message m;
    if (auto bad = schemas::decode(j.dump(), {}, m)) {
      rep.error = path + ": " + bad->to_string();
      return rep;
    }
    ++rep.messages;
    // (subject, predicate, object) -> ended, labelled and read.
    std::map<std::tuple<std::string, std::string, std::string>, bool> gold, read;
    for (const auto& l : labels)
      gold[relation_key(l.value("subject", ""), l.value("predicate", ""), l.value("object", ""))] =
          l.value("ended", false);
    const auto x = reading::extract_validated(m, opts);
    {
      std::set<std::string> names;
      std::vector<std::set<std::string>> per_entry;
      for (const auto& mention : x.mentions)
        names.insert(relation_name(mention.value));
      for (const auto& e : x.entries) {
        auto& s = per_entry.emplace_back();
        for (auto i : e.mentions)
          s.insert(relation_name(x.mentions[i].value));
      }
      for (const auto& l : labels) {
        const auto a = relation_name(l.value("subject", "")), b = relation_name(l.value("object", ""));
        rep.ends_read += names.count(a) && names.count(b);
        if (std::getenv("ENGRAM_BENCH_RELATIONS_SHOW") && !(names.count(a) && names.count(b))) {
          std::string all;
          for (const auto& n : names)
            all += n + "; ";
          std::fprintf(stderr, "%s  ENDS  %s / %s not among: %s\n", m.event_id.c_str(), a.c_str(), b.c_str(),
                       all.c_str());
        }
        for (const auto& s : per_entry)
          if (s.count(a) && s.count(b)) {
            ++rep.ends_in_one_entry;
            break;
          }
      }
    }
    for (const auto& r : x.relations)
      if (r.predicate == "relates_to")
        ++rep.co_mentions;
      else
        read[relation_key(x.mentions[r.subject].value, r.predicate, x.mentions[r.object].value)] = r.ended;
    if (std::getenv("ENGRAM_BENCH_RELATIONS_SHOW")) {  // what was read wrong and missed, message by message
      for (const auto& [k, ended] : read)
        if (!gold.count(k))
          std::fprintf(stderr, "%s  read  %s %s %s\n", m.event_id.c_str(), std::get<0>(k).c_str(),
                       std::get<1>(k).c_str(), std::get<2>(k).c_str());
      for (const auto& [k, ended] : gold)
        if (!read.count(k))
          std::fprintf(stderr, "%s  MISS  %s %s %s\n", m.event_id.c_str(), std::get<0>(k).c_str(),
                       std::get<1>(k).c_str(), std::get<2>(k).c_str());
      for (const auto& [k, ended] : read)
        if (auto g = gold.find(k); g != gold.end() && g->second != ended)
          std::fprintf(stderr, "%s  ENDED %s %s %s: read %s\n", m.event_id.c_str(), std::get<0>(k).c_str(),
                       std::get<1>(k).c_str(), std::get<2>(k).c_str(), ended ? "ended" : "open");
    }
    for (const auto& [k, ended] : read) {
      const auto p = predicate_index(std::get<1>(k));
      auto g = gold.find(k);
      auto& c = p < rep.predicates.size() ? rep.predicates[p] : rep.total;
      if (g != gold.end()) {
        ++c.tp;
        ++rep.ended_checked;
        rep.ended_right += g->second == ended;
      } else {
        ++c.fp;
      }
    }
    for (const auto& [k, ended] : gold)
      if (!read.count(k)) {
        const auto p = predicate_index(std::get<1>(k));
        ++(p < rep.predicates.size() ? rep.predicates[p] : rep.total).fn;
      }
  }
  for (const auto& c : rep.predicates) {
    rep.total.tp += c.tp;
    rep.total.fp += c.fp;
    rep.total.fn += c.fn;
  }
  return rep;
}

std::string relation_report::table() const {
  std::string out = "| relation | labelled | read | precision | recall | F1 |\n|---|---|---|---|---|---|\n";
  char buf[200];
  auto row = [&](std::string_view name, const counts& c) {
    std::snprintf(buf, sizeof buf, "| %.*s | %zu | %zu | %.2f | %.2f | %.2f |\n", static_cast<int>(name.size()),
                  name.data(), c.tp + c.fn, c.tp + c.fp, c.precision(), c.recall(), c.f1());
    out += buf;
  };
  for (std::size_t i = 0; i < predicates.size(); ++i)
    if (predicates[i].tp + predicates[i].fp + predicates[i].fn > 0)  // neither labelled nor read: no row
      row(schemas::relation_predicates[i], predicates[i]);
  row("all", total);
  std::snprintf(buf, sizeof buf,
                "\n%zu messages; ended/open right on %zu of %zu relations found; %zu relates_to (two names in one "
                "statement) read, not labelled, not scored\n",
                messages, ended_right, ended_checked, co_mentions);
  out += buf;
  const auto labelled = total.tp + total.fn;
  std::snprintf(buf, sizeof buf,
                "both ends among the mentions read: %zu of %zu labelled (%.2f); both in one entry's mentions: %zu "
                "(%.2f)\n",
                ends_read, labelled, labelled ? double(ends_read) / labelled : 0.0, ends_in_one_entry,
                labelled ? double(ends_in_one_entry) / labelled : 0.0);
  out += buf;
  return out;
}

due_report evaluate_due_dates(const std::string& sentences_jsonl) {
  due_report r;
  std::ifstream in(sentences_jsonl);
  if (!in) {
    r.error = "cannot read " + sentences_jsonl;
    return r;
  }
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty())
      continue;
    auto j = json::parse(line, nullptr, false);
    const auto sent = j.is_object() ? schemas::parse_rfc3339(j.value("sentAt", "")) : std::nullopt;
    if (!sent || !j.contains("text") || !j.contains("dueAt")) {
      r.error = sentences_jsonl + ": line " + std::to_string(n) + " needs text, sentAt (RFC 3339) and dueAt";
      return r;
    }
    schemas::inbound_message m;
    m.event_id = j.value("id", "d" + std::to_string(n));
    m.organization_id = "dates";
    m.sent_at = j["sentAt"].get<std::string>();
    m.sent_at_ms = *sent;
    m.body = j["text"].get<std::string>();
    const auto x = reading::read_statement(m, schemas::entry_type::action_item, m.body, 0.8);
    const auto read = x.entries.empty() ? std::string("(no entry)") : x.entries.front().due_at;
    ++r.sentences;
    if (read == j["dueAt"].get<std::string>())
      ++r.right;
    else
      r.wrong.push_back(m.event_id + ": " + m.body + " -> " + (read.empty() ? "(none)" : read) + " (" +
                        j["dueAt"].get<std::string>() + ")");
  }
  return r;
}

}  // namespace engram::evaluation
