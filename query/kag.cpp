// Graph queries (kag.hpp). The work follows the question, not the graph: the query's word
// n-grams are looked up by name (a seek each), the walk reads the in-memory adjacency, and
// only the answer's entities and edges are read from the store.
#include "query/kag.hpp"
#include "query/words.hpp"

#include "knowledge/entry.hpp"
#include "knowledge/write_rules.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace engram::query {

namespace {

using json = nlohmann::json;

constexpr std::size_t max_query_words = 300;  // n-grams looked up: the first words only
constexpr std::size_t max_visited = 20000;    // a walk's bound on a dense graph
constexpr std::size_t max_fuzzy_words = 5;

bool is_word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80 || c == '-' ||
         c == '.' || c == '&' || c == '\'';
}

/// The query's words as written, outer punctuation and possessives removed ("Acme's" -> "Acme").
std::vector<std::string> words_of(std::string_view q) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < q.size() && out.size() < max_query_words) {
    while (i < q.size() && !is_word_byte(static_cast<unsigned char>(q[i])))
      ++i;
    std::size_t b = i;
    while (i < q.size() && is_word_byte(static_cast<unsigned char>(q[i])))
      ++i;
    std::string w(q.substr(b, i - b));
    for (std::string_view poss : {"'s", "\xE2\x80\x99s"})
      if (w.size() > poss.size() && w.compare(w.size() - poss.size(), poss.size(), poss) == 0)
        w.resize(w.size() - poss.size());
    while (!w.empty() && (w.back() == '.' || w.back() == '\'' || w.back() == '-'))
      w.pop_back();
    while (!w.empty() && (w.front() == '\'' || w.front() == '-' || w.front() == '.'))
      w.erase(0, 1);
    if (!w.empty())
      out.push_back(std::move(w));
  }
  return out;
}

const std::set<std::string>& question_words() {
  static const std::set<std::string> words{
      "a",    "an",   "the",   "of",     "in",     "on",      "at",       "to",    "for",   "and",   "or",   "is",
      "are",  "was",  "were",  "be",     "who",    "whom",    "whose",    "what",  "which", "where", "when", "how",
      "why",  "does", "do",    "did",    "that",   "this",    "these",    "those", "with",  "by",    "from", "as",
      "it",   "its",  "their", "our",    "we",     "they",    "he",       "she",   "his",   "her",   "me",   "my",
      "all",  "any",  "some",  "many",   "much",   "there",   "has",      "have",  "had",   "about", "tell", "list",
      "show", "give", "find",  "person", "people", "company", "companies"};
  return words;
}

/// Words of a relation label's meaning, as stems: a query word that starts with one of
/// them asks about that relation ("Who manages…" -> reports_to).
const std::map<std::string, std::vector<std::string>>& label_stems() {
  static const std::map<std::string, std::vector<std::string>> stems{
      {"works_at", {"work", "employ", "join", "staff", "ceo", "cto", "cfo", "coo", "vp", "head", "role", "job"}},
      {"reports_to", {"report", "manag", "boss", "superv", "lead"}},
      {"uses", {"use", "using", "run", "platform", "tool", "technolog", "product", "stack", "software"}},
      {"located_in", {"where", "locat", "based", "office", "headquart", "city", "countr"}},
      {"part_of", {"subsidiar", "parent", "own", "division", "part", "acquir", "belong"}},
      {"partner_of", {"partner", "allian"}},
      {"customer_of", {"custom", "client", "buy", "bought", "purchas", "vendor", "supplier"}},
      {"competes_with", {"compet", "rival"}},
      {"defines", {"defin", "specif", "standard", "meaning"}},
      {"makes", {"make", "made", "vendor", "develop", "build", "sell", "behind", "product", "maker"}},
  };
  return stems;
}

bool starts_with(std::string_view s, std::string_view p) { return s.size() >= p.size() && s.substr(0, p.size()) == p; }

