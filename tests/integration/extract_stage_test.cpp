// The extract stage before engram-log, end to end against engramd child processes and a
// Kafka-protocol broker in this process:
// - two processes with roles [extract] share the partitions of inbound-messages and a third
//   with roles [store] applies engram-log: every event once, and the digest of one process
//   with both roles;
// - records of format 1 (the message alone, as earlier releases' sequencers wrote them) are
//   still applied, read when applied, to the same store as format 2;
// - a replay applies what the log says: it neither extracts nor embeds (a replay whose
//   encoder cannot run rebuilds the live store exactly), and --re-extract reads every message
//   again and says that its digest is new;
// - SIGTERM under a backlog of big mail stops engramd within 5 s, and a restart applies the
//   rest: every message once, the digest of an uninterrupted run;
// - the int8 encoder's paths (portable, AVX2, AVX-512 VNNI: those this CPU has) each rebuild
//   the store of a live run, to the same digest.
// Every wait is on observed state (events applied, partitions assigned), never a sleep.
#include "actors/ingest/sealing.hpp"
#include "schemas/log_record.hpp"
#include "tests/integration/support.hpp"
#include "evaluation/synthetic.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace {

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

constexpr std::size_t events_count = 300;

/// `events` on `topic`, each keyed by its organisation.
void produce_keyed(const std::string& brokers, const std::string& topic, const std::vector<std::string>& events,
                   const std::vector<std::pair<std::string, std::string>>& headers = {}) {
  std::vector<std::pair<std::string, std::string>> kv;
  for (const auto& e : events)
    kv.emplace_back(test::org_of(e), e);
  test::produce_raw(brokers, topic, kv, headers);
}

void produce_inbound(const std::string& brokers, const std::vector<std::string>& events) {
  produce_keyed(brokers, "inbound-messages", events);
}

/// Starts engramd with `sets`, waits until it has applied `n` events (for at most 180 s: a
/// safety net sized to the streams' work, not a timing), stops it; its store's digest.
std::string run_until_applied(const std::string& brokers, const std::string& data_dir, const std::string& log, long n,
                              const std::vector<std::string>& sets = {}, const std::function<void()>& feed = {}) {
  test::engramd engramd(test::engramd_args(brokers, data_dir, sets), log);
  const auto port = engramd.port();
  EXPECT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(log);
  if (feed)
    feed();
  EXPECT_TRUE(test::wait_until([&] { return test::events_applied(port) == n; }, 180s))
      << test::events_applied(port) << " of " << n << "\n"
      << test::tail(log);
  EXPECT_EQ(engramd.terminate(30s), 0) << test::tail(log);
  return test::digest_of(data_dir);
}

/// The digest of one engramd with both roles that read `events` from inbound-messages, on a
/// test broker of `partitions` a topic.
std::string reference_digest(const test::temp_dir& dir, const std::vector<std::string>& events,
                             const std::vector<std::string>& sets = {}, int partitions = 4) {
  auto broker = test::start_broker(partitions);
  return run_until_applied(broker->bootstrap(), dir.sub("reference"), dir.sub("reference.log"), long(events.size()),
                           sets, [&] { produce_inbound(broker->bootstrap(), events); });
}

