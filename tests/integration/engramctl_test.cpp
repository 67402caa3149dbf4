// engramctl as a user runs it: a separate devbroker process, produce with line-numbered
// rejections, stats against a running engine.
#include "actors/engine/engine.hpp"
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/wait.h>

namespace {

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

std::string engramctl() {
  std::string d = ENGRAMD_PATH;
  return d.substr(0, d.rfind('/')) + "/engramctl";
}

/// Runs a shell command; returns its exit status and combined output.
int run(const std::string& cmd, std::string* out) {
  out->clear();
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p)
    return -1;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p))
    *out += buf;
  int st = ::pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

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
    f << events[0] << "\n" << "{not json\n" << events[1] << "\n\n" << events[2] << "\n";
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
  std::string error;
  auto e = engine::engine::start(test::test_config(brokers, dir.sub("store")), {}, &error);
  ASSERT_TRUE(e) << error;
  ASSERT_TRUE(test::wait_until([&] { return e->metrics().applied() == 5; }, 60s));
  EXPECT_EQ(run(engramctl() + " stats --url http://127.0.0.1:" + std::to_string(e->http_port()), &out), 0) << out;
  auto stats = json::parse(out);
  std::uint64_t total = 0;
  for (const auto& o : stats["organizations"])
    total += o["events"].get<std::uint64_t>();
  EXPECT_EQ(total, 5u);
  e->stop();

  EXPECT_EQ(broker.terminate(5s), 0);
  EXPECT_EQ(run(engramctl() + " produce --brokers 127.0.0.1:1 /nonexistent.jsonl", &out), 1);
  EXPECT_NE(out.find("cannot read /nonexistent.jsonl"), std::string::npos) << out;
  EXPECT_EQ(run(engramctl() + " digest --data-dir " + dir.sub("nowhere"), &out), 1);
  EXPECT_NE(out.find("cannot open store"), std::string::npos) << out;
}

}  // namespace
