// The entity graph's tools against engramd running as a child process, over MCP/HTTP: each
// change goes through engram-log's encoder and decoder as an entity-command record. The
// entity workflow end to end, traversal and paths, the
// reference memory server's own test scenarios re-expressed as black-box calls (its
// repository's src/memory/__tests__), bad input, and isolation between organisations. The
// last check of each test: every tool of its set is announced by tools/list and called.
#include "net/http.hpp"
#include "schemas/tools.hpp"
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <fstream>
#include <thread>
#include <set>

namespace {

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

const std::string acme = "entity-acme-0123456789abcdef";
const std::string globex = "entity-globex-0123456789abcdef";
const std::string acme_reader = "entity-acme-reader-0123456789abcdef";

std::set<std::string> names_of(const json& list, const char* key = "name") {
  std::set<std::string> out;
  for (const auto& x : list)
    out.insert(x[key].get<std::string>());
  return out;
}

std::string error_of(const json& r) { return r.contains("error") ? r["error"].get<std::string>() : std::string(); }

class EntityTools : public ::testing::Test {
protected:
  EntityTools() : dir_("entity-tools"), broker_(test::start_broker()) {}

  void SetUp() override { start(); }
  void TearDown() override {
    if (engramd_)
      EXPECT_EQ(engramd_->terminate(10s), 0) << test::tail(log());
  }

  void start() {
    std::vector<std::string> sets{"auth.tokens=[{token: " + acme +
                                      ", organization_id: acme, scopes: [read, write], name: agent-a}, "
                                      "{token: " +
                                      acme_reader +
                                      ", organization_id: acme, scopes: [read], name: reader}, "
                                      "{token: " +
                                      globex + ", organization_id: globex, scopes: [read, write], name: agent-g}]",
                                  "entities.type_parents={saas_company: company, fintech: saas_company}"};
    sets.insert(sets.end(), extra_sets_.begin(), extra_sets_.end());
    engramd_ =
        std::make_unique<test::engramd>(test::engramd_args(broker_->bootstrap(), dir_.sub("store"), sets), log());
    port_ = engramd_->port();
    ASSERT_TRUE(test::wait_until([&] { return test::ready(port_); }, 60s)) << test::tail(log());
  }

  void restart() {
    ASSERT_EQ(engramd_->terminate(10s), 0) << test::tail(log());
    start();
  }

  std::string log() const { return dir_.sub("engramd.log"); }

  json call(const std::string& tool, const json& args, const std::string& token = acme) {
    called_.insert(tool);
    return test::mcp_call(port_, token, tool, args);
  }
  json ok(const std::string& tool, const json& args, const std::string& token = acme) {
    auto r = call(tool, args, token);
    EXPECT_FALSE(r.contains("error")) << tool << " " << args.dump() << " -> " << r;
    return r;
  }
  json add(const std::string& name, const std::string& type, json attributes = json::object()) {
    return ok("entity_add", {{"name", name}, {"entity_type", type}, {"attributes", attributes}});
  }
  json relate(const std::string& from, const std::string& to, const std::string& label) {
    return ok("entity_relate", {{"from", from}, {"to", to}, {"relationship", label}});
  }

  /// Every tool `definitions` holds is announced by tools/list and was called by this test.
  void expect_every_tool_called(std::string_view definitions) {
    const auto listed = listed_tools();
    for (const auto& t : json::parse(definitions)) {
      const auto tool = t["name"].get<std::string>();
      EXPECT_TRUE(listed.count(tool)) << tool << " is not announced by tools/list";
      EXPECT_TRUE(called_.count(tool)) << tool << " is never called by this test";
    }
  }

  /// Runs the real Mermaid parser (tests/mcp/mermaid_check.mjs) over `diagrams`; its output.
  int parse_mermaid(const std::vector<std::string>& diagrams, std::string* out) {
    std::string files;
    for (std::size_t i = 0; i < diagrams.size(); ++i) {
      const auto f = dir_.sub("diagram-" + std::to_string(i) + ".mmd");
      std::ofstream(f) << diagrams[i];
      files += " " + f;
    }
    return test::run("ENGRAM_NODE_MODULES=" ENGRAM_SOURCE_DIR "/.cache/node/node_modules node " ENGRAM_SOURCE_DIR
                     "/tests/mcp/mermaid_check.mjs" +
                         files,
                     out);
  }

  std::set<std::string> listed_tools() { return test::listed_tools(port_, acme); }