TEST(ExtractStage, TwoExtractProcessesShareTheInboundPartitionsAndOneStoreAppliesEveryEventOnce) {
  const auto events = test::make_events(events_count);
  test::temp_dir dir("extract-roles");
  const auto reference = reference_digest(dir, events);
  ASSERT_FALSE(reference.empty());

  auto broker = test::start_broker();
  const auto brokers = broker->bootstrap();
  test::engramd a(test::engramd_args(brokers, dir.sub("a"), {"roles=[extract]"}), dir.sub("a.log"));
  test::engramd b(test::engramd_args(brokers, dir.sub("b"), {"roles=[extract]"}), dir.sub("b.log"));
  const auto pa = a.port(), pb = b.port();
  // Both members hold partitions of inbound-messages (4 between them) before anything arrives.
  ASSERT_TRUE(test::wait_until(
      [&] {
        const auto na = test::metric(pa, "engram_extract_partitions"),
                   nb = test::metric(pb, "engram_extract_partitions");
        return na > 0 && nb > 0 && na + nb == 4;
      },
      60s))
      << test::tail(dir.sub("a.log")) << test::tail(dir.sub("b.log"));
  // An extract-only process serves no MCP and keeps no store.
  int status = 0;
  (void)test::get(pa, "/mcp", &status);
  EXPECT_EQ(status, 404);
  EXPECT_FALSE(std::filesystem::exists(dir.sub("a")));

  const auto store = run_until_applied(brokers, dir.sub("store"), dir.sub("store.log"), long(events.size()),
                                       {"roles=[store]"}, [&] { produce_inbound(brokers, events); });
  const auto sa = test::metric(pa, "engram_sequenced_total"), sb = test::metric(pb, "engram_sequenced_total");
  EXPECT_GT(sa, 0) << "process a extracted nothing";
  EXPECT_GT(sb, 0) << "process b extracted nothing";
  EXPECT_GE(sa + sb, double(events.size()));
  EXPECT_EQ(a.terminate(30s), 0) << test::tail(dir.sub("a.log"));
  EXPECT_EQ(b.terminate(30s), 0) << test::tail(dir.sub("b.log"));
  EXPECT_EQ(store, reference);

  // What went on engram-log: messages with what was read from them, sealed each with a data
  // key of its own (on engram-keys, written first): nothing of a message in clear.
  const auto records = test::consume_all(brokers, "engram-log", events.size(), 30s);
  ASSERT_GE(records.size(), events.size());
  std::map<std::string, std::string> keys;
  for (const auto& k : test::consume_all(brokers, "engram-keys", records.size(), 30s))
    keys[k.key] = k.value;
  std::set<std::string> bodies;
  for (const auto& e : events)
    bodies.insert(json::parse(e)["body"].get<std::string>().substr(0, 24));
  std::size_t with_vectors = 0;
  for (const auto& r : records) {
    ASSERT_EQ(r.headers.at(schemas::kind_header), ingest::sealed_kind);
    for (const auto& body : bodies)
      ASSERT_EQ(r.value.find(body), std::string::npos) << "in clear on engram-log: " << body;
    std::string why;
    auto envelope = ingest::read_envelope(r.value, &why);
    ASSERT_TRUE(envelope) << why;
    ASSERT_EQ(envelope->kind, schemas::kind_extracted_message);
    const auto key = keys.find(ingest::key_name(envelope->organization_id, envelope->event_id, envelope->key_id));
    ASSERT_NE(key, keys.end()) << "no data key for " << envelope->event_id;
    const auto clear = ingest::open(*envelope, key->second);
    ASSERT_TRUE(clear) << envelope->event_id;
    auto decoded = schemas::decode_record(envelope->kind, *clear, {});
    ASSERT_TRUE(std::holds_alternative<schemas::log_payload>(decoded))
        << std::get<schemas::record_error>(decoded).reason;
    const auto& x = std::get<schemas::extracted_message>(std::get<schemas::log_payload>(decoded));
    for (const auto& en : x.knowledge.entries)
      with_vectors += en.embedding.size() == 512;
  }
  EXPECT_GT(with_vectors, events.size() / 2) << "entries travel with their vectors";
}

TEST(ExtractStage, RecordsOfTheFirstFormatAreStillAppliedToTheSameStore) {
  const auto events = test::make_events(events_count);
  test::temp_dir dir("extract-format1");
  const auto reference = reference_digest(dir, events);
  ASSERT_FALSE(reference.empty());
  // An earlier release's sequencer: the message alone on engram-log, kind inbound-message.
  auto broker = test::start_broker();
  produce_keyed(broker->bootstrap(), "engram-log", events, {{schemas::kind_header, schemas::kind_inbound_message}});
  const auto digest = run_until_applied(broker->bootstrap(), dir.sub("format1"), dir.sub("format1.log"),
                                        long(events.size()), {"roles=[store]"});
  EXPECT_EQ(digest, reference);
}

TEST(ExtractStage, AReplayAppliesWhatTheLogSaysAndReExtractReadsAgain) {
  const auto events = test::make_events(events_count);
  test::temp_dir dir("extract-replay");
  auto broker = test::start_broker();
  const auto live = run_until_applied(broker->bootstrap(), dir.sub("live"), dir.sub("live.log"), long(events.size()),
                                      {}, [&] { produce_inbound(broker->bootstrap(), events); });
  ASSERT_FALSE(live.empty());
  // The replaying engramctl has no working encoder (an endpoint that refuses connections, and
  // no int8 weights for the type model, so extraction.type_model is off): if a replay
  // embedded anything, its entries would lose their vectors and the digest.
  const std::string replay =
      std::string(ENGRAMCTL_PATH) +
      " replay --config " ENGRAM_SOURCE_DIR "/config/engram.yaml --set kafka.brokers=" + broker->bootstrap() +
      " --set embedder.kind=openai --set embedder.openai.base_url=http://127.0.0.1:1/v1"
      " --set embedder.openai.model=none --set embedder.openai.dimension=512"
      " --set embedder.cache_size=0 --set extraction.type_model=false";
  std::string out;
  ASSERT_EQ(test::run(replay + " --into " + dir.sub("replayed"), &out), 0) << out;
  EXPECT_NE(out.find(live), std::string::npos) << "live " << live << "\n" << out;
  EXPECT_EQ(test::digest_of(dir.sub("replayed")), live);
  // --re-extract reads every message again, here without vectors: another store, and it says so.
  ASSERT_EQ(test::run(replay + " --re-extract --into " + dir.sub("re-extracted"), &out), 0) << out;
  EXPECT_NE(out.find("new by design"), std::string::npos) << out;
  EXPECT_NE(test::digest_of(dir.sub("re-extracted")), live);
}

