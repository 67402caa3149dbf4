// Exactly-once under kill -9: engramd runs as a child process against a broker in this
// process and is killed at random moments while events keep arriving; at the end every
// event is applied exactly once and the store's digest equals that of an uninterrupted run.
#include "actors/mcp/http.hpp"
#include "storage/graph_store.hpp"
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <ctime>
#include <limits>
#include <set>
#include <cstdio>
#include <random>
#include <thread>

namespace {

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

constexpr std::size_t total_events = 2000;

std::vector<std::string> engramd_args(const std::string& brokers, const std::string& data_dir, std::uint16_t port) {
  return {ENGRAMD_PATH,
          "--config",
          std::string(ENGRAM_SOURCE_DIR) + "/config/engram.yaml",
          "--set", "kafka.brokers=" + brokers,
          "--set", "storage.path=" + data_dir,
          "--set", "samples.load=false",
          "--set", std::string("embedder.model_path=") + test::model_path,
          "--set", "http.listen=127.0.0.1:" + std::to_string(port),
          // A killed member stays in its group until its session times out; keep that short.
          "--set", "kafka.rdkafka.session.timeout.ms=3000",
          "--set", "kafka.rdkafka.heartbeat.interval.ms=300"};
}

/// True once engramd reports live engram-log partitions (assigned to it).
bool assigned(std::uint16_t port) {
  auto doc = json::parse(test::get(port, "/v1/stats"), nullptr, false);
  if (doc.is_discarded())
    return false;
  for (const auto& p : doc["partitions"])
    if (p.contains("lag"))
      return true;
  return false;
}

/// Events applied according to /v1/stats, or -1 when engramd does not answer.
long applied(std::uint16_t port) {
  auto body = test::get(port, "/v1/stats");
  auto doc = json::parse(body, nullptr, false);
  if (doc.is_discarded())
    return -1;
  long n = 0;
  for (const auto& o : doc["organizations"])
    n += o["events"].get<long>();
  return n;
}

/// The seed of the kill moments: random, or EXACTLY_ONCE_SEED to reproduce a run; printed.
unsigned kill_seed() {
  unsigned seed = std::random_device{}();
  if (const char* s = std::getenv("EXACTLY_ONCE_SEED"))
    seed = static_cast<unsigned>(std::stoul(s));
  std::printf("seed %u (EXACTLY_ONCE_SEED reproduces the kill moments)\n", seed);
  return seed;
}

void produce(const std::string& brokers, const std::vector<std::string>& evs, std::size_t from, std::size_t to) {
  std::vector<std::pair<std::string, std::string>> kv;
  for (std::size_t i = from; i < to; ++i)
    kv.emplace_back(test::org_of(evs[i]), evs[i]);
  test::produce_raw(brokers, "inbound-messages", kv);
}

std::string digest_of(const std::string& data_dir) {
  std::string error;
  auto store = storage::open_graph_store({data_dir, /*read_only=*/true}, &error);
  EXPECT_TRUE(store) << error;
  return store ? store->digest() : std::string();
}

/// engramctl digest, to check the tool agrees with the library.
std::string engramctl_digest(const std::string& data_dir) {
  std::string cmd = std::string(ENGRAMD_PATH);
  cmd = cmd.substr(0, cmd.rfind('/')) + "/engramctl digest --data-dir " + data_dir;
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, p))
      out += buf;
    ::pclose(p);
  }
  while (!out.empty() && out.back() == '\n')
    out.pop_back();
  return out;
}

