// The tool registry: argument checks from each tool's own inputSchema (messages name the
// field and the reason), tools listed per grant, changes announced.
#include "mcp/registry.hpp"
#include "schemas/tools.hpp"

#include <gtest/gtest.h>

namespace {

using namespace engram::mcp;

json schema_of(const std::string& tool) {
  for (const auto& d : json::parse(engram::schemas::tool_definitions()))
    if (d["name"] == tool)
      return d["inputSchema"];
  ADD_FAILURE() << "no tool " << tool;
  return json::object();
}

TEST(ToolArguments, EachBadArgumentIsNamedWithItsReason) {
  const auto save = schema_of("save_knowledge");
  const json good{{"type", "fact"}, {"title", "t"}, {"content", "c"}, {"confidence", 0.5}};
  auto with = [&](const char* k, json v) {
    json j = good;
    j[k] = std::move(v);
    return j;
  };
  EXPECT_EQ(check_arguments(save, good), std::nullopt);
  EXPECT_EQ(check_arguments(save, with("tags", {"a", "b"})), std::nullopt);
  EXPECT_EQ(check_arguments(save, with("contactId", nullptr)), std::nullopt);  // null: absent
  const std::pair<json, std::string> bad[] = {
      {with("confidence", 1.5), "confidence: must be within 0..1"},
      {with("type", "rumour"),
       "type: must be one of fact, decision, event, preference, goal, relationship, action_item"},
      {with("organizationId", "globex"), "organizationId: unknown argument"},
      {with("expiresInDays", 0), "expiresInDays: must be within 1..36500"},
      {with("expiresInDays", 1.5), "expiresInDays: must be an integer"},
      {with("branchId", ""), "branchId: must be 1..256 characters"},
      {with("title", std::string(201, 'x')), "title: must be 1..200 characters"},
      {with("tags", json::array({"ok", 7})), "tags[1]: must be a string"},
      {with("tags", json(std::vector<std::string>(21, "t"))), "tags: must hold 0..20 items"},
      {json{{"type", "fact"}, {"title", "t"}, {"content", "c"}}, "confidence: required"},
  };
  for (const auto& [args, message] : bad)
    EXPECT_EQ(check_arguments(save, args), message) << args;
  EXPECT_EQ(check_arguments(schema_of("recall_knowledge"), json{{"query", "x"}, {"limit", "five"}}),
            "limit: must be an integer");
  EXPECT_EQ(check_arguments(schema_of("recall_knowledge"), json{{"query", "x"}, {"limit", 5.0}}), std::nullopt);
  EXPECT_EQ(check_arguments(schema_of("merge_branch"), json{{"branchId", 7}}), "branchId: must be a string");
  // Characters, not bytes: 200 two-byte letters fit a 200-character title.
  std::string umlauts;
  for (int i = 0; i < 200; ++i)
    umlauts += "\xC3\xA4";
  EXPECT_EQ(check_arguments(save, with("title", umlauts)), std::nullopt);
}

TEST(ToolRegistry, ListsFindsAndAnnouncesPerGrant) {
  registry r;
  std::vector<json> announced;
  r.on_list_changed([&](const json& n) { announced.push_back(n); });
  auto add = [&](const std::string& name, std::function<bool(const grant&)> visible) {
    r.add({{{"name", name}, {"inputSchema", {{"type", "object"}}}},
           "read",
           [](const grant&, const json&, tool_reply reply) { reply(json::object()); },
           std::move(visible)});
  };
  add("everyone", nullptr);
  add("acme_only", [](const grant& g) { return g.organization_id == "acme"; });
  const grant acme{"acme", {"read"}, "a"}, globex{"globex", {"read"}, "g"};
  EXPECT_EQ(r.list(acme).size(), 2u);
  EXPECT_EQ(r.list(globex).size(), 1u);
  EXPECT_TRUE(r.find("acme_only", acme));
  EXPECT_FALSE(r.find("acme_only", globex));  // another organisation's tool does not exist for it
  EXPECT_FALSE(r.find("nope", acme));
  add("everyone", nullptr);  // replaced, not doubled
  EXPECT_EQ(r.names(), (std::vector<std::string>{"everyone", "acme_only"}));
  EXPECT_TRUE(r.remove("acme_only"));
  EXPECT_FALSE(r.remove("acme_only"));
  ASSERT_EQ(announced.size(), 4u);  // three adds and one removal
  EXPECT_EQ(announced[0]["method"], "notifications/tools/list_changed");
  EXPECT_FALSE(announced[0].contains("id"));  // a notification
}

TEST(ToolRegistry, AGrantWithoutTheScopeIsRefusedUnlessAdmin) {
  EXPECT_TRUE((grant{"acme", {"read"}, "", {}}.allows("read")));
  EXPECT_FALSE((grant{"acme", {"read"}, "", {}}.allows("write")));
  EXPECT_TRUE((grant{"acme", {"admin"}, "", {}}.allows("write")));
}

}  // namespace
