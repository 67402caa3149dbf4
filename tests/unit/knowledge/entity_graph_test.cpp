// The entity reader over a real graph store (RocksDB, reopened): breadth-first traversal and
// shortest paths on generated graphs with known answers (a ring with chords; a random graph
// checked against a plain BFS written here), edge filters, directions, cycles, depth limits,
// type inheritance, fuzzy search and Mermaid; entity commands applied as the store applies
// them from engram-log.
#include "query/entity_graph.hpp"
#include "query/kag.hpp"

#include "schemas/time.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <filesystem>
#include <map>
#include <random>
#include <set>

namespace engram::query {
namespace {

class EntityGraph : public ::testing::Test {
protected:
  EntityGraph()
      : path_(
            (std::filesystem::temp_directory_path() / ("engram-entity-graph-" + std::to_string(::getpid()))).string()) {
    std::filesystem::remove_all(path_);
    open();
  }
  ~EntityGraph() override {
    reader_.reset();
    store_.reset();
    std::filesystem::remove_all(path_);
  }
  void open() {
    reader_.reset();  // it shares the store: both go before the reopen
    store_.reset();
    auto s = storage::open_graph_store({path_});
    ASSERT_TRUE(s) << s.error();
    store_ = std::move(*s);
    reader_ = std::make_unique<entity_reader>(
        store_, std::map<std::string, std::string>{{"saas_company", "company"}, {"fintech", "saas_company"}});
  }
  /// Applies a command as the store applies engram-log; returns why it was rejected ("" when not).
  std::string apply(schemas::entity_command c) {
    c.event_id = "ent-" + std::to_string(++offset_);
    c.organization_id = "acme";
    c.issued_at = "2026-05-01T10:00:00.000Z";
    c.issued_at_ms = *schemas::parse_rfc3339(c.issued_at);
    storage::entity_result r;
    storage::apply_outcome how{};
    EXPECT_EQ(store_->apply_entity_command({"engram-log", 0, offset_, "test"}, c, &r, &how), storage::errc::ok);
    return r.error;
  }
  void add(const std::vector<std::pair<std::string, std::string>>& entities) {
    schemas::entity_command c;
    c.op = schemas::entity_op::add_entities;
    for (const auto& [name, type] : entities)
      c.entities.push_back({name, type, {}, {}});
    EXPECT_EQ(apply(c), "");
  }
  void relate(const std::vector<schemas::relation_spec>& relations) {
    schemas::entity_command c;
    c.op = schemas::entity_op::relate;
    c.relations = relations;
    EXPECT_EQ(apply(c), "");
  }
  std::string id(const std::string& name) const { return store_->entity_id("acme", name); }
  std::map<std::string, std::size_t> distances(const std::string& start, std::size_t depth,
                                               const std::set<std::string>& labels, edge_direction d) {
    bool truncated = false;
    std::map<std::string, std::size_t> out;
    for (const auto& n : reader_->traverse("acme", id(start), depth, labels, d, 100000, &truncated))
      out[n.entity.name] = n.distance;
    EXPECT_FALSE(truncated);
    return out;
  }
  /// The name of the entity kag_query ranks first for `query` ("" when none).
  std::string first_answer(const std::string& query, std::size_t max_hops = 2) {
    kag_request r;
    r.query = query;
    r.max_hops = max_hops;
    const auto a = kag_query(*reader_, "acme", r);
    return a.entities.empty() ? std::string() : a.entities[0].name;
  }

