// MCP over a real socket against the in-process engine: the protocol, bad input (the right
// HTTP status or JSON-RPC error, never a crash, never a 500), scopes, and tenant isolation
// (two organisations with overlapping contact ids and near-identical content).

#include "actors/engine/engine.hpp"
#include "net/http.hpp"
#include "schemas/tools.hpp"
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <regex>

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

namespace {

const std::string acme_token = "acme-token-0123456789abcdef";
const std::string globex_token = "globex-token-0123456789abcdef";
const std::string reader_token = "acme-reader-0123456789abcdef";

class McpTest : public ::testing::Test {
protected:
  McpTest() : dir_("mcp"), broker_(test::start_broker()) {}

  void SetUp() override {
    auto c = test::test_config(broker_->bootstrap(), dir_.sub("store"));
    c.auth.tokens = {{acme_token, "acme", {"read", "write"}, "agent-a"},
                     {globex_token, "globex", {"read", "write"}, "agent-g"},
                     {reader_token, "acme", {"read"}, "reader"}};
    auto started = engine::engine::start(c, {});
    ASSERT_TRUE(started) << started.error();
    engine_ = std::move(*started);
    ASSERT_TRUE(test::wait_until([&] { return engine_->status().ready(); }, 60s));
  }

  net::client_result post(const std::string& body, const std::string& token,
                          std::map<std::string, std::string> headers = {}) {
    headers.emplace("Content-Type", "application/json");
    headers.emplace("Accept", "application/json, text/event-stream");
    if (!token.empty())
      headers.emplace("Authorization", "Bearer " + token);
    return net::fetch("POST", url(), body, headers, 20s);
  }
  std::string url() { return "http://127.0.0.1:" + std::to_string(engine_->http_port()) + "/mcp"; }

