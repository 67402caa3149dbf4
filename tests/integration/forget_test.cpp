// Forgetting (docs/forgetting.md), against engramd as its own process: forget_knowledge
// of one entry, of messages (a message, a thread, a document, a contact) and of the whole
// organisation, through engram-log; what was forgotten is gone from every reader, another
// organisation is untouched, and a replay of the log forgets the same (the same digest).

#include "actors/ingest/embedded_broker.hpp"
#include "actors/ingest/topics.hpp"
#include "net/http.hpp"
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

namespace {

const std::string writer = "forget-writer-token-0123456789", admin = "forget-admin-token-0123456789",
                  globex = "forget-globex-token-0123456789";

/// GET under /v1/ with a token: the body as JSON (null when not JSON), the status in `status`.
json v1(std::uint16_t port, const std::string& path, const std::string& token, int* status = nullptr) {
  int s = 0;
  auto body = test::get(port, path, &s, token);
  if (status)
    *status = s;
  return json::parse(body, nullptr, false);
}

/// The organisation's row of /v1/stats (null when it has none).
json stats_row(std::uint16_t port, const std::string& org) {
  for (const auto& row : v1(port, "/v1/stats", test::admin_token).value("organizations", json::array()))
    if (row["organizationId"] == org)
      return row;
  return nullptr;
}

/// The files under `dir` whose bytes hold `marker`.
std::vector<std::string> files_holding(const std::string& dir, const std::string& marker) {
  std::vector<std::string> out;
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir)) {
    if (!f.is_regular_file())
      continue;
    std::ifstream in(f.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.find(marker) != std::string::npos)
      out.push_back(f.path().filename().string());
  }
  return out;
}

std::vector<std::string> ids_of(const json& answer) {
  std::vector<std::string> ids;
  for (const auto& r : answer.value("results", json::array()))
    ids.push_back(r.value("id", ""));
  return ids;
}

/// engramctl replay of engram-log into a new store: the same digest as the live store.
void expect_replay_matches(const std::string& brokers, const test::temp_dir& dir) {
  const auto live = test::digest_of(dir.sub("store"));
  std::string out;
  ASSERT_EQ(test::run(std::string(ENGRAMCTL_PATH) +
                          " replay --config " ENGRAM_SOURCE_DIR "/config/engram.yaml --set kafka.brokers=" + brokers +
                          " --set embedder.model_path=" + test::model_path + " --into " + dir.sub("replayed"),
                      &out),
            0)
      << out;
  EXPECT_EQ(test::digest_of(dir.sub("replayed")), live) << out;
}

/// engramd's arguments with the three tokens of these tests (the admin's bound to `bundles`).
std::vector<std::string> forget_args(const std::string& brokers, const test::temp_dir& dir,
                                     const std::string& bundles) {
  return test::engramd_args(
      brokers, dir.sub("store"),
      {"auth.tokens=[{token: " + writer + ", organization_id: acme, scopes: [read, write], name: w}, {token: " + admin +
       ", organization_id: acme, scopes: [read, write, admin], name: ops" + bundles + "}, {token: " + globex +
       ", organization_id: globex, scopes: [read, write], name: g}]"});
}

