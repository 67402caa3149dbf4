// Tokens against engramd as its own process (docs/mcp-tools.md, "Connecting an agent"): a token given
// in the configuration as its SHA-256 works like one given in clear; a wrong token is refused;
// /v1/stats answers only with a token, and only about the token's organisation (admin: every
// one); and no token, right or wrong, configured, generated or sent, ever appears in the log.

#include "mcp/auth.hpp"
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <iterator>
#include <set>

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

namespace {

std::set<std::string> organisations_in_stats(std::uint16_t port, const std::string& token, int* status) {
  auto body = json::parse(test::get(port, "/v1/stats", status, token), nullptr, false);
  std::set<std::string> out;
  if (body.is_object())
    for (const auto& row : body.value("organizations", json::array()))
      out.insert(row.value("organizationId", ""));
  return out;
}

TEST(Auth, AHashedTokenWorksStatsAreScopedAndNoTokenIsEverLogged) {
  test::temp_dir dir("auth");
  auto broker = test::start_broker();
  const std::string acme = "acme-secret-token-0123456789abcdef", globex = "globex-secret-token-0123456789abcdef",
                    wrong = "guessed-token-0123456789abcdef-xyz";
  // acme's token is configured by its SHA-256 only: the configuration holds no secret.
  test::engramd engramd(test::engramd_args(broker->bootstrap(), dir.sub("store"),
                                           {"auth.tokens=[{token_sha256: " + mcp::token_digest(acme) +
                                            ", organization_id: acme, scopes: [read, write], name: a}, {token: " +
                                            globex + ", organization_id: globex, scopes: [read, write], name: g}]"}),
                        dir.sub("engramd.log"));
  const auto port = engramd.port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(dir.sub("engramd.log"));
  std::vector<std::pair<std::string, std::string>> keyed;
  for (const auto& e : test::make_events(30))
    keyed.emplace_back(test::org_of(e), e);
  test::produce_raw(broker->bootstrap(), "inbound-messages", keyed);
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) == 30; }, 120s));

  auto saved = test::mcp_call(
      port, acme, "save_knowledge",
      {{"type", "fact"}, {"title", "Acme pays yearly"}, {"content", "Acme pays yearly."}, {"confidence", 0.9}});
  ASSERT_TRUE(saved.contains("id")) << saved;
  EXPECT_FALSE(test::mcp_call(port, globex, "recall_knowledge", {{"query", "budget"}}).contains("error"));
  auto refused = test::mcp_call(port, wrong, "recall_knowledge", {{"query", "budget"}});
  ASSERT_TRUE(refused.contains("error")) << refused;
  EXPECT_NE(refused["error"].get<std::string>().find("invalid token"), std::string::npos) << refused;
  // The digest itself is not a token.
  EXPECT_TRUE(
      test::mcp_call(port, mcp::token_digest(acme), "recall_knowledge", {{"query", "budget"}}).contains("error"));

  // /v1/stats: a token, and only its organisation; the admin token sees every one.
  int status = 0;
  test::get(port, "/v1/stats", &status, "");
  EXPECT_EQ(status, 401);
  EXPECT_EQ(organisations_in_stats(port, acme, &status), std::set<std::string>{"acme"});
  EXPECT_EQ(status, 200);
  EXPECT_EQ(organisations_in_stats(port, globex, &status), std::set<std::string>{"globex"});
  organisations_in_stats(port, wrong, &status);
  EXPECT_EQ(status, 401);
  const auto all = organisations_in_stats(port, test::admin_token, &status);
  EXPECT_TRUE(all.count("acme") && all.count("globex")) << status;
  ASSERT_EQ(engramd.terminate(10s), 0);

  // With no token configured engramd makes a dev token: in a file of mode 0600, not in the log.
  auto dev_args = test::engramd_args(broker->bootstrap(), dir.sub("store2"));
  dev_args.insert(dev_args.end(), {"--set", "auth.tokens=[]"});
  test::engramd dev(dev_args, dir.sub("dev.log"));
  const auto dev_port = dev.port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(dev_port); }, 60s)) << test::tail(dir.sub("dev.log"));
  std::string dev_token = test::file_text(dir.sub("store2") + "/dev-token");
  while (!dev_token.empty() && (dev_token.back() == '\n' || dev_token.back() == ' '))
    dev_token.pop_back();
  ASSERT_GE(dev_token.size(), 16u);
  EXPECT_FALSE(test::mcp_call(dev_port, dev_token, "recall_knowledge", {{"query", "budget"}}).contains("error"));
  ASSERT_EQ(dev.terminate(10s), 0);

  for (const auto& log : {dir.sub("engramd.log"), dir.sub("dev.log")}) {
    const auto text = test::file_text(log);
    ASSERT_FALSE(text.empty()) << log;
    for (const auto& secret : {acme, globex, wrong, std::string(test::admin_token), dev_token})
      EXPECT_EQ(text.find(secret), std::string::npos) << log << " holds a token";
  }
  EXPECT_NE(test::file_text(dir.sub("dev.log")).find("dev-token (mode 0600)"), std::string::npos);
}

}  // namespace
