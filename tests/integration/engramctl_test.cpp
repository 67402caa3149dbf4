// engramctl as a user runs it: a separate devbroker process, produce with line-numbered
// rejections, stats against a running engine, the entity graph read from a store.
#include "logging/log.hpp"
#include "actors/engine/engine.hpp"
#include "schemas/time.hpp"
#include "storage/graph_store.hpp"
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <sys/wait.h>

namespace {

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

std::string engramctl() { return ENGRAMCTL_PATH; }

using test::run;

TEST(Engramctl, DevbrokerProduceAndStatsWorkTogether) {
  test::temp_dir dir("engramctl");
  auto bootstrap_file = dir.sub("bootstrap");
  test::child broker({engramctl(), "devbroker", "--partitions", "4", "--bootstrap-file", bootstrap_file},
                     dir.sub("devbroker.log"));
  ASSERT_TRUE(test::wait_until([&] { return std::filesystem::exists(bootstrap_file); }, 10s))
      << test::tail(dir.sub("devbroker.log"));
  std::string brokers;
  std::ifstream(bootstrap_file) >> brokers;
  ASSERT_EQ(brokers.rfind("127.0.0.1:", 0), 0u) << brokers;

  auto events = test::make_events(6);
  auto file = dir.sub("events.jsonl");
  {
    std::ofstream f(file);
    f << events[0] << "\n"
      << "{not json\n"
      << events[1] << "\n\n"
      << events[2] << "\n";
    json bad = json::parse(events[3]);
    bad.erase("body");
    f << bad.dump() << "\n" << events[4] << "\n" << events[5] << "\n";
  }
  std::string out;
  EXPECT_EQ(run(engramctl() + " produce --brokers " + brokers + " " + file, &out), 1) << out;
  EXPECT_NE(out.find("line 2: invalid JSON"), std::string::npos) << out;
  EXPECT_NE(out.find("line 6: /body: required field is missing"), std::string::npos) << out;
  EXPECT_NE(out.find("produced 5 events to inbound-messages, rejected 2"), std::string::npos) << out;

  auto records = test::consume_all(brokers, "inbound-messages", 5, 30s);
  ASSERT_EQ(records.size(), 5u);
  for (const auto& r : records)
    EXPECT_EQ(r.key, test::org_of(r.value));

  // A running engine against the devbroker process; engramctl stats reads it.
  auto started = engine::engine::start(test::test_config(brokers, dir.sub("store")), {});
  ASSERT_TRUE(started) << started.error();
  auto& e = *started;
  ASSERT_TRUE(test::wait_until([&] { return e->metrics().applied() == 5; }, 60s));
  EXPECT_EQ(run(engramctl() + " stats --token " + std::string(test::admin_token) +
                    " --url http://127.0.0.1:" + std::to_string(e->http_port()),
                &out),
            0)
      << out;
  auto stats = json::parse(out);
  std::uint64_t total = 0;
  for (const auto& o : stats["organizations"])
    total += o["events"].get<std::uint64_t>();
  EXPECT_EQ(total, 5u);
  e->stop();

  // digest --dump: what the digest hashes, one key a line, then the digest itself.
  std::string digest, dump;
  ASSERT_EQ(run(engramctl() + " digest --data-dir " + dir.sub("store"), &digest), 0) << digest;
  ASSERT_EQ(run(engramctl() + " digest --dump --data-dir " + dir.sub("store"), &dump), 0) << dump;
  ASSERT_GT(dump.size(), digest.size());
  EXPECT_EQ(dump.substr(dump.size() - digest.size()), digest) << "the dump ends with the digest";
  std::istringstream lines(dump.substr(0, dump.size() - digest.size()));
  std::map<std::string, int> keys_by_family;
  for (std::string line; std::getline(lines, line);) {
    ASSERT_EQ(std::count(line.begin(), line.end(), '\t'), 2) << line;
    EXPECT_TRUE(std::all_of(line.begin(), line.end(), [](char c) { return c == '\t' || (c >= 0x20 && c < 0x7f); }))
        << "bytes outside printable ASCII are escaped: " << line;
    ++keys_by_family[line.substr(0, line.find('\t'))];
  }
  EXPECT_EQ(keys_by_family["messages"], 5) << dump;
  EXPECT_GT(keys_by_family["entries"], 0) << dump;

  // --by-organization: one sorted line per organisation; --organization gives the same digest.
  std::string by_org;
  ASSERT_EQ(run(engramctl() + " digest --by-organization --data-dir " + dir.sub("store"), &by_org), 0) << by_org;
  std::istringstream org_lines(by_org);
  std::vector<std::string> orgs;
  for (std::string line; std::getline(org_lines, line);) {
    auto tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    orgs.push_back(line.substr(0, tab));
    std::string one;
    ASSERT_EQ(run(engramctl() + " digest --organization " + orgs.back() + " --data-dir " + dir.sub("store"), &one), 0);
    EXPECT_EQ(one, line.substr(tab + 1) + "\n") << orgs.back();
    EXPECT_NE(one, digest) << "an organisation's digest is not the whole store's";
  }
  EXPECT_GE(orgs.size(), 2u) << by_org;
  EXPECT_TRUE(std::is_sorted(orgs.begin(), orgs.end())) << by_org;

  // The devbroker says what it is, and it held every record of this test.
  const auto broker_log = test::tail(dir.sub("devbroker.log"));
  EXPECT_NE(broker_log.find("each partition keeps about 5 MiB and silently drops its oldest records"),
            std::string::npos)
      << broker_log;
  test::expect_untruncated(brokers);
  EXPECT_EQ(broker.terminate(5s), 0);
  EXPECT_EQ(run(engramctl() + " produce --brokers 127.0.0.1:1 /nonexistent.jsonl", &out), 1);
  EXPECT_NE(out.find("cannot read /nonexistent.jsonl"), std::string::npos) << out;
  EXPECT_EQ(run(engramctl() + " digest --data-dir " + dir.sub("nowhere"), &out), 1);
  EXPECT_NE(out.find("cannot open store"), std::string::npos) << out;
}

TEST(Engramctl, ImportReadsEmlMboxAndMaildirAndReportsMalformedMail) {
  test::temp_dir dir("import");
  auto mail = std::string(ENGRAM_SOURCE_DIR) + "/tests/data/mail";
  std::string out;
  ASSERT_EQ(run(engramctl() + " import --output " + dir.sub("events.jsonl") + " --organization acme " + mail, &out), 0)
      << out;
  EXPECT_NE(out.find("imported 7 events from 8 files"), std::string::npos) << out;
  EXPECT_NE(out.find("2 malformed"), std::string::npos) << out;
  EXPECT_NE(out.find("no-from.eml: no From address"), std::string::npos) << out;
  EXPECT_NE(out.find("garbage.eml: not a parsable e-mail message"), std::string::npos) << out;
  EXPECT_EQ(out.find("partial"), std::string::npos) << "maildir tmp/ must be skipped: " << out;

  std::map<std::string, json> by_subject;
  std::ifstream in(dir.sub("events.jsonl"));
  std::string line;
  while (std::getline(in, line)) {
    auto ev = json::parse(line);
    EXPECT_EQ(ev["organizationId"], "acme");
    by_subject[ev["subject"].get<std::string>()] = ev;
  }
  ASSERT_EQ(by_subject.size(), 7u);
  // List and bulk markers travel as the event's headers, names lower-cased.
  auto weekly = by_subject.at("Northwind Weekly: new warehouse in Porto");
  EXPECT_EQ(weekly["headers"]["list-id"], "Northwind Weekly <weekly.northwind.example>");
  EXPECT_EQ(weekly["headers"]["list-unsubscribe"], "<https://northwind.example/unsubscribe?u=42>");
  EXPECT_EQ(weekly["headers"]["precedence"], "bulk");
  EXPECT_FALSE(by_subject.at("Renewal \xE2\x80\x93 pricing").contains("headers"));
  // multipart/alternative, quoted-printable, RFC 2047 subject: the plain part wins.
  auto renewal = by_subject.at("Renewal \xE2\x80\x93 pricing");
  EXPECT_EQ(renewal["eventId"], "renewal-1@acme.example");
  EXPECT_EQ(renewal["sentAt"], "2026-03-04T09:15:00Z");
  EXPECT_NE(renewal["body"].get<std::string>().find("\xE2\x82\xAC"
                                                    "42 per seat"),
            std::string::npos);
  EXPECT_NE(renewal["body"].get<std::string>().find("Please send the signed"), std::string::npos);
  EXPECT_EQ(renewal["body"].get<std::string>().find("HTML version"), std::string::npos);
  EXPECT_EQ(renewal["cc"][0]["address"], "dana@acme.example");
  // base64 HTML-only body in ISO-8859-1: converted to UTF-8 text; thread from References.
  auto order = by_subject.at("Order");
  EXPECT_EQ(order["threadId"], "thread-root@northwind.example");
  auto body = order["body"].get<std::string>();
  EXPECT_NE(body.find("Gr\xC3\xBC\xC3\x9F"
                      "e"),
            std::string::npos)
      << body;
  EXPECT_NE(body.find("ships on March 12 & costs \xE2\x82\xAC"
                      "900."),
            std::string::npos)
      << body;
  EXPECT_EQ(body.find("color:red"), std::string::npos) << body;
  EXPECT_EQ(body.find('<'), std::string::npos) << body;
  // mbox: two messages; the reply has no Message-ID (content hash) and threads by In-Reply-To.
  auto reply = by_subject.at("Re: first");
  EXPECT_EQ(reply["eventId"].get<std::string>().rfind("sha256-", 0), 0u);
  EXPECT_EQ(reply["threadId"], "m1@acme.example");
  // Import is deterministic: the same files give the same event ids.
  ASSERT_EQ(run(engramctl() + " import --output " + dir.sub("again.jsonl") + " --organization acme " + mail, &out), 0);
  std::ifstream a(dir.sub("events.jsonl")), b(dir.sub("again.jsonl"));
  std::string sa((std::istreambuf_iterator<char>(a)), {}), sb((std::istreambuf_iterator<char>(b)), {});
  EXPECT_EQ(sa, sb);

  // To a broker: key = organizationId.
  auto broker = test::start_broker();
  ASSERT_EQ(run(engramctl() + " import --brokers " + broker->bootstrap() + " --organization acme " + mail, &out), 0)
      << out;
  auto records = test::consume_all(broker->bootstrap(), "inbound-messages", 7, 30s);
  ASSERT_EQ(records.size(), 7u);
  for (const auto& r : records)
    EXPECT_EQ(r.key, "acme");

  EXPECT_EQ(run(engramctl() + " import --output x.jsonl --organization 'bad org' " + mail, &out), 2);
  EXPECT_NE(out.find("--organization"), std::string::npos) << out;
  EXPECT_EQ(run(engramctl() + " import --output x.jsonl --organization acme /nonexistent", &out), 1);
  EXPECT_NE(out.find("no such file or folder: /nonexistent"), std::string::npos) << out;
}

TEST(Engramctl, ExtractPrintsOneLinePerEventWithEntitiesAndEntries) {
  std::string out;
  ASSERT_EQ(run(engramctl() + " extract --model " ENGRAM_MODEL_PATH " " + std::string(ENGRAM_SOURCE_DIR) +
                    "/tools/samples/demo-stream.jsonl",
                &out),
            0)
      << out;
  std::istringstream lines(out);
  std::string line;
  std::size_t n = 0, entries = 0;
  while (std::getline(lines, line)) {
    auto doc = json::parse(line);
    ASSERT_TRUE(doc.contains("eventId"));
    ASSERT_TRUE(doc["entities"].is_array());
    for (const auto& e : doc["entries"]) {
      ++entries;
      EXPECT_LE(e["title"].get<std::string>().size(), 80u * 4);
      EXPECT_GE(e["confidence"].get<double>(), 0.6);
    }
    ++n;
  }
  EXPECT_EQ(n, 91u);
  EXPECT_GT(entries, 60u);
  EXPECT_EQ(run("printf '{\"eventId\": 1}\\n' | " + engramctl() + " extract --no-type-model -", &out), 1);
  EXPECT_NE(out.find("line 1: /eventId: must be a string"), std::string::npos) << out;
  // Without the encoder's weights the type model cannot run: said, with the way out.
  EXPECT_EQ(run(engramctl() + " extract --model /nonexistent/use.bin -", &out), 1);
  EXPECT_NE(out.find("/nonexistent/use.bin"), std::string::npos) << out;
  EXPECT_NE(out.find("--no-type-model"), std::string::npos) << out;
}

}  // namespace

