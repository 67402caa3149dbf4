// Ingestion end to end, in-process: a real Kafka-protocol broker (librdkafka's mock
// cluster), the real sequencer, pipeline and RocksDB store, HTTP over a real socket.
#include "actors/engine/engine.hpp"
#include "actors/ingest/sequencer.hpp"
#include "knowledge/entry.hpp"
#include "net/http.hpp"
#include "reading/read.hpp"
#include "storage/graph_store.hpp"
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

class IngestTest : public ::testing::Test {
protected:
  IngestTest() : dir_("ingest"), broker_(test::start_broker()) {}

  std::unique_ptr<engine::engine> start(config::engram_config cfg, engine::engine_options opts = {}) {
    auto e = engine::engine::start(cfg, std::move(opts));
    EXPECT_TRUE(e) << e.error();
    return e ? std::move(*e) : nullptr;
  }

  config::engram_config cfg() { return test::test_config(broker_->bootstrap(), dir_.sub("store")); }

  static std::uint64_t events(engine::engine& e) {
    std::uint64_t n = 0;
    for (const auto& s : e.store().stats())
      n += s.events;
    return n;
  }

  static void produce_events(const std::string& brokers, const std::vector<std::string>& evs) {
    std::vector<std::pair<std::string, std::string>> kv;
    for (const auto& e : evs)
      kv.emplace_back(test::org_of(e), e);
    test::produce_raw(brokers, "inbound-messages", kv);
  }

  test::temp_dir dir_;
  std::unique_ptr<ingest::embedded_broker> broker_;
};

TEST_F(IngestTest, PoisonEventsGoToDeadLetterWithReasonAndTheRestApplies) {
  auto good = test::make_events(60);
  json missing = json::parse(good[0]);
  missing.erase("from");
  missing["eventId"] = "poison-missing";
  json wrong_type = json::parse(good[1]);
  wrong_type["sentAt"] = 1772704800;
  json huge = json::parse(good[2]);
  huge["eventId"] = "poison-huge";
  huge["body"] = std::string(2u << 20, 'x');
  std::string bad_utf8 = good[3];
  bad_utf8.replace(bad_utf8.find("Message"), 1, "\xC3\x28");
  // Bad events interleaved with good ones on the same partition (key acme).
  struct poison {
    std::string bytes;
    std::string reason;
    std::string event_id;  // the eventId header: set when the event is an object with one
  };
  std::vector<poison> poisons{
      {"{\"eventId\": \"broken\", ", "invalid JSON", ""},
      {missing.dump(), "/from: required field is missing", missing["eventId"]},
      {wrong_type.dump(), "/sentAt: must be a string, got number", wrong_type["eventId"]},
      {huge.dump(), "larger than ingest.max_event_bytes (1048576)", ""},
      {bad_utf8, "invalid UTF-8 at byte", ""},
  };
  std::vector<std::pair<std::string, std::string>> kv;
  for (std::size_t i = 0; i < 30; ++i) {
    kv.emplace_back(test::org_of(good[i]), good[i]);
    if (i % 6 == 5)
      kv.emplace_back("acme", poisons[i / 6].bytes);
  }
  test::produce_raw(broker_->bootstrap(), "inbound-messages", kv);

  auto e = start(cfg());
  ASSERT_TRUE(test::wait_until([&] { return events(*e) == 30; }, 60s)) << events(*e);
  // Nothing stalls: events produced after the poison ones are applied too.
  produce_events(broker_->bootstrap(), {good.begin() + 30, good.end()});
  ASSERT_TRUE(test::wait_until([&] { return events(*e) == 60; }, 60s)) << events(*e);

  auto dlq = test::consume_all(broker_->bootstrap(), "engram-dlq", poisons.size(), 30s);
  ASSERT_EQ(dlq.size(), poisons.size());
  for (const auto& p : poisons) {
    auto it = std::find_if(dlq.begin(), dlq.end(), [&](const auto& r) { return r.value == p.bytes; });
    ASSERT_NE(it, dlq.end()) << "not dead-lettered with its original bytes: " << p.reason;
    EXPECT_NE(it->headers["reason"].find(p.reason), std::string::npos) << it->headers["reason"];
    EXPECT_EQ(it->headers["source-topic"], "inbound-messages");
    EXPECT_FALSE(it->headers["source-offset"].empty());
    EXPECT_EQ(it->headers["eventId"], p.event_id) << p.reason;
  }
  EXPECT_EQ(e->metrics().dead_lettered(), poisons.size());
  // Only good events reached engram-log.
  EXPECT_EQ(test::topic_size(broker_->bootstrap(), "engram-log"), 60);
  auto m = e->metrics().render();
  EXPECT_NE(m.find("engram_dead_letter_total{reason=\"too_large\"} 1"), std::string::npos) << m;
  EXPECT_NE(m.find("engram_dead_letter_total{reason=\"schema\"} 2"), std::string::npos) << m;
}