TEST(ExtractStage, SigtermStopsWithinFiveSecondsUnderABacklogOfBigMailAndTheRestIsAppliedOnce) {
  // Dense business mail for eight organisations, one to each of eight partitions, and every
  // 100th message a long one (about 2,000 statements, 200 KB): the encoder's time per message
  // is bounded, and a stop waits for one chunk of messages at most. Each engram-log partition
  // stays well inside the test broker's ~5 MiB (about 2 MiB with the long mails and the
  // records a restart logs again), so nothing is dropped: a partition past it fails the test.
  constexpr int partitions = 8;
  std::vector<std::string> events = evaluation::synthetic::dense_events(
      400, {"initech", "fabrikam", "globex", "cyberdyne", "northwind", "wayne", "acme", "wonka"});
  for (std::size_t i = 0; i < events.size(); i += 100) {
    auto e = nlohmann::json::parse(events[i]);
    std::string body;
    for (int k = 0; body.size() < 200000; ++k)
      body += "Order " + std::to_string(i * 10000 + k) + " ships on March " + std::to_string(1 + k % 28) +
              " to warehouse " + std::to_string(k % 97) + ". ";
    e["body"] = body;
    events[i] = e.dump();
  }
  // Passages add about 1 KB to each record (24 windows to each long mail); the stop path is
  // the same with or without them (they are read in the same chunk as the entries).
  const std::vector<std::string> sets{"extraction.passages=false"};
  test::temp_dir dir("extract-sigterm");
  const auto reference = reference_digest(dir, events, sets, partitions);
  ASSERT_FALSE(reference.empty());

  auto broker = test::start_broker(partitions);
  test::engramd first(test::engramd_args(broker->bootstrap(), dir.sub("store"), sets), dir.sub("first.log"));
  const auto port = first.port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(dir.sub("first.log"));
  produce_inbound(broker->bootstrap(), events);
  const long n = long(events.size());
  long at_stop = 0;
  // The stop comes as soon as some of the backlog, not all, is applied (observed, not timed).
  ASSERT_TRUE(test::wait_until(
      [&] {
        at_stop = test::events_applied(port);
        return at_stop > 0;
      },
      120s, 5ms))
      << test::tail(dir.sub("first.log"));
  ASSERT_LT(at_stop, n) << "the whole backlog was applied before the stop: make it larger";
  EXPECT_EQ(first.terminate(5s), 0) << "SIGTERM must stop engramd within 5 s under load\n"
                                    << test::tail(dir.sub("first.log"));

  // What was read and not committed is read again: every message once, as one run has it.
  test::engramd second(test::engramd_args(broker->bootstrap(), dir.sub("store"), sets), dir.sub("second.log"));
  const auto again = second.port();
  EXPECT_TRUE(test::wait_until([&] { return test::events_applied(again) == n; }, 300s))
      << test::events_applied(again) << " of " << n << "\n"
      << test::tail(dir.sub("second.log"));
  EXPECT_EQ(second.terminate(30s), 0) << test::tail(dir.sub("second.log"));
  EXPECT_EQ(test::digest_of(dir.sub("store")), reference);
}