namespace {

// engramd --set log.format=json: every line it writes is one JSON object naming its module,
// and log.levels quiets one module without quieting the others.
/// engramctl entities on a store the entity commands built (opened read-only, as beside a
/// running engramd): search ranks, show has everything, export writes the memory server's
/// JSON Lines (every entity and relation once) and a Mermaid diagram the real parser reads.
TEST(Engramctl, EntitiesSearchShowAndExport) {
  test::temp_dir dir("engramctl-entities");
  const auto data = dir.sub("store");
  {
    auto store = storage::open_graph_store({data});
    ASSERT_TRUE(store) << store.error();
    std::int64_t offset = 0;
    auto apply = [&](schemas::entity_command c) {
      c.event_id = "ent-" + std::to_string(offset);
      c.organization_id = "acme";
      c.issued_at = "2026-05-01T10:00:00.000Z";
      c.issued_at_ms = *schemas::parse_rfc3339(c.issued_at);
      storage::entity_result r;
      storage::apply_outcome how{};
      ASSERT_EQ((*store)->apply_entity_command({"engram-log", 0, offset++, "t"}, c, &r, &how), storage::errc::ok);
      ASSERT_EQ(r.error, "");
    };
    schemas::entity_command add;
    add.op = schemas::entity_op::add_entities;
    add.entities = {{"Stripe", "company", {{"founded", "2010"}}, {"payments \"API\""}},
                    {"Rust", "technology", {}, {}},
                    {"String (Rust type)", "technology", {}, {}}};
    apply(add);
    schemas::entity_command relate;
    relate.op = schemas::entity_op::relate;
    relate.relations = {{"Stripe", "Rust", "uses", 1.0, {}}, {"String (Rust type)", "Rust", "part of", 1.0, {}}};
    apply(relate);
  }
  const std::string base = engramctl() + " entities ";
  const std::string where = " --data-dir " + data + " --organization acme";
  std::string out;
  ASSERT_EQ(run(base + "search" + where + " stri", &out), 0) << out;
  std::istringstream lines(out);
  std::string first;
  std::getline(lines, first);
  EXPECT_EQ(json::parse(first)["name"], "Stripe") << out;
  ASSERT_EQ(run(base + "show" + where + " stripe", &out), 0) << out;
  auto shown = json::parse(out);
  EXPECT_EQ(shown["attributes"], (json{{"founded", "2010"}}));
  EXPECT_EQ(shown["observations"], (json{"payments \"API\""}));
  ASSERT_EQ(shown["relations"].size(), 1u);
  EXPECT_EQ(shown["relations"][0]["relationType"], "uses");
  EXPECT_NE(run(base + "show" + where + " Nobody", &out), 0);
  EXPECT_NE(out.find("no entity 'Nobody'"), std::string::npos) << out;

  ASSERT_EQ(run(base + "export" + where + " 2>/dev/null", &out), 0) << out;
  std::istringstream jsonl(out);
  std::size_t entities = 0, relations = 0;
  for (std::string line; std::getline(jsonl, line);) {
    auto j = json::parse(line);
    if (j["type"] == "entity") {
      ++entities;
      EXPECT_TRUE(j.contains("name") && j.contains("entityType") && j.contains("observations")) << line;
    } else {
      ++relations;
      EXPECT_EQ(j["type"], "relation") << line;
      EXPECT_TRUE(j.contains("from") && j.contains("to") && j.contains("relationType")) << line;
    }
  }
  EXPECT_EQ(entities, 3u);
  EXPECT_EQ(relations, 2u);

  ASSERT_EQ(run(base + "export --format mermaid" + where + " > " + dir.sub("graph.mmd"), &out), 0) << out;
  ASSERT_EQ(run("ENGRAM_NODE_MODULES=" ENGRAM_SOURCE_DIR "/.cache/node/node_modules node " ENGRAM_SOURCE_DIR
                "/tests/mcp/mermaid_check.mjs " +
                    dir.sub("graph.mmd"),
                &out),
            0)
      << out;
  EXPECT_NE(run(base + "export --format dot" + where, &out), 0);
}

/// engramctl kg bowtie as Bowtie runs it: a separate process fed JSON lines. Every group of
/// two official suite files: results for what compiles (equal to the suite's answers),
/// "skipped" naming the reason for what uses an unsupported feature.
TEST(Engramctl, KgBowtieAnswersTheOfficialSuiteOverTheHarnessProtocol) {
  test::temp_dir dir("engramctl-bowtie");
  std::ofstream in(dir.sub("in.jsonl"));
  in << R"({"cmd": "start", "version": 1})"
     << "\n"
     << R"({"cmd": "dialect", "dialect": "https://json-schema.org/draft/2020-12/schema"})"
     << "\n";
  std::vector<json> expected;
  for (const char* file : {"type", "ref", "properties"}) {
    std::ifstream f(std::string(JSON_SCHEMA_SUITE) + "/" + file + ".json");
    ASSERT_TRUE(f) << file;
    for (auto& group : json::parse(f)) {
      json tests = json::array(), valid = json::array();
      for (const auto& t : group["tests"]) {
        tests.push_back({{"description", t["description"]}, {"instance", t["data"]}});
        valid.push_back(t["valid"]);
      }
      in << json{{"cmd", "run"},
                 {"seq", expected.size()},
                 {"output", "flag"},
                 {"case", {{"description", group["description"]}, {"schema", group["schema"]}, {"tests", tests}}}}
                .dump()
         << "\n";
      expected.push_back(valid);
    }
  }
  in << R"({"cmd": "stop"})"
     << "\n";
  in.close();
  std::string out;
  ASSERT_EQ(run(engramctl() + " kg bowtie < " + dir.sub("in.jsonl") + " 2>&1", &out), 0) << out;
  std::istringstream lines(out);
  std::vector<json> replies;
  for (std::string line; std::getline(lines, line);)
    replies.push_back(json::parse(line));
  ASSERT_EQ(replies.size(), expected.size() + 3) << out;
  EXPECT_EQ(replies[1], (json{{"ok", true}}));
  std::size_t results = 0, skipped = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto& r = replies[i + 2];
    ASSERT_EQ(r["seq"], i);
    if (r.contains("skipped")) {
      ++skipped;
      EXPECT_FALSE(r["message"].get<std::string>().empty());
      continue;
    }
    ++results;
    ASSERT_EQ(r["results"].size(), expected[i].size()) << r;
    for (std::size_t k = 0; k < expected[i].size(); ++k)
      EXPECT_EQ(r["results"][k]["valid"], expected[i][k]) << "case " << i << " test " << k;
  }
  EXPECT_EQ(results, 36u);
  EXPECT_EQ(skipped, 14u);  // ref.json's groups the suite test excludes: embedded $id, the remote metaschema
  EXPECT_EQ(replies.back(), json::object());
}