/// Which way a question walks a reporting line from the person it names: "Who manages
/// Dana?" asks for the target of Dana's reports_to edge (outgoing), "Who reports to Dana?"
/// for its sources (incoming); nullopt when it does not say.
std::optional<bool> reporting_direction(const std::vector<std::string>& query_lc) {
  for (std::size_t i = 0; i < query_lc.size(); ++i) {
    const auto& w = query_lc[i];
    if (starts_with(w, "report") || w == "reporting" || (w == "direct" && i + 1 < query_lc.size()))
      return false;
    if (starts_with(w, "manag") || starts_with(w, "boss") || starts_with(w, "superv") || w == "leads" || w == "lead")
      return true;
  }
  return std::nullopt;
}

/// True when a query word speaks of `label` (its stems, or the label's own words).
bool label_asked(const std::string& label, const std::vector<std::string>& query_lc) {
  const auto& stems = label_stems();
  std::vector<std::string> parts;
  if (auto it = stems.find(label); it != stems.end())
    parts = it->second;
  for (std::size_t b = 0; b <= label.size();) {
    auto e = label.find('_', b);
    auto part = label.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (part.size() >= 3 && part != "with" && part != "of")
      parts.push_back(part.substr(0, std::min<std::size_t>(part.size(), 5)));
    if (e == std::string::npos)
      break;
    b = e + 1;
  }
  for (const auto& w : query_lc)
    for (const auto& p : parts)
      if (starts_with(w, p))
        return true;
  return false;
}

/// The words that say what a question asks for: "who" alone, "where" alone, the word after
/// "which" or "what" ("Which technology does the company Mei works at use?" ->
/// "technology", not "company"); all the words when none of them.
std::vector<std::string> focus_of(const std::vector<std::string>& query_lc) {
  for (std::size_t i = 0; i < query_lc.size(); ++i) {
    const auto& w = query_lc[i];
    if (w == "who" || w == "whom" || w == "where")
      return {w};
    if ((w == "which" || w == "what") && i + 1 < query_lc.size() && !question_words().count(query_lc[i + 1]))
      return {query_lc[i + 1]};
  }
  return query_lc;
}

/// True when a query word speaks of an entity type ("which technologies", "who").
bool type_asked(const std::string& type, const std::vector<std::string>& query_lc) {
  const auto t = lower_ascii(type);
  for (const auto& w : query_lc) {
    if ((w == "who" || w == "whom" || starts_with(w, "person") || starts_with(w, "people")) && t == "person")
      return true;
    if ((starts_with(w, "compan") || starts_with(w, "organi") || starts_with(w, "customer") ||
         starts_with(w, "vendor") || starts_with(w, "partner")) &&
        (t == "organization" || t == "company"))
      return true;
    if ((w == "where" || starts_with(w, "city") || starts_with(w, "locat")) && t == "location")
      return true;
    if (w.size() >= 5 && t.size() >= 5 && w.compare(0, 5, t, 0, 5) == 0)
      return true;
  }
  return false;
}

struct node {
  std::string id;
  std::size_t distance = 0;
  double confidence = 0;
  /// Edges on the best path whose label the query speaks of.
  std::size_t asked_edges = 0;
  /// Reached over an edge the query speaks of (the last step of some path is asked).
  bool reached_by_asked = false;
  /// The query's words found in the statements of the path's edges ("signed", "renewal"),
  /// as a factor: 1 when none.
  double relevance = 1;
  /// The best score of any path that reaches it, also longer ones: in a graph where many
  /// things are named together, the path that means something is seldom the shortest
  /// (Umbrella -> the person who signed its renewal -> their manager, who is also named
  /// with Umbrella in a note).
  double best = 0;
  bool named = false;
};

/// How much the statements behind an entity's edges share the query's own words, per
/// neighbour. Reads the edges and their statements from the store, within a budget of
/// statement reads per query, so a walk through hubs stays bounded (what it has not read
/// counts as no shared word).
class statement_relevance {
public:
  statement_relevance(const storage::graph_store& store, const std::string& org, std::vector<std::string> words)
      : store_(store), org_(org), words_(std::move(words)) {}