TEST(Forget, AnEntryAndTheOrganisationAreGoneFromEveryReaderAndAReplayForgetsTheSame) {
  test::temp_dir dir("forget");
  auto broker = test::start_broker();
  const auto args = forget_args(broker->bootstrap(), dir, ", bundles: [ecommerce-catalog-example]");
  auto engramd = std::make_unique<test::engramd>(args, dir.sub("engramd.log"));
  auto port = engramd->port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(dir.sub("engramd.log"));
  // Mail of three organisations, then a save of acme's.
  // One of acme's messages carries a marker, to look for on disk.
  std::vector<std::pair<std::string, std::string>> keyed;
  bool marked = false;
  for (auto e : test::make_events(60)) {
    if (!marked && test::org_of(e) == "acme") {
      auto j = json::parse(e);
      j["body"] = j["body"].get<std::string>() + " The Qzvyxmarker rollout is on track.";
      e = j.dump();
      marked = true;
    }
    keyed.emplace_back(test::org_of(e), e);
  }
  test::produce_raw(broker->bootstrap(), "inbound-messages", keyed);
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) == 60; }, 120s)) << test::events_applied(port);
  auto saved = test::mcp_call(port, writer, "save_knowledge",
                              {{"type", "fact"},
                               {"title", "Acme's renewal price"},
                               {"content", "Acme's renewal price is 12,000 EUR a year."},
                               {"confidence", 0.9}});
  ASSERT_TRUE(saved.contains("id")) << saved;
  const std::string id = saved["id"];
  ASSERT_TRUE(test::has_id(test::recall_ids(port, writer, "renewal price"), id));

  // One entry.
  auto forgot = test::mcp_call(port, writer, "forget_knowledge", {{"kind", "entry"}, {"id", id}});
  ASSERT_FALSE(forgot.contains("error")) << forgot;
  EXPECT_EQ(forgot["forgotten"]["entries"], 1) << forgot;
  EXPECT_TRUE(test::mcp_call(port, writer, "get_knowledge", {{"id", id}}).contains("error"));
  EXPECT_FALSE(test::has_id(test::recall_ids(port, writer, "renewal price"), id));
  EXPECT_FALSE(
      test::has_id(ids_of(test::mcp_call(port, writer, "search_knowledge", {{"query", "renewal price"}})), id));
  int status = 0;
  v1(port, "/v1/entries/" + id, writer, &status);
  EXPECT_EQ(status, 404);
  EXPECT_FALSE(test::has_id(ids_of(v1(port, "/v1/recall?query=renewal+price&kinds=entry", writer)), id));
  EXPECT_NE(test::mcp_call(port, writer, "forget_knowledge", {{"kind", "entry"}, {"id", id}}).value("error", ""), "");
  // The same through engramctl.
  auto second = test::mcp_call(port, writer, "save_knowledge",
                               {{"type", "preference"},
                                {"title", "Acme prefers invoices by post"},
                                {"content", "Acme prefers invoices by post."},
                                {"confidence", 0.9}});
  ASSERT_TRUE(second.contains("id")) << second;
  const std::string ctl = std::string(ENGRAMCTL_PATH) + " forget --url http://127.0.0.1:" + std::to_string(port);
  std::string out;
  EXPECT_EQ(test::run(ctl + " --token " + writer + " --kind entry --id " + second["id"].get<std::string>(), &out), 0)
      << out;
  EXPECT_NE(out.find("\"entries\": 1"), std::string::npos) << out;
  EXPECT_TRUE(test::mcp_call(port, writer, "get_knowledge", {{"id", second["id"]}}).contains("error"));
  EXPECT_EQ(test::run(ctl + " --token " + writer + " --kind entry --id nope 2>&1", &out), 1) << out;
  EXPECT_NE(out.find("id: no entry 'nope'"), std::string::npos) << out;

  // A bundle of acme, whose tools a bound token sees until the organisation is forgotten.
  ASSERT_EQ(test::apply_sample_bundle(broker->bootstrap(), port, admin, &out), 0) << out;
  ASSERT_TRUE(test::listed_tools(port, admin).count("list_category")) << out;

  // The organisation: the admin scope only; everything of acme goes, globex stays as it was.
  const auto acme_before = stats_row(port, "acme"), globex_before = stats_row(port, "globex");
  ASSERT_FALSE(acme_before.is_null());
  ASSERT_FALSE(globex_before.is_null());
  const auto globex_recall = test::recall_ids(port, globex, "meeting budget contract");
  ASSERT_FALSE(globex_recall.empty());
  ASSERT_GT(acme_before["events"].get<int>(), 0);
  ASSERT_FALSE(test::recall_ids(port, writer, "meeting budget contract renewal").empty());
  ASSERT_FALSE(test::mcp_call(port, writer, "read_graph", json::object()).value("entities", json::array()).empty());
  ASSERT_FALSE(test::mcp_call(port, writer, "search_knowledge", {{"query", "plan next steps"}})
                   .value("results", json::array())
                   .empty());
  EXPECT_NE(test::mcp_call(port, writer, "forget_knowledge", {{"kind", "organization"}}).value("error", ""), "");
  EXPECT_NE(
      test::mcp_call(port, admin, "forget_knowledge", {{"kind", "organization"}, {"id", "globex"}}).value("error", ""),
      "");
  ASSERT_FALSE(files_holding(dir.sub("store"), "Qzvyxmarker").empty());
  auto gone = test::mcp_call(port, admin, "forget_knowledge", {{"kind", "organization"}});
  ASSERT_FALSE(gone.contains("error")) << gone;
  EXPECT_EQ(gone["forgotten"]["messages"], acme_before["events"]) << gone;
  EXPECT_EQ(gone["forgotten"]["entries"], acme_before["entries"]) << gone;
  EXPECT_TRUE(stats_row(port, "acme").is_null()) << v1(port, "/v1/stats", test::admin_token);
  // Gone from the disk too, once answered: no file of the data directory holds the marker
  // (the memtables were flushed, the write-ahead logs that held it deleted, the ranges compacted).
  EXPECT_EQ(files_holding(dir.sub("store"), "Qzvyxmarker"), std::vector<std::string>{});
  // Its stem is an index key (full text): RocksDB's MANIFEST keeps files' first and last keys
  // until it is rewritten, which a start does (docs/forgetting.md).
  ASSERT_EQ(engramd->terminate(10s), 0) << test::tail(dir.sub("engramd.log"));
  engramd = std::make_unique<test::engramd>(args, dir.sub("engramd.log"));
  port = engramd->port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(dir.sub("engramd.log"));
  EXPECT_EQ(files_holding(dir.sub("store"), "qzvyxmark"), std::vector<std::string>{});
  EXPECT_EQ(stats_row(port, "globex"), globex_before);
  EXPECT_EQ(test::recall_ids(port, globex, "meeting budget contract"), globex_recall);
  // Every reader of acme: nothing.
  EXPECT_TRUE(test::recall_ids(port, writer, "meeting budget contract renewal").empty());
  EXPECT_EQ(test::mcp_call(port, writer, "search_knowledge", {{"query", "plan next steps"}})["results"], json::array());
  EXPECT_EQ(test::mcp_call(port, writer, "read_graph", json::object())["entities"], json::array());
  EXPECT_EQ(test::mcp_call(port, writer, "entity_search", {{"query", "a"}})["results"], json::array());
  EXPECT_EQ(test::mcp_call(port, writer, "list_review_queue", json::object())["items"], json::array());
  EXPECT_EQ(test::mcp_call(port, writer, "kag_query", {{"query", "who works where"}})["entities"], json::array());
  EXPECT_EQ(v1(port, "/v1/action-items", writer)["total"], 0);
  EXPECT_EQ(v1(port, "/v1/documents", writer)["documents"], json::array());
  EXPECT_EQ(v1(port, "/v1/bundles", admin)["bundles"], json::array());
  EXPECT_FALSE(test::listed_tools(port, admin).count("list_category"));
  // A message that comes later brings back only what it says.
  const auto later = test::make_events(61).back();
  ASSERT_EQ(test::org_of(later), "acme") << later;
  test::produce_raw(broker->bootstrap(), "inbound-messages", {{"acme", later}});
  ASSERT_TRUE(test::wait_until([&] { return !stats_row(port, "acme").is_null(); }, 60s));
  EXPECT_EQ(stats_row(port, "acme")["events"], 1);

  // The audit: who forgot what kind, when; never the content. The admin scope only.
  v1(port, "/v1/audit", writer, &status);
  EXPECT_EQ(status, 403);
  // engramctl says why it was refused (it once aborted on the JSON-RPC error object).
  EXPECT_EQ(test::run(std::string(ENGRAMCTL_PATH) + " audit --url http://127.0.0.1:" + std::to_string(port) +
                          " --token not-a-token-0123456789 2>&1",
                      &out),
            1)
      << out;
  EXPECT_NE(out.find("audit: HTTP 401: "), std::string::npos) << out;
  EXPECT_EQ(out.find("terminate"), std::string::npos) << out;
  EXPECT_EQ(test::run(std::string(ENGRAMCTL_PATH) + " audit --url http://127.0.0.1:" + std::to_string(port) +
                          " --token " + admin,
                      &out),
            0)
      << out;
  EXPECT_NE(out.find("  w  forgot entry " + id), std::string::npos) << out;
  EXPECT_NE(out.find("  ops  forgot organization acme"), std::string::npos) << out;
  EXPECT_EQ(out.find("renewal"), std::string::npos) << out;

  // A replay of engram-log forgets the same: the same digest.
  ASSERT_EQ(engramd->terminate(10s), 0) << test::tail(dir.sub("engramd.log"));
  expect_replay_matches(broker->bootstrap(), dir);
}

