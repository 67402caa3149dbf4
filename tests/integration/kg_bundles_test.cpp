// Knowledge bundles against engramd running as a child process: `engramctl kg apply` writes
// the shipped e-commerce catalog (tools/samples/kg/ecommerce-catalog) to engram-log as
// kg-bundle records, engramd applies them, and the generated tools are called over MCP/HTTP
// by bound and unbound tokens of two organisations: filters, paging, get by id, the seed's
// errors, the repairs beyond the seed (a JSON string for filters, a display name for a
// code), the workflow prompt, collisions, delete, a kill -9 during a 10,000-entity apply,
// and a replay of the log. Expected values come from the bundle's files (kg::load_bundle).
#include "kg/bundle.hpp"
#include "net/http.hpp"
#include "schemas/log_record.hpp"
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

namespace {

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

const std::string sample = ENGRAM_SOURCE_DIR "/tools/samples/kg/ecommerce-catalog";
const std::string bundle_name = "ecommerce-catalog-example";
const std::string shop = "kg-acme-shop-0123456789abcdef";        // acme, bound to the catalog
const std::string unbound = "kg-acme-unbound-0123456789abcdef";  // acme, bound to nothing
const std::string globex = "kg-globex-shop-0123456789abcdef";    // globex, bound to a bundle of the same name

class KgBundles : public ::testing::Test {
protected:
  KgBundles() : dir_("kg-bundles"), broker_(test::start_broker()) {}

  void SetUp() override {
    loaded_ = std::get<kg::bundle>(kg::load_bundle(sample));
    start();
  }
  void TearDown() override {
    if (engramd_ && engramd_->alive())
      EXPECT_EQ(engramd_->terminate(10s), 0) << test::tail(log());
  }

  static std::string tokens() {
    return "[{token: " + shop + ", organization_id: acme, scopes: [read], name: shop-agent, bundles: [" + bundle_name +
           ", outlet, parts]}, {token: " + unbound +
           ", organization_id: acme, scopes: [read, write], name: other-agent}, "
           "{token: " +
           globex + ", organization_id: globex, scopes: [read], name: g-agent, bundles: [" + bundle_name + "]}]";
  }
  /// Starts engramd on a port the kernel chooses; `again`: on the port of the one before it
  /// (a restart at the address engramctl and the readers already use, as a configured
  /// http.listen has it).
  void start(bool again = false) {
    std::vector<std::string> sets{"auth.tokens=" + tokens()};
    if (again)
      sets.push_back("http.listen=127.0.0.1:" + std::to_string(port_));
    engramd_ =
        std::make_unique<test::engramd>(test::engramd_args(broker_->bootstrap(), dir_.sub("store"), sets), log());
    const auto port = engramd_->port();
    ASSERT_TRUE(!again || port == port_) << "restarted on " << port << ", not " << port_ << "\n" << test::tail(log());
    port_ = port;
    // engramctl's configuration: this engramd's broker, store and port.
    std::ofstream(config()) << "kafka: {brokers: \"" << broker_->bootstrap() << "\"}\n"
                            << "http: {listen: \"127.0.0.1:" << port_ << "\"}\n"
                            << "storage: {path: \"" << dir_.sub("store") << "\"}\n"
                            << "embedder: {model_path: \"" << test::model_path << "\"}\n"
                            << "auth: {tokens: " << tokens() << "}\n";
    ASSERT_TRUE(test::wait_until([&] { return test::ready(port_); }, 60s)) << test::tail(log());
  }
  std::string log() const { return dir_.sub("engramd.log"); }
  std::string config() const { return dir_.sub("engram.yaml"); }