  /// Shared words between the query and the statement of the edge from `id` to `other`.
  std::size_t shared(const std::string& id, const std::string& other) {
    if (words_.empty())
      return 0;
    auto [it, fresh] = by_node_.try_emplace(id);
    if (fresh && budget_ > 0)  // spent: no more store reads, not even of the edges
      for (bool outgoing : {true, false})
        for (const auto& e : store_.entity_edges(org_, id, outgoing)) {
          auto entry = e.attributes.find("entry");
          if (entry == e.attributes.end() || budget_ == 0)
            continue;
          --budget_;
          auto& best = it->second[outgoing ? e.to_id : e.from_id];
          best = std::max(best, words_in(entry->second));
        }
    auto o = it->second.find(other);
    return o == it->second.end() ? 0 : o->second;
  }

private:
  std::size_t words_in(const std::string& entry_id) {
    auto raw = store_.get_entry(org_, entry_id);
    knowledge::stored_entry st;
    if (!raw || knowledge::decode(*raw, st))
      return 0;
    const auto text = lower_ascii(st.content);
    std::size_t n = 0;
    for (const auto& w : words_)
      n += text.find(w) != std::string::npos;
    return n;
  }

  const storage::graph_store& store_;
  const std::string& org_;
  std::vector<std::string> words_;
  std::size_t budget_ = 256;
  std::map<std::string, std::map<std::string, std::size_t>> by_node_;
};

std::string two_places(double v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

/// "2026-01-10T09:00:00Z" -> "2026-01-10".
std::string day_of(const std::string& t) { return t.substr(0, std::min<std::size_t>(t.size(), 10)); }

}  // namespace

std::vector<std::string> entities_named(const storage::graph_store& store, const std::string& org,
                                        std::string_view text) {
  const auto words = words_of(text);
  std::vector<std::string> out;
  std::vector<bool> covered(words.size(), false);
  for (std::size_t len = std::min<std::size_t>(4, words.size()); len >= 1; --len) {
    for (std::size_t b = 0; b + len <= words.size(); ++b) {
      if (std::any_of(covered.begin() + static_cast<std::ptrdiff_t>(b),
                      covered.begin() + static_cast<std::ptrdiff_t>(b + len), [](bool c) { return c; }))
        continue;
      if (len == 1 && (question_words().count(lower_ascii(words[b])) || words[b].size() < 2))
        continue;
      std::string name = words[b];
      for (std::size_t k = b + 1; k < b + len; ++k)
        name += " " + words[k];
      const auto id = store.entity_id(org, name);
      if (id.empty())
        continue;
      if (std::find(out.begin(), out.end(), id) == out.end())
        out.push_back(id);
      std::fill(covered.begin() + static_cast<std::ptrdiff_t>(b),
                covered.begin() + static_cast<std::ptrdiff_t>(b + len), true);
    }
  }
  return out;
}

std::optional<std::string> check(const kag_request& r) {
  if (r.query.empty())
    return "query: must not be empty";
  if (r.query.size() > kag_limits::query_bytes)
    return "query: at most " + std::to_string(kag_limits::query_bytes) + " bytes (10 KB)";
  if (r.entities.size() > kag_limits::hints)
    return "entities: at most " + std::to_string(kag_limits::hints) + " names";
  if (r.max_hops > kag_limits::max_hops)
    return "max_hops: at most " + std::to_string(kag_limits::max_hops);
  if (r.limit < 1 || r.limit > kag_limits::max_limit)
    return "limit: must be 1.." + std::to_string(kag_limits::max_limit);
  return std::nullopt;
}

namespace {

/// An entity of the walk with its name, type and score, ranked.
struct ranked {
  const node* n;
  std::string name, type;
  double score;
};

/// A relation's source: the message, or the document a chunk belongs to (its id and title).
struct source {
  std::string id, title, sent_at;
};

/// One graph query, step by step; kag_query runs the steps in order. Reads go to the store
/// of one organisation; nothing is written.
class query_run {
public:
  query_run(const entity_reader& reader, const std::string& org, const kag_request& r)
      : reader_(reader), store_(reader.store()), org_(org), r_(r), words_(words_of(r.query)) {
    for (const auto& w : words_)
      query_lc_.push_back(lower_ascii(w));
    direction_ = reporting_direction(query_lc_);
    for (const auto& [label, stems] : label_stems())
      asks_relation_ = asks_relation_ || asks(label);
  }