TEST(ExactlyOnce, KillNineAtRandomMomentsAppliesEveryEventOnceAndMatchesAnUninterruptedRun) {
  auto events = test::make_events(total_events);
  std::mt19937 rng(kill_seed());

  test::temp_dir dir("exactly-once");
  auto log = dir.sub("engramd.log");
  auto broker = test::start_broker();
  auto port = test::free_port();

  // Events keep arriving, in bursts, while engramd is killed and restarted.
  std::atomic<bool> producing{true};
  std::thread producer([&] {
    for (std::size_t i = 0; i < total_events; i += 100) {
      produce(broker->bootstrap(), events, i, std::min(total_events, i + 100));
      std::this_thread::sleep_for(2500ms);
    }
    producing = false;
  });

  int kills = 0;
  std::vector<long> applied_at_kill;
  std::uniform_int_distribution<int> moment_ms(0, 1500);
  while (kills < 6 || (producing && kills < 12)) {
    test::child engramd(engramd_args(broker->bootstrap(), dir.sub("killed"), port), log);
    // Kill once it owns its partitions (rejoining takes seconds), at a random moment after.
    ASSERT_TRUE(test::wait_until([&] { return assigned(port); }, 30s)) << test::tail(log);
    std::this_thread::sleep_for(std::chrono::milliseconds(moment_ms(rng)));
    applied_at_kill.push_back(applied(port));
    ASSERT_TRUE(engramd.alive()) << test::tail(log);
    engramd.kill9();
    ++kills;
  }
  producer.join();
  std::string progress;
  for (auto a : applied_at_kill)
    progress += std::to_string(a) + " ";
  std::printf("killed %d times; events applied at each kill: %s\n", kills, progress.c_str());
  // Kills must have landed while work was going on, not all before or after it.
  EXPECT_TRUE(std::any_of(applied_at_kill.begin(), applied_at_kill.end(),
                          [](long a) { return a > 0 && a < long(total_events); }))
      << progress;

  {
    test::child engramd(engramd_args(broker->bootstrap(), dir.sub("killed"), port), log);
    ASSERT_TRUE(test::wait_until([&] { return applied(port) == long(total_events); }, 120s))
        << applied(port) << "\n" << test::tail(log);
    int status = 0;
    ASSERT_TRUE(test::wait_until(
        [&] {
          test::get(port, "/readyz", &status);
          return status == 200;
        },
        30s));
    std::this_thread::sleep_for(1s);  // nothing more may arrive: exactly once, not at least once
    EXPECT_EQ(applied(port), long(total_events));
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(engramd.terminate(5s), 0) << "SIGTERM must stop engramd cleanly within 5 s\n" << test::tail(log);
    std::printf("clean shutdown took %lld ms\n",
                static_cast<long long>(
                    std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start)
                        .count()));
  }

  // The same events, uninterrupted, on a broker of their own.
  auto control_broker = test::start_broker();
  produce(control_broker->bootstrap(), events, 0, total_events);
  {
    test::child engramd(engramd_args(control_broker->bootstrap(), dir.sub("control"), port), log);
    ASSERT_TRUE(test::wait_until([&] { return applied(port) == long(total_events); }, 120s)) << test::tail(log);
    EXPECT_EQ(engramd.terminate(5s), 0) << test::tail(log);
  }

  if (std::getenv("EXACTLY_ONCE_VERBOSE"))
    std::printf("%s", test::tail(log, 400).c_str());
  auto killed = digest_of(dir.sub("killed"));
  auto control = digest_of(dir.sub("control"));
  EXPECT_EQ(killed, control);
  EXPECT_EQ(engramctl_digest(dir.sub("killed")), killed);
  std::string error;
  auto store = storage::open_graph_store({dir.sub("killed"), true}, &error);
  ASSERT_TRUE(store) << error;
  std::uint64_t sum = 0;
  for (const auto& s : store->stats())
    sum += s.events;
  EXPECT_EQ(sum, total_events);
  std::printf("duplicates skipped after kills: %llu\n",
              static_cast<unsigned long long>(store->redelivery_counts().first));
}

/// An MCP tools/call with `token`; the structured answer, or {"error": ...}.
json mcp_call(std::uint16_t port, const std::string& token, const std::string& tool, const json& args) {
  auto r = http::fetch("POST", "http://127.0.0.1:" + std::to_string(port) + "/mcp",
                       json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"},
                            {"params", {{"name", tool}, {"arguments", args}}}}
                           .dump(),
                       {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + token}}, 30s);
  auto j = json::parse(r.body, nullptr, false);
  if (j.is_discarded() || !j.contains("result") || j["result"].value("isError", false))
    return {{"error", r.body}};
  return j["result"]["structuredContent"];
}

