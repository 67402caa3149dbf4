// extraction.relation_model against engramd as a child process: the relation model is loaded
// at start (on the int8 encoder of the type model), reads a relation no cue rule holds, and
// the relation reaches the graph that kag_query walks.
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

const std::string token = "relation-model-acme-0123456789abcdef";

std::string event(const std::string& id, const std::string& body) {
  return json{{"eventId", id},
              {"organizationId", "acme"},
              {"sourceType", "email"},
              {"sentAt", "2026-03-02T10:00:00Z"},
              {"from", {{"name", "Sarah Lee"}, {"address", "sarah.lee@acme.example"}}},
              {"to", json::array()},
              {"subject", "Vendors"},
              {"body", body}}
      .dump();
}

TEST(RelationModel, EngramdWithTheModelOnReadsARelationTheCueRulesMissAndKagQueryWalksIt) {
  test::temp_dir dir("relation-model");
  auto broker = test::start_broker();
  const auto port = test::free_port();
  test::produce_raw(
      broker->bootstrap(), "inbound-messages",
      {{"acme", event("vendor-1", "Hi team,\n\nHalvorsen Marine has its head office in Bergen.\n\nSarah")}});
  test::child engramd(
      test::engramd_args(broker->bootstrap(), dir.sub("store"), port,
                         {"extraction.relation_model=true",
                          "auth.tokens=[{token: " + token + ", organization_id: acme, scopes: [read], name: t}]"}),
      dir.sub("engramd.log"));
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) == 1; }, 120s))
      << test::tail(dir.sub("engramd.log"));
  auto a = test::mcp_call(port, token, "kag_query", {{"query", "Where is Halvorsen Marine located?"}, {"limit", 5}});
  ASSERT_FALSE(a.contains("error")) << a;
  // The located_in edge the model read, between the two entities.
  bool edge = false;
  for (const auto& r : a.value("relations", json::array()))
    edge |= r.value("label", r.value("predicate", "")) == "located_in";
  EXPECT_TRUE(edge) << a.dump(2);
  EXPECT_EQ(engramd.terminate(30s), 0) << test::tail(dir.sub("engramd.log"));
}

}  // namespace
