// Records deleted from the broker before Engram read them (issue: the log of record is never
// silently incomplete). The test broker drops a partition's oldest records past ~5 MiB; these
// tests fill a partition past that on purpose, with engramd as a separate process:
// - engramctl replay refuses a rebuild from a truncated engram-log, naming the partition and
//   the count; --accept-partial rebuilds from what is left and says what is missing;
// - a store whose engram-log partition was truncated past its offset while it was down stops
//   that partition (not ready, the gap named in /readyz, /v1/stats and /metrics), applies the
//   others, and goes on only once the operator accepts the gap (ingest.accept_gaps);
// - the same for the sequencer's inbound-messages partition.
// Every wait is on observed state (offsets, counts, HTTP answers), never on a sleep.
#include "actors/ingest/topics.hpp"
#include "storage/graph_store.hpp"
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <sstream>

namespace {

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

/// Bytes of one padding record: nine of them pass the test broker's ~5 MiB a partition by three.
constexpr std::size_t padding_bytes = 800 * 1024;
constexpr int paddings = 9;

/// A valid inbound event of `org` whose bytes are mostly an unknown property (ignored when
/// decoded, so reading it costs nothing); letters from a fixed sequence, so it does not
/// compress away.
std::string padding_event(const std::string& org, int i) {
  std::string pad(padding_bytes, 'a');
  std::uint32_t x = 2463534242u + static_cast<std::uint32_t>(i);
  for (auto& c : pad) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>('a' + x % 26);
  }
  return json{{"eventId", "pad-" + org + "-" + std::to_string(i)},
              {"organizationId", org},
              {"sourceType", "chat"},
              {"sentAt", "2026-03-05T10:00:00Z"},
              {"from", {{"address", "padding@" + org + ".example"}}},
              {"body", "Padding message " + std::to_string(i) + " of the gap test."},
              {"padding", pad}}
      .dump();
}

/// A small valid event of `org`.
std::string small_event(const std::string& org, const std::string& id) {
  return json{{"eventId", id},
              {"organizationId", org},
              {"sourceType", "email"},
              {"sentAt", "2026-03-06T10:00:00Z"},
              {"from", {{"address", "dana@" + org + ".example"}, {"name", "Dana Ruiz"}}},
              {"body", "The quarterly review moved to Thursday at 10:00."}}
      .dump();
}

std::int64_t start_of(const std::string& brokers, const std::string& topic, std::int32_t partition) {
  auto ranges = ingest::partition_ranges(brokers, {topic});
  EXPECT_TRUE(ranges) << ranges.error();
  if (ranges)
    for (const auto& r : *ranges)
      if (r.partition == partition)
        return r.start;
  return -1;
}

std::int64_t end_of(const std::string& brokers, const std::string& topic, std::int32_t partition) {
  auto ranges = ingest::partition_ranges(brokers, {topic});
  if (ranges)
    for (const auto& r : *ranges)
      if (r.partition == partition)
        return r.end;
  return -1;
}

class LogGaps : public ::testing::Test {
protected:
  LogGaps() : dir_("log-gaps"), broker_(test::start_broker()) {}

  void start_engramd(const std::vector<std::string>& sets = {}) {
    engramd_ = std::make_unique<test::engramd>(test::engramd_args(brokers(), dir_.sub("store"), sets),
                                               dir_.sub("engramd.log"));
    port_ = engramd_->port();
    ASSERT_TRUE(test::wait_until([&] { return !test::get(port_, "/healthz").empty(); }, 120s))
        << test::tail(dir_.sub("engramd.log"));
  }
  void stop_engramd() {
    ASSERT_EQ(engramd_->terminate(60s), 0) << test::tail(dir_.sub("engramd.log"));
    engramd_.reset();
  }

  const std::string& brokers() const { return broker_->bootstrap(); }

