// A restart of engramd as an operator sees it: after a stop it loads the store's in-memory
// indexes from the snapshot the stop wrote; after a kill -9 that followed writes it loads
// that snapshot and applies the journal of the batches since, or the snapshot a checkpoint
// wrote while it ran. Either way recall answers as the running engramd did, and as a store
// rebuilt from engram-log by a replay does.
#include "tests/integration/support.hpp"

#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

using namespace engram;
using namespace std::chrono_literals;

constexpr const char* token_acme = "restart-acme-token-0123456789abcdef";
constexpr const char* token_initech = "restart-initech-token-0123456789abcd";

void produce(const std::string& brokers, const std::vector<std::string>& evs, std::size_t from, std::size_t to) {
  std::vector<std::pair<std::string, std::string>> kv;
  for (std::size_t i = from; i < to; ++i)
    kv.emplace_back(test::org_of(evs[i]), evs[i]);
  test::produce_raw(brokers, "inbound-messages", kv);
}

/// recall_knowledge's ids for a few questions in both organisations.
std::vector<std::vector<std::string>> answers(std::uint16_t port) {
  std::vector<std::vector<std::string>> out;
  for (const char* token : {token_acme, token_initech})
    for (const char* q : {"when is the renewal", "what budget was approved", "who leads the project",
                          "meeting time next week", "what did we decide about the vendor"})
      out.push_back(test::recall_ids(port, token, q));
  return out;
}

std::size_t count_said(const std::string& log, const std::string& what) {
  const auto text = test::file_text(log);
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(Restart, AStopsSnapshotIsLoadedAKillNineAfterWritesAppliesItsJournalAndRecallAnswersAsAReplayedStore) {
  const auto events = evaluation::synthetic::dense_events(360, {"acme", "initech"});
  test::temp_dir dir("restart");
  const auto log = dir.sub("engramd.log");
  auto broker = test::start_broker();
  auto args = [&](const std::string& data, const std::string& group) {
    return test::engramd_args(broker->bootstrap(), dir.sub(data),
                              {std::string("auth.tokens=[{token: ") + token_acme +
                                   ", organization_id: acme, scopes: [read, write]}, {token: " + token_initech +
                                   ", organization_id: initech, scopes: [read, write]}, " + test::admin_grant + "]",
                               "kafka.group_id=" + group});
  };
  const std::string loaded = "text and passage indexes loaded from the snapshot";
  const std::string rebuilt = "text and passage indexes rebuilt (no snapshot marked current";
  const std::string written = "text and passage indexes written to";

  produce(broker->bootstrap(), events, 0, 240);
  std::vector<std::vector<std::string>> before_stop;
  {
    test::engramd engramd(args("live", "engram"), log);
    const auto port = engramd.port();
    ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) == 240; }, 120s)) << test::tail(log);
    ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 30s)) << test::tail(log);
    before_stop = answers(port);
    EXPECT_EQ(engramd.terminate(10s), 0) << test::tail(log);
  }
  std::size_t answered = 0;
  for (const auto& a : before_stop)
    answered += !a.empty();
  ASSERT_GE(answered, 8u) << "most questions find something";
  EXPECT_EQ(count_said(log, rebuilt), 1u) << test::tail(log);  // the first open: nothing saved yet
  EXPECT_EQ(count_said(log, written), 1u) << test::tail(log);

  std::vector<std::vector<std::string>> before_kill;
  {
    test::engramd engramd(args("live", "engram"), log);
    const auto port = engramd.port();
    ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 30s)) << test::tail(log);
    EXPECT_EQ(count_said(log, loaded), 1u) << test::tail(log);
    EXPECT_EQ(answers(port), before_stop);
    produce(broker->bootstrap(), events, 240, events.size());
    ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) == long(events.size()); }, 120s))
        << test::tail(log);
    before_kill = answers(port);
    EXPECT_NE(before_kill, before_stop) << "the new mail changes some answers";
    engramd.kill9();
  }
  {
    test::engramd engramd(args("live", "engram"), log);
    const auto port = engramd.port();
    ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 30s)) << test::tail(log);
    EXPECT_EQ(count_said(log, rebuilt), 1u) << test::tail(log);
    EXPECT_EQ(count_said(log, loaded), 2u) << "the stop's snapshot, then the batches after it from the journal\n"
                                           << test::tail(log);
    EXPECT_EQ(count_said(log, "loaded from the snapshot and 0 journal rows"), 1u) << test::tail(log);
    EXPECT_EQ(test::events_applied(port), long(events.size()));
    EXPECT_EQ(answers(port), before_kill);
    EXPECT_EQ(engramd.terminate(10s), 0) << test::tail(log);
  }
  {  // engram-log replayed into a new store (another group)
    test::engramd engramd(args("replayed", "engram-replay"), log);
    const auto port = engramd.port();
    ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) == long(events.size()); }, 120s))
        << test::tail(log);
    ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 30s)) << test::tail(log);
    EXPECT_EQ(answers(port), before_kill);
    EXPECT_EQ(engramd.terminate(10s), 0) << test::tail(log);
  }
  EXPECT_EQ(test::digest_of(dir.sub("replayed")), test::digest_of(dir.sub("live")));
  {  // and the store stopped last loads what its stop wrote
    test::engramd engramd(args("live", "engram"), log);
    const auto port = engramd.port();
    ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 30s)) << test::tail(log);
    EXPECT_EQ(count_said(log, loaded), 3u) << test::tail(log);
    EXPECT_EQ(count_said(log, "loaded from the snapshot and 0 journal rows"), 2u) << "the stop wrote a new one";
    EXPECT_EQ(answers(port), before_kill);
  }
}