  test::temp_dir dir_;
  std::unique_ptr<ingest::embedded_broker> broker_;
  std::uint16_t port_ = 0;
  std::unique_ptr<test::engramd> engramd_;
  std::set<std::string> called_;
  /// More config for the next start().
  std::vector<std::string> extra_sets_;
};

TEST_F(EntityTools, TheSeedWorkflowEndToEnd) {
  // Add, and add again: attributes merged, created false.
  auto stripe = add("Stripe", "company", {{"founded", "2010"}, {"industry", "payments"}});
  EXPECT_EQ(stripe["created"], true);
  EXPECT_EQ(stripe["entity_type"], "company");
  stripe = add("stripe", "company", {{"headquarters", "San Francisco"}, {"industry", "online payments"}});
  EXPECT_EQ(stripe["created"], false);
  EXPECT_EQ(stripe["name"], "Stripe");  // one node, whatever the case
  EXPECT_EQ(stripe["attributes"],
            (json{{"founded", "2010"}, {"headquarters", "San Francisco"}, {"industry", "online payments"}}));
  add("Rust", "technology");
  add("Patrick Collison", "person", {{"role", "CEO"}});
  add("Cloudflare", "saas_company");
  add("Tokio", "technology");
  add("Mozilla", "company");
  add("String (Rust type)", "technology");
  add("Paystack", "fintech");
  add("Square", "company");

  // Relate: both ends must exist; labels normalised; the same edge once.
  EXPECT_EQ(relate("Stripe", "Rust", "uses")["created"], true);
  EXPECT_EQ(relate("Stripe", "Rust", "Uses")["created"], false);
  relate("Stripe", "Patrick Collison", "founded_by");
  relate("Cloudflare", "Rust", "uses");
  EXPECT_EQ(relate("Tokio", "Rust", "part of")["relationship"], "part_of");
  relate("Rust", "Mozilla", "createdBy");
  EXPECT_EQ(error_of(call("entity_relate", {{"from", "Stripe"}, {"to", "Nobody"}, {"relationship", "uses"}})),
            "to: no entity 'Nobody' in this organisation");

  // "Stripe, Inc." is found separately, then merged into Stripe.
  add("Stripe, Inc.", "company", {{"legal_name", "Stripe, Inc."}, {"founded", "2009"}});
  relate("Stripe, Inc.", "Paystack", "acquired");
  relate("Square", "Stripe, Inc.", "competes_with");
  relate("Stripe, Inc.", "Rust", "uses");  // Stripe has it already: not gained
  auto merged = ok("entity_merge", {{"name_a", "Stripe"}, {"name_b", "Stripe, Inc."}});
  EXPECT_EQ(merged, (json{{"merged_into", "Stripe"},
                          {"removed", "Stripe, Inc."},
                          {"attributes_gained", 1},
                          {"relationships_gained", 2}}));
  EXPECT_EQ(error_of(call("entity_merge", {{"name_a", "Stripe"}, {"name_b", "Stripe, Inc."}})),
            "name_b: 'Stripe, Inc.' and 'Stripe' are already one entity")
      << "the old name is now Stripe's alias";
  auto related = ok("entity_find_related", {{"name", "Stripe"}})["related"];
  std::set<std::string> seen;
  for (const auto& r : related)
    seen.insert(r["name"].get<std::string>() + " " + r["relationship"].get<std::string>() + " " +
                r["direction"].get<std::string>());
  EXPECT_EQ(seen, (std::set<std::string>{"Rust uses outgoing", "Patrick Collison founded_by outgoing",
                                         "Paystack acquired outgoing", "Square competes_with incoming"}));

  // Fuzzy search: "stri" finds Stripe first; a typo still finds it; the old name too.
  auto results = ok("entity_search", {{"query", "stri"}})["results"];
  ASSERT_GE(results.size(), 2u) << results;
  EXPECT_EQ(results[0]["name"], "Stripe");
  EXPECT_EQ(results[1]["name"], "String (Rust type)");
  EXPECT_GT(results[0]["score"].get<double>(), results[1]["score"].get<double>());
  EXPECT_LE(results[0]["score"].get<double>(), 1.0);
  EXPECT_EQ(ok("entity_search", {{"query", "Strpie"}})["results"][0]["name"], "Stripe");
  EXPECT_EQ(ok("entity_search", {{"query", "stripe inc"}})["results"][0]["name"], "Stripe");
  EXPECT_TRUE(ok("entity_search", {{"query", "zzzz"}})["results"].empty());

  // Related to Rust, both directions.
  related = ok("entity_find_related", {{"name", "Rust"}})["related"];
  seen.clear();
  for (const auto& r : related)
    seen.insert(r["name"].get<std::string>() + " " + r["relationship"].get<std::string>() + " " +
                r["direction"].get<std::string>());
  EXPECT_EQ(seen, (std::set<std::string>{"Stripe uses incoming", "Cloudflare uses incoming", "Tokio part_of incoming",
                                         "Mozilla created_by outgoing"}));

  // Questions, without a model. Cloudflare is a saas_company, a company by type_parents.
  auto q = ok("entity_query", {{"question", "which companies use Rust?"}});
  EXPECT_EQ(names_of(q["entities"]), (std::set<std::string>{"Stripe", "Cloudflare"})) << q;
  EXPECT_NE(q["answer"].get<std::string>().find("Stripe uses Rust."), std::string::npos) << q;
  q = ok("entity_query", {{"question", "what do we know about Stripe?"}});
  ASSERT_EQ(q["entities"].size(), 1u) << q;
  EXPECT_EQ(q["entities"][0]["name"], "Stripe");
  EXPECT_EQ(q["entities"][0]["relationships"].size(), 4u) << q;
  const auto answer = q["answer"].get<std::string>();
  EXPECT_NE(answer.find("Stripe is a company"), std::string::npos) << answer;
  EXPECT_NE(answer.find("uses Rust"), std::string::npos) << answer;
  EXPECT_NE(answer.find("acquired Paystack"), std::string::npos) << answer;
  q = ok("entity_query", {{"question", "list the fintechs"}});
  EXPECT_EQ(names_of(q["entities"]), (std::set<std::string>{"Paystack"})) << q;
  EXPECT_EQ(ok("entity_query", {{"question", "what about quantum gravity?"}})["entities"].size(), 0u);

  // Mermaid: the whole graph, then a bounded part around Rust with a note of the rest.
  auto v = ok("entity_visualize", json::object());
  const auto mermaid = v["mermaid"].get<std::string>();
  EXPECT_EQ(mermaid.rfind("graph LR\n", 0), 0u) << mermaid;
  EXPECT_EQ(v["nodes"], 9);  // 10 added, one merged away
  EXPECT_EQ(v["omitted"], 0);
  EXPECT_NE(mermaid.find("-->|uses|"), std::string::npos) << mermaid;
  EXPECT_NE(mermaid.find("String (Rust type)"), std::string::npos) << mermaid;
  v = ok("entity_visualize", {{"name", "Rust"}, {"depth", 1}, {"limit", 3}});
  EXPECT_EQ(v["nodes"], 3);
  EXPECT_EQ(v["omitted"], 2);  // Rust's five neighbours, two shown
  EXPECT_NE(v["mermaid"].get<std::string>().find("%% 2 more entities not shown"), std::string::npos) << v;

  // Names that are Mermaid syntax render as text: the real parser reads every diagram.
  for (const auto* hostile :
       {"Say \"hi\" <b>#1</b>", "a|b]c[d{e}(f)", "end", "graph LR", "Zoë 日本 -->|x|", "%% not a comment"})
    add(hostile, "other; type [x]");
  relate("end", "graph LR", "links to");
  relate("Say \"hi\" <b>#1</b>", "a|b]c[d{e}(f)", "quotes");
  std::string parsed;
  const auto hostile_diagram = ok("entity_visualize", json::object())["mermaid"].get<std::string>();
  EXPECT_EQ(parse_mermaid({mermaid, v["mermaid"].get<std::string>(), hostile_diagram}, &parsed), 0)
      << parsed << hostile_diagram;
  EXPECT_NE(parse_mermaid({"graph LR\n  n1[[\"unclosed\n"}, &parsed), 0)
      << "the parser must be able to fail: " << parsed;
  ok("delete_entities",
     {{"entityNames",
       {"Say \"hi\" <b>#1</b>", "a|b]c[d{e}(f)", "end", "graph LR", "Zoë 日本 -->|x|", "%% not a comment"}}});

  // Traversal and paths.
  auto t = ok("graph_traverse", {{"start", "Patrick Collison"}, {"max_depth", 2}});
  std::map<std::string, int> distance;
  for (const auto& n : t["nodes"])
    distance[n["name"].get<std::string>()] = n["distance"].get<int>();
  EXPECT_EQ(distance["Patrick Collison"], 0);
  EXPECT_EQ(distance["Stripe"], 1);
  EXPECT_EQ(distance["Rust"], 2);
  EXPECT_EQ(distance["Square"], 2);
  EXPECT_FALSE(distance.count("Mozilla"));  // three hops away
  EXPECT_DOUBLE_EQ(t["nodes"][1]["similarity"].get<double>(), 0.5);
  t = ok("graph_traverse",
         {{"start", "Stripe"}, {"max_depth", 3}, {"edge_types", {"uses", "created_by"}}, {"direction", "outgoing"}});
  EXPECT_EQ(names_of(t["nodes"]), (std::set<std::string>{"Stripe", "Rust", "Mozilla"}));
  t = ok("graph_traverse", {{"start", "Rust"}, {"max_depth", 2}, {"entity_type", "company"}});
  std::map<std::string, double> confidence;
  for (const auto& n : t["nodes"])
    confidence[n["name"].get<std::string>()] = n["type_confidence"].get<double>();
  EXPECT_DOUBLE_EQ(confidence["Stripe"], 1.0);
  EXPECT_DOUBLE_EQ(confidence["Cloudflare"], 0.8);
  EXPECT_DOUBLE_EQ(confidence["Paystack"], 0.8 * 0.8);
  EXPECT_FALSE(confidence.count("Tokio"));
  auto p = ok("graph_path", {{"from", "Patrick Collison"}, {"to", "Mozilla"}});
  EXPECT_EQ(p["nodes"], (json{"Patrick Collison", "Stripe", "Rust", "Mozilla"}));
  EXPECT_EQ(p["hops"], 3);
  EXPECT_EQ(p["edges"][0],
            (json{{"from", "Stripe"}, {"to", "Patrick Collison"}, {"relationship", "founded_by"}, {"weight", 1.0}}));
  EXPECT_EQ(error_of(call("graph_path", {{"from", "Patrick Collison"}, {"to", "Mozilla"}, {"max_depth", 2}})),
            "no path from 'Patrick Collison' to 'Mozilla' within 2 hops");
  EXPECT_EQ(error_of(call("graph_path", {{"from", "Patrick Collison"}, {"to", "Mozilla"}, {"direction", "outgoing"}})),
            "no path from 'Patrick Collison' to 'Mozilla' within 4 hops");

  // Bad input: a clear error naming the field, nothing written.
  EXPECT_EQ(error_of(call("entity_add", {{"name", "X"}, {"entity_type", "company"}, {"attributes", {{"n", 5}}}})),
            "attributes.n: must be a string");
  EXPECT_NE(error_of(call("entity_add", {{"name", std::string(300, 'x')}, {"entity_type", "company"}})).find("name"),
            std::string::npos);
  EXPECT_NE(error_of(call("entity_add", {{"name", "X"}})).find("entity_type"), std::string::npos);
  EXPECT_EQ(error_of(call("entity_relate", {{"from", "Stripe"}, {"to", "Rust"}, {"relationship", "--"}})),
            "relationship: has no letters or digits");
  EXPECT_NE(error_of(call("graph_traverse", {{"start", "Stripe"}, {"max_depth", 9}})).find("max_depth"),
            std::string::npos);
  EXPECT_EQ(error_of(call("entity_find_related", {{"name", "Nobody"}})),
            "name: no entity 'Nobody' in this organisation");
  EXPECT_NE(error_of(call("entity_add", {{"name", "Y"}, {"entity_type", "company"}}, acme_reader)).find("scope"),
            std::string::npos);

  // Isolation: another organisation sees none of it, and its own names are its own.
  EXPECT_TRUE(ok("entity_search", {{"query", "stri"}}, globex)["results"].empty());
  EXPECT_EQ(error_of(call("entity_find_related", {{"name", "Rust"}}, globex)),
            "name: no entity 'Rust' in this organisation");
  EXPECT_EQ(ok("entity_add", {{"name", "Rust"}, {"entity_type", "game"}}, globex)["created"], true);
  EXPECT_EQ(ok("entity_find_related", {{"name", "Rust"}}, globex)["related"].size(), 0u);
  EXPECT_EQ(ok("entity_visualize", json::object(), globex)["nodes"], 1);

  // Everything survives a restart (the store, rebuilt from nothing but what was applied).
  restart();
  EXPECT_EQ(ok("entity_find_related", {{"name", "Rust"}})["related"].size(), 4u);
  EXPECT_EQ(ok("entity_search", {{"query", "stri"}})["results"][0]["name"], "Stripe");
  expect_every_tool_called(schemas::entity_tool_definitions());
}

/// The reference memory server's test scenarios (modelcontextprotocol/servers,
/// src/memory/__tests__), as black-box calls; where Engram differs on purpose, the
/// difference is asserted.
TEST_F(EntityTools, TheMemoryServersScenarios) {
  // Create: duplicates skipped, empty arrays fine.
  auto r =
      ok("create_entities", {{"entities",
                              {{{"name", "Alice"}, {"entityType", "person"}, {"observations", {"works at Acme Corp"}}},
                               {{"name", "Bob"}, {"entityType", "person"}, {"observations", json::array()}}}}});
  EXPECT_EQ(names_of(r["entities"]), (std::set<std::string>{"Alice", "Bob"}));
  EXPECT_EQ(r["entities"][0]["observations"], (json{"works at Acme Corp"}));
  r = ok("create_entities", {{"entities",
                              {{{"name", "Alice"}, {"entityType", "person"}, {"observations", json::array()}},
                               {{"name", "Carol"}, {"entityType", "engineer"}, {"observations", {"likes Rust"}}}}}});
  EXPECT_EQ(names_of(r["entities"]), (std::set<std::string>{"Carol"}));
  EXPECT_EQ(ok("create_entities", {{"entities", json::array()}})["entities"], json::array());

  // Relations: created once; an unknown end is an error (the reference accepts it).
  r = ok("create_relations", {{"relations",
                               {{{"from", "Alice"}, {"to", "Bob"}, {"relationType", "knows"}},
                                {{"from", "Carol"}, {"to", "Alice"}, {"relationType", "works_with"}}}}});
  EXPECT_EQ(r["relations"].size(), 2u);
  EXPECT_EQ(ok("create_relations",
               {{"relations", {{{"from", "Alice"}, {"to", "Bob"}, {"relationType", "knows"}}}}})["relations"],
            json::array());
  EXPECT_EQ(error_of(call("create_relations",
                          {{"relations", {{{"from", "Alice"}, {"to", "Zed"}, {"relationType", "knows"}}}}})),
            "relations[0].to: no entity 'Zed' in this organisation");
  EXPECT_EQ(ok("create_relations", {{"relations", json::array()}})["relations"], json::array());

  // Observations: added once each; a missing entity is the reference's error.
  r = ok("add_observations",
         {{"observations", {{{"entityName", "Alice"}, {"contents", {"likes tea", "works at Acme Corp"}}}}}});
  EXPECT_EQ(r["results"], (json{{{"entityName", "Alice"}, {"addedObservations", {"likes tea"}}}}));
  EXPECT_EQ(error_of(call("add_observations", {{"observations", {{{"entityName", "Nobody"}, {"contents", {"x"}}}}}})),
            "Entity with name Nobody not found");
  EXPECT_EQ(ok("delete_observations", {{"deletions",
                                        {{{"entityName", "Alice"}, {"observations", {"likes tea"}}},
                                         {{"entityName", "Nobody"}, {"observations", {"x"}}}}}})["success"],
            true);
  EXPECT_EQ(ok("open_nodes", {{"names", {"Alice"}}})["entities"][0]["observations"], (json{"works at Acme Corp"}));

  // Search: name, type or observation, case-insensitive; relations touching a result.
  r = ok("search_nodes", {{"query", "ALICE"}});
  EXPECT_EQ(names_of(r["entities"]), (std::set<std::string>{"Alice"}));
  EXPECT_EQ(r["relations"].size(), 2u) << r;  // Alice->Bob, Carol->Alice: one end in the results
  EXPECT_EQ(names_of(ok("search_nodes", {{"query", "person"}})["entities"]), (std::set<std::string>{"Alice", "Bob"}));
  EXPECT_EQ(names_of(ok("search_nodes", {{"query", "acme"}})["entities"]), (std::set<std::string>{"Alice"}));
  EXPECT_EQ(ok("search_nodes", {{"query", "nothing-matches"}}),
            (json{{"entities", json::array()}, {"relations", json::array()}, {"total", 0}}));
  // Ranked (Engram): the exact name before a name that merely contains it, before an observation.
  ok("create_entities", {{"entities",
                          {{{"name", "Rustacean"}, {"entityType", "person"}, {"observations", json::array()}},
                           {{"name", "Rust"}, {"entityType", "language"}, {"observations", json::array()}}}}});
  r = ok("search_nodes", {{"query", "rust"}});
  ASSERT_EQ(r["entities"].size(), 3u) << r;
  EXPECT_EQ(r["entities"][0]["name"], "Rust");
  EXPECT_EQ(r["entities"][1]["name"], "Rustacean");
  EXPECT_EQ(r["entities"][2]["name"], "Carol");
  EXPECT_EQ(ok("search_nodes", {{"query", "rust"}, {"limit", 1}})["total"], 3);

  // Open: outgoing and incoming relations of the named nodes; unknown names ignored.
  r = ok("open_nodes", {{"names", {"Bob", "Nobody"}}});
  EXPECT_EQ(names_of(r["entities"]), (std::set<std::string>{"Bob"}));
  EXPECT_EQ(r["relations"], (json{{{"from", "Alice"}, {"to", "Bob"}, {"relationType", "knows"}}}));
  r = ok("open_nodes", {{"names", {"Alice"}}});
  EXPECT_EQ(r["relations"].size(), 2u) << r;

  // read_graph, paged (Engram): every entity once over the pages, each relation once.
  std::set<std::string> all;
  std::size_t relations = 0, pages = 0;
  json page = ok("read_graph", {{"limit", 2}});
  for (;;) {
    ++pages;
    for (const auto& e : page["entities"])
      EXPECT_TRUE(all.insert(e["name"].get<std::string>()).second);
    relations += page["relations"].size();
    if (!page.contains("nextCursor"))
      break;
    page = ok("read_graph", {{"limit", 2}, {"cursor", page["nextCursor"]}});
  }
  EXPECT_EQ(all, (std::set<std::string>{"Alice", "Bob", "Carol", "Rust", "Rustacean"}));
  EXPECT_EQ(relations, 2u);
  EXPECT_EQ(pages, 3u);

  // The entity tools see the same graph.
  EXPECT_EQ(ok("entity_find_related", {{"name", "Alice"}})["related"].size(), 2u);

  // Deletes: relations, then entities with their relations (cascade); missing: no-op.
  EXPECT_EQ(ok("delete_relations", {{"relations",
                                     {{{"from", "Alice"}, {"to", "Bob"}, {"relationType", "knows"}},
                                      {{"from", "Alice"}, {"to", "Nobody"}, {"relationType", "knows"}}}}})["deleted"],
            1);
  EXPECT_EQ(ok("delete_entities", {{"entityNames", {"Carol", "Nobody"}}})["deleted"], 1);
  r = ok("open_nodes", {{"names", {"Alice", "Carol"}}});
  EXPECT_EQ(names_of(r["entities"]), (std::set<std::string>{"Alice"}));
  EXPECT_EQ(r["relations"], json::array());
  EXPECT_EQ(ok("entity_search", {{"query", "Carol"}})["results"], json::array());

  // Persistence across a restart.
  restart();
  r = ok("read_graph", json::object());
  EXPECT_EQ(names_of(r["entities"]), (std::set<std::string>{"Alice", "Bob", "Rust", "Rustacean"}));
  EXPECT_EQ(ok("open_nodes", {{"names", {"Alice"}}})["entities"][0]["observations"], (json{"works at Acme Corp"}));

  // Bad input: the schema's errors name the field.
  EXPECT_NE(error_of(call("create_entities", {{"entities", {{{"name", "D"}}}}})).find("entityType"), std::string::npos);
  EXPECT_NE(error_of(call("delete_entities", json::object())).find("entityNames"), std::string::npos);
  expect_every_tool_called(schemas::memory_tool_definitions());
}

/// Answers stay under the size cap (256 KiB): a page of large entities ends early with a
/// cursor, and paging still lists every entity once.
TEST_F(EntityTools, LargeEntitiesArePagedUnderTheSizeCap) {
  const std::string line(1000, 'x');
  for (int b = 0; b < 3; ++b) {
    json observations = json::array();
    for (int k = 0; k < 200; ++k)
      observations.push_back(line + std::to_string(k));
    ok("create_entities",
       {{"entities", {{{"name", "Big" + std::to_string(b)}, {"entityType", "blob"}, {"observations", observations}}}}});
  }
  ok("create_entities", {{"entities", {{{"name", "Small"}, {"entityType", "blob"}, {"observations", json::array()}}}}});
  std::set<std::string> seen;
  json page = ok("read_graph", {{"limit", 1000}});
  std::size_t pages = 1;
  for (; page.contains("nextCursor"); ++pages) {
    EXPECT_LE(page.dump().size(), 260u * 1024) << "page " << pages;
    for (const auto& e : page["entities"])
      EXPECT_TRUE(seen.insert(e["name"].get<std::string>()).second);
    page = ok("read_graph", {{"limit", 1000}, {"cursor", page["nextCursor"]}});
  }
  for (const auto& e : page["entities"])
    EXPECT_TRUE(seen.insert(e["name"].get<std::string>()).second);
  EXPECT_EQ(seen, (std::set<std::string>{"Big0", "Big1", "Big2", "Small"}));
  EXPECT_GE(pages, 3u);
  auto found = ok("search_nodes", {{"query", "big"}});
  EXPECT_LT(found["entities"].size(), 3u);
  EXPECT_EQ(found["total"], 3);
}

/// Entity writes and mail together, engramd killed with SIGKILL in the middle of a burst of
/// entity writes (when engram-log has grown by a set number of records: observed, not timed),
/// restarted: every answered write is in the graph, nothing is applied twice (the live store
/// equals a replay of the log into a new store, digest for digest).
TEST_F(EntityTools, KillNineDuringEntityWritesLosesAndDoublesNothingAndAReplayRebuildsIt) {
  const auto mail = test::make_events(30);
  std::vector<std::pair<std::string, std::string>> keyed;
  for (const auto& e : mail)
    keyed.emplace_back(test::org_of(e), e);
  test::produce_raw(broker_->bootstrap(), "inbound-messages", keyed);
  const auto log_before = test::topic_size(broker_->bootstrap(), "engram-log");
  // The writer: an agent adding and relating entities as fast as answers come.
  std::set<int> answered;
  std::atomic<int> i{0};
  std::thread writer([&] {
    for (; i < 400; ++i) {
      const auto name = "E" + std::to_string(i);
      auto r = test::mcp_call(
          port_, acme, "entity_add",
          {{"name", name}, {"entity_type", i % 2 ? "company" : "product"}, {"attributes", {{"n", std::to_string(i)}}}});
      if (r.contains("error"))
        return;  // engramd is gone
      if (i > 0) {
        r = test::mcp_call(port_, acme, "entity_relate",
                           {{"from", name}, {"to", "E" + std::to_string(i - 1)}, {"relationship", "follows"}});
        if (r.contains("error"))
          return;
      }
      answered.insert(i);
    }
  });
  // SIGKILL while the writer is in the middle of its burst: once engram-log has grown by 41 records.
  const bool grew = test::wait_until(
      [&] { return test::topic_size(broker_->bootstrap(), "engram-log") - log_before >= 41; }, 60s, 1ms);
  engramd_->kill9();
  writer.join();
  called_.insert({"entity_add", "entity_relate"});
  ASSERT_TRUE(grew) << test::tail(log());
  ASSERT_LT(i.load(), 400) << "the writer never saw engramd go";
  start();
  // Read your writes: the sentinel is answered once everything before it on its partition is applied.
  ASSERT_EQ(ok("entity_add", {{"name", "sentinel"}, {"entity_type", "other"}})["created"], true);
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port_) == long(mail.size()); }, 60s))
      << test::events_applied(port_) << test::tail(log());
  for (int k : answered) {
    auto e = ok("entity_find_related", {{"name", "E" + std::to_string(k)}});
    std::size_t follows = 0;
    for (const auto& r : e["related"])
      follows += r["relationship"] == "follows";
    EXPECT_GE(follows, k == 0 ? 0u : 1u) << k;
  }
  // A person from mail and the same person from a tool are one node.
  // clang-format off
  const json sarah_mail{{"eventId", "mail-sarah"}, {"organizationId", "acme"}, {"sourceType", "email"},
                        {"sentAt", "2026-05-01T09:00:00Z"}, {"from", {{"name", "Sarah Lee"}, {"address", "sarah@acme.example"}}},
                        {"subject", "renewal"}, {"body", "We decided to renew the Contoso contract for two years."}};
  // clang-format on
  test::produce_raw(broker_->bootstrap(), "inbound-messages", {{"acme", sarah_mail.dump()}});
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port_) == long(mail.size()) + 1; }, 60s));
  auto sarah =
      ok("entity_add", {{"name", "sarah lee"}, {"entity_type", "person"}, {"attributes", {{"role", "buyer"}}}});
  EXPECT_EQ(sarah["created"], false) << sarah;
  EXPECT_EQ(sarah["name"], "Sarah Lee");
  EXPECT_EQ(sarah["entity_type"], "person");
  EXPECT_EQ(ok("open_nodes", {{"names", {"sarah@acme.example"}}})["entities"][0]["name"], "Sarah Lee");

  // Another burst after the restart, then a merge and a delete.
  for (int k = i + 1; k < i.load() + 6; ++k)
    add("E" + std::to_string(k), "company");
  ok("entity_merge", {{"name_a", "E1"}, {"name_b", "E2"}});
  ok("delete_entities", {{"entityNames", {"E3"}}});
  ASSERT_EQ(engramd_->terminate(10s), 0) << test::tail(log());
  engramd_.reset();
  const auto live = test::digest_of(dir_.sub("store"));
  ASSERT_FALSE(live.empty());
  std::string out;
  ASSERT_EQ(test::run(std::string(ENGRAMCTL_PATH) +
                          " replay --config " ENGRAM_SOURCE_DIR "/config/engram.yaml --set "
                          "kafka.brokers=" +
                          broker_->bootstrap() + " --set embedder.model_path=" + test::model_path + " --into " +
                          dir_.sub("replayed"),
                      &out),
            0)
      << out;
  EXPECT_EQ(test::digest_of(dir_.sub("replayed")), live) << out;
}

}  // namespace