  /// Whether the question speaks of `label` (label_asked, remembered).
  bool asks(const std::string& label) {
    auto [it, fresh] = asked_labels_.try_emplace(label, false);
    if (fresh)
      it->second = label_asked(label, query_lc_);
    return it->second;
  }

  /// Whether the walk reached, over a relation the question speaks of, an entity of the
  /// type it asks for.
  [[nodiscard]] bool typed_answer() const {
    const auto focus = focus_of(query_lc_);
    std::string name, type;
    for (const auto& [id, n] : seen_)
      if (!n.named && n.asked_edges > 0 && store_.entity_name(org_, id, &name, &type) && type_asked(type, focus))
        return true;
    return false;
  }

  /// The fallback when no typed relation answers: the statements that name an entity of
  /// the question and share its words (BM25, best first) bring the other entities they
  /// name, scored by the statement's rank. How many it added (the note says so).
  std::size_t from_statements(kag_answer& out) {
    constexpr std::size_t statements = 30;
    if (!r_.terms)
      return 0;
    std::set<std::string> named;
    for (const auto& [id, n] : seen_)
      if (n.named)
        named.insert(id);
    std::vector<std::string> ids;
    for (auto& hit : store_.search_text(org_, without_stop_words(r_.terms(r_.query)), statements))
      ids.push_back(std::move(hit.first));
    const auto raws = store_.get_entries(org_, ids);  // one batched read, best first
    std::size_t rank = 0, added = 0;
    for (const auto& raw : raws) {
      ++rank;
      knowledge::stored_entry st;
      if (!raw || knowledge::decode(*raw, st))
        continue;
      if (std::none_of(st.entities.begin(), st.entities.end(),
                       [&](const knowledge::mention_ref& m) { return named.count(m.entity_id) > 0; }))
        continue;
      const double s = 0.8 / (1.0 + 0.1 * static_cast<double>(rank));
      for (const auto& m : st.entities) {
        if (m.entity_id.empty() || named.count(m.entity_id))
          continue;
        auto [it, fresh] = seen_.try_emplace(m.entity_id);
        auto& n = it->second;
        if (fresh) {
          n.id = m.entity_id;
          n.distance = 1;
          n.confidence = 0.5;
          ++added;
        }
        n.best = std::max(n.best, s);
      }
    }
    if (added)
      out.note = "no typed relation answers the question: " + std::to_string(added) +
                 " entities from statements that name its entities and share its words";
    return added;
  }

  /// Seeds: the longest word n-grams (up to four words) that name an entity, exactly or by
  /// an alias; then the hints; then, when nothing matched, a fuzzy look at the query's words.
  /// False when nothing is named (`out` then says why).
  bool seed(kag_answer& out) {
    out.named = entities_named(store_, org_, r_.query);
    for (const auto& id : out.named)
      add_seed(id, 1.0);
    for (const auto& hint : r_.entities) {
      if (auto id = store_.entity_id(org_, hint); !id.empty())
        add_seed(id, 1.0);
      else if (auto near = near_name(hint); !near.empty())
        add_seed(near, 0.8);
    }
    if (seen_.empty())
      for (std::size_t i = 0, tried = 0; i < words_.size() && tried < max_fuzzy_words; ++i) {
        if (words_[i].size() < 4 || question_words().count(query_lc_[i]))
          continue;
        ++tried;
        if (auto near = near_name(words_[i]); !near.empty())
          add_seed(near, 0.8);
      }
    if (!seen_.empty())
      return true;
    out.note = reader_.list(org_, "", 1).empty() ? "the knowledge graph of this organisation is empty"
                                                 : "no entity of this organisation's graph is named in the query";
    out.context = "Knowledge Graph Results for: " + r_.query.substr(0, 200) + "\n\n" + out.note + ".\n";
    return false;
  }