  std::string path_;
  std::shared_ptr<storage::graph_store> store_;
  std::unique_ptr<entity_reader> reader_;
  std::int64_t offset_ = 0;
};

std::string n(int i) { return "n" + std::to_string(i); }

/// A ring n0 -> n1 -> ... -> n11 -> n0 ("next", weight 1) with chords n0 -> n3 -> n6 -> n9 -> n0
/// ("skip", weight 5).
void ring(EntityGraph& t, std::vector<std::pair<std::string, std::string>>& entities,
          std::vector<schemas::relation_spec>& edges) {
  for (int i = 0; i < 12; ++i) {
    entities.emplace_back(n(i), "node");
    edges.push_back({n(i), n((i + 1) % 12), "next", 1.0, {}});
    if (i % 3 == 0)
      edges.push_back({n(i), n((i + 3) % 12), "skip", 5.0, {}});
  }
}

TEST_F(EntityGraph, BreadthFirstOnARingWithChords) {
  std::vector<std::pair<std::string, std::string>> entities;
  std::vector<schemas::relation_spec> edges;
  ring(*this, entities, edges);
  add(entities);
  relate(edges);
  open();  // everything read back from RocksDB

  // Outgoing over "next" only: n_k is k hops away; the depth limit cuts the ring.
  auto d = distances("n0", 5, {"next"}, edge_direction::outgoing);
  EXPECT_EQ(d.size(), 6u);
  for (int k = 0; k <= 5; ++k)
    EXPECT_EQ(d[n(k)], std::size_t(k)) << k;
  // Both directions: min(k, 12 - k); the cycle closes without revisiting.
  d = distances("n0", 6, {"next"}, edge_direction::both);
  EXPECT_EQ(d.size(), 12u);
  for (int k = 0; k < 12; ++k)
    EXPECT_EQ(d[n(k)], std::size_t(std::min(k, 12 - k))) << k;
  // Every edge, outgoing: the chords shorten the way (n6 at 2, n8 at 4 = skip, skip, next, next).
  d = distances("n0", 10, {}, edge_direction::outgoing);
  EXPECT_EQ(d[n(3)], 1u);
  EXPECT_EQ(d[n(6)], 2u);
  EXPECT_EQ(d[n(8)], 4u);
  EXPECT_EQ(d[n(11)], 5u);  // three skips to n9, then two nexts
  // Incoming only: who reaches n0 — n11 (next) and n9 (skip) at 1.
  d = distances("n0", 1, {}, edge_direction::incoming);
  EXPECT_EQ(d, (std::map<std::string, std::size_t>{{"n0", 0}, {"n11", 1}, {"n9", 1}}));

  // Similarity 1 / (1 + distance), the start first, each level in name order; the limit.
  bool truncated = false;
  auto nodes = reader_->traverse("acme", id("n0"), 2, {}, edge_direction::outgoing, 3, &truncated);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_TRUE(truncated);
  EXPECT_EQ(nodes[0].entity.name, "n0");
  EXPECT_DOUBLE_EQ(nodes[0].similarity, 1.0);
  EXPECT_EQ(nodes[1].entity.name, "n1");
  EXPECT_EQ(nodes[2].entity.name, "n3");
  EXPECT_DOUBLE_EQ(nodes[2].similarity, 0.5);
  EXPECT_EQ(nodes[2].via, "n0");
  EXPECT_EQ(nodes[2].relationship, "skip");
}

TEST_F(EntityGraph, ShortestPathsByHopsAndByWeight) {
  std::vector<std::pair<std::string, std::string>> entities;
  std::vector<schemas::relation_spec> edges;
  ring(*this, entities, edges);
  add(entities);
  relate(edges);
  auto p = reader_->path("acme", id("n0"), id("n6"), 6, {}, edge_direction::outgoing, false);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->nodes, (std::vector<std::string>{"n0", "n3", "n6"}));
  EXPECT_DOUBLE_EQ(p->total_weight, 10.0);
  p = reader_->path("acme", id("n0"), id("n6"), 6, {}, edge_direction::outgoing, true);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->nodes.size(), 7u);  // six "next" edges: weight 6 < 10
  EXPECT_DOUBLE_EQ(p->total_weight, 6.0);
  // Within 4 hops by weight: a skip and three nexts (8, either order) beat skip, skip (10).
  p = reader_->path("acme", id("n0"), id("n6"), 4, {}, edge_direction::outgoing, true);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->nodes == (std::vector<std::string>{"n0", "n3", "n4", "n5", "n6"}) ||
              p->nodes == (std::vector<std::string>{"n0", "n1", "n2", "n3", "n6"}));
  EXPECT_DOUBLE_EQ(p->total_weight, 8.0);
  EXPECT_EQ(reader_->path("acme", id("n0"), id("n6"), 4, {}, edge_direction::outgoing, true)->nodes, p->nodes);
  // Filters and limits: over "next" only n6 is 6 hops away; 5 is not enough; backwards
  // (incoming) from n6 to n0 needs the reverse direction.
  EXPECT_FALSE(reader_->path("acme", id("n0"), id("n6"), 5, {"next"}, edge_direction::outgoing, false));
  EXPECT_TRUE(reader_->path("acme", id("n0"), id("n6"), 6, {"next"}, edge_direction::outgoing, false));
  EXPECT_FALSE(reader_->path("acme", id("n6"), id("n0"), 3, {"next"}, edge_direction::outgoing, false));
  p = reader_->path("acme", id("n6"), id("n0"), 3, {}, edge_direction::both, false);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->edges.size(), 2u);  // n6 <-skip- n3 <-skip- n0
  EXPECT_EQ(p->edges[0].from, "n3");
  EXPECT_EQ(p->edges[0].to, "n6");
  p = reader_->path("acme", id("n4"), id("n4"), 3, {}, edge_direction::both, false);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->nodes, (std::vector<std::string>{"n4"}));
}