TEST(ExtractStage, EveryEncoderPathRebuildsTheSameStore) {
  const auto events = test::make_events(events_count);
  test::temp_dir dir("extract-isa");
  auto broker = test::start_broker();
  // Live: the int8 encoder on the widest path this CPU has.
  const auto live = run_until_applied(broker->bootstrap(), dir.sub("live"), dir.sub("live.log"), long(events.size()),
                                      {"embedder.isa=auto"}, [&] { produce_inbound(broker->bootstrap(), events); });
  ASSERT_FALSE(live.empty());
  // Each path reads and embeds every logged message again into its own store: dedup,
  // contradiction and recall order all hang on the vectors' bits, so one digest means one
  // set of bits.
  std::vector<std::string> paths{"portable"};
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2"))
    paths.emplace_back("avx2");
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni"))
    paths.emplace_back("avx512");
  for (const auto& isa : paths) {
    const std::string replay = std::string(ENGRAMCTL_PATH) +
                               " replay --re-extract --config " ENGRAM_SOURCE_DIR
                               "/config/engram.yaml --set kafka.brokers=" +
                               broker->bootstrap() + " --set embedder.kind=use-lite-int8 --set embedder.isa=" + isa +
                               " --set embedder.model_path=" + test::model_path + " --into " + dir.sub(isa);
    std::string out;
    ASSERT_EQ(test::run(replay, &out), 0) << isa << "\n" << out;
    EXPECT_EQ(test::digest_of(dir.sub(isa)), live) << "the " << isa << " path built another store\n" << out;
  }
}

}  // namespace

namespace {

/// The value of one labelled series in engramd's /metrics (-1 when absent).
double labelled_metric(std::uint16_t port, const std::string& series) {
  const auto text = test::get(port, "/metrics");
  const auto at = text.find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size() + 2));
}

TEST(ExtractStage, BulkMailIsClassedCountedAndSkippedByDefault) {
  test::temp_dir dir("bulk-mail");
  auto broker = test::start_broker();
  test::engramd engramd(test::engramd_args(broker->bootstrap(), dir.sub("store")), dir.sub("engramd.log"));
  const auto port = engramd.port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(dir.sub("engramd.log"));
  nlohmann::json person{
      {"eventId", "bulk-test-1"},
      {"organizationId", "acme"},
      {"sourceType", "email"},
      {"sentAt", "2026-03-04T10:00:00Z"},
      {"from", {{"name", "Sarah Lee"}, {"address", "sarah@acme.example"}}},
      {"subject", "Renewal"},
      {"body", "We decided to hold the price at $42 per seat. Please send the order form by Friday."}};
  auto weekly = person;
  weekly["eventId"] = "bulk-test-2";
  weekly["from"] = {{"name", "Northwind Weekly"}, {"address", "newsletter@northwind.example"}};
  weekly["headers"] = {{"List-Id", "<weekly.northwind.example>"}, {"Precedence", "bulk"}};
  weekly["subject"] = "Northwind Weekly";
  weekly["body"] =
      "This week Northwind opened a new warehouse in Porto. We decided to ship the spring catalogue on "
      "March 20.";  // read as a person's mail, this gives entries of its own
  produce_inbound(broker->bootstrap(), {person.dump(), weekly.dump()});
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) == 2; }, 60s))
      << test::tail(dir.sub("engramd.log"));
  auto stats = nlohmann::json::parse(test::get(port, "/v1/stats"));
  EXPECT_EQ(stats["messagesByClass"]["person"], 1) << stats;
  EXPECT_EQ(stats["messagesByClass"]["bulk"], 1) << stats;
  EXPECT_EQ(stats["messagesByClass"]["spam"], 0) << stats;
  EXPECT_EQ(labelled_metric(port, "engram_messages_classified_total{class=\"bulk\"}"), 1);
  EXPECT_EQ(labelled_metric(port, "engram_messages_classified_total{class=\"person\"}"), 1);
  // engramd runs on jemalloc (freed pages go back within a second); a sanitizer brings its own.
  EXPECT_EQ(labelled_metric(port, "engram_process_allocator{name=\"jemalloc\"}"), test::sanitized ? -1 : 1);
  EXPECT_GT(labelled_metric(port, "engram_process_heap_bytes{kind=\"in_use\"}"), test::sanitized ? -2 : 1e6);
  // Its compiled-in options apply: the background thread that gives freed pages back runs.
  bool returns_pages = false;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(engramd.pid()) + "/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    returns_pages |= std::getline(comm, name) && name == "jemalloc_bg_thd";
  }
  EXPECT_EQ(returns_pages, !test::sanitized);
  // Both messages are stored (provenance), the newsletter with no entries.
  std::int64_t entries = -1;
  for (const auto& org : stats["organizations"])
    if (org["organizationId"] == "acme")
      entries = org["entries"].get<std::int64_t>();
  EXPECT_EQ(entries, 2) << stats;  // the person's decision and action item only
  EXPECT_EQ(engramd.terminate(10s), 0);
}

}  // namespace