TEST_F(IngestTest, SequencerCrashBetweenAppendAndCommitLeavesNoDuplicateInTheStore) {
  auto evs = test::make_events(90);
  produce_events(broker_->bootstrap(), evs);

  // First sequencer: appends everything it reads, then "crashes" before committing.
  services::metrics metrics;
  std::atomic<bool> crashed{false};
  ingest::sequencer_options crash;
  crash.before_commit = [&] {
    crashed = true;
    return false;
  };
  auto started = ingest::sequencer::start(cfg(), broker_->bootstrap(), metrics, crash);
  ASSERT_TRUE(started) << started.error();
  auto& first = *started;
  ASSERT_TRUE(test::wait_until([&] { return !first->running(); }, 60s));
  ASSERT_TRUE(crashed);
  auto appended = test::topic_size(broker_->bootstrap(), "engram-log");
  ASSERT_GT(appended, 0);
  first.reset();

  // The engine's sequencer (same group) finds nothing committed and appends again.
  auto e = start(cfg());
  ASSERT_TRUE(
      test::wait_until([&] { return test::topic_size(broker_->bootstrap(), "engram-log") == appended + 90; }, 60s));
  // Every record of the log is applied: the first appends as events, their second copies as duplicates.
  ASSERT_TRUE(test::wait_until(
      [&] {
        std::int64_t applied = 0;
        for (const auto& [p, o] : e->store().offsets("engram-log"))
          applied += o.next_offset;
        return applied == appended + 90;
      },
      60s));
  EXPECT_EQ(e->store().redelivery_counts().first, std::uint64_t(appended));
  EXPECT_EQ(events(*e), 90u);
  for (const auto& s : e->store().stats())
    EXPECT_EQ(s.events, 30u) << s.organization_id;
}

TEST_F(IngestTest, AStopWhileAChunkIsReadAppendsNothingOfItAndTheNextSequencerReadsItWhole) {
  auto evs = test::make_events(48);
  produce_events(broker_->bootstrap(), evs);

  // The first sequencer reads in chunks of 8. Its second reading waits for the stop request
  // and then returns cut short, as read_messages does when a stop comes mid-chunk.
  services::metrics metrics;
  std::mutex mu;
  std::size_t calls = 0, read_whole = 0;
  std::atomic<bool> waiting{false};
  ingest::sequencer_options so;
  so.chunk = 8;
  so.extract = [&](std::span<const schemas::inbound_message> ms, const std::atomic<bool>& stop) {
    {
      std::lock_guard lock(mu);
      if (calls++ == 0) {
        read_whole += ms.size();
        return reading::read_messages(ms, {});
      }
    }
    waiting = true;
    while (!stop)
      std::this_thread::yield();
    return std::vector<schemas::extraction>{};
  };
  auto started = ingest::sequencer::start(cfg(), broker_->bootstrap(), metrics, so);
  ASSERT_TRUE(started) << started.error();
  ASSERT_TRUE(test::wait_until([&] { return waiting.load(); }, 60s));
  (*started)->stop();
  started->reset();
  // Only the chunk read whole reached engram-log, and its offsets were committed.
  ASSERT_GT(read_whole, 0u);
  ASSERT_EQ(test::topic_size(broker_->bootstrap(), "engram-log"), std::int64_t(read_whole));

  // The engine's sequencer (same group) reads the rest, the cut chunk included: every event
  // once on engram-log, none twice in the store.
  auto e = start(cfg());
  ASSERT_TRUE(test::wait_until([&] { return events(*e) == evs.size(); }, 60s)) << events(*e);
  EXPECT_EQ(test::topic_size(broker_->bootstrap(), "engram-log"), std::int64_t(evs.size()));
  EXPECT_EQ(e->store().redelivery_counts().first, 0u);
}