/// engramctl kg validate on the shipped example bundle (tools/samples/kg/ecommerce-catalog:
/// 302 entities, x-ref chains, a cycle) and on a broken copy: every problem on its own line
/// with file, entity, pointer and reason, exit 1.
TEST(Engramctl, KgValidateChecksABundleLocally) {
  const std::string sample = ENGRAM_SOURCE_DIR "/tools/samples/kg/ecommerce-catalog";
  std::string out;
  ASSERT_EQ(run(engramctl() + " kg validate " + sample + " 2>&1", &out), 0) << out;
  EXPECT_NE(out.find("3 types, 302 entities, valid"), std::string::npos) << out;
  EXPECT_NE(out.find("warning: cycle between types: brand -> category -> brand"), std::string::npos) << out;
  EXPECT_NE(out.find("list_category_ids"), std::string::npos) << out;

  test::temp_dir dir("engramctl-kg");
  const auto copy = dir.sub("bundle");
  std::filesystem::copy(sample, copy, std::filesystem::copy_options::recursive);
  auto attributes = json::parse(std::ifstream(copy + "/entities/product_attributes.json"));
  attributes[7]["category"] = "spaceships";
  attributes[9]["brand_count"] = 3;
  std::ofstream(copy + "/entities/product_attributes.json") << attributes.dump();
  ASSERT_EQ(run(engramctl() + " kg validate " + copy + " 2>&1", &out), 1) << out;
  EXPECT_NE(
      out.find(
          "entities/product_attributes.json entity 'garden-size-7' (#7) /category: refers to category 'spaceships', "
          "which the "
          "bundle does not have"),
      std::string::npos)
      << out;
  EXPECT_NE(
      out.find(
          "entities/product_attributes.json entity 'beauty-size-9' (#9) /brand_count: 'brand_count' is not a property "
          "this schema allows"),
      std::string::npos)
      << out;
}

