// Supervised actors stopped by an injected fault (ENGRAM_FAULT_THROW, base/faults.hpp) in
// engramd as its own process: the save actor, the timer actor, the broker watch and the
// janitor are started again by their supervisor, said in the log and in
// engram_actor_restarts_total, and nothing is lost or applied twice; an actor that keeps
// failing makes engramd stop, naming it. (The store's appliers and router stop engramd
// instead: exactly_once_test.cpp.)

#include "schemas/knowledge.hpp"
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

namespace {

const std::string writer = "supervision-writer-0123456789abcdef";
const std::string admin = "supervision-admin-0123456789abcdefgh";

/// engramd on a new broker with `fault` as ENGRAM_FAULT_THROW and `more` settings.
struct faulted_engramd {
  faulted_engramd(const std::string& fault, std::vector<std::string> more)
      : dir("supervision"), broker(test::start_broker()) {
    more.push_back("auth.tokens=[{token: " + writer +
                   ", organization_id: acme, scopes: [read, write], name: w}, {token: " + admin +
                   ", organization_id: acme, scopes: [read, write, admin], name: a}]");
    ::setenv("ENGRAM_FAULT_THROW", fault.c_str(), 1);
    engramd = std::make_unique<test::engramd>(test::engramd_args(broker->bootstrap(), dir.sub("store"), more), log());
    ::unsetenv("ENGRAM_FAULT_THROW");
  }
  [[nodiscard]] std::string log() const { return dir.sub("engramd.log"); }

  test::temp_dir dir;
  std::unique_ptr<ingest::embedded_broker> broker;
  std::unique_ptr<test::engramd> engramd;
};

json save(std::uint16_t port, int i, const std::string& branch = "") {
  json args{{"type", "fact"},
            {"title", "Pallet " + std::to_string(i)},
            {"content", "Pallet " + std::to_string(i) + " of order PO-" + std::to_string(8100 + i) + " waits at bay " +
                            std::to_string(i % 13) + "."},
            {"confidence", 0.9}};
  if (!branch.empty())
    args["branchId"] = branch;
  return test::mcp_call(port, writer, "save_knowledge", args);
}

/// A labelled counter of engramd's /metrics ("name{label=\"value\"}"), 0 when not there yet.
double labelled(std::uint16_t port, const std::string& series) {
  const auto text = test::get(port, "/metrics");
  const auto at = text.find("\n" + series + " ");
  return at == std::string::npos ? 0 : std::atof(text.c_str() + at + series.size() + 2);
}

TEST(Supervision, TheSaveActorStoppedByAFaultIsStartedAgainAndEverySaveIsAppliedOnce) {
  // The third save stops the save actor just after its record went to engram-log.
  faulted_engramd f("saves:3", {});
  const auto port = f.engramd->port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(f.log());
  constexpr int n = 8;
  std::vector<std::string> ids;  // each save's entry
  for (int i = 0; i < n; ++i) {
    SCOPED_TRACE(i);
    const auto answer = save(port, i);
    if (i == 2) {
      // Told the truth: on its way to engram-log, not confirmed applied.
      ASSERT_TRUE(answer.contains("error")) << answer;
      EXPECT_NE(answer["error"].get<std::string>().find("written to engram-log as save-"), std::string::npos) << answer;
      EXPECT_NE(answer["error"].get<std::string>().find("its wait was cut short"), std::string::npos) << answer;
      const auto text = answer["error"].get<std::string>();
      const auto at = text.find("save-");
      ids.push_back(schemas::entry_id("acme", text.substr(at, text.find(' ', at) - at), 0));
      // A save sent while the supervisor starts the new actor reaches the stopped one and is
      // answered "not saved" (nothing sent): the next is sent once the restart is seen.
      ASSERT_TRUE(test::wait_until(
          [&] { return labelled(port, "engram_actor_restarts_total{actor=\"mcp-saves\"}") == 1; }, 30s))
          << test::tail(f.log());
    } else {
      EXPECT_FALSE(answer.contains("error")) << answer;  // after the restart too
      EXPECT_TRUE(answer.contains("id")) << answer;
      ids.push_back(answer.value("id", ""));
    }
  }
  // Every save applied once, the one whose wait was cut short too.
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) == n; }, 60s))
      << test::events_applied(port) << "\n"
      << test::tail(f.log());
  for (int i = 0; i < n; ++i) {
    const auto got = test::mcp_call(port, writer, "get_knowledge", {{"id", ids[static_cast<std::size_t>(i)]}});
    ASSERT_TRUE(got.contains("entry")) << i << ": " << got;
    EXPECT_EQ(got["entry"].value("title", ""), "Pallet " + std::to_string(i)) << got;
  }
  EXPECT_EQ(labelled(port, "engram_actor_restarts_total{actor=\"mcp-saves\"}"), 1);
  EXPECT_EQ(labelled(port, "engram_log_records_total{outcome=\"duplicate\"}"), 0);
  // Operators see each actor: messages, busy time and mailbox in /metrics and /v1/stats.
  EXPECT_GE(labelled(port, "engram_actor_messages_total{actor=\"mcp-saves\"}"), 2.0 * n);  // a save and its answer
  EXPECT_GT(labelled(port, "engram_actor_busy_seconds_total{actor=\"store-applier\"}"), 0);
  EXPECT_NE(test::get(port, "/metrics").find("engram_actor_mailbox{actor=\"broker-watch\"}"), std::string::npos);
  int status = 0;
  const auto stats = json::parse(test::get(port, "/v1/stats", &status, admin), nullptr, false);
  ASSERT_EQ(status, 200) << stats;
  ASSERT_TRUE(stats.contains("actors")) << stats;
  EXPECT_EQ(stats["actors"]["mcp-saves"]["restarts"], 1) << stats["actors"];
  EXPECT_GE(stats["actors"]["store-applier"]["messages"].get<double>(), 1) << stats["actors"];
  EXPECT_GE(stats["actors"]["timers"]["messages"].get<double>(), 1) << stats["actors"];  // its first round
  EXPECT_GE(stats["actors"]["broker-watch"]["messages"].get<double>(), 1) << stats["actors"];
  EXPECT_NE(test::file_text(f.log()).find(
                "mcp-saves stopped: ENGRAM_FAULT_THROW=saves:3: an injected fault (pass 3); started again"),
            std::string::npos)
      << test::tail(f.log());
  EXPECT_EQ(f.engramd->terminate(30s), 0) << test::tail(f.log());
}