TEST_F(IngestTest, RestartResumesAtStoredOffsetsWithoutRereading) {
  auto evs = test::make_events(120);
  produce_events(broker_->bootstrap(), {evs.begin(), evs.begin() + 60});
  {
    auto e = start(cfg());
    ASSERT_TRUE(test::wait_until([&] { return events(*e) == 60; }, 60s));
    e->stop();
  }
  produce_events(broker_->bootstrap(), {evs.begin() + 60, evs.end()});
  auto e = start(cfg());
  ASSERT_TRUE(test::wait_until([&] { return events(*e) == 120; }, 60s)) << events(*e);
  EXPECT_EQ(e->store().redelivery_counts().first, 0u);  // resumed where it stopped
  auto offsets = e->store().offsets("engram-log");
  std::int64_t sum = 0;
  for (const auto& [p, o] : offsets)
    sum += o.next_offset;
  EXPECT_EQ(sum, 120);
}

TEST_F(IngestTest, HttpEndpointsAnswerOverARealSocket) {
  auto evs = test::make_events(30);
  produce_events(broker_->bootstrap(), evs);
  auto c = cfg();
  c.auth.tokens.push_back({"acme-reader-token-0123456789abcdef", "acme", {"read"}, "reader", {}});
  auto e = start(c);
  auto port = e->http_port();
  ASSERT_NE(port, 0);
  int status = 0;
  EXPECT_EQ(json::parse(test::get(port, "/healthz", &status))["status"], "ok");
  EXPECT_EQ(status, 200);
  ASSERT_TRUE(test::wait_until([&] { return events(*e) == 30; }, 60s));
  ASSERT_TRUE(test::wait_until(
      [&] {
        test::get(port, "/readyz", &status);
        return status == 200;
      },
      30s));
  auto stats = json::parse(test::get(port, "/v1/stats", &status));
  EXPECT_EQ(status, 200);
  ASSERT_EQ(stats["organizations"].size(), 3u);
  EXPECT_EQ(stats["organizations"][0]["organizationId"], "acme");
  EXPECT_EQ(stats["organizations"][0]["events"], 10);
  EXPECT_GT(stats["organizations"][0]["contacts"], 0);
  std::int64_t applied = 0;
  for (const auto& p : stats["partitions"]) {
    applied += p["appliedOffset"].get<std::int64_t>();
    EXPECT_EQ(p["lag"], 0);
  }
  EXPECT_EQ(applied, 30);
  // An organisation's token sees its own row only (and the log's partitions); no token, none.
  auto own = json::parse(test::get(port, "/v1/stats", &status, "acme-reader-token-0123456789abcdef"));
  EXPECT_EQ(status, 200);
  ASSERT_EQ(own["organizations"].size(), 1u) << own;
  EXPECT_EQ(own["organizations"][0]["organizationId"], "acme");
  EXPECT_EQ(own["partitions"].size(), stats["partitions"].size());
  test::get(port, "/v1/stats", &status, "");
  EXPECT_EQ(status, 401);
  test::get(port, "/v1/stats", &status, "not-a-token");
  EXPECT_EQ(status, 401);
  auto metrics = test::get(port, "/metrics", &status);
  EXPECT_NE(metrics.find("engram_log_records_total{outcome=\"applied\"} 30"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("engram_apply_latency_seconds_count 30"), std::string::npos);
  EXPECT_NE(metrics.find("engram_log_lag{partition="), std::string::npos);
  test::get(port, "/nope", &status);
  EXPECT_EQ(status, 404);
  auto r = net::fetch("POST", "http://127.0.0.1:" + std::to_string(port) + "/v1/stats", "{}",
                      {{"Authorization", std::string("Bearer ") + test::admin_token}});
  EXPECT_EQ(r.status, 405);
}

TEST_F(IngestTest, ExtractionIsStoredWithItsIndexesInTheEventsBatch) {
  json ev{{"eventId", "k-1"},
          {"organizationId", "acme"},
          {"sourceType", "email"},
          {"threadId", "t-9"},
          {"sentAt", "2026-03-04T10:00:00Z"},
          {"from", {{"name", "Sarah Lee"}, {"address", "sarah@acme.example"}, {"contactId", "c-17"}}},
          {"to", json::array({{{"name", "Bob Martin"}, {"address", "bob@globex.example"}}})},
          {"subject", "Renewal"},
          {"body",
           "Hi Bob,\n\nWe decided to hold the Globex price at $42 per seat. Please send the signed order "
           "form by next Friday. Thanks!\n\n--\nSarah Lee | VP Sales, Acme\n+1 415 555 0137"},
          {"contactIds", json::array({"c-17"})}};
  produce_events(broker_->bootstrap(), {ev.dump()});
  auto e = start(cfg());
  ASSERT_TRUE(test::wait_until([&] { return events(*e) == 1; }, 60s));
  const auto& store = e->store();
  auto stats = store.stats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].entries, 2u);
  auto decisions = store.entries_of_type("acme", schemas::entry_type::decision);
  ASSERT_EQ(decisions.size(), 1u);
  auto entry = store.get_entry("acme", decisions[0]);
  ASSERT_TRUE(entry) << storage::to_string(entry.error());
  auto doc = knowledge::entry_json(*entry);
  EXPECT_EQ(doc["entryType"], "decision");
  EXPECT_EQ(doc["threadId"], "t-9");
  EXPECT_EQ(doc["sourceType"], "email");
  EXPECT_EQ(doc["contactIds"], json::array({"c-17"}));
  EXPECT_EQ(doc["slot"], "price");
  EXPECT_EQ(doc["value"], "42 USD");
  EXPECT_EQ(doc["subject"], "Globex");
  auto actions = store.entries_of_type("acme", schemas::entry_type::action_item);
  ASSERT_EQ(actions.size(), 1u);
  entry = store.get_entry("acme", actions[0]);
  ASSERT_TRUE(entry);
  EXPECT_EQ(knowledge::entry_json(*entry)["dueAt"], "2026-03-06");
  // Entities once per organisation, found by normalised name, with signature facts.
  auto entity = store.find_entity("acme", "  GLOBEX ");
  ASSERT_TRUE(entity);
  EXPECT_EQ(json::parse(*entity)["kind"], "organization");
  entity = store.find_entity("acme", "sarah lee");
  ASSERT_TRUE(entity);
  auto sarah = json::parse(*entity);
  EXPECT_EQ(sarah["role"], "VP Sales");
  EXPECT_EQ(sarah["phone"], "+1 415 555 0137");
  entity = store.find_entity("northwind", "globex");
  ASSERT_FALSE(entity);
  EXPECT_EQ(entity.error(), storage::errc::not_found);
  auto thread = store.thread_messages("acme", "t-9");
  EXPECT_EQ(thread, std::vector<std::string>{"k-1"});
  auto m = e->metrics().render();
  EXPECT_NE(m.find("engram_extraction_entries_total{outcome=\"kept\"} 2"), std::string::npos) << m;
}

