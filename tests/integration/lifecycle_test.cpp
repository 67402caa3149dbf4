// Knowledge over time, against the in-process engine with a manual clock (months of decay
// in milliseconds) and the timers driven by hand: branches, decay, validation, expiry,
// review, reminders exactly once (after a crash between send and record, and in a replay),
// and a replayed store's digest equal to the live one's, branches included.

#include "actors/engine/engine.hpp"
#include "actors/ingest/reminders.hpp"
#include "knowledge/entry.hpp"
#include "knowledge/markers.hpp"
#include "net/http.hpp"
#include "schemas/knowledge.hpp"
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

namespace {

const std::string token_a = "acme-agent-a-0123456789abcdef";
const std::string token_b = "acme-agent-b-0123456789abcdef";
const std::string globex = "globex-token-0123456789abcdef";

std::int64_t at(const char* rfc3339) { return *schemas::parse_rfc3339(rfc3339); }

constexpr std::int64_t day = 86400000;

class LifecycleTest : public ::testing::Test {
protected:
  LifecycleTest()
      : dir_("lifecycle"),
        broker_(test::start_broker()),
        clock_(std::make_shared<services::manual_clock>(at("2026-03-10T09:00:00Z"))) {}

  void SetUp() override { start("store"); }

  /// `replay`: engramctl replay's mode (engram-log -> store only; no sequencer, MCP or timers).
  void start(const std::string& store, const std::string& group = "engram", bool replay = false) {
    auto c = test::test_config(broker_->bootstrap(), dir_.sub(store));
    c.kafka.group_id = group;
    c.auth.tokens = {{token_a, "acme", {"read", "write"}, "agent-a"},
                     {token_b, "acme", {"read", "write"}, "agent-b"},
                     {globex, "globex", {"read", "write"}, "agent-g"}};
    engine::engine_options o;
    o.clock = clock_;
    o.timers_thread = false;
    o.replay = replay;
    auto started = engine::engine::start(c, std::move(o));
    ASSERT_TRUE(started) << started.error();
    engine_ = std::move(*started);
    ASSERT_TRUE(test::wait_until([&] { return engine_->status().ready(); }, 60s));
  }

  /// A tool's structured answer; isError answers come back as {"error": text}.
  json call(const std::string& token, const std::string& tool, const json& args) {
    auto r = net::fetch(
        "POST", "http://127.0.0.1:" + std::to_string(engine_->http_port()) + "/mcp",
        json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", args}}}}
            .dump(),
        {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + token}}, 30s);
    EXPECT_EQ(r.status, 200) << r.body;
    auto j = json::parse(r.body, nullptr, false);
    if (j.is_discarded() || !j.contains("result"))
      return {{"error", r.body}};
    if (j["result"].value("isError", false))
      return {{"error", j["result"]["content"][0]["text"]}};
    return j["result"]["structuredContent"];
  }

  json save(const std::string& token, const std::string& type, const std::string& text, double confidence,
            json extra = json::object()) {
    extra["type"] = type;
    extra["title"] = text.substr(0, 80);
    extra["content"] = text;
    extra["confidence"] = confidence;
    return call(token, "save_knowledge", extra);
  }

  std::vector<std::string> recall_ids(const std::string& token, const std::string& query, json extra = json::object()) {
    return test::recall_ids(engine_->http_port(), token, query, std::move(extra));
  }

  static bool has(const std::vector<std::string>& ids, const json& id) { return test::has_id(ids, id); }

  test::temp_dir dir_;
  std::unique_ptr<ingest::embedded_broker> broker_;
  std::shared_ptr<services::manual_clock> clock_;
  std::unique_ptr<engine::engine> engine_;
};