TEST(Supervision, TheTimerActorStoppedByAFaultIsStartedAgainAndExpiresOnce) {
  // The first expire command a round is about to send stops the timer actor. What expires:
  // a branch abandoned for its time to live (1 s).
  faulted_engramd f("expire:1", {"timers.interval_ms=200", "branches.ttl_ms=1000"});
  const auto port = f.engramd->port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(f.log());
  const auto abandoned = save(port, 1, "draft-1");
  const auto kept = save(port, 2);
  ASSERT_FALSE(abandoned.contains("error")) << abandoned;
  ASSERT_TRUE(kept.contains("id")) << kept;
  // Its saves are dropped once, by the round after the restart, which ran to its end.
  ASSERT_TRUE(test::wait_until(
      [&] { return labelled(port, "engram_timer_actions_total{action=\"dropped_branch_saves\"}") == 1; }, 60s))
      << test::tail(f.log());
  EXPECT_EQ(labelled(port, "engram_actor_restarts_total{actor=\"timers\"}"), 1);
  EXPECT_FALSE(test::mcp_call(port, writer, "get_knowledge", {{"id", kept["id"]}}).contains("error"));
  const auto merged = test::mcp_call(port, writer, "merge_branch", {{"branchId", "draft-1"}});
  EXPECT_TRUE(merged.contains("error")) << merged;  // nothing left in it
  EXPECT_NE(test::file_text(f.log()).find(
                "timers stopped: ENGRAM_FAULT_THROW=expire:1: an injected fault (pass 1); started again"),
            std::string::npos)
      << test::tail(f.log());
  // More rounds ran (each a message of the timer actor) and dropped nothing more.
  const auto rounds = labelled(port, "engram_actor_messages_total{actor=\"timers\"}");
  ASSERT_TRUE(test::wait_until(
      [&] { return labelled(port, "engram_actor_messages_total{actor=\"timers\"}") >= rounds + 2; }, 30s));
  EXPECT_EQ(labelled(port, "engram_timer_actions_total{action=\"dropped_branch_saves\"}"), 1);
  EXPECT_EQ(f.engramd->terminate(30s), 0) << test::tail(f.log());
}