  /// The walk: breadth first over the typed edges in both directions, to max_hops. A node's
  /// confidence is the best product of edge confidences (weights above 1 count as 1) from a
  /// named entity. Returns how many entities it reached.
  std::size_t walk() {
    statement_relevance relevance(store_, org_, own_words());
    std::vector<std::string> frontier;
    for (const auto& [id, n] : seen_)
      frontier.push_back(id);
    for (std::size_t hop = 1; hop <= r_.max_hops && !frontier.empty() && seen_.size() < max_visited; ++hop) {
      std::vector<std::string> next;
      for (const auto& id : frontier) {
        const node from = seen_[id];
        for (const auto& nb : store_.entity_neighbours(org_, id, true, true)) {
          const double c = from.confidence * std::clamp(nb.weight, 0.0, 1.0);
          // A reporting line is asked one way ("the boss of Dana's manager": up, twice).
          const bool wrong_way = nb.label == "reports_to" && direction_ && *direction_ != nb.outgoing;
          const std::size_t asked = from.asked_edges + (asks(nb.label) && !wrong_way ? 1 : 0);
          const double rel = from.relevance * (1.0 + 0.5 * static_cast<double>(relevance.shared(id, nb.other_id)));
          const double path = c / static_cast<double>(1 + hop) * (1.0 + 0.5 * static_cast<double>(asked)) * rel;
          auto [it, fresh] = seen_.try_emplace(nb.other_id);
          auto& n = it->second;
          n.best = std::max(n.best, path);
          if (fresh) {
            n.id = nb.other_id;
            n.distance = hop;
            next.push_back(nb.other_id);
          } else if (n.distance < hop) {
            continue;  // reached before, nearer: walked on from there
          }
          n.confidence = std::max(n.confidence, c);
          n.asked_edges = std::max(n.asked_edges, asked);
          n.reached_by_asked = n.reached_by_asked || asked > from.asked_edges;
          n.relevance = std::max(n.relevance, rel);
          if (seen_.size() >= max_visited)
            break;
        }
      }
      frontier = std::move(next);
    }
    return seen_.size();
  }

  /// Ranking: nearer, surer, reached over the relations the question speaks of and through
  /// statements that share its words, of the type it asks for; each entity by its best path.
  /// Names and types come from memory; the best `limit` only.
  [[nodiscard]] std::vector<ranked> rank() const {
    const auto focus = focus_of(query_lc_);
    std::vector<ranked> all;
    all.reserve(seen_.size());
    for (const auto& [id, n] : seen_) {
      ranked x{&n, {}, {}, 0};
      if (!store_.entity_name(org_, id, &x.name, &x.type))
        continue;
      // A named entity is what the question starts from, seldom its answer: half its weight,
      // a fifth when the question asks a relation ("the company Dana works at").
      x.score = n.named ? (asks_relation_ ? 0.2 : 0.5) * n.confidence : n.best;
      if (!n.named && type_asked(x.type, focus))
        x.score += 0.25;
      // Each relation the question speaks of that the path walks is a step of the question
      // answered: "the boss of Dana's manager" is two reporting lines up, not one.
      if (!n.named)
        x.score += 0.3 * static_cast<double>(n.asked_edges) + (n.reached_by_asked ? 0.3 : 0.0);
      all.push_back(std::move(x));
    }
    const auto better = [](const ranked& a, const ranked& b) {
      return a.score != b.score ? a.score > b.score : a.name < b.name;
    };
    if (all.size() > r_.limit) {
      std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(r_.limit), all.end(), better);
      all.resize(r_.limit);
    } else {
      std::sort(all.begin(), all.end(), better);
    }
    return all;
  }

  /// The answer's entities, read from the store, with a description each.
  void answer_entities(const std::vector<ranked>& all, kag_answer& out) {
    for (const auto& x : all) {
      knowledge::stored_entity e;
      if (auto raw = store_.get_entity(org_, x.n->id); !raw || knowledge::decode(*raw, e))
        continue;
      kag_entity k;
      k.id = e.id;
      k.name = x.name;
      k.type = x.type;
      if (!e.observations.empty())
        k.description = e.observations.front();
      else if (!e.role.empty())
        k.description = e.role + (e.company.empty() ? "" : " at " + e.company);
      else if (auto d = e.attributes.find("description"); d != e.attributes.end())
        k.description = d->second;
      k.confidence = std::round(std::min(1.0, x.n->confidence) * 1000) / 1000;
      k.distance = x.n->distance;
      k.score = std::round(x.score * 1000) / 1000;
      index_.emplace(k.id, out.entities.size());
      out.entities.push_back(std::move(k));
    }
  }