TEST_F(EntityGraph, TraversalMatchesAPlainBreadthFirstSearchOnARandomGraph) {
  constexpr int nodes = 150, edge_count = 450;
  std::mt19937 rng(20261124);
  std::vector<std::pair<std::string, std::string>> entities;
  for (int i = 0; i < nodes; ++i)
    entities.emplace_back(n(i), "node");
  add(entities);
  std::set<std::tuple<int, int, std::string>> edges;
  const char* labels[] = {"a", "b", "c"};
  while (edges.size() < edge_count) {
    int x = int(rng() % nodes), y = int(rng() % nodes);
    if (x != y)
      edges.emplace(x, y, labels[rng() % 3]);
  }
  std::vector<schemas::relation_spec> specs;
  for (const auto& [x, y, l] : edges)
    specs.push_back({n(x), n(y), l, 1.0, {}});
  relate(specs);
  auto reference = [&](int start, std::size_t depth, const std::set<std::string>& only, edge_direction d) {
    std::map<std::string, std::size_t> dist{{n(start), 0}};
    std::deque<int> q{start};
    std::map<int, std::size_t> at{{start, 0}};
    while (!q.empty()) {
      int u = q.front();
      q.pop_front();
      if (at[u] == depth)
        continue;
      for (const auto& [x, y, l] : edges) {
        if (!only.empty() && !only.count(l))
          continue;
        int v = -1;
        if (x == u && d != edge_direction::incoming)
          v = y;
        else if (y == u && d != edge_direction::outgoing)
          v = x;
        if (v < 0 || at.count(v))
          continue;
        at[v] = at[u] + 1;
        dist[n(v)] = at[v];
        q.push_back(v);
      }
    }
    return dist;
  };
  for (int start : {0, 7, 42, 149})
    for (std::size_t depth : {1, 2, 3, 5})
      for (auto d : {edge_direction::outgoing, edge_direction::incoming, edge_direction::both})
        for (const auto& only : {std::set<std::string>{}, std::set<std::string>{"a"}, std::set<std::string>{"b", "c"}})
          EXPECT_EQ(distances(n(start), depth, only, d), reference(start, depth, only, d))
              << "start " << start << " depth " << depth << " direction " << int(d);
  // Shortest path lengths agree with the reference's distances.
  // clang-format off
  const auto from = reference(0, 6, {}, edge_direction::outgoing);
  for (int target : {1, 20, 77, 120}) {
    auto p = reader_->path("acme", id("n0"), id(n(target)), 6, {}, edge_direction::outgoing, false);
    auto it = from.find(n(target));
    ASSERT_EQ(p.has_value(), it != from.end()) << target;
    if (p)
      EXPECT_EQ(p->edges.size(), it->second) << target;
  }
}