/// One of acme's messages for the forgets of messages.
std::string acme_message(const std::string& id, const json& from, const json& to, const std::string& body,
                         const std::string& thread = "", const json& document = nullptr) {
  json e{{"eventId", id},
         {"organizationId", "acme"},
         {"sourceType", document.is_null() ? "email" : "file"},
         {"sentAt", "2026-05-04T09:00:00Z"},
         {"from", from},
         {"to", to},
         {"subject", "Notes"},
         {"body", body}};
  if (!thread.empty())
    e["threadId"] = thread;
  if (!document.is_null())
    e["document"] = document;
  return e.dump();
}

/// Everything acme's readers say about `query`, as one text: recall and search (tools and
/// /v1), the entity tools, kag_query, the graph, documents and action items. Answers echo the
/// query: ask in lower case, look for the word as written.
std::string exposure(std::uint16_t port, const std::string& token, const std::string& query) {
  std::string out;
  out += test::mcp_call(port, token, "recall_knowledge", {{"query", query}, {"limit", 50}}).dump();
  out += test::mcp_call(port, token, "search_knowledge", {{"query", query}, {"limit", 50}}).dump();
  out += test::mcp_call(port, token, "entity_search", {{"query", query}}).dump();
  out += test::mcp_call(port, token, "search_nodes", {{"query", query}}).dump();
  out += test::mcp_call(port, token, "kag_query", {{"query", query}}).dump();
  out += test::mcp_call(port, token, "read_graph", json::object()).dump();
  out += v1(port, "/v1/recall?query=" + query, token).dump();
  out += v1(port, "/v1/search?query=" + query, token).dump();
  out += v1(port, "/v1/entities?query=" + query, token).dump();
  out += v1(port, "/v1/documents", token).dump();
  out += v1(port, "/v1/action-items", token).dump();
  return out;
}