  /// Relations among the answer's entities, with the statement and message that support
  /// each; the ones the question speaks of first; each entity's source from its relations.
  void add_relations(kag_answer& out) {
    for (const auto& subject : out.entities)
      for (const auto& edge : store_.entity_edges(org_, subject.id, true))
        if (auto obj = index_.find(edge.to_id); obj != index_.end())
          if (auto rel = relation(subject, edge, out.entities[obj->second].name))
            out.relations.push_back(std::move(*rel));
    // A job read from mail describes a person the store knows nothing else about.
    for (const auto& [subject_id, role, object] : roles_)
      if (auto& e = out.entities[index_.at(subject_id)]; e.description.empty())
        e.description = role + " at " + object;
    std::stable_partition(out.relations.begin(), out.relations.end(),
                          [&](const kag_relation& rel) { return asks(rel.predicate); });
    // An entity's source: the first message that supports one of its relations.
    for (const auto& rel : out.relations)
      for (const auto* name : {&rel.subject, &rel.object})
        for (auto& e : out.entities)
          if (e.name == *name && e.source_document_id.empty() && !rel.source_document_id.empty()) {
            e.source_document_id = rel.source_document_id;
            e.source_document_title = rel.source_document_title;
          }
  }

private:
  void add_seed(const std::string& id, double confidence) {
    auto& n = seen_[id];
    if (n.id.empty() || confidence > n.confidence) {
      n.id = id;
      n.confidence = confidence;
      n.named = true;
    }
  }

  /// A name written a little differently ("Contosso"): the names that share its first
  /// letters (a seek in the name index), within an edit or two.
  [[nodiscard]] std::string near_name(const std::string& written) const {
    const auto norm = normalise_name(written);
    if (norm.size() < 4)
      return {};
    const std::size_t max_edits = norm.size() >= 8 ? 2 : 1;
    for (std::size_t keep : {norm.size() - 2, std::size_t{3}}) {
      for (const auto& [name, id] :
           store_.names_with_prefix(org_, norm.substr(0, std::max<std::size_t>(3, keep)), 64)) {
        const auto first = name.substr(0, name.find(' '));
        if (edit_distance(norm, name) <= max_edits || edit_distance(norm, first) <= max_edits)
          return id;
      }
    }
    return {};
  }

  /// The query's own words, beside the names and question words ("signed", "renewal"): the
  /// first five letters of each word of four letters or more.
  [[nodiscard]] std::vector<std::string> own_words() const {
    std::vector<std::string> out;
    std::set<std::string> name_words;
    for (const auto& [id, n] : seen_) {
      std::string name, type;
      if (store_.entity_name(org_, id, &name, &type))
        for (const auto& w : words_of(name))
          name_words.insert(lower_ascii(w));
    }
    for (const auto& w : query_lc_)
      if (w.size() >= 4 && !question_words().count(w) && !name_words.count(w)) {
        auto stem = w.substr(0, 5);
        if (std::find(out.begin(), out.end(), stem) == out.end())
          out.push_back(std::move(stem));
      }
    return out;
  }

  /// The source of a statement's message (read once per message).
  const source& message_of(const std::string& event_id) {
    auto [it, fresh] = messages_.try_emplace(event_id, source{event_id, {}, {}});
    if (fresh)
      if (auto m = store_.get_message(org_, event_id)) {
        auto j = json::parse(*m, nullptr, false);
        if (j.is_object()) {
          it->second.title = j.value("subject", std::string());
          it->second.sent_at = j.value("sentAt", std::string());
          if (auto doc = j.find("document"); doc != j.end() && doc->is_object()) {
            it->second.id = doc->value("id", event_id);
            it->second.title = doc->value("title", it->second.title);
          }
        }
      }
    return it->second;
  }