  json stats() {
    auto doc = json::parse(test::get(port_, "/v1/stats"), nullptr, false);
    return doc.is_discarded() ? json::object() : doc;
  }
  /// Events applied for `org` (-1: engramd does not answer).
  long events_of(const std::string& org) {
    auto s = stats();
    if (!s.contains("organizations"))
      return -1;
    for (const auto& o : s["organizations"])
      if (o["organizationId"] == org)
        return o["events"].get<long>();
    return 0;
  }
  /// engram-log's next offset to apply of `partition` per /v1/stats (-1: unknown).
  std::int64_t applied_offset(std::int32_t partition) {
    auto s = stats();
    if (s.contains("partitions"))
      for (const auto& p : s["partitions"])
        if (p["partition"] == partition)
          return p["appliedOffset"].get<std::int64_t>();
    return -1;
  }
  /// The gap /v1/stats shows for (topic, partition), or null.
  json gap_in_stats(const std::string& topic, std::int32_t partition) {
    auto s = stats();
    if (s.contains("logGaps"))
      for (const auto& g : s["logGaps"])
        if (g["topic"] == topic && g["partition"] == partition)
          return g;
    return nullptr;
  }
  /// engram_log_gap_records{topic,partition} in /metrics (-1: absent).
  double gap_metric(const std::string& topic, std::int32_t partition) {
    std::istringstream in(test::get(port_, "/metrics"));
    const std::string labels = "partition=\"" + std::to_string(partition) + "\",topic=\"" + topic + "\"";
    for (std::string line; std::getline(in, line);)
      if (line.rfind("engram_log_gap_records{", 0) == 0 && line.find(labels) != std::string::npos)
        return std::stod(line.substr(line.rfind(' ') + 1));
    return -1;
  }

  /// Feeds `events` through inbound-messages and waits until engramd applied them all.
  void feed(const std::vector<std::string>& events, long expected_total) {
    std::vector<std::pair<std::string, std::string>> kv;
    for (const auto& e : events)
      kv.emplace_back(test::org_of(e), e);
    test::produce_raw(brokers(), "inbound-messages", kv);
    ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port_) == expected_total; }, 180s))
        << test::events_applied(port_) << "\n"
        << test::tail(dir_.sub("engramd.log"));
  }

  /// The partition of `topic` each organisation's records are on (from the records).
  std::map<std::string, std::int32_t> partitions_of(const std::string& topic, std::size_t records) {
    std::map<std::string, std::int32_t> out;
    for (const auto& r : test::consume_all(brokers(), topic, records, 30s))
      out[r.key] = r.partition;
    return out;
  }

  /// Pads `topic` with records of `org` (on its partition) past the broker's limit; returns
  /// the partition's new start offset.
  std::int64_t truncate(const std::string& topic, const std::string& org, std::int32_t partition,
                        const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    test::expect_truncated(*broker_, topic, partition);
    for (int i = 0; i < paddings; ++i)
      test::produce_raw(brokers(), topic, {{org, padding_event(org, i)}}, headers);
    return start_of(brokers(), topic, partition);
  }

  test::temp_dir dir_;
  std::unique_ptr<ingest::embedded_broker> broker_;
  std::uint16_t port_ = 0;
  std::unique_ptr<test::engramd> engramd_;
};