  /// engramctl kg <args> against this engramd; its exit status, output in `out`.
  int ctl(const std::string& args, std::string* out) {
    return test::run(std::string(ENGRAMCTL_PATH) + " kg " + args + " --config " + config() + " 2>&1", out);
  }
  void apply_sample() {
    std::string out;
    ASSERT_EQ(ctl("apply " + sample + " --organization acme", &out), 0) << out;
    EXPECT_NE(out.find("applied bundle " + bundle_name + " 1.0.0 to organisation acme: 302 entities of 3 types"),
              std::string::npos)
        << out;
  }
  json call(const std::string& tool, const json& args, const std::string& token = shop) {
    return test::mcp_call(port_, token, tool, args);
  }
  /// A JSON-RPC request's whole answer.
  json rpc(const std::string& token, const std::string& method, const json& params) {
    auto res = net::fetch("POST", "http://127.0.0.1:" + std::to_string(port_) + "/mcp",
                          json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}}.dump(),
                          {{"Authorization", "Bearer " + token},
                           {"Content-Type", "application/json"},
                           {"Accept", "application/json, text/event-stream"}});
    return json::parse(res.body, nullptr, false);
  }
  /// The entities of a type in the files that satisfy `pred`, by id.
  std::vector<std::string> expected(const std::string& type, const std::function<bool(const json&)>& pred) {
    std::vector<std::string> out;
    const auto& t = loaded_.types.at(type);
    for (const auto& e : t.entities)
      if (pred(e))
        out.push_back(e[t.id_field].get<std::string>());
    std::sort(out.begin(), out.end());
    return out;
  }
  static std::vector<std::string> ids_of(const json& items) {
    std::vector<std::string> out;
    for (const auto& x : items)
      out.push_back(x["code"].get<std::string>());
    return out;
  }

  test::temp_dir dir_;
  std::unique_ptr<ingest::embedded_broker> broker_;
  std::uint16_t port_ = 0;
  std::unique_ptr<test::engramd> engramd_;
  kg::bundle loaded_;
};

TEST_F(KgBundles, AppliedCatalogIsListedFilteredPagedAndGotByBoundTokensOnly) {
  EXPECT_FALSE(test::listed_tools(port_, shop).count("list_category"));
  apply_sample();
  const auto tools = test::listed_tools(port_, shop);
  for (const auto* t : {"list_category", "get_category", "list_category_ids", "list_brand", "get_brand",
                        "list_product_attribute", "get_product_attribute", "recall_knowledge"})
    EXPECT_TRUE(tools.count(t)) << t;
  EXPECT_FALSE(tools.count("list_brand_ids"));  // not in the brand type's x-tool-expose
  EXPECT_FALSE(test::listed_tools(port_, unbound).count("list_category"));
  EXPECT_FALSE(test::listed_tools(port_, globex).count("list_category"));  // bound to a name its organisation lacks
  EXPECT_NE(
      call("list_category", json::object(), unbound)["error"].get<std::string>().find("unknown tool: list_category"),
      std::string::npos);

  // Everything, in id order, with the derived brand_count.
  auto all = call("list_category", {{"limit", 500}});
  const auto categories = expected("category", [](const json&) { return true; });
  EXPECT_EQ(all["total"], categories.size());
  EXPECT_EQ(ids_of(all["items"]), categories);
  for (const auto& c : all["items"]) {
    const auto n = expected("brand", [&](const json& b) { return b["category"] == c["code"]; }).size();
    EXPECT_EQ(c["brand_count"], n) << c["code"];
  }
  // One filter, two filters, paging, ids only.
  auto premium_footwear = [](const json& b) { return b["category"] == "footwear" && b["tier"] == "premium"; };
  auto r = call("list_brand", {{"filters", {{"category", "footwear"}}}});
  EXPECT_EQ(ids_of(r["items"]), expected("brand", [](const json& b) { return b["category"] == "footwear"; }));
  r = call("list_brand", {{"filters", {{"category", "footwear"}, {"tier", "premium"}}}});
  EXPECT_EQ(ids_of(r["items"]), expected("brand", premium_footwear));
  EXPECT_EQ(r["total"], expected("brand", premium_footwear).size());
  const auto brands = expected("brand", [](const json&) { return true; });
  r = call("list_brand", {{"limit", 7}, {"offset", 14}});
  EXPECT_EQ(r["total"], brands.size());
  EXPECT_EQ(ids_of(r["items"]), std::vector<std::string>(brands.begin() + 14, brands.begin() + 21));
  r = call("list_category_ids", {{"filters", {{"tier", "secondary"}}}});
  EXPECT_EQ(r["ids"].get<std::vector<std::string>>(),
            expected("category", [](const json& c) { return c["tier"] == "secondary"; }));
  // Get by id: the entity, or null.
  auto brand = call("get_brand", {{"id", "north-aurora"}});
  EXPECT_EQ(brand["name"], "North Aurora");
  EXPECT_EQ(brand["category"], "footwear");
  auto none = net::fetch("POST", "http://127.0.0.1:" + std::to_string(port_) + "/mcp",
                         json{{"jsonrpc", "2.0"},
                              {"id", 1},
                              {"method", "tools/call"},
                              {"params", {{"name", "get_brand"}, {"arguments", {{"id", "brand-xyz"}}}}}}
                             .dump(),
                         {{"Authorization", "Bearer " + shop},
                          {"Content-Type", "application/json"},
                          {"Accept", "application/json, text/event-stream"}});
  auto nj = json::parse(none.body);
  EXPECT_EQ(nj["result"]["isError"], false) << none.body;
  EXPECT_EQ(nj["result"]["content"][0]["text"], "null") << none.body;
}

