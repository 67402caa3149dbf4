// A Kafka outage: the test broker's brokers go down mid-ingest (librdkafka's mock cluster
// closes their connections and refuses new ones, and keeps its records) and come back.
// engramd is a child process; every wait is on observed state (/readyz, /v1/stats, its log,
// the save's answer), never on a clock alone.
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <unistd.h>

namespace {

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

constexpr const char* writer = "outage-writer-0123456789abcdef";

/// CPU seconds (user + system) the process has used, from /proc/PID/stat.
double cpu_seconds(pid_t pid) {
  const std::string stat = test::file_text("/proc/" + std::to_string(pid) + "/stat");
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i)
    if (i >= 14)
      ticks += std::stod(field);
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// /readyz's answer: its status, and the reason when not ready.
std::pair<int, std::string> readyz(std::uint16_t port) {
  int status = 0;
  auto body = json::parse(test::get(port, "/readyz", &status), nullptr, false);
  return {status, body.is_object() ? body.value("reason", "") : ""};
}

bool log_says(const std::string& file, const std::string& what) {
  return test::file_text(file).find(what) != std::string::npos;
}

std::vector<std::pair<std::string, std::string>> keyed(const std::vector<std::string>& events) {
  std::vector<std::pair<std::string, std::string>> kv;
  for (const auto& e : events)
    kv.emplace_back(test::org_of(e), e);
  return kv;
}

std::vector<std::string> engramd_args(const std::string& brokers, const std::string& data) {
  return test::engramd_args(
      brokers, data,
      {std::string("auth.tokens=[{token: ") + writer + ", organization_id: acme, scopes: [read, write]}]"});
}

TEST(Outage, BrokersDownMidIngestEngramdWaitsIdleSaysWhySavesAnswerTruthfullyAndResumesToTheSameGraph) {
  constexpr std::size_t total = 1200;
  const auto events = test::make_events(total);
  test::temp_dir dir("outage");
  const auto log = dir.sub("engramd.log");
  auto broker = test::start_broker();
  test::produce_raw(broker->bootstrap(), "inbound-messages", keyed(events));

  test::engramd engramd(engramd_args(broker->bootstrap(), dir.sub("outage")), log);
  const auto port = engramd.port();
  // Mid-ingest: some events applied, most still to come.
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) >= 100; }, 120s)) << test::tail(log);
  ASSERT_TRUE(broker->set_up(false));

  // engramd notices and says why it is not ready.
  ASSERT_TRUE(test::wait_until([&] { return readyz(port).first == 503; }, 60s)) << test::tail(log);
  const auto [status, reason] = readyz(port);
  EXPECT_NE(reason.find("Kafka at " + broker->bootstrap() + " does not answer"), std::string::npos) << reason;
  ASSERT_TRUE(log_says(log, "does not answer")) << test::tail(log);
  const auto outage_began = std::chrono::steady_clock::now();
  const double cpu_before = cpu_seconds(engramd.pid());

  // Reads go on from the store.
  auto recalled = test::mcp_call(port, writer, "recall_knowledge", {{"query", "contract renewal"}});
  EXPECT_FALSE(recalled.contains("error")) << recalled;
  // A save cannot reach engram-log: the answer says it was not saved (after the producer's
  // delivery timeout, within MCP's wait); it must never be applied later.
  auto saved = test::mcp_call(port, writer, "save_knowledge",
                              {{"type", "fact"},
                               {"title", "Zorblax outage marker"},
                               {"content", "The Zorblax outage marker was saved while Kafka was down."},
                               {"confidence", 0.9}});
  ASSERT_TRUE(saved.contains("error")) << saved;
  const std::string refusal = saved["error"];
  EXPECT_NE(refusal.find("not saved (save-"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("nothing was written"), std::string::npos) << refusal;
  EXPECT_EQ(readyz(port).first, 503);
  // What was fetched before the outage may still be applied; the rest waits for the brokers.
  const long applied_in_outage = test::events_applied(port);
  EXPECT_LT(applied_in_outage, long(total)) << "ingest did not wait for the brokers";

  // Idle, not spinning: under a fifth of one core over the outage (a spinning thread takes
  // the whole of one).
  const double wall = seconds_since(outage_began);
  const double cpu = cpu_seconds(engramd.pid()) - cpu_before;
  std::printf("/readyz: %s\nthe save: %s\napplied: %ld of %zu\n", reason.c_str(), refusal.c_str(), applied_in_outage,
              total);
  std::printf("outage: %.1f s, engramd used %.2f CPU seconds (%.1f%% of a core)\n", wall, cpu, 100 * cpu / wall);
  EXPECT_LT(cpu, 0.2 * wall) << test::tail(log);
  ASSERT_TRUE(engramd.alive()) << test::tail(log);

  // Back up: ingest resumes by itself, every event once.
  ASSERT_TRUE(broker->set_up(true));
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) == long(total) && test::ready(port); }, 180s))
      << test::events_applied(port) << "\n"
      << test::tail(log);
  EXPECT_TRUE(log_says(log, "answers again")) << test::tail(log);
  // The refused save is not on engram-log (no knowledge-save record at all) and not in the store.
  const auto records = test::consume_all(broker->bootstrap(), "engram-log",
                                         std::size_t(test::topic_size(broker->bootstrap(), "engram-log")), 30s);
  for (const auto& r : records) {
    auto kind = r.headers.find("kind");
    EXPECT_TRUE(kind == r.headers.end() || kind->second != "knowledge-save") << r.value.substr(0, 200);
  }
  auto found = test::mcp_call(port, writer, "search_knowledge", {{"query", "Zorblax outage marker"}});
  EXPECT_EQ(found.dump().find("Zorblax"), std::string::npos) << found;
  EXPECT_EQ(engramd.terminate(10s), 0) << test::tail(log);

  // The same events without an outage.
  auto control_broker = test::start_broker();
  test::produce_raw(control_broker->bootstrap(), "inbound-messages", keyed(events));
  {
    test::engramd control(engramd_args(control_broker->bootstrap(), dir.sub("control")), log);
    const auto port = control.port();
    ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) == long(total); }, 180s)) << test::tail(log);
    EXPECT_EQ(control.terminate(10s), 0) << test::tail(log);
  }
  EXPECT_EQ(test::digest_of(dir.sub("outage")), test::digest_of(dir.sub("control")));
}