TEST(Decay, HalvesEveryHalfLifeAndEventsNeverDecay) {
  EXPECT_DOUBLE_EQ(schemas::effective_confidence(0.8, 0, 180 * day, 180), 0.4);
  EXPECT_DOUBLE_EQ(schemas::effective_confidence(0.8, 0, 360 * day, 180), 0.2);
  EXPECT_DOUBLE_EQ(schemas::effective_confidence(0.8, 0, 14 * day, 14), 0.4);
  EXPECT_NEAR(schemas::effective_confidence(0.8, 0, 7 * day, 14), 0.8 / std::sqrt(2.0), 1e-12);
  EXPECT_DOUBLE_EQ(schemas::effective_confidence(0.8, 0, 3650 * day, 0), 0.8);       // event: none
  EXPECT_DOUBLE_EQ(schemas::effective_confidence(0.8, 10 * day, 5 * day, 30), 0.8);  // validated "later": no growth
}

TEST(Decay, TheDefaultHalfLivesPerType) {
  const config::engram_config defaults;
  const std::map<schemas::entry_type, double> days{
      {schemas::entry_type::fact, 180},      {schemas::entry_type::decision, 730},
      {schemas::entry_type::event, 0},       {schemas::entry_type::preference, 90},
      {schemas::entry_type::goal, 30},       {schemas::entry_type::relationship, 120},
      {schemas::entry_type::action_item, 14}};
  for (auto type : schemas::all_entry_types) {
    const double h = defaults.decay.half_life_days[static_cast<std::size_t>(type)];
    EXPECT_EQ(h, days.at(type)) << schemas::to_string(type);
    // After 30 days: fast types have lost much, slow ones little, events nothing.
    const double left = schemas::effective_confidence(1.0, 0, 30 * day, h);
    EXPECT_DOUBLE_EQ(left, h == 0 ? 1.0 : std::exp2(-30.0 / h)) << schemas::to_string(type);
  }
  EXPECT_DOUBLE_EQ(defaults.decay.hide_below, 0.1);
  EXPECT_LT(schemas::effective_confidence(1.0, 0, 30 * day, 14), schemas::effective_confidence(1.0, 0, 30 * day, 30));
  EXPECT_LT(schemas::effective_confidence(1.0, 0, 30 * day, 90), schemas::effective_confidence(1.0, 0, 30 * day, 730));
}