TEST(ExactlyOnce, KillNineWhileRemindersGoOutSendsEachExactlyOnceAndAReplaySendsNone) {
  constexpr std::size_t items = 100;
  std::mt19937 rng(kill_seed());
  test::temp_dir dir("reminders-once");
  auto log = dir.sub("engramd.log");
  auto broker = test::start_broker();
  auto port = test::free_port();
  const std::string token = "reminder-token-0123456789abcdef";
  auto args = [&](const std::string& data, const std::string& group, const std::string& interval) {
    auto a = engramd_args(broker->bootstrap(), dir.sub(data), port);
    for (std::string kv : {"auth.tokens=[{token: " + token + ", organization_id: acme, scopes: [read, write]}]",
                           "kafka.group_id=" + group, "timers.interval_ms=" + interval,
                           std::string("reminders.lead_ms=31536000000")}) {  // every item due within the lead
      a.push_back("--set");
      a.push_back(kv);
    }
    return a;
  };
  // The action items, due in 30 days; the timers wait (a long interval) until they are all in.
  {
    std::time_t due = std::time(nullptr) + 30 * 86400;
    std::tm tm{};
    gmtime_r(&due, &tm);
    char date[64];
    std::strftime(date, sizeof date, "%B %d, %Y", &tm);
    test::child engramd(args("killed", "engram", "3600000"), log);
    ASSERT_TRUE(test::wait_until([&] { return assigned(port); }, 30s)) << test::tail(log);
    // 100 customers (distinct subjects: no item supersedes another).
    const char* first[] = {"Bor", "Cal", "Dan", "Eri", "Fal", "Gor", "Hal", "Ith", "Jor", "Kel"};
    const char* second[] = {"ex", "ia", "on", "ar", "ix", "um", "en", "os", "ak", "ul"};
    for (std::size_t i = 0; i < items; ++i) {
      const std::string customer = std::string(first[i / 10]) + second[i % 10];
      auto r = mcp_call(port, token, "save_knowledge",
                        {{"type", "action_item"},
                         {"title", "Send " + customer + " the signed contract"},
                         {"content", "Send " + customer + " the signed contract by " + date + "."},
                         {"confidence", 0.9}});
      ASSERT_FALSE(r.contains("error")) << r;
    }
    ASSERT_EQ(test::topic_size(broker->bootstrap(), "engram-reminders"), 0);
    engramd.kill9();
  }
  // The timers send while engramd is killed at random moments.
  int kills = 0;
  std::vector<std::int64_t> sent_at_kill;
  std::uniform_int_distribution<int> moment_ms(0, 2500);
  while (kills < 8 && test::topic_size(broker->bootstrap(), "engram-reminders") < std::int64_t(items)) {
    test::child engramd(args("killed", "engram", "20"), log);
    ASSERT_TRUE(test::wait_until([&] { return assigned(port); }, 30s)) << test::tail(log);
    std::this_thread::sleep_for(std::chrono::milliseconds(moment_ms(rng)));
    engramd.kill9();
    sent_at_kill.push_back(test::topic_size(broker->bootstrap(), "engram-reminders"));
    ++kills;
  }
  std::string progress;
  for (auto n : sent_at_kill)
    progress += std::to_string(n) + " ";
  std::printf("killed %d times; reminders on the topic at each kill: %s\n", kills, progress.c_str());
  EXPECT_TRUE(std::any_of(sent_at_kill.begin(), sent_at_kill.end(),
                          [](std::int64_t n) { return n > 0 && n < std::int64_t(items); }))
      << "no kill landed while reminders were going out: " << progress;
  // A last run finishes (the timers act once the store has caught up: /readyz); then a
  // replay into a new store (another group) sends nothing.
  auto ready = [&] {
    int status = 0;
    test::get(port, "/readyz", &status);
    return status == 200;
  };
  {
    test::child engramd(args("killed", "engram", "20"), log);
    ASSERT_TRUE(test::wait_until(ready, 60s)) << test::tail(log);
    ASSERT_TRUE(test::wait_until(
        [&] { return test::topic_size(broker->bootstrap(), "engram-reminders") >= std::int64_t(items); }, 60s))
        << test::tail(log);
    std::this_thread::sleep_for(2s);  // more rounds: nothing more may go out
    EXPECT_EQ(engramd.terminate(10s), 0) << test::tail(log);
  }
  EXPECT_EQ(test::topic_size(broker->bootstrap(), "engram-reminders"), std::int64_t(items));
  std::string error;
  {
    auto store = storage::open_graph_store({dir.sub("killed"), true}, &error);
    ASSERT_TRUE(store) << error;
    EXPECT_TRUE(store->due_reminders(std::numeric_limits<std::int64_t>::max(), 1000).empty());  // all recorded
  }
  {
    test::child engramd(args("replayed", "engram-replay", "20"), log);
    ASSERT_TRUE(test::wait_until(ready, 60s)) << test::tail(log);
    std::this_thread::sleep_for(2s);  // the replay's timers run many rounds
    EXPECT_EQ(engramd.terminate(10s), 0) << test::tail(log);
  }
  EXPECT_EQ(digest_of(dir.sub("replayed")), digest_of(dir.sub("killed")));
  auto sent = test::consume_all(broker->bootstrap(), "engram-reminders", items, 20s);
  ASSERT_EQ(sent.size(), items);
  std::set<std::string> ids;
  for (const auto& r : sent)
    ids.insert(r.headers.at("reminder-id"));
  EXPECT_EQ(ids.size(), items);
}

}  // namespace