TEST_F(IngestTest, DuplicatesMergeAndUpdatesSupersedeWithinOneOrganisationOnly) {
  auto ev = [](const std::string& id, const std::string& org, const std::string& from, const std::string& at,
               const std::string& body) {
    return json{{"eventId", id}, {"organizationId", org},       {"sourceType", "email"},
                {"sentAt", at},  {"from", {{"address", from}}}, {"subject", "budget"},
                {"body", body}}
        .dump();
  };
  // acme: a fact, its restatement, then its update by the same sender. globex: the same
  // text as acme's first statement, and a different value from another sender.
  produce_events(
      broker_->bootstrap(),
      {ev("a-1", "acme", "sarah@acme.example", "2026-03-02T09:00:00Z", "Northwind's Q3 budget is $50,000."),
       ev("g-1", "globex", "bob@globex.example", "2026-03-02T09:30:00Z", "Northwind's Q3 budget is $50,000."),
       ev("a-2", "acme", "sarah@acme.example", "2026-03-03T09:00:00Z",
          "Hi team, just to confirm: Northwind's Q3 budget is $50k."),
       ev("a-3", "acme", "sarah@acme.example", "2026-03-04T09:00:00Z", "Northwind's Q3 budget is $65,000."),
       ev("g-2", "globex", "carol@globex.example", "2026-03-05T09:00:00Z", "Northwind's Q3 budget is $80,000.")});
  auto e = start(cfg());
  ASSERT_TRUE(test::wait_until([&] { return events(*e) == 5; }, 60s));
  const auto& store = e->store();
  auto facts = [&](const std::string& org) {
    std::vector<json> out;
    for (const auto& id : store.entries_of_type(org, schemas::entry_type::fact)) {
      auto doc = store.get_entry(org, id);
      EXPECT_TRUE(doc);
      out.push_back(doc ? knowledge::entry_json(*doc) : json(nullptr));
    }
    return out;
  };
  auto acme = facts("acme");
  ASSERT_EQ(acme.size(), 2u) << "the restatement merges into the first entry";
  EXPECT_EQ(acme[0]["sources"].size(), 2u);
  EXPECT_EQ(acme[0]["status"], "superseded");
  EXPECT_EQ(acme[0]["supersededBy"], acme[1]["id"]);
  EXPECT_GT(acme[0]["confidence"].get<double>(), 0.0);
  EXPECT_EQ(acme[1]["relations"][0]["relationType"], "supersedes");
  EXPECT_EQ(acme[1]["relations"][0]["toId"], acme[0]["id"]);
  EXPECT_EQ(acme[0]["relations"][0]["fromId"], acme[1]["id"]);
  auto globex = facts("globex");
  ASSERT_EQ(globex.size(), 2u) << "nothing merges across organisations";
  EXPECT_EQ(globex[0]["sources"].size(), 1u);
  EXPECT_EQ(globex[0]["status"], "flagged") << "another sender's newer value contradicts, the older waits for review";
  EXPECT_EQ(globex[1]["relations"][0]["relationType"], "contradicts");
  for (const auto& doc : globex)
    for (const auto& rel : doc["relations"])
      for (const auto& a : acme)
        EXPECT_NE(rel.value("toId", rel.value("fromId", "")), a["id"]);
  auto m = e->metrics().render();
  EXPECT_NE(m.find("engram_dedup_outcomes_total{outcome=\"merged\"} 1"), std::string::npos) << m;
  EXPECT_NE(m.find("engram_contradictions_total 1"), std::string::npos) << m;
}