  /// One edge as a relation of the answer; nothing when the request asks for another source.
  template <class Edge>
  std::optional<kag_relation> relation(const kag_entity& subject, const Edge& edge, const std::string& object) {
    auto attr = [&](const char* k) {
      auto it = edge.attributes.find(k);
      return it == edge.attributes.end() ? std::string() : it->second;
    };
    kag_relation rel;
    rel.subject = subject.name;
    rel.predicate = edge.label;
    rel.object = object;
    rel.confidence = std::round(std::clamp(edge.weight, 0.0, 1.0) * 1000) / 1000;
    rel.valid_from = attr("validFrom");
    rel.valid_to = attr("validTo");
    const auto evidence = attr("message");
    if (!evidence.empty()) {
      const auto& src = message_of(evidence);
      rel.source_document_id = src.id;
      rel.source_document_title = src.title;
    }
    if (!r_.source_id.empty() && rel.source_document_id != r_.source_id && evidence != r_.source_id)
      return std::nullopt;
    if (auto entry_id = attr("entry"); !entry_id.empty())
      if (auto raw = store_.get_entry(org_, entry_id)) {
        knowledge::stored_entry st;
        if (!knowledge::decode(*raw, st)) {
          rel.statement = st.content;
          rel.entry_id = std::move(entry_id);
        }
      }
    if (auto role = attr("role"); edge.label == "works_at" && !role.empty() && rel.valid_to.empty())
      roles_.push_back({subject.id, role, object});
    return rel;
  }

  const entity_reader& reader_;
  const storage::graph_store& store_;
  const std::string& org_;
  const kag_request& r_;
  std::vector<std::string> words_, query_lc_;
  /// reporting_direction of the question.
  std::optional<bool> direction_;
  /// The question speaks of some relation (a label's words).
  bool asks_relation_ = false;
  /// label_asked of each label met, once per query (the walk asks it for every edge).
  std::unordered_map<std::string, bool> asked_labels_;
  std::map<std::string, node> seen_;                    // id -> best node
  std::unordered_map<std::string, std::size_t> index_;  // id -> position in the answer's entities
  std::map<std::string, source> messages_;              // eventId -> its source
  /// Jobs read from mail (works_at with a role, not ended): subject id, role, company.
  std::vector<std::tuple<std::string, std::string, std::string>> roles_;
};

/// The context for an LLM: the entities, the relations, the statements that support them.
void write_context(const kag_request& r, kag_answer& out) {
  std::string& c = out.context;
  c = "Knowledge Graph Results for: " + r.query.substr(0, 200) + "\n\n## Entities\n";
  for (const auto& e : out.entities) {
    c += "- **" + e.name + "** (" + e.type + ")";
    if (!e.description.empty())
      c += ": " + e.description;
    c += "\n";
  }
  if (out.relations.empty())
    return;
  c += "\n## Relations\n";
  for (const auto& rel : out.relations) {
    c += "- " + rel.subject + " " + rel.predicate + " " + rel.object + " (confidence " + two_places(rel.confidence);
    if (!rel.valid_from.empty())
      c += "; from " + day_of(rel.valid_from);
    if (!rel.valid_to.empty())
      c += "; until " + day_of(rel.valid_to);
    c += ")\n";
  }
  bool header = false;
  for (const auto& rel : out.relations) {
    if (rel.statement.empty())
      continue;
    if (!header)
      c += "\n## Supporting statements\n";
    header = true;
    c += "- " + rel.subject + " " + rel.predicate + " " + rel.object + ": \"" + rel.statement + "\"";
    if (!rel.source_document_id.empty()) {
      c += " (source " + rel.source_document_id;
      if (!rel.source_document_title.empty())
        c += ", \"" + rel.source_document_title + "\"";
      if (!rel.valid_from.empty())
        c += ", " + day_of(rel.valid_from);
      c += ")";
    }
    c += "\n";
  }
}

}  // namespace

kag_answer kag_query(const entity_reader& reader, const std::string& org, const kag_request& r) {
  kag_answer out;
  query_run run(reader, org, r);
  if (!run.seed(out))
    return out;
  out.total_entities = run.walk();
  // The statements' entities are a hop away: max_hops 0 (the named entities only) keeps out.
  if (!run.typed_answer() && r.max_hops > 0)
    out.total_entities += run.from_statements(out);
  run.answer_entities(run.rank(), out);
  if (r.include_relations)
    run.add_relations(out);
  write_context(r, out);
  return out;
}

}  // namespace engram::query