TEST_F(LogGaps, ReplayRefusesATruncatedLogAndAcceptPartialSaysWhatIsMissing) {
  start_engramd();
  auto events = test::make_events(12);
  feed(events, 12);
  stop_engramd();
  // acme and globex share one engram-log partition, initech has another of the four.
  auto where = partitions_of("engram-log", 12);
  ASSERT_EQ(where.size(), 3u);
  const std::int32_t gone = where["initech"];
  ASSERT_NE(where["acme"], gone) << "the test needs initech alone on its partition";
  const std::int64_t initech_records = end_of(brokers(), "engram-log", gone);
  const std::int64_t start = truncate("engram-log", "initech", gone, {{"kind", "inbound-message"}});
  ASSERT_GT(start, initech_records) << "every initech record before the padding must be gone";
  const std::string lost = "engram-log partition " + std::to_string(gone) + ": " + std::to_string(start) +
                           " records (offsets 0.." + std::to_string(start - 1) + ") were deleted before they were read";

  const std::string replay = std::string(ENGRAMCTL_PATH) + " replay --config " ENGRAM_SOURCE_DIR "/config/engram.yaml" +
                             " --set kafka.brokers=" + brokers() + " --set embedder.model_path=" + test::model_path;
  std::string out;
  EXPECT_EQ(test::run(replay + " --into " + dir_.sub("refused"), &out), 1) << out;
  EXPECT_NE(out.find(lost), std::string::npos) << out;
  EXPECT_NE(out.find("refusing a partial rebuild"), std::string::npos) << out;

  ASSERT_EQ(test::run(replay + " --accept-partial --into " + dir_.sub("partial"), &out), 0) << out;
  EXPECT_NE(out.find("MISSING " + lost), std::string::npos) << out;
  EXPECT_NE(out.find("PARTIAL rebuild: " + std::to_string(start) + " records"), std::string::npos) << out;
  // Per partition: the offsets read and the records by kind.
  const std::int64_t kept = end_of(brokers(), "engram-log", gone) - start;
  EXPECT_NE(out.find("partition " + std::to_string(gone) + ": offsets " + std::to_string(start) + ".." +
                     std::to_string(start + kept - 1) + " read"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(std::to_string(kept) + " inbound-message"), std::string::npos) << out;
  EXPECT_NE(out.find("extracted-message"), std::string::npos) << out;

  // The rebuilt store: acme and globex whole, initech only what was left (the padding).
  auto store = storage::open_graph_store({dir_.sub("partial"), /*read_only=*/true});
  ASSERT_TRUE(store) << store.error();
  std::map<std::string, std::uint64_t> events_by_org;
  for (const auto& s : (*store)->stats())
    events_by_org[s.organization_id] = s.events;
  EXPECT_EQ(events_by_org["acme"], 4u);
  EXPECT_EQ(events_by_org["globex"], 4u);
  EXPECT_EQ(events_by_org["initech"], static_cast<std::uint64_t>(kept));
  auto gaps = (*store)->gaps();
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].topic, "engram-log");
  EXPECT_EQ(gaps[0].partition, gone);
  EXPECT_EQ(gaps[0].from, 0);
  EXPECT_EQ(gaps[0].to, start);
}

TEST_F(LogGaps, AStoreStopsAtAGapInItsLogPartitionUntilTheOperatorAcceptsIt) {
  start_engramd();
  feed(test::make_events(12), 12);
  stop_engramd();
  auto where = partitions_of("engram-log", 12);
  const std::int32_t gone = where["initech"];
  const std::int32_t other = where["acme"];
  ASSERT_NE(other, gone);
  const std::int64_t applied_before = end_of(brokers(), "engram-log", gone);
  // While engramd is down: initech's partition loses what the store had not applied yet (the
  // padding's first records) and more; one more record of each partition follows.
  const std::int64_t start = truncate("engram-log", "initech", gone, {{"kind", "inbound-message"}});
  test::produce_raw(brokers(), "engram-log",
                    {{"initech", small_event("initech", "after-gap")}, {"acme", small_event("acme", "acme-later")}},
                    {{"kind", "inbound-message"}});
  ASSERT_GT(start, applied_before);
  const std::int64_t lost = start - applied_before;
  const std::string named = "engram-log partition " + std::to_string(gone) + ": " + std::to_string(lost) + " records";

  start_engramd();
  // The other partition is applied ...
  const std::int64_t other_end = end_of(brokers(), "engram-log", other);
  ASSERT_TRUE(test::wait_until([&] { return applied_offset(other) == other_end; }, 120s))
      << stats().dump() << "\n"
      << test::tail(dir_.sub("engramd.log"));
  EXPECT_EQ(events_of("acme"), 5);
  // ... this one is stopped at the gap, and says so everywhere.
  int status = 0;
  auto ready = test::get(port_, "/readyz", &status);
  EXPECT_EQ(status, 503) << ready;
  EXPECT_NE(ready.find(named), std::string::npos) << ready;
  EXPECT_NE(ready.find("ingest.accept_gaps=engram-log:" + std::to_string(gone)), std::string::npos) << ready;
  EXPECT_EQ(applied_offset(gone), applied_before);
  EXPECT_EQ(events_of("initech"), 4);
  auto gap = gap_in_stats("engram-log", gone);
  ASSERT_FALSE(gap.is_null()) << stats().dump();
  EXPECT_EQ(gap["status"], "stopped");
  EXPECT_EQ(gap["from"], applied_before);
  EXPECT_EQ(gap["to"], start);
  EXPECT_EQ(gap["lost"], lost);
  EXPECT_EQ(gap_metric("engram-log", gone), static_cast<double>(lost));
  EXPECT_NE(test::tail(dir_.sub("engramd.log"), 200).find(named), std::string::npos);
  stop_engramd();

  // A restart alone changes nothing; the operator's acceptance does.
  start_engramd({"ingest.accept_gaps=[engram-log:" + std::to_string(gone) + "]"});
  const std::int64_t gone_end = end_of(brokers(), "engram-log", gone);
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port_); }, 120s)) << test::get(port_, "/readyz") << "\n"
                                                                          << test::tail(dir_.sub("engramd.log"));
  EXPECT_EQ(applied_offset(gone), gone_end);
  EXPECT_EQ(events_of("initech"), 4 + (gone_end - start));  // the padding left, and after-gap
  gap = gap_in_stats("engram-log", gone);
  ASSERT_FALSE(gap.is_null()) << stats().dump();
  EXPECT_EQ(gap["status"], "accepted");
  EXPECT_EQ(gap["from"], applied_before);
  EXPECT_EQ(gap["to"], start);
  EXPECT_EQ(gap_metric("engram-log", gone), 0.0);
  stop_engramd();
  // Recorded in the store: it stays shown without the switch.
  start_engramd();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port_); }, 120s)) << test::get(port_, "/readyz");
  gap = gap_in_stats("engram-log", gone);
  ASSERT_FALSE(gap.is_null()) << stats().dump();
  EXPECT_EQ(gap["status"], "accepted");
  stop_engramd();
}