TEST_F(LifecycleTest, BranchesSeeTheGraphAndTheirOwnSavesUntilMergedOrDiscarded) {
  auto main_entry = save(token_a, "fact", "Initech's support plan is Gold.", 0.9);
  ASSERT_FALSE(main_entry.contains("error")) << main_entry;
  auto a = save(token_a, "fact", "Contoso wants the proposal in German.", 0.8, {{"branchId", "intent-1"}});
  auto b = save(token_a, "preference", "Contoso prefers invoices by post.", 0.8, {{"branchId", "intent-2"}});
  auto dup = save(token_a, "fact", "Initech's support plan is Gold.", 0.8, {{"branchId", "intent-1"}});
  ASSERT_EQ(a.value("branchId", ""), "intent-1") << a;
  EXPECT_EQ(a["outcome"], "created");

  // Each branch: the graph plus its own saves; never the sibling's; the graph sees neither.
  auto in1 = recall_ids(token_a, "Contoso proposal invoices", {{"branchId", "intent-1"}});
  EXPECT_TRUE(has(in1, a["id"]));
  EXPECT_FALSE(has(in1, b["id"]));
  auto in2 = recall_ids(token_a, "Contoso proposal invoices", {{"branchId", "intent-2"}});
  EXPECT_TRUE(has(in2, b["id"]));
  EXPECT_FALSE(has(in2, a["id"]));
  auto outside = recall_ids(token_a, "Contoso proposal invoices");
  EXPECT_FALSE(has(outside, a["id"]));
  EXPECT_FALSE(has(outside, b["id"]));
  EXPECT_TRUE(has(recall_ids(token_a, "Initech support plan", {{"branchId", "intent-2"}}), main_entry["id"]));

  // A branchId belongs to its organisation.
  EXPECT_TRUE(call(globex, "merge_branch", {{"branchId", "intent-1"}}).contains("error"));
  EXPECT_FALSE(has(recall_ids(globex, "Contoso proposal", {{"branchId", "intent-1"}}), a["id"]));

  // Merge: the saves in save order through dedup and contradiction.
  auto merged = call(token_a, "merge_branch", {{"branchId", "intent-1"}});
  ASSERT_FALSE(merged.contains("error")) << merged;
  ASSERT_EQ(merged["merged"].size(), 2u) << merged;
  EXPECT_EQ(merged["merged"][0]["outcome"], "created");
  EXPECT_EQ(merged["merged"][0]["id"], a["id"]);
  EXPECT_EQ(merged["merged"][1]["outcome"], "merged");  // the same statement as the graph's
  EXPECT_EQ(merged["merged"][1]["id"], main_entry["id"]);
  EXPECT_EQ(merged["merged"][1]["saveId"].get<std::string>().rfind("save-", 0), 0u) << dup;
  EXPECT_TRUE(has(recall_ids(token_a, "Contoso proposal German"), a["id"]));
  EXPECT_FALSE(call(token_a, "get_knowledge", {{"id", a["id"]}}).contains("error"));
  EXPECT_TRUE(call(token_a, "merge_branch", {{"branchId", "intent-1"}}).contains("error"));  // empty now

  // Discard: nothing of it reaches the graph.
  auto discarded = call(token_a, "discard_branch", {{"branchId", "intent-2"}});
  EXPECT_EQ(discarded["discarded"], 1) << discarded;
  EXPECT_FALSE(has(recall_ids(token_a, "Contoso invoices post", {{"branchId", "intent-2"}}), b["id"]));
  EXPECT_TRUE(call(token_a, "get_knowledge", {{"id", b["id"]}}).contains("error"));

  // An abandoned branch expires after branches.ttl (24 h), then the timers drop it.
  auto c = save(token_a, "fact", "Contoso's legal team is in Zurich.", 0.8, {{"branchId", "intent-3"}});
  EXPECT_TRUE(has(recall_ids(token_a, "Contoso legal team Zurich", {{"branchId", "intent-3"}}), c["id"]));
  clock_->advance(std::chrono::hours(25));
  EXPECT_FALSE(has(recall_ids(token_a, "Contoso legal team Zurich", {{"branchId", "intent-3"}}), c["id"]));
  EXPECT_TRUE(call(token_a, "merge_branch", {{"branchId", "intent-3"}}).contains("error"));
  auto round = engine_->tick_timers();
  EXPECT_EQ(round.problem, "");
  EXPECT_EQ(round.dropped_saves, 1u);
  std::int64_t last = 0;
  EXPECT_TRUE(engine_->store().branch_saves("acme", "intent-3", &last).empty());
}