std::string lower(std::string s) {
  for (auto& ch : s)
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

TEST(Forget, AMessageAThreadADocumentAndAContactAreGoneAndAReplayForgetsTheSame) {
  test::temp_dir dir("forget-messages");
  auto broker = test::start_broker();
  const auto args = forget_args(broker->bootstrap(), dir, "");
  auto engramd = std::make_unique<test::engramd>(args, dir.sub("engramd.log"));
  auto port = engramd->port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(dir.sub("engramd.log"));
  const json bob{{"name", "Bob Hale"}, {"address", "bob@acme.example"}, {"contactId", "c-bob"}},
      wendy{{"name", "Wendy Ames"}, {"address", "wendy@acme.example"}},
      carl{{"name", "Carl Nygaard"}, {"address", "carl@acme.example"}},
      ophelia{{"name", "Ophelia Drummond"}, {"address", "ophelia@partner.example"}, {"contactId", "c-oph"}};
  std::vector<std::pair<std::string, std::string>> keyed;
  for (const auto& e : test::make_events(40))
    keyed.emplace_back(test::org_of(e), e);
  for (const auto& e : {
           acme_message("m-msg", wendy, json::array({bob}),
                        "The Quillfeather budget for the warehouse rollout is 40,000 EUR."),
           acme_message("m-thr-1", bob, json::array({carl}), "We decided to move the Brambleton launch to March 12.",
                        "thr-bramble"),
           acme_message("m-thr-2", carl, json::array({bob}), "Carl will send the Brambleton contract by Friday.",
                        "thr-bramble"),
           acme_message("m-doc-0", wendy, json::array(), "The Cindervale warehouse opens on May 3, 2027.", "",
                        {{"id", "doc-cinder"}, {"title", "Handbook"}, {"chunk", 0}, {"chunks", 2}}),
           acme_message("m-doc-1", wendy, json::array(), "The Cindervale staff prefer email for shift changes.", "",
                        {{"id", "doc-cinder"}, {"title", "Handbook"}, {"chunk", 1}, {"chunks", 2}}),
           acme_message("m-oph-1", ophelia, json::array({bob}), "The Marrowgate pilot price is 12,500 EUR a month."),
           acme_message("m-oph-2", bob, json::array({ophelia}), "For Marrowgate we agreed on a two year term."),
           acme_message("m-oph-3", bob, json::array({ophelia, carl}),
                        "Ophelia Drummond will send the signed order by Friday."),
       })
    keyed.emplace_back("acme", e);
  test::produce_raw(broker->bootstrap(), "inbound-messages", keyed);
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) == 48; }, 120s)) << test::events_applied(port);
  const auto globex_before = stats_row(port, "globex");
  const auto globex_recall = test::recall_ids(port, globex, "meeting budget contract");
  ASSERT_FALSE(globex_before.is_null());
  // engram-log holds every message sealed with a key of its own: no marker in clear.
  const auto log = test::consume_all(broker->bootstrap(), "engram-log",
                                     std::size_t(test::topic_size(broker->bootstrap(), "engram-log")), 30s);
  ASSERT_GE(log.size(), 48u);
  for (const auto& r : log)
    for (const char* marker : {"Quillfeather", "Brambleton", "Cindervale", "Marrowgate", "ophelia@partner"})
      ASSERT_EQ(r.value.find(marker), std::string::npos) << marker << " in clear at " << r.offset;

  struct forget_case {
    const char* kind;
    std::string id, marker;
    std::vector<std::string> messages;
  };
  const std::vector<forget_case> cases{
      {"message", "m-msg", "Quillfeather", {"m-msg"}},
      {"thread", "thr-bramble", "Brambleton", {"m-thr-1", "m-thr-2"}},
      {"document", "doc-cinder", "Cindervale", {"m-doc-0", "m-doc-1"}},
      {"contact", "ophelia@partner.example", "Marrowgate", {"m-oph-1", "m-oph-2"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.kind) + " " + c.id);
    const auto before = stats_row(port, "acme");
    const auto query = lower(c.marker);
    ASSERT_NE(exposure(port, writer, query).find(c.marker), std::string::npos);
    for (const auto& m : c.messages) {
      int status = 0;
      v1(port, "/v1/messages/" + m, writer, &status);
      ASSERT_EQ(status, 200) << m;
    }
    json forgot;
    if (std::string(c.kind) == "contact") {
      // The admin scope; and engramd is killed in the middle of the rebuild: the forget, still
      // on engram-log and not yet applied, is applied once by the next engramd.
      EXPECT_NE(
          test::mcp_call(port, writer, "forget_knowledge", {{"kind", "contact"}, {"id", c.id}}).value("error", ""), "");
      ASSERT_EQ(engramd->terminate(10s), 0) << test::tail(dir.sub("engramd.log"));
      ::setenv("ENGRAM_FAULT_REBUILD_KILL_AFTER", "5", 1);
      engramd = std::make_unique<test::engramd>(args, dir.sub("engramd.log"));
      port = engramd->port();
      ::unsetenv("ENGRAM_FAULT_REBUILD_KILL_AFTER");
      ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(dir.sub("engramd.log"));
      forgot = test::mcp_call(port, admin, "forget_knowledge", {{"kind", c.kind}, {"id", c.id}});
      EXPECT_TRUE(forgot.contains("error")) << forgot;  // the answer never came
      ASSERT_TRUE(test::wait_until([&] { return !engramd->alive(); }, 60s));
      engramd = std::make_unique<test::engramd>(args, dir.sub("engramd.log"));
      port = engramd->port();
      ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(dir.sub("engramd.log"));
      const auto expected = before["events"].get<std::size_t>() - c.messages.size();
      ASSERT_TRUE(test::wait_until(
          [&] {
            const auto row = stats_row(port, "acme");
            return !row.is_null() && row["events"].get<std::size_t>() == expected;
          },
          60s))
          << stats_row(port, "acme") << test::tail(dir.sub("engramd.log"));
      std::string audit;
      ASSERT_EQ(test::run(std::string(ENGRAMCTL_PATH) + " audit --url http://127.0.0.1:" + std::to_string(port) +
                              " --token " + admin,
                          &audit),
                0);
      std::size_t rows = 0;
      for (auto at = audit.find("forgot contact " + c.id); at != std::string::npos;
           at = audit.find("forgot contact " + c.id, at + 1))
        ++rows;
      EXPECT_EQ(rows, 1u) << audit;
    } else {
      forgot = test::mcp_call(port, writer, "forget_knowledge", {{"kind", c.kind}, {"id", c.id}});
      ASSERT_FALSE(forgot.contains("error")) << forgot;
      EXPECT_EQ(forgot["forgotten"]["messages"], c.messages.size()) << forgot;
      EXPECT_GE(forgot["forgotten"]["entries"].get<int>(), 1) << forgot;
    }
    const auto after = stats_row(port, "acme");
    EXPECT_EQ(after["events"].get<std::size_t>(), before["events"].get<std::size_t>() - c.messages.size());
    const auto seen = exposure(port, writer, query);
    EXPECT_EQ(seen.find(c.marker), std::string::npos) << seen.substr(0, 2000);
    for (const auto& m : c.messages) {
      int status = 0;
      v1(port, "/v1/messages/" + m, writer, &status);
      EXPECT_EQ(status, 404) << m;
    }
    EXPECT_NE(test::mcp_call(port, writer, "forget_knowledge", {{"kind", c.kind}, {"id", c.id}}).value("error", ""), "")
        << "nothing left to forget";
    EXPECT_EQ(stats_row(port, "globex"), globex_before);
  }
  // The contact is gone as a person: no entity, no name; what someone else wrote about them stays
  // as text (their message and its entries), without their mention.
  const auto people = exposure(port, writer, "ophelia");
  EXPECT_EQ(people.find("ophelia@partner.example"), std::string::npos) << people.substr(0, 2000);
  EXPECT_EQ(test::mcp_call(port, writer, "entity_search", {{"query", "Ophelia"}})["results"], json::array());
  int status = 0;
  v1(port, "/v1/entities/Ophelia%20Drummond", writer, &status);
  EXPECT_EQ(status, 404);
  v1(port, "/v1/messages/m-oph-3", writer, &status);
  EXPECT_EQ(status, 200);
  EXPECT_NE(test::mcp_call(port, writer, "recall_knowledge", {{"query", "signed order"}}).dump().find("signed order"),
            std::string::npos);
  EXPECT_EQ(test::recall_ids(port, globex, "meeting budget contract"), globex_recall);
  // Their data keys are deleted (tombstones on engram-keys, the last word for each): the records
  // stay on engram-log, unreadable. m-oph-3's key stays.
  std::map<std::string, std::string> last;
  for (const auto& k : test::consume_all(broker->bootstrap(), "engram-keys",
                                         std::size_t(test::topic_size(broker->bootstrap(), "engram-keys")), 30s))
    last[k.key] = k.value;
  std::set<std::string> shredded, kept;
  for (const auto& [name, value] : last)
    (value.empty() ? shredded : kept).insert(name.substr(0, name.rfind('/')));
  for (const auto& c : cases)
    for (const auto& m : c.messages)
      EXPECT_TRUE(shredded.count("acme/" + m) && !kept.count("acme/" + m)) << m;
  EXPECT_TRUE(kept.count("acme/m-oph-3"));
  // A message that comes later brings back only what it says.
  test::produce_raw(
      broker->bootstrap(), "inbound-messages",
      {{"acme", acme_message("m-oph-4", ophelia, json::array({bob}), "The Hazelmoor kickoff is on June 2.")}});
  ASSERT_TRUE(test::wait_until(
      [&] { return exposure(port, writer, "Hazelmoor").find("Hazelmoor") != std::string::npos; }, 60s));
  EXPECT_EQ(exposure(port, writer, "marrowgate").find("Marrowgate"), std::string::npos);

  // On disk: after a start (RocksDB's MANIFEST keeps boundary keys until then), no file of the
  // data directory holds a forgotten message's words (the contact's address is back: m-oph-4).
  ASSERT_EQ(engramd->terminate(10s), 0) << test::tail(dir.sub("engramd.log"));
  engramd = std::make_unique<test::engramd>(args, dir.sub("engramd.log"));
  port = engramd->port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(dir.sub("engramd.log"));
  for (const char* marker :
       {"Quillfeather", "quillfeath", "Brambleton", "brambleton", "Cindervale", "cindervale", "Marrowgate", "marrowg"})
    EXPECT_EQ(files_holding(dir.sub("store"), marker), std::vector<std::string>{}) << marker;

  // A replay of engram-log forgets the same: the same digest.
  ASSERT_EQ(engramd->terminate(10s), 0) << test::tail(dir.sub("engramd.log"));
  expect_replay_matches(broker->bootstrap(), dir);
}