TEST_F(LogGaps, TheSequencerStopsAtAGapInItsInboundPartitionUntilTheOperatorAcceptsIt) {
  start_engramd();
  feed(test::make_events(12), 12);
  stop_engramd();
  auto where = partitions_of("inbound-messages", 12);
  const std::int32_t gone = where["initech"];
  const std::int32_t other = where["acme"];
  ASSERT_NE(other, gone);
  const std::int64_t forwarded = end_of(brokers(), "inbound-messages", gone);
  // While engramd is down, inbound mail arrives faster than the broker keeps it.
  const std::int64_t start = truncate("inbound-messages", "initech", gone);
  test::produce_raw(brokers(), "inbound-messages",
                    {{"initech", small_event("initech", "after-gap")}, {"acme", small_event("acme", "acme-later")}});
  ASSERT_GT(start, forwarded);
  const std::int64_t lost = start - forwarded;
  const std::string named =
      "inbound-messages partition " + std::to_string(gone) + ": " + std::to_string(lost) + " records";

  start_engramd();
  ASSERT_TRUE(test::wait_until([&] { return events_of("acme") == 5; }, 120s)) << stats().dump() << "\n"
                                                                              << test::tail(dir_.sub("engramd.log"));
  int status = 0;
  auto ready = test::get(port_, "/readyz", &status);
  EXPECT_EQ(status, 503) << ready;
  EXPECT_NE(ready.find(named), std::string::npos) << ready;
  EXPECT_EQ(events_of("initech"), 4);
  auto gap = gap_in_stats("inbound-messages", gone);
  ASSERT_FALSE(gap.is_null()) << stats().dump();
  EXPECT_EQ(gap["status"], "stopped");
  EXPECT_EQ(gap["lost"], lost);
  EXPECT_EQ(gap_metric("inbound-messages", gone), static_cast<double>(lost));
  stop_engramd();

  start_engramd({"ingest.accept_gaps=inbound-messages:" + std::to_string(gone)});
  const std::int64_t kept = end_of(brokers(), "inbound-messages", gone) - start;  // padding left + after-gap
  ASSERT_TRUE(test::wait_until([&] { return events_of("initech") == 4 + kept; }, 120s))
      << stats().dump() << "\n"
      << test::tail(dir_.sub("engramd.log"));
  EXPECT_TRUE(test::wait_until([&] { return test::ready(port_); }, 60s)) << test::get(port_, "/readyz");
  gap = gap_in_stats("inbound-messages", gone);
  ASSERT_FALSE(gap.is_null()) << stats().dump();
  EXPECT_EQ(gap["status"], "accepted");
  EXPECT_EQ(gap["from"], forwarded);
  EXPECT_EQ(gap["to"], start);
  stop_engramd();
}

}  // namespace