TEST_F(KgBundles, TheSeedsErrorsAndTheRepairsBeyondIt) {
  apply_sample();
  for (const json limit : {json(0), json(501), json(-3), json(2.5)})
    EXPECT_EQ(call("list_brand", {{"limit", limit}})["error"], "[INVALID_INPUT] limit must be between 1 and 500")
        << limit;
  EXPECT_EQ(call("list_brand", {{"filters", {{"name", "North Aurora"}}}})["error"],
            "[INVALID_INPUT] unknown filter 'name' for list_brand; allowed: category, code, country, tier");
  EXPECT_EQ(call("list_brand", {{"filters", {{"tier", "luxury"}}}})["error"],
            "filters.tier: must be one of premium, mid, value");
  EXPECT_EQ(call("get_brand", json::object())["error"], "id: required");
  // An LLM's JSON-encoded string for filters is read as the object it encodes.
  auto r = call("list_brand", {{"filters", R"({"category": "footwear"})"}});
  EXPECT_EQ(r["total"], expected("brand", [](const json& b) { return b["category"] == "footwear"; }).size()) << r;
  EXPECT_EQ(call("list_brand", {{"filters", "category=footwear"}})["error"],
            "[INVALID_INPUT] filters must be an object, e.g. {\"category\": \"...\"}");
  // A display name where a code belongs: no results, and the code that was meant.
  r = call("list_brand", {{"filters", {{"category", "Footwear"}}}});
  EXPECT_EQ(r["total"], 0);
  EXPECT_EQ(
      r["note"],
      "filters.category: 'Footwear' is a display name, not a code; the category it names has the code 'footwear'");
  r = call("list_category", {{"filters", {{"code", "Bags and luggage"}}}});
  EXPECT_EQ(
      r["note"],
      "filters.code: 'Bags and luggage' is a display name, not a code; the category it names has the code 'bags'");
  EXPECT_FALSE(call("list_brand", {{"filters", {{"category", "spaceships"}}}}).contains("note"));
}