TEST(EngramdLogs, JsonFormatOneObjectPerLineAndALevelPerModule) {
  test::temp_dir dir("json-logs");
  const auto log = dir.sub("engramd.log");
  auto broker = test::start_broker();
  {
    test::engramd engramd({ENGRAMD_PATH, "--config", std::string(ENGRAM_SOURCE_DIR) + "/config/engram.yaml", "--set",
                           "kafka.brokers=" + broker->bootstrap(), "--set", "storage.path=" + dir.sub("store"), "--set",
                           "samples.load=false", "--set", std::string("embedder.model_path=") + test::model_path,
                           "--set", "http.listen=127.0.0.1:0", "--set", "log.format=json", "--set",
                           "log.levels.http=warn", "--set", "log.levels.ingest=debug"},
                          log);
    const auto port = engramd.port();
    int status = 0;
    ASSERT_TRUE(test::wait_until([&] { return test::get(port, "/readyz", &status), status == 200; }, 60s))
        << test::tail(log);
    ASSERT_EQ(engramd.terminate(10s), 0) << test::tail(log);
  }
  std::ifstream in(log);
  std::map<std::string, std::map<std::string, int>> by_module;  // module -> level -> lines
  std::size_t lines = 0, listening = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty())
      continue;
    ++lines;
    auto j = json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << "not one JSON object: " << line;
    for (const char* k : {"time", "level", "module", "message"})
      ASSERT_TRUE(j.contains(k) && j[k].is_string()) << k << " missing in " << line;
    ASSERT_TRUE(j.contains("thread") && j["thread"].is_number_unsigned()) << line;
    const auto time = j["time"].get<std::string>();
    EXPECT_EQ(time.size(), 24u) << time;  // 2026-11-22T09:30:00.123Z
    EXPECT_EQ(time.back(), 'Z') << time;
    ++by_module[j["module"].get<std::string>()][j["level"].get<std::string>()];
    listening += j["message"].get<std::string>().rfind("listening on ", 0) == 0;
  }
  EXPECT_GT(lines, 4u);
  EXPECT_GT(by_module["sequencer"]["info"], 0) << "the sequencer's start line";
  EXPECT_GT(by_module["engine"]["info"], 0) << "running / stopped";
  // ingest at debug: its group and partition lines (info) show.
  EXPECT_GT(by_module["ingest"]["info"], 0) << "consuming engram-log in group ...";
  // http at warn: its info line ("listening on ...", logged at every start) does not, under
  // any module name.
  EXPECT_TRUE(by_module["http"].empty());
  EXPECT_EQ(listening, 0u);
}