TEST(Forget, RetentionForgetsOldMessagesAndPassagesKeepsTheirEntriesAndAReplayMatches) {
  test::temp_dir dir("forget-retention");
  auto broker = test::start_broker();
  auto args = forget_args(broker->bootstrap(), dir, "");
  auto engramd = std::make_unique<test::engramd>(args, dir.sub("engramd.log"));
  auto port = engramd->port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(dir.sub("engramd.log"));
  const json bob{{"name", "Bob Hale"}, {"address", "bob@acme.example"}},
      wendy{{"name", "Wendy Ames"}, {"address", "wendy@acme.example"}};
  // Two messages of May 2026 (older than 30 days whenever this runs) and one of 2099.
  auto recent = json::parse(
      acme_message("r-new-1", wendy, json::array({bob}), "The Wrenfield budget for the new depot is 45,000 EUR."));
  recent["sentAt"] = "2099-01-05T09:00:00Z";
  std::vector<std::pair<std::string, std::string>> keyed;
  for (const auto& e : test::make_events(40))
    keyed.emplace_back(test::org_of(e), e);
  for (const auto& e : {acme_message("r-old-1", wendy, json::array({bob}),
                                     "The Tamberlake budget for the depot refit is 30,000 EUR.", "thr-tamber"),
                        acme_message("r-old-2", bob, json::array({wendy}),
                                     "We decided to hold the Tamberlake review on June 9.", "thr-tamber"),
                        recent.dump()})
    keyed.emplace_back("acme", e);
  test::produce_raw(broker->bootstrap(), "inbound-messages", keyed);
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) == 43; }, 120s)) << test::events_applied(port);
  auto passages = [&](const std::string& query) {
    return test::mcp_call(port, writer, "recall_knowledge", {{"query", query}, {"kinds", {"passage"}}, {"limit", 50}})
        .value("results", json::array());
  };
  ASSERT_FALSE(passages("tamberlake budget").empty());
  std::string entry_id;  // an entry read from r-old-1
  const auto recalled = test::mcp_call(port, writer, "recall_knowledge", {{"query", "tamberlake budget"}});
  for (const auto& r : recalled.value("results", json::array()))
    if (r.value("kind", "") == "entry" && r.value("eventId", "") == "r-old-1")
      entry_id = r["id"];
  ASSERT_FALSE(entry_id.empty()) << recalled.dump(1);
  const auto acme_before = stats_row(port, "acme"), globex_before = stats_row(port, "globex");
  ASSERT_GT(acme_before["passages"].get<int>(), 0) << acme_before;

  // Keep acme's messages 30 days (globex's for ever); the timers run every 100 ms.
  ASSERT_EQ(engramd->terminate(10s), 0) << test::tail(dir.sub("engramd.log"));
  args.insert(args.end(), {"--set", "retention.organizations.acme=30", "--set", "timers.interval_ms=100"});
  engramd = std::make_unique<test::engramd>(args, dir.sub("engramd.log"));
  port = engramd->port();
  auto status_of = [&](const std::string& event) {
    int status = 0;
    v1(port, "/v1/messages/" + event, writer, &status);
    return status;
  };
  ASSERT_TRUE(test::wait_until(
      [&] { return test::ready(port) && status_of("r-old-1") == 404 && status_of("r-old-2") == 404; }, 120s))
      << test::tail(dir.sub("engramd.log"));
  EXPECT_EQ(status_of("r-new-1"), 200);
  // Their passages are gone from recall; the recent one's stay.
  for (const auto& p : passages("tamberlake budget"))
    EXPECT_EQ(p["eventId"], "r-new-1") << p;
  auto wrenfield = passages("wrenfield budget");
  ASSERT_FALSE(wrenfield.empty());
  EXPECT_EQ(wrenfield[0]["eventId"], "r-new-1");
  // The entries they supported stay, their source marked; the message itself is gone.
  auto entry = test::mcp_call(port, writer, "get_knowledge", {{"id", entry_id}});
  ASSERT_FALSE(entry.contains("error")) << entry;
  EXPECT_EQ(entry["entry"]["sourceId"], "retained no longer") << entry;
  EXPECT_TRUE(entry["source"].is_null()) << entry;
  json found;
  const auto after = test::mcp_call(port, writer, "recall_knowledge", {{"query", "tamberlake budget"}});
  for (const auto& r : after.value("results", json::array()))
    if (r.value("id", "") == entry_id)
      found = r;
  ASSERT_FALSE(found.is_null()) << after.dump(1);
  ASSERT_EQ(found["sources"].size(), 1u) << found;
  EXPECT_EQ(found["sources"][0]["eventId"], "r-old-1") << found;
  EXPECT_EQ(found["sources"][0]["sourceId"], "retained no longer") << found;
  EXPECT_FALSE(found.contains("evidence")) << found;  // it quoted a passage of r-old-1
  // Every old message of acme went (the synthetic ones are of March 2026): one passage of
  // r-new-1 is left, or so; globex keeps everything.
  const auto acme_after = stats_row(port, "acme"), globex_after = stats_row(port, "globex");
  EXPECT_LT(acme_after["passages"].get<int>(), acme_before["passages"].get<int>()) << acme_after;
  EXPECT_EQ(acme_after["passages"].get<int>(), static_cast<int>(wrenfield.size())) << acme_after;
  EXPECT_EQ(acme_after["events"], acme_before["events"]);
  EXPECT_EQ(globex_after["passages"], globex_before["passages"]);
  EXPECT_EQ(globex_after["events"], globex_before["events"]);
  // The audit names the timers and the kind, never what was in the messages.
  std::string out;
  ASSERT_EQ(test::run(std::string(ENGRAMCTL_PATH) + " audit --url http://127.0.0.1:" + std::to_string(port) +
                          " --token " + admin,
                      &out),
            0)
      << out;
  EXPECT_NE(out.find("  timers  forgot retention "), std::string::npos) << out;
  EXPECT_EQ(out.find("Tamberlake"), std::string::npos) << out;
  // A replay of engram-log applies the same retention forgets: the same digest.
  ASSERT_EQ(engramd->terminate(10s), 0) << test::tail(dir.sub("engramd.log"));
  expect_replay_matches(broker->bootstrap(), dir);
}