TEST_F(KgBundles, InvalidBundlesAreRefusedWholeBeforeAnythingIsWritten) {
  const auto copy = dir_.sub("bad");
  std::filesystem::copy(sample, copy, std::filesystem::copy_options::recursive);
  // A brand whose category does not exist, an imported derived value, an unknown annotation,
  // an unsupported keyword.
  {
    std::ofstream(copy + "/entities/brands.yaml", std::ios::app)
        << "- code: \"ghost-brand\"\n  name: \"Ghost\"\n  category: \"spaceships\"\n  tier: \"mid\"\n";
    std::ofstream(copy + "/entities/categories.yaml", std::ios::app)
        << "- code: \"toys\"\n  name: \"Toys\"\n  tier: \"secondary\"\n  brand_count: 4\n";
    auto s = json::parse(std::ifstream(copy + "/schemas/product_attribute.schema.json"));
    s["x-owner"] = "team-a";
    s["unevaluatedProperties"] = false;
    std::ofstream(copy + "/schemas/product_attribute.schema.json") << s.dump(2);
  }
  const auto log_before = test::topic_size(broker_->bootstrap(), "engram-log");
  std::string out;
  EXPECT_EQ(ctl("apply " + copy + " --organization acme", &out), 1);
  for (const auto* says : {"spaceships", "brand_count", "x-owner", "unevaluatedProperties", "nothing was written"})
    EXPECT_NE(out.find(says), std::string::npos) << says << "\n" << out;
  EXPECT_EQ(test::topic_size(broker_->bootstrap(), "engram-log"), log_before);
  EXPECT_FALSE(test::listed_tools(port_, shop).count("list_brand"));
}

TEST_F(KgBundles, ToolNamesAreOneBundlesInATenantAndTenantsAreApart) {
  apply_sample();
  // Another bundle of acme exposing list_brand: refused by engramctl before writing...
  const auto outlet = dir_.sub("outlet");
  std::filesystem::create_directories(outlet + "/schemas");
  std::filesystem::create_directories(outlet + "/entities");
  std::ofstream(outlet + "/manifest.yaml") << "name: outlet\nversion: 0.1.0\nschemas: [schemas/brand.schema.json]\n"
                                              "entities: [{type: brand, file: entities/brands.yaml}]\n";
  std::ofstream(outlet + "/schemas/brand.schema.json")
      << R"({"type": "object", "x-id-field": "code", "properties": {"code": {"type": "string"}}})";
  std::ofstream(outlet + "/entities/brands.yaml") << "- code: \"x\"\n";
  std::string out;
  EXPECT_EQ(ctl("apply " + outlet + " --organization acme", &out), 1);
  EXPECT_NE(out.find("tool_name_collision_in_tenant: list_brand is already exposed by bundle '" + bundle_name + "'"),
            std::string::npos)
      << out;
  // ... and by the store when a record gets there anyway (written straight to engram-log).
  schemas::kg_command c;
  c.event_id = "kg-direct-0";
  c.organization_id = "acme";
  c.issued_at = "2026-03-05T10:00:00.000Z";
  c.issued_at_ms = 1772704800000;
  c.bundle = "outlet";
  c.apply_id = "direct";
  c.version = "0.1.0";
  c.types = {{"brand", "code", "", {"list", "get"}, {}, {}, R"({"type":"object"})"}};
  c.items = {{"brand", "x", R"({"code":"x"})"}};
  auto rec = schemas::encode(schemas::log_payload{c});
  test::produce_raw(broker_->bootstrap(), "engram-log", {{rec.key, rec.value}}, {{schemas::kind_header, rec.kind}});
  json status;
  ASSERT_TRUE(test::wait_until(
      [&] {
        auto res = net::fetch("GET", "http://127.0.0.1:" + std::to_string(port_) + "/v1/kg/bundles?name=outlet", {},
                              {{"Authorization", "Bearer " + shop}});
        status = json::parse(res.body, nullptr, false);
        return status.is_object() && !status["bundles"].empty() &&
               status["bundles"][0]["lastApply"]["state"] == "rejected";
      },
      30s))
      << status;
  EXPECT_EQ(status["bundles"][0]["visible"], false);
  EXPECT_EQ(status["bundles"][0]["lastApply"]["error"],
            "tool_name_collision_in_tenant: list_brand is already exposed by bundle '" + bundle_name +
                "' of this organisation");
  EXPECT_EQ(call("list_brand", {{"limit", 500}})["total"], 60);  // the catalog's, untouched
  // Another organisation may expose the same names: its own data, its own tokens.
  const auto g = dir_.sub("g");
  std::filesystem::copy(outlet, g, std::filesystem::copy_options::recursive);
  std::ofstream(g + "/manifest.yaml") << "name: " + bundle_name +
                                             "\nversion: 9.0.0\nschemas: [schemas/brand.schema.json]\n"
                                             "entities: [{type: brand, file: entities/brands.yaml}]\n";
  ASSERT_EQ(ctl("apply " + g + " --organization globex", &out), 0) << out;
  EXPECT_EQ(call("list_brand", json::object(), globex)["total"], 1);
  EXPECT_TRUE(call("get_brand", {{"id", "north-aurora"}}, globex).is_null());  // acme's brand, not globex's
  EXPECT_EQ(call("list_brand", {{"limit", 500}})["total"], 60);
  EXPECT_FALSE(test::listed_tools(port_, globex).count("list_category"));
  // Delete: the tools go, for every token.
  ASSERT_EQ(ctl("delete " + bundle_name + " --organization acme", &out), 0) << out;
  EXPECT_FALSE(test::listed_tools(port_, shop).count("list_brand"));
  EXPECT_TRUE(test::listed_tools(port_, globex).count("list_brand"));
  EXPECT_EQ(ctl("delete " + bundle_name + " --organization acme", &out), 1);
  EXPECT_NE(out.find("has no bundle"), std::string::npos) << out;
  ASSERT_EQ(ctl("list --organization globex --token " + globex, &out), 0) << out;
  EXPECT_NE(out.find(bundle_name + " 9.0.0: 1 entities (brand)"), std::string::npos) << out;
}