// With storage.snapshot_every = 1 every batch is followed by a checkpoint: the save is
// answered while the checkpoint after it is still held, and a kill -9 after the checkpoint
// reopens from its snapshot.
TEST(Restart, ASaveIsAnsweredWhileTheCheckpointAfterItRunsAndAKillAfterItOpensFromItsSnapshot) {
  test::temp_dir dir("restart-checkpoint");
  const auto log = dir.sub("engramd.log");
  const auto release = dir.sub("release-the-checkpoint");
  auto broker = test::start_broker();
  const auto args = test::engramd_args(
      broker->bootstrap(), dir.sub("data"),
      {std::string("auth.tokens=[{token: ") + token_acme + ", organization_id: acme, scopes: [read, write]}]",
       "storage.snapshot_every=1"});
  const std::string held = "ENGRAM_FAULT_CHECKPOINT_HOLD: a checkpoint waits for";
  const std::string written = "snapshots written after 1 batches";
  nlohmann::json saved;
  {
    ::setenv("ENGRAM_FAULT_CHECKPOINT_HOLD", release.c_str(), 1);
    test::engramd engramd(args, log);
    ::unsetenv("ENGRAM_FAULT_CHECKPOINT_HOLD");
    const auto port = engramd.port();
    ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(log);
    saved = test::mcp_call(port, token_acme, "save_knowledge",
                           {{"type", "fact"},
                            {"title", "Lisbon lease"},
                            {"content", "The Lisbon office renews its lease with Arcadia Properties in March."},
                            {"confidence", 0.9}});
    ASSERT_FALSE(saved.contains("error")) << saved << test::tail(log);
    ASSERT_TRUE(test::wait_until([&] { return count_said(log, held) == 1; }, 60s)) << test::tail(log);
    EXPECT_EQ(count_said(log, written), 0u) << "answered before its checkpoint ended";
    std::ofstream{release};  // lets the checkpoint go on
    ASSERT_TRUE(test::wait_until([&] { return count_said(log, written) == 1; }, 60s)) << test::tail(log);
    engramd.kill9();
  }
  test::engramd engramd(args, log);
  const auto port = engramd.port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(log);
  EXPECT_EQ(count_said(log, "text and passage indexes loaded from the snapshot"), 1u) << test::tail(log);
  EXPECT_FALSE(test::mcp_call(port, token_acme, "get_knowledge", {{"id", saved["id"]}}).contains("error"));
  EXPECT_TRUE(test::has_id(test::recall_ids(port, token_acme, "when does the Lisbon lease renew"), saved["id"]));
  EXPECT_EQ(engramd.terminate(10s), 0) << test::tail(log);
}

}  // namespace