/// A periodic actor `actor` of engramd `f` (ready) is started again once after the fault
/// `place`:2 stopped it, says so, and runs twice more; then engramd stops cleanly.
void expect_restarted_once_and_running(faulted_engramd& f, const std::string& actor, const std::string& place) {
  const auto port = f.engramd->port();
  const auto restarts = "engram_actor_restarts_total{actor=\"" + actor + "\"}";
  const auto runs = "engram_actor_messages_total{actor=\"" + actor + "\"}";
  ASSERT_TRUE(test::wait_until([&] { return labelled(port, restarts) == 1; }, 30s)) << test::tail(f.log());
  const auto before = labelled(port, runs);
  ASSERT_TRUE(test::wait_until([&] { return labelled(port, runs) >= before + 2; }, 30s));
  EXPECT_TRUE(test::ready(port));
  EXPECT_NE(test::file_text(f.log()).find(actor + " stopped: ENGRAM_FAULT_THROW=" + place +
                                          ":2: an injected fault (pass 2); started again"),
            std::string::npos)
      << test::tail(f.log());
  EXPECT_EQ(f.engramd->terminate(30s), 0) << test::tail(f.log());
}

TEST(Supervision, TheBrokerWatchStoppedByAFaultIsStartedAgainAndKeepsWatching) {
  // Its second look throws; the next actor looks again, and /readyz still hears from it.
  faulted_engramd f("watch:2", {});
  ASSERT_TRUE(test::wait_until([&] { return test::ready(f.engramd->port()); }, 60s)) << test::tail(f.log());
  expect_restarted_once_and_running(f, "broker-watch", "watch");
}

TEST(Supervision, TheJanitorStoppedByAFaultIsStartedAgainAndKeepsLooking) {
  // A clustered store (one member) runs the janitor, a look a second; its second look throws.
  faulted_engramd f("sweep:2", {"store.cluster=true", "store.advertised_url=http://127.0.0.1:0",
                                "store.member_name=solo", "store.heartbeat_ms=300"});
  ASSERT_TRUE(test::wait_until([&] { return test::ready(f.engramd->port()); }, 60s)) << test::tail(f.log());
  expect_restarted_once_and_running(f, "janitor", "sweep");
}

TEST(Supervision, TheStoreWatchStoppedByAFaultIsStartedAgainAndStillReportsAFailedApplier) {
  // The store watch fails as it starts; the one started again must still see the applier
  // that throws at the third save (ENGRAM_FAULT_APPLY_THROW_AT) and stop engramd.
  ::setenv("ENGRAM_FAULT_APPLY_THROW_AT", "3", 1);
  faulted_engramd f("store-watch:1", {});
  ::unsetenv("ENGRAM_FAULT_APPLY_THROW_AT");
  const auto port = f.engramd->port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(f.log());
  EXPECT_EQ(labelled(port, "engram_actor_restarts_total{actor=\"store-watch\"}"), 1);
  EXPECT_TRUE(save(port, 0).contains("id"));
  EXPECT_TRUE(save(port, 1).contains("id"));
  EXPECT_TRUE(save(port, 2).contains("error"));  // its applier threw
  ASSERT_TRUE(test::wait_until([&] { return !f.engramd->alive(); }, 60s)) << test::tail(f.log());
  EXPECT_EQ(f.engramd->exit_code(), 1) << test::tail(f.log());
  const auto said = test::file_text(f.log());
  EXPECT_NE(said.find("store-watch stopped: ENGRAM_FAULT_THROW=store-watch:1: an injected fault (pass 1); started "
                      "again"),
            std::string::npos)
      << test::tail(f.log());
  EXPECT_NE(said.find("the pipeline failed (the store applier stopped: "), std::string::npos) << test::tail(f.log());
}

TEST(Supervision, AnActorThatKeepsFailingStopsEngramdNamingIt) {
  // Every save stops the save actor: the fifth stop within a minute is the last. A save is
  // answered (an error) before the supervisor has seen the stop, so each next save waits for
  // the actor started again (the restarts counted): sent sooner, it would reach the stopped one,
  // which fails it without a fault.
  faulted_engramd f("saves:1+", {});
  const auto port = f.engramd->port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(f.log());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(
        test::wait_until([&] { return labelled(port, "engram_actor_restarts_total{actor=\"mcp-saves\"}") >= i; }, 60s))
        << test::tail(f.log());
    const auto answer = save(port, i);
    EXPECT_TRUE(answer.contains("error")) << answer;
  }
  ASSERT_TRUE(test::wait_until([&] { return !f.engramd->alive(); }, 60s)) << test::tail(f.log());
  EXPECT_EQ(f.engramd->exit_code(), 1) << test::tail(f.log());
  const auto said = test::file_text(f.log());
  EXPECT_NE(said.find("mcp-saves stopped 5 times within 60 s; last: ENGRAM_FAULT_THROW=saves:1+"), std::string::npos)
      << test::tail(f.log());
}

}  // namespace