TEST_F(IngestTest, MissingEmbedderWeightsStopTheStartWithTheFix) {
  auto c = cfg();
  c.embedder.model_path = dir_.sub("no-such-model.bin");
  auto e = engine::engine::start(c, {});
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().find("no-such-model.bin"), std::string::npos) << e.error();
  EXPECT_NE(e.error().find("tools/dev.sh setup"), std::string::npos) << e.error();
  // That start had joined engram-log's consumer group before it failed (the join runs beside
  // the store's open): it left the group without taking anything, and a good start on the
  // same store and broker is given the partitions and applies every event.
  produce_events(broker_->bootstrap(), test::make_events(12));
  auto good = start(cfg());
  ASSERT_TRUE(good);
  ASSERT_TRUE(test::wait_until([&] { return events(*good) == 12 && good->status().ready(); }, 60s)) << events(*good);
}

// A start on a store another process holds stops before it joins engram-log's consumer
// group (the join would move that process's partitions away and back), naming the holder;
// once the store is let go, the start goes ahead.
TEST_F(IngestTest, AStoreAnotherProcessHoldsStopsTheStartNamingIt) {
  const auto c = cfg();
  std::filesystem::create_directories(c.storage.path);
  const std::string lock = c.storage.path + "/LOCK";
  int locked[2], release[2];
  ASSERT_EQ(::pipe(locked), 0);
  ASSERT_EQ(::pipe(release), 0);
  const pid_t holder = ::fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {  // as RocksDB holds it: a write lock on the whole file
    const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0644);
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    char b = ::fcntl(fd, F_SETLK, &fl) == 0 ? 1 : 0;
    (void)!::write(locked[1], &b, 1);
    (void)!::read(release[0], &b, 1);
    ::_exit(0);
  }
  char b = 0;
  ASSERT_EQ(::read(locked[0], &b, 1), 1);
  ASSERT_EQ(b, 1) << "the child could not lock " << lock;
  EXPECT_EQ(storage::held_by_another_process(c.storage.path), std::optional<long>(holder));
  auto e = engine::engine::start(c, {});
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().find("is in use by another process (pid " + std::to_string(holder) + ")"), std::string::npos)
      << e.error();
  ASSERT_EQ(::write(release[1], &b, 1), 1);
  ASSERT_EQ(::waitpid(holder, nullptr, 0), holder);
  for (int fd : {locked[0], locked[1], release[0], release[1]})
    ::close(fd);
  EXPECT_FALSE(storage::held_by_another_process(c.storage.path));
  auto good = start(c);
  ASSERT_TRUE(good);
  EXPECT_FALSE(storage::held_by_another_process(c.storage.path)) << "this process's own lock is not another's";
}