  json call(const std::string& token, const std::string& tool, const json& args) {
    auto r = post(
        json{{"jsonrpc", "2.0"}, {"id", 7}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", args}}}}
            .dump(),
        token);
    EXPECT_EQ(r.status, 200) << r.body;
    auto j = json::parse(r.body, nullptr, false);
    EXPECT_TRUE(j.contains("result")) << r.body;
    return j.value("result", json::object());
  }

  test::temp_dir dir_;
  std::unique_ptr<ingest::embedded_broker> broker_;
  std::unique_ptr<engine::engine> engine_;
};

TEST_F(McpTest, InitializeListAndNotificationsFollowTheProtocol) {
  for (const char* v : {"2025-11-25", "2025-06-18", "2025-03-26"}) {
    auto r = post(json{{"jsonrpc", "2.0"},
                       {"id", 1},
                       {"method", "initialize"},
                       {"params",
                        {{"protocolVersion", v},
                         {"capabilities", json::object()},
                         {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}}
                      .dump(),
                  acme_token);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(json::parse(r.body)["result"]["protocolVersion"], v);
  }
  EXPECT_EQ(post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", acme_token).status, 202);
  auto r = post(R"({"jsonrpc":"2.0","id":"p","method":"ping"})", acme_token);
  EXPECT_EQ(json::parse(r.body)["result"], json::object());
  r = post(R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})", acme_token);
  auto tools = json::parse(r.body)["result"]["tools"];
  std::set<std::string> names;
  for (const auto& t : tools) {
    names.insert(t["name"]);
    EXPECT_TRUE(t["inputSchema"].is_object()) << t["name"];
    EXPECT_TRUE(t["outputSchema"].is_object()) << t["name"];
  }
  std::set<std::string> defined;
  for (auto definitions : {schemas::tool_definitions(), schemas::entity_tool_definitions(),
                           schemas::kag_tool_definitions(), schemas::memory_tool_definitions()})
    for (const auto& t : json::parse(definitions))
      defined.insert(t["name"].get<std::string>());
  EXPECT_EQ(defined.size(), 29u);
  EXPECT_EQ(names, defined);
  for (const char* tool :
       {"save_knowledge", "recall_knowledge", "entity_add", "graph_path", "create_entities", "read_graph"})
    EXPECT_TRUE(names.count(tool)) << tool;
  // GET opens the event stream only for a client that accepts one; there are no sessions to DELETE.
  EXPECT_EQ(net::fetch("GET", url(), {}, {{"Authorization", "Bearer " + acme_token}}).status, 406);
  EXPECT_EQ(net::fetch("DELETE", url(), {}, {{"Authorization", "Bearer " + acme_token}}).status, 405);
  // Every answer a handler gives says engramd's own time for it (W3C Server-Timing), a
  // refused method too. (The HTTP layer's own refusals, 413, 431 and 503, carry none.)
  const auto ping = post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", acme_token);
  EXPECT_EQ(ping.status, 200);
  EXPECT_TRUE(std::regex_match(ping.server_timing, std::regex(R"(app;dur=\d+\.\d{3})"))) << ping.server_timing;
  EXPECT_TRUE(std::regex_match(net::fetch("DELETE", url()).server_timing, std::regex(R"(app;dur=\d+\.\d{3})")));
}

TEST_F(McpTest, BadInputGetsTheRightErrorAndNeverA500) {
  struct row {
    const char* what;
    std::string body;
    std::string token;
    std::map<std::string, std::string> headers;
    int status;
    int rpc_code;     // 0: none expected
    bool tool_error;  // result.isError
  };
  auto callj = [](const std::string& tool, const json& args) {
    return json{
        {"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", args}}}}
        .dump();
  };
  const json good{{"type", "fact"}, {"title", "t"}, {"content", "c"}, {"confidence", 0.5}};
  auto with = [&](const char* k, json v) {
    json j = good;
    j[k] = std::move(v);
    return j;
  };
  std::vector<row> rows{
      {"malformed JSON", "{\"jsonrpc\":", acme_token, {}, 400, -32700, false},
      {"batch array", R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])", acme_token, {}, 400, -32600, false},
      {"not JSON-RPC", R"({"id":1,"method":"ping"})", acme_token, {}, 400, -32600, false},
      // Fields of the wrong JSON type: once a type_error thrown out of the handler.
      {"jsonrpc a number", R"({"jsonrpc":2,"id":1,"method":"ping"})", acme_token, {}, 400, -32600, false},
      {"method a number", R"({"jsonrpc":"2.0","id":1,"method":7})", acme_token, {}, 400, -32600, false},
      {"id an object", R"({"jsonrpc":"2.0","id":{},"method":"ping"})", acme_token, {}, 400, -32600, false},
      {"protocolVersion a number",
       R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}})",
       acme_token,
       {},
       200,
       0,
       false},
      {"unknown method", R"({"jsonrpc":"2.0","id":1,"method":"resources/list"})", acme_token, {}, 200, -32601, false},
      {"params not an object",
       R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]})",
       acme_token,
       {},
       200,
       -32602,
       false},
      {"unknown tool", callj("drop_database", json::object()), acme_token, {}, 200, -32602, false},
      {"arguments not an object",
       R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_knowledge","arguments":"x"}})",
       acme_token,
       {},
       200,
       -32602,
       false},
      {"limit out of range", callj("recall_knowledge", {{"query", "x"}, {"limit", 51}}), acme_token, {}, 200, 0, true},
      {"limit wrong type",
       callj("recall_knowledge", {{"query", "x"}, {"limit", "five"}}),
       acme_token,
       {},
       200,
       0,
       true},
      {"query missing", callj("recall_knowledge", json::object()), acme_token, {}, 200, 0, true},
      {"search limit over 25",
       callj("search_knowledge", {{"query", "x"}, {"limit", 26}}),
       acme_token,
       {},
       200,
       0,
       true},
      {"confidence over 1", callj("save_knowledge", with("confidence", 1.5)), acme_token, {}, 200, 0, true},
      {"confidence missing",
       callj("save_knowledge", json{{"type", "fact"}, {"title", "t"}, {"content", "c"}}),
       acme_token,
       {},
       200,
       0,
       true},
      {"unknown type", callj("save_knowledge", with("type", "rumour")), acme_token, {}, 200, 0, true},
      {"expiresInDays 0", callj("save_knowledge", with("expiresInDays", 0)), acme_token, {}, 200, 0, true},
      {"unknown argument", callj("save_knowledge", with("organizationId", "globex")), acme_token, {}, 200, 0, true},
      {"missing token", callj("recall_knowledge", {{"query", "x"}}), "", {}, 401, 0, false},
      {"wrong token", callj("recall_knowledge", {{"query", "x"}}), "nope-0123456789abcdef", {}, 401, 0, false},
      {"read-only token saves", callj("save_knowledge", good), reader_token, {}, 403, 0, false},
      {"foreign Origin",
       callj("recall_knowledge", {{"query", "x"}}),
       acme_token,
       {{"Origin", "http://evil.example"}},
       403,
       0,
       false},
      {"unsupported protocol header",
       R"({"jsonrpc":"2.0","id":1,"method":"ping"})",
       acme_token,
       {{"MCP-Protocol-Version", "1999-01-01"}},
       400,
       0,
       false},
      {"another organisation's entry id",
       callj("get_knowledge", {{"id", "e-0000000000000000"}}),
       globex_token,
       {},
       200,
       0,
       true},
      {"validate: unknown outcome",
       callj("validate_knowledge", {{"id", "e-0000000000000000"}, {"outcome", "maybe"}}),
       acme_token,
       {},
       200,
       0,
       true},
      {"validate: unknown id",
       callj("validate_knowledge", {{"id", "e-0000000000000000"}, {"outcome", "approved"}}),
       acme_token,
       {},
       200,
       0,
       true},
      {"validate by a read-only token",
       callj("validate_knowledge", {{"id", "x"}, {"outcome", "approved"}}),
       reader_token,
       {},
       403,
       0,
       false},
      {"merge: branchId missing", callj("merge_branch", json::object()), acme_token, {}, 200, 0, true},
      {"merge: branchId not a string", callj("merge_branch", {{"branchId", 7}}), acme_token, {}, 200, 0, true},
      {"merge: unknown branch", callj("merge_branch", {{"branchId", "never-used"}}), acme_token, {}, 200, 0, true},
      {"discard: unknown branch", callj("discard_branch", {{"branchId", "never-used"}}), acme_token, {}, 200, 0, true},
      {"save: empty branchId", callj("save_knowledge", with("branchId", "")), acme_token, {}, 200, 0, true},
      {"review: keep unknown",
       callj("resolve_review", {{"id", "x"}, {"keep", "neither"}}),
       acme_token,
       {},
       200,
       0,
       true},
      {"review: entry not flagged",
       callj("resolve_review", {{"id", "e-0000000000000000"}, {"keep", "newer"}}),
       acme_token,
       {},
       200,
       0,
       true},
      {"review queue: limit 0", callj("list_review_queue", {{"limit", 0}}), acme_token, {}, 200, 0, true},
  };
  for (const auto& r : rows) {
    auto res = post(r.body, r.token, r.headers);
    EXPECT_EQ(res.status, r.status) << r.what << ": " << res.body;
    EXPECT_NE(res.status, 500) << r.what;
    if (r.status == 401) {
      EXPECT_NE(res.body.find("error"), std::string::npos) << r.what;
    }
    auto j = json::parse(res.body, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.what << ": " << res.body;
    if (r.rpc_code) {
      EXPECT_EQ(j["error"]["code"], r.rpc_code) << r.what << ": " << res.body;
    }
    if (r.tool_error) {
      EXPECT_EQ(j["result"]["isError"], true) << r.what << ": " << res.body;
      EXPECT_FALSE(j["result"]["content"][0]["text"].get<std::string>().empty()) << r.what;
    }
  }
  // An oversized body is refused by the HTTP layer.
  auto big = post(std::string(5u << 20, 'x'), acme_token);
  EXPECT_EQ(big.status, 413);
  // The server is still fine.
  EXPECT_EQ(post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", acme_token).status, 200);
  // A recall embeds its query (through the embedding cache); a save is indexed (it is
  // answered once applied).
  EXPECT_EQ(post(callj("recall_knowledge", {{"query", "what did the board decide"}}), acme_token).status, 200);
  const auto saved = post(callj("save_knowledge", json{{"type", "fact"},
                                                       {"title", "The board approved the Q3 budget"},
                                                       {"content", "The board approved the Q3 budget of $2M."},
                                                       {"confidence", 0.9}}),
                          acme_token);
  ASSERT_EQ(saved.status, 200);
  ASSERT_NE(saved.body.find("\"isError\":false"), std::string::npos) << saved.body;
  // /metrics counts every request by tool (or method) and outcome, with fixed labels only.
  const auto metrics = test::get(engine_->http_port(), "/metrics");
  for (const char* series :
       {R"(engram_mcp_requests_total{outcome="tool_error",tool="recall_knowledge"})",
        R"(engram_mcp_requests_total{outcome="rpc_error",tool="other"})",
        R"(engram_mcp_requests_total{outcome="http_401",tool="recall_knowledge"})",
        R"(engram_mcp_requests_total{outcome="ok",tool="ping"})",
        R"(engram_mcp_request_seconds_count{tool="save_knowledge"})", R"(engram_rocksdb{name="memtable_bytes"})",
        R"(engram_rocksdb{name="pending_compaction_bytes"})"})
    EXPECT_NE(metrics.find(series), std::string::npos) << series;
  // What the process's memory is made of: the heap malloc holds, in use and free, and
  // RocksDB's memtables and table readers.
  auto value_of = [&](const std::string& series) {
    const auto at = metrics.find("\n" + series + " ");
    return at == std::string::npos ? -1.0 : std::stod(metrics.substr(at + series.size() + 2, 32));
  };
  // Under a sanitizer its own allocator serves malloc, and glibc's figures are near zero.
  EXPECT_GT(value_of(R"(engram_process_heap_bytes{kind="in_use"})"), test::sanitized ? -1 : 1e6)
      << "a running engramd uses a MB or more";
  EXPECT_GE(value_of(R"(engram_process_heap_bytes{kind="free"})"), 0);
  // In process the heap is glibc's (engramd itself links jemalloc: LifecycleTest checks it).
  EXPECT_EQ(value_of(R"(engram_process_allocator{name="glibc"})"), 1.0);
  // Where recall's time went, by stage: the recall above embedded its query and built an answer.
  for (const char* stage : {"people", "words", "embed", "vectors", "graph", "entries", "passages", "present"})
    EXPECT_GE(value_of(std::string(R"(engram_recall_stage_seconds_total{stage=")") + stage + "\"}"), 0) << stage;
  EXPECT_GT(value_of(R"(engram_recall_stage_seconds_total{stage="embed"})"), 0);
  EXPECT_GT(value_of(R"(engram_recall_stage_seconds_total{stage="present"})"), 0);
  EXPECT_GE(value_of(R"(engram_rocksdb{name="table_readers_bytes"})"), 0);
  EXPECT_GT(value_of(R"(engram_rocksdb{name="memtable_bytes"})"), 0) << "saves were applied";
  // The embedding cache holds the texts saves and recalls embedded (embedder.cache_size).
  EXPECT_GT(value_of(R"(engram_embedding_cache{kind="entries"})"), 0) << "the recall's query was embedded";
  EXPECT_GT(value_of(R"(engram_embedding_cache{kind="misses"})"), 0);
  // The in-memory indexes by part: the saves' vectors and words are in them. An index of a
  // few vectors still holds its first 1,024 slots of ~0.6 KB and hnswlib's lock table.
  EXPECT_GT(value_of(R"(engram_memory_bytes{part="entry_vectors"})"), 1024 * 600) << "saves were indexed";
  EXPECT_GT(value_of(R"(engram_memory_bytes{part="postings"})"), 0) << "saves' words were indexed";
  EXPECT_GE(value_of(R"(engram_memory_bytes{part="passage_vectors"})"), 0);
  EXPECT_GE(value_of(R"(engram_memory_bytes{part="passage_postings"})"), 0);
  EXPECT_GE(value_of(R"(engram_memory_bytes{part="entities"})"), 0);
  EXPECT_GT(value_of(R"(engram_memory_bytes{part="dedup_facts"})"), 0) << "dedup's kept facts are counted";
  EXPECT_EQ(metrics.find("drop_database"), std::string::npos);
  EXPECT_EQ(metrics.find("resources/list"), std::string::npos);
}

// An optional argument sent as null is absent, for the tool as for the check: each of these
// once answered "<tool> failed: [json.exception.type_error.302] ...".
TEST_F(McpTest, AnOptionalArgumentSentAsNullIsAbsent) {
  auto answered = [&](const std::string& tool, const json& args) {
    auto r = call(acme_token, tool, args);
    EXPECT_EQ(r.value("isError", true), false) << tool << " " << args << ": " << r;
    return r;
  };
  answered("read_graph", {{"limit", nullptr}, {"cursor", nullptr}});
  answered("search_nodes", {{"query", "Initech"}, {"limit", nullptr}});
  answered("kag_query", {{"query", "Who works at Initech?"}, {"include_relations", nullptr}});
  answered("create_entities",
           {{"entities", {{{"name", "Null Weight A"}, {"entityType", "project"}, {"observations", json::array()}}}}});
  answered("create_entities",
           {{"entities", {{{"name", "Null Weight B"}, {"entityType", "project"}, {"observations", json::array()}}}}});
  auto r =
      answered("entity_relate",
               {{"from", "Null Weight A"}, {"to", "Null Weight B"}, {"relationship", "uses"}, {"weight", nullptr}});
  EXPECT_EQ(r["structuredContent"].value("created", false), true) << r;
}

TEST_F(McpTest, SaveIsAnsweredOnceAppliedAndEachOrganisationSeesOnlyItsOwn) {
  auto save = [&](const std::string& token, const std::string& content) {
    auto r = call(token, "save_knowledge",
                  {{"type", "fact"},
                   {"title", content},
                   {"content", content},
                   {"confidence", 0.8},
                   {"contactId", "c-1"},
                   {"tags", {"t"}}});
    EXPECT_EQ(r["isError"], false) << r.dump();
    return r["structuredContent"];
  };
  auto a = save(acme_token, "Initech's support plan covers weekends.");
  auto g = save(globex_token, "Initech's support plan covers weekends and holidays.");
  EXPECT_EQ(a["outcome"], "created");
  EXPECT_EQ(g["outcome"], "created") << "globex's near-identical statement is not merged into acme's";
  // Read-your-writes: the save is visible at once, to its organisation only.
  auto got = call(acme_token, "get_knowledge", {{"id", a["id"]}});
  EXPECT_EQ(got["structuredContent"]["entry"]["organizationId"], "acme");
  EXPECT_EQ(got["structuredContent"]["entry"]["tags"], json::array({"t"}));
  EXPECT_EQ(call(globex_token, "get_knowledge", {{"id", a["id"]}})["isError"], true);
  EXPECT_EQ(call(acme_token, "get_knowledge", {{"id", g["id"]}})["isError"], true);
  for (const auto& [token, own, other] :
       {std::tuple{acme_token, a["id"], g["id"]}, std::tuple{globex_token, g["id"], a["id"]}}) {
    for (const char* tool : {"recall_knowledge", "search_knowledge"}) {
      auto r = call(token, tool, {{"query", "Initech support weekends"}});
      auto results = r["structuredContent"]["results"];
      ASSERT_FALSE(results.empty()) << tool;
      EXPECT_EQ(results[0]["id"], own) << tool;
      for (const auto& e : results)
        EXPECT_NE(e["id"], other) << tool << " showed another organisation's entry";
    }
    auto scoped = call(token, "recall_knowledge", {{"query", "Initech support"}, {"contactId", "c-1"}});
    for (const auto& e : scoped["structuredContent"]["results"])
      EXPECT_NE(e["id"], other);
  }
  // A restatement merges; an update by the same agent supersedes.
  auto again = save(acme_token, "FYI, Initech's support plan covers weekends.");
  EXPECT_EQ(again["outcome"], "merged");
  EXPECT_EQ(again["id"], a["id"]);
  auto update = save(acme_token, "Initech's support plan no longer covers weekends.");
  EXPECT_EQ(update["outcome"], "superseded") << update.dump();
  EXPECT_EQ(update["relatedIds"], json::array({a["id"]}));
}

// "No answer" is an answer: a question close to nothing the organisation holds gets no results
// and a note saying why, never the nearest unrelated statement; a related one is answered.
TEST_F(McpTest, RecallAnswersNothingWithANoteWhenNothingStoredIsClose) {
  auto saved = call(acme_token, "save_knowledge",
                    {{"type", "fact"},
                     {"title", "Support plan"},
                     {"content", "Initech's support plan covers weekends."},
                     {"confidence", 0.8}});
  ASSERT_EQ(saved["isError"], false) << saved.dump();
  auto related = call(acme_token, "recall_knowledge", {{"query", "Does the support plan cover Saturdays?"}});
  ASSERT_EQ(related["isError"], false) << related.dump();
  ASSERT_FALSE(related["structuredContent"]["results"].empty()) << related.dump();
  EXPECT_EQ(related["structuredContent"]["results"][0]["id"], saved["structuredContent"]["id"]);
  EXPECT_FALSE(related["structuredContent"].contains("note"));
  auto unrelated = call(acme_token, "recall_knowledge", {{"query", "What is the boiling point of mercury in kelvin?"}});
  ASSERT_EQ(unrelated["isError"], false) << unrelated.dump();
  EXPECT_TRUE(unrelated["structuredContent"]["results"].empty()) << unrelated.dump();
  EXPECT_NE(unrelated["structuredContent"].value("note", "").find("recall.answer_floor"), std::string::npos)
      << unrelated.dump();
}

}  // namespace