namespace {

/// An inbound e-mail event of acme from Sarah Lee.
std::string mail(const std::string& id, const std::string& sent_at, const std::string& subject,
                 const std::string& body) {
  return json{{"eventId", id},
              {"organizationId", "acme"},
              {"sourceType", "email"},
              {"sentAt", sent_at},
              {"from", {{"name", "Sarah Lee"}, {"address", "sarah@acme.example"}}},
              {"subject", subject},
              {"body", body}}
      .dump();
}

std::set<std::string> entity_names(const json& answer) { return names_of(answer["entities"]); }

}  // namespace

// kag_query (docs/graph-queries.md) against engramd: relations read from mail (through
// engram-log's extracted-message records) and an agent's entity_relate edges are one graph;
// questions of one to three hops; the statement and message behind each relation; validity
// closed by a later message; the seed's limits as errors that name them; isolation.
TEST_F(EntityTools, KagQueryAnswersFromRelationsInMailAndAgentsEdgesAsOneGraph) {
  test::produce_raw(broker_->bootstrap(), "inbound-messages",
                    {{"acme", mail("kag-1", "2026-01-10T09:00:00Z", "Team news",
                                   "Mei Chen joined Contoso as CTO last month. Hugo Martin reports to Mei Chen. "
                                   "Contoso runs on Snowflake.")},
                     {"acme", mail("kag-2", "2026-02-01T09:00:00Z", "Accounts",
                                   "Contoso is a customer of Globex. Globex is headquartered in Lisbon.")}});
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port_) == 2; }, 60s)) << test::tail(log());
  // An agent's edge joins the graph the mail built: Snowflake is the technology mail named.
  EXPECT_EQ(add("Snowflake", "technology")["created"], false);
  add("Snowpark", "product");
  relate("Snowflake", "Snowpark", "makes");

  // One hop: the relation, its statement and the message behind it.
  auto a = ok("kag_query", {{"query", "Who does Hugo Martin report to?"}});
  ASSERT_FALSE(a["entities"].empty()) << a;
  EXPECT_EQ(a["entities"][0]["name"], "Mei Chen") << "the answer first, the named entity after: " << a;
  bool found = false;
  for (const auto& r : a["relations"])
    if (r["subject"] == "Hugo Martin" && r["predicate"] == "reports_to" && r["object"] == "Mei Chen") {
      found = true;
      EXPECT_EQ(r["statement"], "Hugo Martin reports to Mei Chen.");
      EXPECT_EQ(r["source_document_id"], "kag-1");
      EXPECT_EQ(r["source_document_title"], "Team news");
      EXPECT_EQ(r["valid_from"], "2026-01-10T09:00:00Z");
    }
  EXPECT_TRUE(found) << a;
  const auto context = a["context"].get<std::string>();
  EXPECT_EQ(context.rfind("Knowledge Graph Results for: Who does Hugo Martin report to?", 0), 0u) << context;
  for (const auto* part : {"## Entities", "- **Mei Chen** (person)", "## Relations", "## Supporting statements",
                           "\"Hugo Martin reports to Mei Chen.\" (source kag-1, \"Team news\", 2026-01-10)"})
    EXPECT_NE(context.find(part), std::string::npos) << part << "\n" << context;

  // Two hops (the company Mei Chen works at, what it uses), and three (the supplier of the
  // company where Hugo Martin's manager works), which two hops do not reach.
  a = ok("kag_query", {{"query", "Which technology does the company Mei Chen works at use?"}});
  EXPECT_TRUE(entity_names(a).count("Snowflake")) << a;
  a = ok("kag_query",
         {{"query", "Which vendor supplies the company where Hugo Martin's manager works?"}, {"max_hops", 3}});
  EXPECT_TRUE(entity_names(a).count("Globex")) << a;
  // Within three hops of Hugo Martin: Mei Chen, Contoso, then Globex and Snowflake; Snowpark,
  // which the agent's edge joins to Snowflake, is a fourth hop away.
  for (const auto& e : a["entities"])
    EXPECT_LE(e["distance"].get<int>(), 3) << a;
  EXPECT_FALSE(entity_names(a).count("Snowpark")) << a;
  for (const char* name : {"Mei Chen", "Contoso", "Snowflake"})
    EXPECT_TRUE(entity_names(a).count(name)) << name << ": " << a;
  EXPECT_NE(a["context"].get<std::string>().find("- **Mei Chen** (person): CTO at Contoso"), std::string::npos)
      << "a job read from mail describes the person: " << a;
  a = ok("kag_query",
         {{"query", "Which vendor supplies the company where Hugo Martin's manager works?"}, {"max_hops", 2}});
  EXPECT_FALSE(entity_names(a).count("Globex")) << a;
  a = ok("kag_query", {{"query", "What does the maker of Snowpark sell to?"}, {"max_hops", 1}});
  EXPECT_TRUE(entity_names(a).count("Snowflake")) << "an agent's edge is walked like a read one: " << a;
  // A hint finds an entity by a misspelt name; include_relations false leaves relations out.
  a = ok("kag_query", {{"query", "accounts"}, {"entities", {"Contosso"}}, {"include_relations", false}});
  EXPECT_TRUE(entity_names(a).count("Contoso")) << a;
  EXPECT_TRUE(a["relations"].empty()) << a;
  // source_id: only what that message says.
  a = ok("kag_query", {{"query", "Contoso"}, {"source_id", "kag-2"}});
  ASSERT_FALSE(a["relations"].empty()) << a;
  for (const auto& r : a["relations"])
    EXPECT_EQ(r["source_document_id"], "kag-2") << a;

  // A later message ends Mei Chen's job: the relation stays, closed.
  test::produce_raw(broker_->bootstrap(), "inbound-messages",
                    {{"acme", mail("kag-3", "2026-05-02T09:00:00Z", "Farewell", "Mei Chen left Contoso in April.")}});
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port_) == 3; }, 60s)) << test::tail(log());
  a = ok("kag_query", {{"query", "Where does Mei Chen work?"}});
  found = false;
  for (const auto& r : a["relations"])
    if (r["subject"] == "Mei Chen" && r["predicate"] == "works_at") {
      found = true;
      EXPECT_EQ(r["valid_from"], "2026-01-10T09:00:00Z");
      EXPECT_EQ(r["valid_to"], "2026-05-02T09:00:00Z");
    }
  EXPECT_TRUE(found) << a;
  EXPECT_NE(a["context"].get<std::string>().find("until 2026-05-02"), std::string::npos) << a;

  // The seed's limits, each an error that names it.
  for (const auto& [args, says] : std::vector<std::pair<json, std::string>>{
           {{{"query", "x"}, {"max_hops", 4}}, "max_hops"},
           {{{"query", "x"}, {"limit", 101}}, "limit"},
           {{{"query", "x"}, {"limit", 0}}, "limit"},
           {{{"query", std::string(10241, 'a')}}, "query"},
           {{{"query", ""}}, "query"},
           {{{"query", "x"}, {"entities", std::vector<std::string>(51, "Contoso")}}, "entities"},
           {{{"query", "x"}, {"max_hops", "two"}}, "max_hops"},
           {{{"limit", 3}}, "query"},
           {{{"query", "x"}, {"depth", 2}}, "depth"}}) {
    const auto r = call("kag_query", args);
    EXPECT_NE(error_of(r).find(says), std::string::npos)
        << args.dump().substr(0, 80) << " -> " << r.dump().substr(0, 300);
  }

  // Another organisation: an empty graph, said so; nothing of acme's.
  a = ok("kag_query", {{"query", "Where does Mei Chen work?"}}, globex);
  EXPECT_TRUE(a["entities"].empty()) << a;
  EXPECT_EQ(a["note"], "the knowledge graph of this organisation is empty") << a;
  ok("entity_add", {{"name", "Umbrella"}, {"entity_type", "company"}}, globex);
  a = ok("kag_query", {{"query", "Contoso and Mei Chen"}}, globex);
  EXPECT_TRUE(a["entities"].empty()) << a;
  EXPECT_EQ(a["note"], "no entity of this organisation's graph is named in the query") << a;

  // The same answer after a restart.
  const auto before = ok("kag_query", {{"query", "Which technology does the company Mei Chen works at use?"}});
  restart();
  EXPECT_EQ(ok("kag_query", {{"query", "Which technology does the company Mei Chen works at use?"}}), before);
  expect_every_tool_called(schemas::kag_tool_definitions());
}