TEST_F(EntityGraph, WalksSeeMergesAndDeletesAliveAndAfterAReopen) {
  add({{"A", "company"}, {"B", "company"}, {"C", "person"}, {"D", "product"}, {"E", "product"}});
  relate({{"B", "D", "makes", 1.0, {}}, {"C", "B", "works_at", 1.0, {}}, {"A", "E", "makes", 1.0, {}},
          {"B", "A", "partner_of", 1.0, {}}, {"C", "E", "uses", 1.0, {}}});
  schemas::entity_command merge;
  merge.op = schemas::entity_op::merge_entities;
  merge.name_a = "A";
  merge.name_b = "B";
  EXPECT_EQ(apply(merge), "");
  schemas::entity_command remove;
  remove.op = schemas::entity_op::delete_entities;
  remove.names = {"E"};
  // clang-format on
  EXPECT_EQ(apply(remove), "");
  auto walk = [&] {
    bool truncated = false;
    std::vector<std::string> out;
    for (const auto& n : reader_->traverse("acme", id("A"), 3, {}, edge_direction::both, 100, &truncated))
      out.push_back(n.entity.name + "@" + std::to_string(n.distance) + " via " + n.via + " " + n.relationship);
    return out;
  };
  const auto live = walk();
  EXPECT_EQ(live, (std::vector<std::string>{"A@0 via  ", "C@1 via A works_at", "D@1 via A makes"}));
  EXPECT_EQ(id("B"), id("A"));  // B's name is now A's alias
  open();
  EXPECT_EQ(walk(), live);
  EXPECT_TRUE(reader_->path("acme", id("C"), id("D"), 2, {}, edge_direction::outgoing, false).has_value());
  EXPECT_FALSE(reader_->path("acme", id("D"), id("C"), 2, {}, edge_direction::outgoing, false).has_value());
}