// log.format json escapes what a message quotes and replaces invalid UTF-8 (events carry
// any bytes); the level names are config's.
TEST(EngramdLogs, JsonLineEscapesQuotesAndReplacesInvalidUtf8) {
  spdlog::details::log_msg msg(spdlog::source_loc{}, "ingest", spdlog::level::warn, "skipped \"x\":\n\xff\xfe end");
  const auto line = logging::json_line(msg);
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  auto j = json::parse(line);
  EXPECT_EQ(j["level"], "warn");
  EXPECT_EQ(j["module"], "ingest");
  EXPECT_EQ(j["message"], "skipped \"x\":\n\xEF\xBF\xBD\xEF\xBF\xBD end");
  msg.level = spdlog::level::err;
  EXPECT_EQ(json::parse(logging::json_line(msg))["level"], "error");
}

// A level or a format that does not exist is refused at start, naming the key.
TEST(EngramdLogs, UnknownLevelFormatOrModuleIsAConfigErrorNamingTheKey) {
  std::string out;
  // `timeout`: were the value accepted, engramd would start and serve until stopped.
  test::temp_dir dir("log-config");
  const std::string base = std::string("timeout 30 ") + ENGRAMD_PATH +
                           " --config " ENGRAM_SOURCE_DIR
                           "/config/engram.yaml --set http.listen=127.0.0.1:0 --set samples.load=false "
                           "--set storage.path=" +
                           dir.sub("store") + " ";
  EXPECT_EQ(run(base + "--set log.format=xml", &out), 2);
  EXPECT_NE(out.find("log.format"), std::string::npos) << out;
  EXPECT_NE(out.find("text or json"), std::string::npos) << out;
  EXPECT_EQ(run(base + "--set log.levels.ingest=loud", &out), 2);
  EXPECT_NE(out.find("log.levels.ingest"), std::string::npos) << out;
  EXPECT_EQ(run(base + "--set log.levels.broker=debug", &out), 2);
  EXPECT_NE(out.find("log.levels.broker"), std::string::npos) << out;
}

}  // namespace