TEST(Forget, EngramdCreatesTheKeyTopicOrRefusesToStartWithoutItAndNamesIt) {
  test::temp_dir dir("forget-no-keys");
  auto broker = ingest::embedded_broker::start({"inbound-messages", "engram-log", "engram-reminders", "engram-dlq"}, 1);
  ASSERT_TRUE(broker) << broker.error();
  const auto brokers = (*broker)->bootstrap();
  auto key_topic = [&] {
    auto ranges = ingest::partition_ranges(brokers, {"engram-keys"});
    return ranges && !ranges->empty();
  };
  ASSERT_FALSE(key_topic());
  {  // told not to create it: it refuses to start, and says which topic and how
    test::engramd engramd(test::engramd_args(brokers, dir.sub("store"), {"kafka.create_key_topic=false"}),
                          dir.sub("refused.log"));
    EXPECT_EQ(engramd.port(), 0) << "it served HTTP";  // 0: it ended without serving
    ASSERT_TRUE(test::wait_until([&] { return !engramd.alive(); }, 60s)) << test::tail(dir.sub("refused.log"));
    const auto log = test::tail(dir.sub("refused.log"), 20);
    EXPECT_NE(log.find("kafka.topics.keys: the key topic 'engram-keys' is missing"), std::string::npos) << log;
    EXPECT_FALSE(key_topic());
  }
  // By default it creates it (plain here: the test broker cannot compact), then starts.
  test::engramd engramd(test::engramd_args(brokers, dir.sub("store")), dir.sub("engramd.log"));
  const auto port = engramd.port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port) || !engramd.alive(); }, 120s))
      << test::tail(dir.sub("engramd.log"));
  ASSERT_TRUE(test::ready(port)) << test::tail(dir.sub("engramd.log"));
  EXPECT_TRUE(key_topic());
  const auto log = test::tail(dir.sub("engramd.log"), 200);
  EXPECT_NE(log.find("key topic engram-keys: created plain on the test broker"), std::string::npos) << log;
  // A message's record is sealed with a key of its own, written to the new topic first.
  const auto event = test::make_events(1).front();
  test::produce_raw(brokers, "inbound-messages", {{"acme", event}});
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) == 1; }, 120s));
  EXPECT_EQ(test::topic_size(brokers, "engram-keys"), 1);
}

}  // namespace