TEST_F(KgBundles, TheWorkflowPromptIsServedToBoundTokens) {
  apply_sample();
  auto list = rpc(shop, "prompts/list", json::object());
  ASSERT_EQ(list["result"]["prompts"].size(), 1u) << list;
  EXPECT_EQ(list["result"]["prompts"][0]["name"], "kg_workflow_" + bundle_name);
  EXPECT_TRUE(rpc(unbound, "prompts/list", json::object())["result"]["prompts"].empty());
  auto got = rpc(shop, "prompts/get", {{"name", "kg_workflow_" + bundle_name}});
  const auto text = got["result"]["messages"][0]["content"]["text"].get<std::string>();
  for (const auto* says :
       {"You are bound to the \"ecommerce-catalog-example\" knowledge graph", "MANDATORY workflow",
        "list_brand(filters?, limit?, offset?)", "get_category(id)", "NEVER invent", "not a JSON-encoded string"})
    EXPECT_NE(text.find(says), std::string::npos) << says << "\n" << text;
  EXPECT_EQ(rpc(unbound, "prompts/get", {{"name", "kg_workflow_" + bundle_name}})["error"]["code"], -32602);
}

TEST_F(KgBundles, AnOpenClientIsToldWhenItsToolListChanges) {
  // The official SDK client, connected before the bundle exists, on its GET event stream.
  std::string sdk_out;
  int sdk_status = -1;
  std::thread sdk([&] {
    sdk_status = test::run("ENGRAM_NODE_MODULES=" ENGRAM_SOURCE_DIR "/.cache/node/node_modules node " ENGRAM_SOURCE_DIR
                           "/tests/mcp/sdk_list_changed.mjs http://127.0.0.1:" +
                               std::to_string(port_) + "/mcp " + shop + " list_category",
                           &sdk_out);
  });
  const bool streaming = test::wait_until([&] { return test::metric(port_, "engram_mcp_event_streams") >= 1; }, 60s);
  if (streaming)
    apply_sample();
  sdk.join();
  ASSERT_TRUE(streaming) << sdk_out << test::tail(log());
  EXPECT_EQ(sdk_status, 0) << sdk_out;
  auto j = json::parse(sdk_out.substr(sdk_out.rfind('{')), nullptr, false);
  EXPECT_EQ(j["listed"], true) << sdk_out;
  EXPECT_GE(j["notified"].get<int>(), 1) << sdk_out;
  // Once the client has gone, its stream is forgotten.
  EXPECT_TRUE(test::wait_until([&] { return test::metric(port_, "engram_mcp_event_streams") == 0; }, 30s));
}

