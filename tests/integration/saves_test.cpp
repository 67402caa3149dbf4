// Saves at once against engramd as its own process (docs/architecture.md, "What runs where"):
// each save waits for the store in the save actor, not on a thread of its own, and is
// answered once the store has applied it.

#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

namespace {

/// The threads of process `pid` now (/proc/PID/status), 0 when it is gone.
std::size_t threads_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Threads:", 0) == 0)
      return std::stoul(line.substr(8));
  return 0;
}

const std::string writer = "saves-writer-token-0123456789abcdef";

json save(std::uint16_t port, int i) {
  return test::mcp_call(
      port, writer, "save_knowledge",
      {{"type", "fact"},
       {"title", "Shipment " + std::to_string(i)},
       {"content", "Shipment " + std::to_string(i) + " of order PO-" + std::to_string(7000 + i) + " leaves dock " +
                       std::to_string(i % 17) + " on day " + std::to_string(i % 28 + 1) + "."},
       {"confidence", 0.9}});
}

TEST(Saves, AThousandAtOnceAreEachAnsweredOnceAppliedWithoutAThreadEach) {
  test::temp_dir dir("saves");
  auto broker = test::start_broker();
  test::engramd engramd(test::engramd_args(broker->bootstrap(), dir.sub("store"),
                                           {"auth.tokens=[{token: " + writer +
                                            ", organization_id: acme, scopes: [read, write], name: w}]"}),
                        dir.sub("engramd.log"));
  const auto port = engramd.port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(dir.sub("engramd.log"));
  // One save first: what the first save starts (the producer's poll thread) counts as idle.
  ASSERT_TRUE(save(port, -1).contains("id"));
  const auto idle = threads_of(engramd.pid());
  ASSERT_GT(idle, 0u);

  // Sampled every millisecond while the saves are out: the saves wait for seconds, a thread
  // each would be seen.
  std::atomic<bool> saving{true};
  std::size_t peak = idle;
  std::thread sampler([&] {
    while (saving.load()) {
      peak = std::max(peak, threads_of(engramd.pid()));
      std::this_thread::sleep_for(1ms);
    }
  });
  // Under a sanitizer the store applies ten times slower: fewer saves, so each is applied
  // within the save timeout (10 s).
  const int n = test::sanitized ? 200 : 1000;
  std::vector<json> answers(static_cast<std::size_t>(n));
  std::vector<std::thread> agents;
  for (int i = 0; i < n; ++i)
    agents.emplace_back([&, i] { answers[static_cast<std::size_t>(i)] = save(port, i); });
  for (auto& a : agents)
    a.join();
  saving = false;
  sampler.join();

  std::vector<std::string> ids;
  for (const auto& a : answers) {
    ASSERT_TRUE(a.contains("id")) << a;
    ids.push_back(a["id"].get<std::string>());
  }
  std::printf("engramd threads: %zu idle, %zu at most with %d saves out\n", idle, peak, n);
  EXPECT_LE(peak, idle + 8) << "idle " << idle << " threads";
  // Answered once applied: every answered entry is there when its answer comes (no wait).
  std::size_t missing = 0;
  for (const auto& id : ids)
    if (test::mcp_call(port, writer, "get_knowledge", {{"id", id}}).contains("error"))
      ++missing;
  EXPECT_EQ(missing, 0u);
  EXPECT_EQ(engramd.terminate(60s), 0) << test::tail(dir.sub("engramd.log"));
}

}  // namespace