TEST_F(LifecycleTest, ConfidenceDecaysByTypeValidationRestoresItAndFadedEntriesLeaveRecall) {
  auto goal = save(token_a, "goal", "Northwind aims to close the Q2 expansion deal.", 0.8);
  auto event = save(token_a, "event", "Northwind signed the pilot agreement in Berlin.", 0.8);
  ASSERT_FALSE(goal.contains("error")) << goal;
  auto get = [&](const json& id) { return call(token_a, "get_knowledge", {{"id", id}})["entry"]; };
  EXPECT_DOUBLE_EQ(get(goal["id"])["effectiveConfidence"], 0.8);

  clock_->advance(std::chrono::hours(24 * 30));  // one goal half-life
  EXPECT_NEAR(get(goal["id"])["effectiveConfidence"].get<double>(), 0.4, 1e-6);
  EXPECT_DOUBLE_EQ(get(event["id"])["effectiveConfidence"], 0.8);  // events do not decay

  auto v = call(token_a, "validate_knowledge", {{"id", goal["id"]}, {"outcome", "approved"}});
  ASSERT_FALSE(v.contains("error")) << v;
  EXPECT_NEAR(v["confidence"].get<double>(), 0.9, 1e-9);           // half way to 1
  EXPECT_NEAR(v["effectiveConfidence"].get<double>(), 0.9, 1e-9);  // decay restarts now
  EXPECT_EQ(v["lastValidatedAt"], "2026-04-09T09:00:00.000Z");

  auto r = call(token_a, "validate_knowledge", {{"id", event["id"]}, {"outcome", "rejected"}});
  EXPECT_NEAR(r["confidence"].get<double>(), 0.4, 1e-9);
  EXPECT_TRUE(call(globex, "validate_knowledge", {{"id", goal["id"]}, {"outcome", "approved"}}).contains("error"));
  EXPECT_TRUE(call(token_a, "validate_knowledge", {{"id", goal["id"]}, {"outcome", "maybe"}}).contains("error"));

  // Four more half-lives: 0.9 / 16 < decay.hide_below (0.1): out of recall for a query that
  // matches it weakly, still there for one that asks for exactly it (words and meaning
  // agree), readable by id.
  const std::string weak = "what is on the books for the second quarter deal pipeline";
  const std::string specific = "Northwind aims to close the Q2 expansion deal";
  EXPECT_TRUE(has(recall_ids(token_a, weak), goal["id"]));
  EXPECT_TRUE(has(recall_ids(token_a, specific), goal["id"]));
  clock_->advance(std::chrono::hours(24 * 120));
  EXPECT_FALSE(has(recall_ids(token_a, weak), goal["id"]));
  EXPECT_TRUE(has(recall_ids(token_a, specific), goal["id"]));
  EXPECT_NEAR(get(goal["id"])["effectiveConfidence"].get<double>(), 0.9 / 16, 1e-6);
}