TEST_F(EntityGraph, TypesInheritSearchIsFuzzyAndMermaidEscapes) {
  add({{"Stripe", "company"},
       {"Cloudflare", "saas_company"},
       {"Paystack", "fintech"},
       {"String (Rust type)", "technology"},
       {"Say \"hi\" <b>#1|2</b>", "other"}});
  EXPECT_DOUBLE_EQ(reader_->type_match("company", "company"), 1.0);
  EXPECT_DOUBLE_EQ(reader_->type_match("Company", "SaaS company"), 0.8);
  EXPECT_DOUBLE_EQ(reader_->type_match("company", "fintech"), 0.8 * 0.8);
  EXPECT_DOUBLE_EQ(reader_->type_match("fintech", "company"), 0.0);
  auto hits = reader_->search("acme", "stri", 10);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].first.name, "Stripe");
  EXPECT_EQ(reader_->search("acme", "Stirpe", 10).at(0).first.name, "Stripe");  // a transposition
  EXPECT_TRUE(reader_->search("acme", "xq", 10).empty());
  std::size_t shown = 0, omitted = 0;
  auto m = reader_->mermaid("acme", "", 2, 100, &shown, &omitted);
  EXPECT_EQ(shown, 5u);
  EXPECT_NE(m.find("Say #quot;hi#quot; #lt;b#gt;#35;1#124;2#lt;/b#gt;"), std::string::npos) << m;
  EXPECT_EQ(edit_distance("stripe", "stirpe"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  open();  // the in-memory entity index is rebuilt from RocksDB
  EXPECT_EQ(reader_->search("acme", "stri", 10).at(0).first.name, "Stripe");
  EXPECT_TRUE(reader_->search("globex", "stri", 10).empty());
}

// kag_query walks a reporting line the way the question asks: "who manages X"
// is the target of X's reports_to edge, "who reports to X" its sources.
TEST_F(EntityGraph, KagQueryReadsTheDirectionOfAReportingLine) {
  add({{"Dana Kim", "person"}, {"Mei Chen", "person"}, {"Sam Lee", "person"}});
  relate({{"Dana Kim", "Mei Chen", "reports_to", 1.0, {}}, {"Sam Lee", "Dana Kim", "reports_to", 1.0, {}}});
  EXPECT_EQ(first_answer("Who manages Dana Kim?"), "Mei Chen");
  EXPECT_EQ(first_answer("Who reports to Dana Kim?"), "Sam Lee");
}

// Each relation the question speaks of is a step: "the boss of Dana's manager" is two
// reporting lines up (not Dana's manager, not Dana's manager's other reports), and the
// entity a question names is not its answer when it asks a relation of it.
TEST_F(EntityGraph, KagQueryWalksEveryStepTheQuestionNames) {
  add({{"Dana Kim", "person"},
       {"Mei Chen", "person"},
       {"Sam Lee", "person"},
       {"Ava Ng", "person"},
       {"Globex", "organization"},
       {"Snowflake", "technology"}});
  relate({{"Dana Kim", "Sam Lee", "reports_to", 1.0, {}},
          {"Ava Ng", "Sam Lee", "reports_to", 1.0, {}},
          {"Sam Lee", "Mei Chen", "reports_to", 1.0, {}},
          {"Dana Kim", "Globex", "works_at", 1.0, {}},
          {"Globex", "Snowflake", "uses", 1.0, {}}});
  EXPECT_EQ(first_answer("Who is the boss of Dana Kim's manager?"), "Mei Chen");
  EXPECT_EQ(first_answer("Which technology does the company Dana Kim works at use?"), "Snowflake");
}

// Where no typed relation reaches an answer, kag_query falls back to the statements that
// name the question's entities and share its words, and says so.
TEST_F(EntityGraph, KagQueryFallsBackToStatementsWhenNoTypedRelationAnswers) {
  schemas::inbound_message m;
  m.event_id = "m-1";
  m.organization_id = "acme";
  m.sent_at = "2026-05-01T10:00:00Z";
  m.sent_at_ms = *schemas::parse_rfc3339(m.sent_at);
  m.from = {"Dana Kim", "dana@acme.example", ""};
  m.subject = "Hosting";
  m.body = "Globex moved its hosting to Hetzner.";
  schemas::extraction x;
  x.mentions.push_back({schemas::entity_kind::organization, "Globex", "Globex", {}, {}, {}, {}, {}});
  x.mentions.push_back({schemas::entity_kind::technology, "Hetzner", "Hetzner", {}, {}, {}, {}, {}});
  schemas::entry e;
  e.type = schemas::entry_type::fact;
  e.title = e.content = m.body;
  e.confidence = 0.8;
  e.mentions = {0, 1};
  e.sig.words = "glob move host hetz";
  x.entries.push_back(e);
  storage::apply_outcome how{};
  ASSERT_EQ(store_->apply({"engram-log", 0, ++offset_, "test"}, &m, &x, nullptr, &how), storage::errc::ok);

  kag_request r;
  r.query = "Which provider does Globex host with?";
  auto a = kag_query(*reader_, "acme", r);
  for (const auto& k : a.entities)
    EXPECT_NE(k.name, "Hetzner") << "without terms, the walk alone answers";
  r.terms = [](std::string_view q) {  // the index's words: lower case, the first four letters
    std::vector<std::string> out;
    std::string w;
    for (char c : std::string(q) + " ")
      if (std::isalpha(static_cast<unsigned char>(c)))
        w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      else if (!w.empty())
        out.push_back(w.substr(0, 4)), w.clear();
    return out;
  };
  a = kag_query(*reader_, "acme", r);
  ASSERT_FALSE(a.entities.empty());
  EXPECT_EQ(a.entities[0].name, "Hetzner");
  EXPECT_NE(a.note.find("no typed relation answers the question"), std::string::npos) << a.note;
}

}  // namespace
}  // namespace engram::query