TEST_F(IngestTest, EmbeddedDefaultRestartNeitherLosesNorDoubles) {
  auto c = cfg();
  c.kafka.brokers = "embedded";
  c.samples.load = true;
  c.samples.path = std::string(ENGRAM_SOURCE_DIR) + "/tools/samples/demo-stream.jsonl";
  std::string first_digest;
  std::vector<storage::organization_stats> first_stats;
  {
    auto e = start(c);
    ASSERT_TRUE(test::wait_until([&] { return events(*e) >= 60 && e->status().ready(); }, 60s));
    ASSERT_TRUE(test::wait_until([&] { return e->store().stats().size() == 2 && events(*e) == 91; }, 30s))
        << events(*e);
    for (const auto& s : e->store().stats())
      EXPECT_GT(s.entries, 20u) << s.organization_id;  // the demo stream carries knowledge
    first_digest = e->store().digest();
    first_stats = e->store().stats();
    e->stop();
  }
  // A new embedded broker starts empty; the samples are loaded again and must be no-ops.
  auto e = start(c);
  ASSERT_TRUE(test::wait_until([&] { return e->store().redelivery_counts().first == 91; }, 60s))
      << e->store().redelivery_counts().first;
  EXPECT_EQ(events(*e), 91u);
  EXPECT_EQ(e->store().digest(), first_digest);
  ASSERT_EQ(e->store().stats().size(), first_stats.size());
  for (std::size_t i = 0; i < first_stats.size(); ++i)
    EXPECT_EQ(e->store().stats()[i].contacts, first_stats[i].contacts);
}

}  // namespace