TEST_F(LifecycleTest, ExpiredEntriesVanishAtOnceAndTheTimersRemoveThemWithTheirIndexes) {
  auto e = save(token_a, "fact", "The Fabrikam discount code SPRING26 is valid.", 0.9, {{"expiresInDays", 2}});
  auto keep = save(token_a, "fact", "Fabrikam pays by bank transfer.", 0.9);
  ASSERT_FALSE(e.contains("error")) << e;
  const auto& store = engine_->store();
  auto raw = store.get_entry("acme", e["id"]);
  ASSERT_TRUE(raw);
  const auto sig = knowledge::entry_json(*raw)["signature"];
  const auto title_key = sig["key"].get<std::string>();
  const auto word_text = sig["words"].get<std::string>();
  const auto words = schemas::split_words(word_text);
  const std::vector<std::string> terms(words.begin(), words.end());
  auto text_hits = [&] {
    std::set<std::string> ids;
    for (const auto& [id, score] : store.search_text("acme", terms, 10))
      ids.insert(id);
    return ids;
  };
  ASSERT_TRUE(text_hits().count(e["id"]));
  knowledge::stored_entry stored;
  ASSERT_FALSE(knowledge::decode(*raw, stored));
  const auto values = knowledge::values_key(stored.positive, stored.title, stored.sig);
  ASSERT_EQ(store.entries_with_title("acme", schemas::entry_type::fact, title_key, values, 10),
            std::vector<std::string>{e["id"].get<std::string>()});
  auto vector_left = [&] {
    bool left = false;
    (void)store.scan_vectors("acme", 0, [&](std::uint64_t, std::string_view id, const schemas::vector8&) {
      left |= id == e["id"].get<std::string>();
      return true;
    });
    return left;
  };
  ASSERT_TRUE(vector_left());
  EXPECT_TRUE(has(recall_ids(token_a, "Fabrikam discount code"), e["id"]));
  EXPECT_EQ(engine_->tick_timers().expire_commands, 0u);  // nothing expired yet

  clock_->advance(std::chrono::hours(49));
  EXPECT_FALSE(has(recall_ids(token_a, "Fabrikam discount code"), e["id"]));  // hidden at once
  auto round = engine_->tick_timers();
  EXPECT_EQ(round.problem, "");
  EXPECT_EQ(round.removed, 1u);
  raw = store.get_entry("acme", e["id"]);
  ASSERT_FALSE(raw);
  EXPECT_EQ(raw.error(), storage::errc::not_found);
  EXPECT_FALSE(text_hits().count(e["id"]));
  EXPECT_TRUE(store.entries_with_title("acme", schemas::entry_type::fact, title_key, values, 10).empty());
  EXPECT_FALSE(vector_left());
  EXPECT_FALSE(store.has_expired("acme", clock_->now_ms(), 24 * 3600 * 1000));
  EXPECT_FALSE(call(token_a, "get_knowledge", {{"id", keep["id"]}}).contains("error"));
  EXPECT_TRUE(call(token_a, "get_knowledge", {{"id", e["id"]}}).contains("error"));
  EXPECT_EQ(store.stats()[0].entries, 1u);
  // /metrics counts the command the store applied and what the timers did.
  const auto metrics = engine_->metrics().render();
  EXPECT_NE(metrics.find("engram_commands_total{op=\"expire\"} 1\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("engram_timer_actions_total{action=\"expired_entries\"} 1\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("engram_timer_actions_total{action=\"reminders_sent\"} 0\n"), std::string::npos) << metrics;
}

TEST_F(LifecycleTest, ContradictionsWaitForReviewAndResolveAsAsked) {
  auto older = save(token_a, "fact", "The per-unit price for Globex is $42.", 0.8);
  auto newer = save(token_b, "fact", "The per-unit price for Globex is $45.", 0.8);
  ASSERT_EQ(newer["contradictions"], json::array({older["id"]})) << newer;
  auto q = call(token_a, "list_review_queue", json::object());
  ASSERT_EQ(q["items"].size(), 1u) << q;
  EXPECT_EQ(q["items"][0]["entry"]["id"], older["id"]);
  EXPECT_EQ(q["items"][0]["entry"]["status"], "flagged");
  EXPECT_EQ(q["items"][0]["contradictedBy"]["id"], newer["id"]);
  EXPECT_TRUE(call(globex, "list_review_queue", json::object())["items"].empty());
  EXPECT_TRUE(call(globex, "resolve_review", {{"id", older["id"]}, {"keep", "older"}}).contains("error"));
  EXPECT_TRUE(call(token_a, "resolve_review", {{"id", newer["id"]}, {"keep", "older"}}).contains("error"));

  auto r = call(token_a, "resolve_review", {{"id", older["id"]}, {"keep", "older"}});
  ASSERT_FALSE(r.contains("error")) << r;
  auto get = [&](const json& id) { return call(token_a, "get_knowledge", {{"id", id}})["entry"]; };
  EXPECT_EQ(get(older["id"])["status"], "active");
  EXPECT_EQ(get(newer["id"])["status"], "superseded");
  EXPECT_TRUE(call(token_a, "list_review_queue", json::object())["items"].empty());
  EXPECT_TRUE(call(token_a, "resolve_review", {{"id", older["id"]}, {"keep", "newer"}}).contains("error"));

  auto x = save(token_a, "fact", "The per-unit price for Contoso is $10.", 0.8);
  auto y = save(token_b, "fact", "The per-unit price for Contoso is $12.", 0.8);
  ASSERT_EQ(y["contradictions"].size(), 1u) << y;
  ASSERT_FALSE(call(token_a, "resolve_review", {{"id", x["id"]}, {"keep", "newer"}}).contains("error"));
  EXPECT_EQ(get(x["id"])["status"], "superseded");
  EXPECT_EQ(get(x["id"])["supersededBy"], y["id"]);
  EXPECT_EQ(get(y["id"])["status"], "active");
}

TEST_F(LifecycleTest, OneReminderPerActionItemAcrossACrashBetweenSendAndRecordAndAReplay) {
  auto item = save(token_a, "action_item", "Send Contoso the updated proposal by March 20, 2026.", 0.9);
  ASSERT_FALSE(item.contains("error")) << item;
  auto entry = call(token_a, "get_knowledge", {{"id", item["id"]}})["entry"];
  ASSERT_EQ(entry["dueAt"], "2026-03-20") << entry;
  auto other = save(token_a, "action_item", "Book the Fabrikam workshop room by March 25, 2026.", 0.9);
  auto same_day = save(token_a, "action_item", "Call Northwind about the invoice by March 20, 2026.", 0.9);

  clock_->set(at("2026-03-18T12:00:00Z"));  // more than reminders.lead (24 h) before
  EXPECT_EQ(engine_->tick_timers().reminders, 0u);
  clock_->set(at("2026-03-19T00:30:00Z"));
  auto round = engine_->tick_timers();
  EXPECT_EQ(round.problem, "");
  EXPECT_EQ(round.reminders, 2u);  // both items due on March 20
  EXPECT_EQ(engine_->tick_timers().reminders, 0u);

  // A crash between send and record: the reminder of `other` is on the topic, unrecorded.
  auto channel = ingest::reminder_channel::create(broker_->bootstrap(), {}, "engram-reminders");
  ASSERT_TRUE(channel) << channel.error();
  auto delivered = (*channel)->send(
      "acme", "rem-" + other["id"].get<std::string>(),
      json{
          {"reminderId", "rem-" + other["id"].get<std::string>()}, {"organizationId", "acme"}, {"entryId", other["id"]}}
          .dump());
  ASSERT_TRUE(delivered) << delivered.error();
  engine_.reset();  // the engine that sent it is gone
  start("store");
  clock_->set(at("2026-03-24T12:00:00Z"));
  round = engine_->tick_timers();
  EXPECT_EQ(round.problem, "");
  EXPECT_EQ(round.recovered, 1u);
  EXPECT_EQ(round.reminders, 0u);  // recorded, not sent again
  EXPECT_EQ(engine_->tick_timers().reminders, 0u);
  EXPECT_EQ(test::topic_size(broker_->bootstrap(), "engram-reminders"), 3);
  const auto live = engine_->store().digest();

  // A replay: a new store from engram-log alone, same graph, nothing sent.
  engine_.reset();
  start("replayed", "engram-replay");
  ASSERT_TRUE(test::wait_until([&] { return engine_->store().digest() == live; }, 60s));
  round = engine_->tick_timers();
  EXPECT_EQ(round.reminders + round.recovered, 0u);
  EXPECT_EQ(test::topic_size(broker_->bootstrap(), "engram-reminders"), 3);
  auto sent = test::consume_all(broker_->bootstrap(), "engram-reminders", 3, 10s);
  ASSERT_EQ(sent.size(), 3u);
  std::set<std::string> ids;
  for (const auto& s : sent)
    ids.insert(s.headers.at("reminder-id"));
  EXPECT_EQ(ids.size(), 3u);
}

TEST_F(LifecycleTest, AReplayedStoreEqualsTheLiveOneMailDedupBranchesValidationsAndExpiryIncluded) {
  // Inbound mail: extraction, a duplicate (the same decision in another thread) and a
  // superseded statement (the same sender changed the price).
  auto mail = [](const std::string& id, const std::string& thread, const std::string& sent, const std::string& body) {
    return json{{"eventId", id},
                {"organizationId", "acme"},
                {"sourceType", "email"},
                {"threadId", thread},
                {"sentAt", sent},
                {"from", {{"name", "Sarah Lee"}, {"address", "sarah@acme.example"}, {"contactId", "c-17"}}},
                {"to", json::array({{{"name", "Bob Martin"}, {"address", "bob@globex.example"}}})},
                {"subject", "Renewal"},
                {"body", body},
                {"contactIds", json::array({"c-17"})}}
        .dump();
  };
  test::produce_raw(broker_->bootstrap(), "inbound-messages",
                    {{"acme", mail("m-1", "t-1", "2026-03-04T10:00:00Z",
                                   "Hi Bob,\n\nWe decided to hold the Globex price at $42 per seat. Please send the "
                                   "signed order form by next Friday.\n\nSarah")},
                     {"acme", mail("m-2", "t-2", "2026-03-05T10:00:00Z",
                                   "Bob,\n\nWe decided to hold the Globex price at $42 per seat.\n\nSarah")},
                     {"acme", mail("m-3", "t-3", "2026-03-09T10:00:00Z",
                                   "Bob,\n\nWe decided to hold the Globex price at $45 per seat.\n\nSarah")}});
  ASSERT_TRUE(test::wait_until(
      [&] {
        auto m = engine_->metrics().render();
        return m.find("engram_dedup_outcomes_total{outcome=\"merged\"} 1") != std::string::npos &&
               m.find("engram_dedup_outcomes_total{outcome=\"superseded\"} 1") != std::string::npos;
      },
      60s))
      << engine_->metrics().render();
  ASSERT_EQ(engine_->store().entries_of_type("acme", schemas::entry_type::action_item).size(), 1u);
  save(token_a, "fact", "Initech renews in October.", 0.8);
  save(token_a, "fact", "Initech wants weekly reports.", 0.8, {{"branchId", "merged-branch"}});
  auto e = save(token_a, "fact", "Initech's trial code is T-77.", 0.8, {{"expiresInDays", 1}});
  ASSERT_FALSE(call(token_a, "merge_branch", {{"branchId", "merged-branch"}}).contains("error"));
  ASSERT_FALSE(call(token_a, "validate_knowledge", {{"id", e["id"]}, {"outcome", "approved"}}).contains("error"));
  clock_->advance(std::chrono::hours(48));
  EXPECT_EQ(engine_->tick_timers().removed, 1u);
  save(token_a, "fact", "Initech's CFO is Dana Wu.", 0.8, {{"branchId", "open-branch"}});
  save(token_a, "fact", "Initech's CTO is Sam Roe.", 0.8, {{"branchId", "discarded-branch"}});
  ASSERT_FALSE(call(token_a, "discard_branch", {{"branchId", "discarded-branch"}}).contains("error"));
  const auto live = engine_->store().digest();
  engine_.reset();
  std::map<std::string, std::int64_t> sizes;
  for (const char* t : {"inbound-messages", "engram-log", "engram-reminders", "engram-dlq"})
    sizes[t] = test::topic_size(broker_->bootstrap(), t);
  start("replayed", "engram-replay", /*replay=*/true);
  EXPECT_TRUE(test::wait_until([&] { return engine_->store().digest() == live; }, 60s))
      << "live " << live << " replayed " << engine_->store().digest();
  std::int64_t last = 0;
  EXPECT_EQ(engine_->store().branch_saves("acme", "open-branch", &last).size(), 1u);
  EXPECT_EQ(engine_->store().branch_saves("acme", "discarded-branch", &last).size(), 0u);
  engine_.reset();

  // engramctl replay: the same digest. Neither replay wrote to any topic.
  std::string out;
  const int rc =
      test::run(std::string(ENGRAMCTL_PATH) + " replay --config " ENGRAM_SOURCE_DIR "/config/engram.yaml" +
                    " --set kafka.brokers=" + broker_->bootstrap() + " --set embedder.model_path=" + test::model_path +
                    " --into " + dir_.sub("engramctl-replay"),
                &out);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find(live), std::string::npos) << "live " << live << "\n" << out;
  EXPECT_NE(out.find("records of engram-log"), std::string::npos) << out;
  for (const auto& [t, n] : sizes)
    EXPECT_EQ(test::topic_size(broker_->bootstrap(), t), n) << t;
  // A second replay into a store that is not empty is refused, naming the directory.
  EXPECT_EQ(test::run(std::string(ENGRAMCTL_PATH) + " replay --config " ENGRAM_SOURCE_DIR "/config/engram.yaml" +
                          " --set kafka.brokers=" + broker_->bootstrap() + " --into " + dir_.sub("engramctl-replay"),
                      &out),
            2)
      << out;
  EXPECT_NE(out.find("not empty"), std::string::npos) << out;
}

}  // namespace