namespace {

/// Writes `text` to `path`.
void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

// Documents as a source: Markdown, HTML and a PDF written at test time (groff),
// through engramctl ingest-docs as inbound events of sourceType file, to engramd, its
// extraction, the graph and kag_query, whose answer names the documents; kag status and
// /v1/stats count the chunks; a replay of the log rebuilds the same store.
TEST_F(EntityTools, DocumentsGoThroughIngestDocsToKagQueryAndReplay) {
  const auto docs = dir_.sub("docs");
  std::filesystem::create_directories(docs);
  write_file(docs + "/vendors.md",
             "# Vendor review 2026\n\nPrepared for the operations team.\n\n## Data platform\n\nGlobex runs on "
             "Snowflake. Initech, a subsidiary of Globex, is headquartered in Lisbon.\n\n## People\n\nDana Smith, VP "
             "Sales at Initech, approved the **renewal**. See [the contract](https://example.com/c).\n");
  write_file(docs + "/partners.html",
             "<html><head><title>Partner map</title></head><body><h1>Partner map</h1><p>An overview.</p>"
             "<h2>Partners</h2><p>Fabrikam partnered with Globex on the rollout.</p><h2>Competitors</h2>"
             "<p>Northwind competes with Globex in Europe.</p></body></html>");
  std::string out;
  ASSERT_EQ(test::run("printf '.LP\\nAccount plan\\n.PP\\nUmbrella Labs is a customer of Globex.\\n.bp\\n.PP\\n"
                      "Hugo Martin reports to Dana Smith.\\n' | groff -Tpdf -ms > " +
                          docs + "/plan.pdf",
                      &out),
            0)
      << "groff (Debian package groff) writes the PDF fixture: " << out;
  write_file(docs + "/notes.xyz", "not a document");

  // To a file first: every chunk an event of sourceType file, with its document and section.
  const std::string ctl = ENGRAMCTL_PATH;
  EXPECT_EQ(test::run(ctl + " ingest-docs --organization acme --sent-at 2026-04-01T09:00:00Z --output " +
                          dir_.sub("docs.jsonl") + " " + docs,
                      &out),
            1)
      << out;
  EXPECT_NE(out.find("notes.xyz: not a document this reads"), std::string::npos) << out;
  EXPECT_NE(out.find("ingested 3 documents (4 pages) as 8 chunks"), std::string::npos) << out;
  std::map<std::string, json> by_section;
  std::set<std::string> titles, ids;
  std::ifstream events(dir_.sub("docs.jsonl"));
  for (std::string line; std::getline(events, line);) {
    auto e = json::parse(line);
    EXPECT_EQ(e["sourceType"], "file");
    EXPECT_EQ(e["sentAt"], "2026-04-01T09:00:00Z");
    titles.insert(e["document"]["title"].get<std::string>());
    ids.insert(e["eventId"].get<std::string>());
    by_section[e["document"]["title"].get<std::string>() + " / " + e["document"].value("section", "")] = e;
  }
  EXPECT_EQ(titles, (std::set<std::string>{"Vendor review 2026", "Partner map", "Account plan"}));
  EXPECT_EQ(ids.size(), 8u);
  ASSERT_TRUE(by_section.count("Vendor review 2026 / Data platform")) << testing::PrintToString(titles);
  EXPECT_EQ(by_section["Vendor review 2026 / People"]["body"],
            "Dana Smith, VP Sales at Initech, approved the renewal. See the contract.");
  EXPECT_EQ(by_section["Partner map / Competitors"]["body"], "Northwind competes with Globex in Europe.");
  EXPECT_EQ(by_section["Account plan / Page 2"]["body"], "Hugo Martin reports to Dana Smith.");

  // Then to Kafka, twice: the same documents are the same events, applied once.
  for (int run = 0; run < 2; ++run)
    ASSERT_EQ(test::run(ctl + " ingest-docs --organization acme --sent-at 2026-04-01T09:00:00Z --brokers " +
                            broker_->bootstrap() + " " + docs + "/vendors.md " + docs + "/partners.html " + docs +
                            "/plan.pdf",
                        &out),
              0)
        << out;
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port_) == 8; }, 60s)) << test::tail(log());
  auto stats = json::parse(test::get(port_, "/v1/stats"));
  ASSERT_EQ(stats["organizations"].size(), 1u) << stats;
  const auto& d = stats["organizations"][0]["documents"];
  EXPECT_EQ(d["documents"], 3) << stats;
  EXPECT_EQ(d["chunksDone"], 8) << stats;
  EXPECT_EQ(d["chunksPending"], 0) << stats;
  EXPECT_GE(d["relations"].get<int>(), 6) << stats;

  // kag_query walks what the documents said, two hops, and names them as sources.
  auto a = ok("kag_query", {{"query", "Who is the manager of Hugo Martin and where does that person work?"}});
  for (const auto* name : {"Dana Smith", "Initech"})
    EXPECT_TRUE(entity_names(a).count(name)) << name << " " << a;
  bool from_pdf = false, from_md = false;
  for (const auto& r : a["relations"]) {
    from_pdf |= r["predicate"] == "reports_to" && r["source_document_title"] == "Account plan" &&
                r["source_document_id"].get<std::string>().rfind("doc-", 0) == 0;
    from_md |= r["predicate"] == "works_at" && r["source_document_title"] == "Vendor review 2026" &&
               r["statement"] == "Dana Smith, VP Sales at Initech, approved the renewal.";
  }
  EXPECT_TRUE(from_pdf) << a;
  EXPECT_TRUE(from_md) << a;
  a = ok("kag_query", {{"query", "Who are Globex's partners and competitors?"}, {"max_hops", 1}});
  for (const auto* name : {"Fabrikam", "Northwind", "Initech", "Snowflake", "Umbrella Labs"})
    EXPECT_TRUE(entity_names(a).count(name)) << name << " " << a;
  // A document contains its sections; a section mentions what it names (the
  // structure relations).
  a = ok("kag_query", {{"query", "What does the Vendor review 2026 cover?"}, {"max_hops", 2}});
  std::set<std::string> structure;
  for (const auto& r : a["relations"])
    if (r["predicate"] == "contains" || r["predicate"] == "mentions")
      structure.insert(r["subject"].get<std::string>() + " " + r["predicate"].get<std::string>() + " " +
                       r["object"].get<std::string>());
  for (const auto* rel :
       {"Vendor review 2026 contains Vendor review 2026: Data platform",
        "Vendor review 2026: Data platform mentions Snowflake", "Vendor review 2026: People mentions Dana Smith"})
    EXPECT_TRUE(structure.count(rel)) << rel << " " << a;
  for (const auto& e : a["entities"])
    if (e["name"] == "Vendor review 2026: People")
      EXPECT_EQ(e["type"], "section") << e;

  // A chunk engramd refuses (here a sentAt that is no time) goes to the dead-letter topic
  // and its status is failed, with the reason, through a chunk_failed command on engram-log.
  const auto dead_before = test::topic_size(broker_->bootstrap(), "engram-dlq");
  test::produce_raw(
      broker_->bootstrap(), "inbound-messages",
      {{"acme", json{{"eventId", "doc-broken-1"},
                     {"organizationId", "acme"},
                     {"sourceType", "file"},
                     {"sentAt", "last Tuesday"},
                     {"from", {{"name", "ingest-docs"}, {"address", "ingest-docs"}}},
                     {"body", "Globex runs on Oracle."},
                     {"document", {{"id", "doc-broken"}, {"title", "Broken manual"}, {"chunk", 1}, {"chunks", 2}}}}
                    .dump()}});
  ASSERT_TRUE(test::wait_until(
      [&] {
        auto st = json::parse(test::get(port_, "/v1/stats"), nullptr, false);
        return st.is_object() && st["organizations"][0]["documents"].value("chunksFailed", 0) == 1;
      },
      60s))
      << test::get(port_, "/v1/stats");
  // On the dead-letter topic too (produced before the command; delivered on its own).
  EXPECT_TRUE(
      test::wait_until([&] { return test::topic_size(broker_->bootstrap(), "engram-dlq") == dead_before + 1; }, 30s));
  stats = json::parse(test::get(port_, "/v1/stats"));
  EXPECT_EQ(stats["organizations"][0]["documents"]["documents"], 4) << stats;
  EXPECT_EQ(stats["organizations"][0]["documents"]["chunksPending"], 1) << "chunk 0 of the broken manual " << stats;

  // engramctl kag status and kag query read the store beside the running engramd.
  ASSERT_EQ(test::run(ctl + " kag status --data-dir " + dir_.sub("store") + " --organization acme", &out), 0) << out;
  EXPECT_NE(out.find("\"Account plan\"  done  2/2 chunks"), std::string::npos) << out;
  EXPECT_NE(out.find("\"Vendor review 2026\"  done  3/3 chunks"), std::string::npos) << out;
  EXPECT_NE(out.find("\"Broken manual\"  failed  0/2 chunks, 0 entries, 0 entities, 0 relations; 1 failed: "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("sentAt: must be an RFC 3339 date-time"), std::string::npos) << out;
  ASSERT_EQ(test::run(ctl + " kag query --data-dir " + dir_.sub("store") +
                          " --organization acme \"Who does Hugo Martin report to?\"",
                      &out),
            0)
      << out;
  EXPECT_NE(out.find("- Hugo Martin reports_to Dana Smith (confidence 0.80; from 2026-04-01)"), std::string::npos)
      << out;
  EXPECT_EQ(test::run(ctl + " kag query --data-dir " + dir_.sub("store") + " --organization acme --max-hops 4 x", &out),
            2);
  EXPECT_NE(out.find("max_hops: at most 3"), std::string::npos) << out;

  // A replay of the log rebuilds the same store, documents and relations included.
  ASSERT_EQ(engramd_->terminate(10s), 0) << test::tail(log());
  engramd_.reset();
  const auto live = test::digest_of(dir_.sub("store"));
  ASSERT_EQ(test::run(ctl + " replay --config " ENGRAM_SOURCE_DIR "/config/engram.yaml --set kafka.brokers=" +
                          broker_->bootstrap() + " --set embedder.model_path=" + test::model_path + " --into " +
                          dir_.sub("replayed"),
                      &out),
            0)
      << out;
  EXPECT_EQ(test::digest_of(dir_.sub("replayed")), live) << out;
}