// An assignment is recorded whole: a partition already caught up (an empty one) must not
// make the engine ready while another still has records to apply. (Recorded one partition at
// a time, ready() could latch between two partitions; engramctl replay then stopped early.)
TEST(IngestStatus, ReadyOnlyWhenEveryPartitionOfTheAssignmentIsCaughtUp) {
  actors::ingest_status s;
  EXPECT_FALSE(s.ready());
  EXPECT_EQ(s.not_ready_reason(), "waiting for engram-log partitions to be assigned");
  s.assigned({{0, {0, 0}}, {1, {0, 41}}, {2, {0, 0}}});
  EXPECT_FALSE(s.ready());
  EXPECT_EQ(s.not_ready_reason(), "catching up: engram-log partition 1 at 0 of 41");
  s.applied(1, 40);
  EXPECT_FALSE(s.ready());
  s.applied(1, 41);
  EXPECT_TRUE(s.ready());
  // Ready stays ready (a later rebalance does not make /readyz flap), and targets are kept.
  s.revoked_all();
  s.assigned({{1, {41, 50}}});
  EXPECT_TRUE(s.ready());
  EXPECT_EQ(s.partitions().at(1).catch_up_target, 41);
}

// Clustered (store.cluster): readiness is per partition and never latched. A partition that
// comes back (it moved away and returned) restores up to the high-water mark of its new
// assignment, and is not ready before; one revoked is not owned at all.
TEST(IngestStatus, ClusteredReadinessIsPerPartitionAndEveryAssignmentTakesANewTarget) {
  actors::ingest_status s(/*clustered=*/true);
  EXPECT_FALSE(s.joined());
  s.assigned({{0, {0, 10}}, {1, {0, 0}}});
  s.joined_group();
  EXPECT_TRUE(s.joined());
  EXPECT_EQ(s.state(0).first, actors::partition_state::restoring);
  EXPECT_EQ(s.state(1).first, actors::partition_state::ready);
  EXPECT_EQ(s.state(2).first, actors::partition_state::not_owned);
  s.applied(0, 10);
  EXPECT_EQ(s.state(0).first, actors::partition_state::ready);
  EXPECT_TRUE(s.ready());
  s.revoked_all();
  EXPECT_EQ(s.state(0).first, actors::partition_state::not_owned);
  EXPECT_FALSE(s.ready()) << "not latched";
  // Partition 0 comes back after others appended 15 more records.
  s.assigned({{0, {10, 25}}});
  EXPECT_EQ(s.partitions().at(0).catch_up_target, 25);
  EXPECT_EQ(s.state(0).first, actors::partition_state::restoring);
  EXPECT_EQ(s.state(0).second.next_offset, 10);
  EXPECT_FALSE(s.ready());
  s.applied(0, 25);
  EXPECT_EQ(s.state(0).first, actors::partition_state::ready);
  EXPECT_TRUE(s.ready());
}

// A high-water mark the broker did not give at assignment (-1) is not "caught up at 0": the
// partition waits for the first one the consumer learns. A record of a revoked assignment
// adds no partition.
TEST(IngestStatus, AnUnknownHighWaterMarkIsNotCaughtUpAndRevokedRecordsAddNothing) {
  actors::ingest_status s;
  s.assigned({{0, {0, 0}}, {1, {0, -1}}});
  EXPECT_FALSE(s.ready());
  EXPECT_EQ(s.not_ready_reason(), "engram-log partition 1: high-water mark not known yet");
  s.watermark(1, 7);
  EXPECT_EQ(s.partitions().at(1).catch_up_target, 7);
  EXPECT_FALSE(s.ready());
  s.applied(1, 7);
  EXPECT_TRUE(s.ready());

  actors::ingest_status t;
  t.assigned({{0, {0, 5}}});
  t.revoked_all();
  t.applied(0, 3);  // a record fetched before the revoke, applied after it
  EXPECT_TRUE(t.partitions().empty());
  EXPECT_FALSE(t.ready());
}
