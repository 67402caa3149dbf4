// extraction.relation_model against engramd as a child process: the relation model is loaded
// at start (on the int8 encoder of the type model), reads a relation no cue rule holds ("the
// vendor behind"), and the relation reaches the graph that kag_query walks.
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
  test::produce_raw(
      broker->bootstrap(), "inbound-messages",
      {{"acme", event("vendor-1", "Hi team,\n\nTessaline Labs is the vendor behind Harbormind.\n\nSarah")}});
  test::engramd engramd(
      test::engramd_args(broker->bootstrap(), dir.sub("store"),
                         // The relation examples expect the rules' names: the name model reads
                         // "Harbormind" here as an organisation (tests/unit/reading/relation_model_test.cpp).
                         {"extraction.relation_model=true", "extraction.name_model=false",
                          "auth.tokens=[{token: " + token + ", organization_id: acme, scopes: [read], name: t}]"}),
      dir.sub("engramd.log"));
  const auto port = engramd.port();
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) == 1; }, 120s))
      << test::tail(dir.sub("engramd.log"));
  // The makes edge the model read (no cue rule reads "the vendor behind"), between the two
  // entities, as kag_query walks it; waited for as the store's state, not for a time.
  json a;
  auto has_edge = [&] {
    a = test::mcp_call(port, token, "kag_query", {{"query", "Which company makes Harbormind?"}, {"limit", 5}});
    for (const auto& r : a.value("relations", json::array()))
      if (r.value("predicate", "") == "makes" && r.value("object", "") == "Harbormind")
        return true;
    return false;
  };
  EXPECT_TRUE(test::wait_until(has_edge, 60s)) << a.dump(2) << test::tail(dir.sub("engramd.log"));
  EXPECT_EQ(engramd.terminate(30s), 0) << test::tail(dir.sub("engramd.log"));
}

}  // namespace