// Hybrid recall: with recall.graph_expansion, the statements about the entities a
// query names, and about their neighbours in the graph, join recall's fusion: a question
// about Hugo Martin's manager finds what Mei Chen decided, which shares no word with it.
TEST_F(EntityTools, HybridRecallAddsTheStatementsOfNamedEntitiesAndTheirNeighbours) {
  std::vector<std::pair<std::string, std::string>> events{
      {"acme", mail("hyb-1", "2026-03-02T09:00:00Z", "Org", "Hugo Martin reports to Mei Chen.")},
      {"acme", mail("hyb-2", "2026-03-03T09:00:00Z", "Budget", "Mei Chen approved the Q3 budget of $50,000.")}};
  const char* distractors[] = {
      "The board decided lately to review every vendor contract.",
      "Someone decided lately that the boss review happens monthly.",
      "We decided lately to move the boss offsite to June.",
      "The team decided lately that the boss dashboard needs a refresh.",
      "Finance decided lately to close the books a day earlier.",
      "Legal decided lately that the boss signs every NDA.",
  };
  for (std::size_t i = 0; i < std::size(distractors); ++i)
    events.push_back({"acme", mail("hyb-d" + std::to_string(i), "2026-03-04T09:00:00Z", "Notes", distractors[i])});
  test::produce_raw(broker_->bootstrap(), "inbound-messages", events);
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port_) == long(events.size()); }, 60s))
      << test::tail(log());
  const json question{{"query", "What has the boss of Hugo Martin decided lately?"}, {"limit", 5}};
  auto found = [&](const json& answer) {
    for (const auto& e : answer["results"])
      if (e["content"] == "Mei Chen approved the Q3 budget of $50,000.")
        return true;
    return false;
  };
  auto without = ok("recall_knowledge", question);
  EXPECT_FALSE(found(without)) << "by words and meaning alone the budget is not among the first 5: " << without;
  extra_sets_ = {"recall.graph_expansion=true"};
  restart();
  auto with = ok("recall_knowledge", question);
  EXPECT_TRUE(found(with)) << with;
  // Isolation holds: another organisation's recall sees none of it.
  EXPECT_TRUE(ok("recall_knowledge", question, globex)["results"].empty());
}