TEST(Outage, EngramdStartedWhileKafkaIsDownWaitsSaysSoAndStartsWhenItAnswers) {
  test::temp_dir dir("outage-start");
  const auto log = dir.sub("engramd.log");
  auto broker = test::start_broker();
  ASSERT_TRUE(broker->set_up(false));
  {
    // Stopped while it waits: a clean exit.
    test::engramd engramd(engramd_args(broker->bootstrap(), dir.sub("stopped")), log);
    ASSERT_TRUE(test::wait_until([&] { return log_says(log, "waiting for Kafka at " + broker->bootstrap()); }, 60s))
        << test::tail(log);
    EXPECT_EQ(engramd.terminate(10s), 0) << test::tail(log);
  }
  const auto waited_log = dir.sub("waited.log");
  test::engramd engramd(engramd_args(broker->bootstrap(), dir.sub("waited")), waited_log);
  ASSERT_TRUE(
      test::wait_until([&] { return log_says(waited_log, "waiting for Kafka at " + broker->bootstrap()); }, 60s))
      << test::tail(waited_log);
  ASSERT_TRUE(engramd.alive());
  // It binds its port only once Kafka answered: no port reported yet.
  EXPECT_EQ(engramd.port(std::chrono::milliseconds(0)), 0) << "listening before Kafka answers";

  ASSERT_TRUE(broker->set_up(true));
  const auto port = engramd.port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 120s)) << test::tail(waited_log);
  EXPECT_TRUE(log_says(waited_log, "answers (after")) << test::tail(waited_log);
  const auto events = test::make_events(30);
  test::produce_raw(broker->bootstrap(), "inbound-messages", keyed(events));
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) == 30; }, 120s)) << test::tail(waited_log);
  EXPECT_EQ(engramd.terminate(10s), 0) << test::tail(waited_log);
}

}  // namespace