TEST_F(KgBundles, KillDuringALargeApplyShowsTheBundleWholeOnceAndAReplayRebuildsIt) {
  // 10,000 entities: several records of engram-log.
  const auto big = dir_.sub("big");
  std::filesystem::create_directories(big + "/schemas");
  std::filesystem::create_directories(big + "/entities");
  std::ofstream(big + "/manifest.yaml") << "name: parts\nversion: 1.0.0\nschemas: [schemas/part.schema.json]\n"
                                           "entities: [{type: part, file: entities/parts.json}]\n";
  std::ofstream(big + "/schemas/part.schema.json")
      << R"({"type": "object", "x-id-field": "code", "x-tool-expose": ["list", "get", "list_ids"], "required": ["code"],
            "properties": {"code": {"type": "string"},
            "family": {"type": "string", "x-index": true}, "text": {"type": "string"}}})";
  json parts = json::array();
  for (int i = 0; i < 10000; ++i)
    parts.push_back({{"code", "p-" + std::to_string(100000 + i)},
                     {"family", "f" + std::to_string(i % 7)},
                     {"text", std::string(120, static_cast<char>('a' + i % 26))}});
  std::ofstream(big + "/entities/parts.json") << parts.dump();
  // A reader polls the total all along: it must only ever see nothing or everything.
  std::atomic<bool> stop{false};
  std::set<long> totals_seen;
  std::mutex seen_mutex;
  std::thread reader([&, port = port_] {  // until it has seen the bundle after the apply returned
    for (bool last = false; !last;) {
      last = stop;
      auto r = test::mcp_call(port, shop, "list_part_ids", {{"limit", 1}});
      std::lock_guard lock(seen_mutex);
      totals_seen.insert(r.is_object() && r.contains("total") ? r["total"].get<long>() : -1);
    }
  });
  const auto log_before = test::topic_size(broker_->bootstrap(), "engram-log");
  // engramctl waits for the apply; engramd is killed once the records are on the log and
  // before the last is applied (the records' count is observed, not timed).
  auto cmd =
      std::string(ENGRAMCTL_PATH) + " kg apply " + big + " --organization acme --timeout 120 --config " + config();
  std::string ctl_out;
  int ctl_status = -1;
  std::thread apply([&] { ctl_status = test::run(cmd, &ctl_out); });
  test::topic_watch watch(broker_->bootstrap(), "engram-log");
  ASSERT_TRUE(test::wait_until([&] { return watch.size() > log_before; }, 60s, 1ms));
  engramd_->kill9();
  const auto records = watch.size() - log_before;
  start(/*again=*/true);
  apply.join();
  stop = true;
  reader.join();
  EXPECT_EQ(ctl_status, 0) << ctl_out;
  EXPECT_GE(test::topic_size(broker_->bootstrap(), "engram-log") - log_before, 3)
      << "a 10,000-entity bundle in one record?";
  EXPECT_GE(records, 1);
  EXPECT_TRUE(totals_seen.count(10000));
  for (auto t : totals_seen)
    EXPECT_TRUE(t == -1 || t == 10000) << "a reader saw " << t << " parts";
  auto r = call("list_part", {{"filters", {{"family", "f3"}}}, {"limit", 500}});
  EXPECT_EQ(r["total"], 1429);  // i % 7 == 3 for i < 10000
  EXPECT_EQ(call("list_part_ids", {{"limit", 1}})["total"], 10000);
  // Replay of engram-log into a new store: the same digest as the live one.
  ASSERT_EQ(engramd_->terminate(10s), 0) << test::tail(log());
  const auto live = test::digest_of(dir_.sub("store"));
  std::string out;
  ASSERT_EQ(test::run(std::string(ENGRAMCTL_PATH) + " replay --config " + config() + " --into " + dir_.sub("replayed") +
                          " 2>&1",
                      &out),
            0)
      << out;
  EXPECT_NE(out.find(live), std::string::npos) << "live " << live << "\n" << out;
  engramd_.reset();
}

}  // namespace