namespace {

// Entity resolution against engramd, through engram-log: a first name joins the
// only person of that name, the join's evidence is shown by entity_query, the short form is
// not made a name of the person, and an order number is never a company or a person.
TEST_F(EntityTools, MentionsResolveToTheEntityTheyNameWithTheirEvidence) {
  test::produce_raw(
      broker_->bootstrap(), "inbound-messages",
      {{"acme", mail("res-1", "2026-03-02T09:00:00Z", "Team news", "Mei Chen joined Contoso as CTO last month.")},
       {"acme", mail("res-2", "2026-03-09T09:00:00Z", "Orders",
                     "Hi Hugo, Mei will present the Contoso plan. Order CT-88213 shipped from Globex.")}});
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port_) == 2; }, 60s)) << test::tail(log());
  auto q = ok("entity_query", {{"question", "what do we know about Mei Chen?"}});
  ASSERT_EQ(q["entities"].size(), 1u) << q;
  EXPECT_EQ(q["entities"][0]["name"], "Mei Chen") << q;
  ASSERT_TRUE(q["entities"][0].contains("resolved")) << q;
  const auto& why = q["entities"][0]["resolved"][0];
  EXPECT_EQ(why["mention"], "Mei") << q;
  EXPECT_EQ(why["eventId"], "res-2") << q;
  EXPECT_EQ(why["reason"], "the only person whose name has the words of \"Mei\"") << q;
  EXPECT_TRUE(ok("entity_query", {{"question", "what do we know about Mei?"}})["entities"].empty())
      << "a first name is evidence, not a name";
  const auto found = ok("entity_search", {{"query", "CT-88213"}});  // kept: the loop reads into it
  for (const auto& r : found["results"])
    EXPECT_TRUE(r["entity_type"] != "organization" && r["entity_type"] != "person") << r;
}

}  // namespace
