// The stored entry's and entity's codec, and the write-side rules, on values alone (no store).
#include "knowledge/entry.hpp"
#include "knowledge/markers.hpp"
#include "knowledge/read_rules.hpp"
#include "knowledge/write_rules.hpp"

#include "schemas/time.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace engram::knowledge {
namespace {

/// An entry with every field set to a value different from its default.
stored_entry full_entry() {
  stored_entry e;
  e.id = "e-1";
  e.organization_id = "acme";
  e.type = schemas::entry_type::action_item;
  e.title = "Send the contract";
  e.content = "Please send the contract by Friday.";
  e.source_type = "email";
  e.source_id = "msg-1";
  e.event_id = "ev-1";
  e.author = "sarah@acme.example";
  e.sources = {{"email", "msg-1", "ev-1", "sarah@acme.example", "2026-03-01T09:00:00Z"}, {"chat", "c-2", "ev-2", ""}};
  e.contact_ids = {"c-1", "c-2"};
  e.thread_id = "t-1";
  e.confidence = 0.734521;
  e.last_validated_at = "2026-03-01T10:00:00Z";
  e.expires_at = "2027-01-01T00:00:00Z";
  e.due_at = "2026-03-06";
  e.tags = {"legal", "q1"};
  e.entities = {{"person", "Sarah", "Sarah Lee", "", "person:sarah@acme.example"},
                {"amount", "$5k", "5000", "USD", ""}};
  e.relations = {{"supports", "e-0", "", "cosine 0.95"}, {"contradicts", "", "e-9", "other date"}};
  e.status = entry_status::flagged;
  e.suspicious = true;
  e.subject = "contract";
  e.slot = "due";
  e.value = "friday";
  e.positive = false;
  e.sig = {{"3"}, {"2026-03-06"}, {"5000 USD"}, {"sarah lee"}, "send contract", "send contract"};
  e.extractor = "llm";
  e.outcome = "linked";
  e.outcome_reason = "same thread";
  e.created_at = "2026-03-01T10:00:00Z";
  e.updated_at = "2026-03-02T10:00:00Z";
  e.merges = 2;
  e.last_merge_reason = "cosine 0.97";
  e.superseded_by = "e-7";
  e.review = review_note{"e-9", "other date", "both", "2026-03-03T00:00:00Z", "agent-1"};
  e.validations = {{"2026-03-02T00:00:00Z", "approved", "agent-1"}};
  e.reminder_id = "r-1";
  e.reminder_sent_at = "2026-03-05T09:00:00Z";
  e.branch_id = "what-if";
  e.extra = {{"futureField", {{"x", 1}}}};
  return e;
}

TEST(StoredEntry, EveryFieldSurvivesEncodeAndDecode) {
  const auto e = full_entry();
  stored_entry back;
  ASSERT_EQ(decode(encode(e), back), std::nullopt);
  EXPECT_EQ(back, e);
  EXPECT_EQ(encode(back), encode(e));
}

TEST(StoredEntry, UnsetOptionalFieldsAreAbsentAndDatesNull) {
  stored_entry e;
  e.id = "e-1";
  const auto j = to_json(e);
  for (const char* k : {"outcomeReason", "merges", "lastMergeReason", "supersededBy", "review", "validations",
                        "reminderId", "reminderSentAt", "branchId"})
    EXPECT_FALSE(j.contains(k)) << k;
  EXPECT_TRUE(j["expiresAt"].is_null());
  EXPECT_TRUE(j["dueAt"].is_null());
  stored_entry back;
  ASSERT_EQ(decode(j.dump(), back), std::nullopt);
  EXPECT_EQ(back, e);
}

TEST(StoredEntry, KeysThisVersionDoesNotKnowAreWrittenBack) {
  auto j = to_json(full_entry());
  j["addedByANewerVersion"] = json::array({1, 2});
  stored_entry back;
  ASSERT_EQ(from_json(j, back), std::nullopt);
  EXPECT_EQ(to_json(back), j);
}

TEST(StoredEntry, ErrorsNameTheField) {
  auto error_of = [](const json& j) {
    stored_entry out;
    return from_json(j, out).value_or("");
  };
  const auto good = to_json(full_entry());
  auto with = [&](const char* k, json v) {
    auto j = good;
    j[k] = std::move(v);
    return j;
  };
  EXPECT_EQ(error_of(json::array()), "entry: must be a JSON object");
  auto no_id = good;
  no_id.erase("id");
  EXPECT_EQ(error_of(no_id), "id: is required");
  EXPECT_EQ(error_of(with("entryType", "rumour")), "entryType: unknown type 'rumour'");
  EXPECT_EQ(error_of(with("status", "gone")), "status: unknown status 'gone'");
  EXPECT_EQ(error_of(with("confidence", "high")), "confidence: must be a number");
  EXPECT_EQ(error_of(with("contactIds", json::array({1}))), "contactIds: must be an array of strings");
  EXPECT_EQ(error_of(with("merges", -1)), "merges: must be a non-negative integer");
  EXPECT_EQ(error_of(with("dueAt", 5)), "dueAt: must be a string or null");
  EXPECT_EQ(error_of(with("sources", json::array({{{"sourceType", 1}}}))), "sources[0].sourceType: must be a string");
  EXPECT_EQ(error_of(with("signature", {{"words", 1}})), "signature.words: must be a string");
  stored_entry out;
  EXPECT_EQ(decode("{", out), "entry: neither a stored entry nor valid JSON");
}

TEST(StoredEntry, IsStoredAsATypedRecordAndStillReadFromJson) {
  const auto e = full_entry();
  const auto bytes = encode(e);
  ASSERT_EQ(bytes[0], '\x02');
  EXPECT_LT(bytes.size(), to_json(e).dump().size());  // no key names
  stored_entry from_json_text;                        // an entry a store of layout 5 holds
  ASSERT_EQ(decode(to_json(e).dump(), from_json_text), std::nullopt);
  EXPECT_EQ(from_json_text, e);
  EXPECT_EQ(entry_json(bytes), to_json(e));
  EXPECT_TRUE(entry_json("not an entry").is_null());
  stored_entry minimal;
  minimal.id = "e-2";
  stored_entry back;
  ASSERT_EQ(decode(encode(minimal), back), std::nullopt);
  EXPECT_EQ(back, minimal);
}

TEST(StoredEntry, FormatOneRecordsWithoutSourceTimesAreStillRead) {
  // Format 1 wrote no sentAt per source: the same bytes less each source's (empty) sentAt.
  auto e = full_entry();
  e.sources = {{"email", "msg-1", "ev-1", "zed@one.example"}};
  auto bytes = encode(e);
  const auto author = bytes.find("zed@one.example");
  ASSERT_NE(author, std::string::npos);
  const auto sent_at = author + std::string("zed@one.example").size();
  ASSERT_EQ(bytes[sent_at], '\0');  // the empty sentAt's length
  bytes.erase(sent_at, 1);
  bytes[0] = '\x01';
  stored_entry out;
  ASSERT_EQ(decode(bytes, out), std::nullopt);
  EXPECT_EQ(out, e);
  // Read as format 2, the same bytes are short by one field: an error, never a guess.
  bytes[0] = '\x02';
  EXPECT_TRUE(decode(bytes, out).has_value());
}

TEST(StoredEntry, MovedSourcesAreCountedInFormatThreeAndEachSourceIsARecordOfItsOwn) {
  auto e = full_entry();
  e.sources_moved = 7;
  const auto bytes = encode(e);
  ASSERT_EQ(bytes[0], '\x03');
  stored_entry back;
  ASSERT_EQ(decode(bytes, back), std::nullopt);
  EXPECT_EQ(back, e);
  EXPECT_EQ(encode(back), bytes);
  EXPECT_EQ(to_json(e).value("sourcesMoved", 0), 7);
  ASSERT_EQ(from_json(to_json(e), back), std::nullopt);
  EXPECT_EQ(back, e);
  // Without moved sources the record is format 2, byte for byte, with no key for them.
  e.sources_moved = 0;
  EXPECT_EQ(encode(e)[0], '\x02');
  EXPECT_FALSE(to_json(e).contains("sourcesMoved"));
  // A format 3 record that says 0 were moved is not one this codec wrote.
  e.sources = {{"email", "msg-1", "ev-1", "sarah@acme.example", "2026-03-01T09:00:00Z"}};
  auto zero = encode(e);
  zero[0] = '\x03';
  const auto sent_at = zero.find("2026-03-01T09:00:00Z");  // the only source's sentAt ends the list
  ASSERT_NE(sent_at, std::string::npos);
  zero.insert(sent_at + std::string("2026-03-01T09:00:00Z").size(), 1, '\0');  // a count of 0
  EXPECT_EQ(decode(zero, back), "sourcesMoved: 0 in a record of format 3");

  const source_ref src{"chat", "c-9", "ev-9", "sam@one.example", "2026-03-09T00:00:00Z"};
  source_ref src_back;
  ASSERT_EQ(decode(encode(src), src_back), std::nullopt);
  EXPECT_EQ(src_back, src);
  EXPECT_EQ(decode(encode(src) + "x", src_back), "source: truncated or corrupt record");
  EXPECT_EQ(decode("", src_back), "source: not a stored source");
  EXPECT_EQ(decode(encode(e), src_back), "source: not a stored source");
}

TEST(StoredEntry, ATruncatedOrExtendedRecordIsAnErrorNeverAGuess) {
  const auto bytes = encode(full_entry());
  for (std::size_t n = 1; n < bytes.size(); ++n) {
    stored_entry out;
    EXPECT_TRUE(decode(bytes.substr(0, n), out).has_value()) << "cut at " << n;
  }
  stored_entry out;
  EXPECT_EQ(decode(bytes + "x", out), "entry: truncated or corrupt record");
  auto e = full_entry();
  e.id.clear();
  EXPECT_EQ(decode(encode(e), out), "id: is required");
}

TEST(StoredEntity, EveryFieldSurvivesEncodeAndDecode) {
  stored_entity e = new_entity("person:sarah@acme.example", "person", "Sarah Lee", "2026-03-01T10:00:00Z");
  e.aliases = {"Sarah", "S. Lee"};
  e.messages = 7;
  e.address = "sarah@acme.example";
  e.contact_id = "c-1";
  e.last_seen_at = "2026-03-02T10:00:00Z";
  e.role = "VP Sales";
  e.company = "Acme";
  e.phone = "+1 555 0100";
  e.extra = {{"later", true}};
  stored_entity back;
  ASSERT_EQ(decode(encode(e), back), std::nullopt);
  EXPECT_EQ(back, e);
  const auto bare = to_json(new_entity("org:acme", "organization", "Acme", "2026-03-01T10:00:00Z"));
  for (const char* k : {"address", "contactId", "lastSeenAt", "role", "company", "phone"})
    EXPECT_FALSE(bare.contains(k)) << k;
  EXPECT_EQ(decode(R"({"id":"x","messages":"3"})", back), "messages: must be a non-negative integer");
}

schemas::entry statement(const std::string& content, double confidence) {
  schemas::entry en;
  en.content = content;
  en.confidence = confidence;
  return en;
}

TEST(WriteRules, AMergeCombinesByNoisyOrAndKeepsTheNewerTimes) {
  auto e = full_entry();
  e.confidence = 0.6;
  e.due_at.clear();
  e.merges = 0;
  auto dup = statement("The contract goes out Friday.", 0.5);
  dup.due_at = "2026-03-07";
  merge_into(e, dup, {{"person", "Sarah", "Sarah Lee", "", "x"}, {"org", "Acme", "Acme", "", "org:acme"}},
             {"chat", "c-9", "ev-9", ""}, {"c-0", "c-2"}, "2026-03-09T00:00:00Z", "cosine 0.96");
  EXPECT_DOUBLE_EQ(e.confidence, 0.8);  // 1 - 0.4 * 0.5
  EXPECT_EQ(e.content, "Please send the contract by Friday.\nThe contract goes out Friday.");
  EXPECT_EQ(e.contact_ids, (std::vector<std::string>{"c-0", "c-1", "c-2"}));
  EXPECT_EQ(e.sources.back().event_id, "ev-9");
  ASSERT_EQ(e.entities.size(), 3u);  // Sarah Lee known by kind and value; Acme new
  EXPECT_EQ(e.entities.back().value, "Acme");
  EXPECT_EQ(e.due_at, "2026-03-07");
  EXPECT_EQ(e.updated_at, "2026-03-09T00:00:00Z");
  EXPECT_EQ(e.last_validated_at, "2026-03-09T00:00:00Z");
  EXPECT_EQ(e.merges, 1);
  EXPECT_EQ(e.last_merge_reason, "cosine 0.96");
  // An older duplicate moves no time back; contained content is not repeated.
  merge_into(e, statement("the contract goes out friday", 0.0), {}, {}, {}, "2026-01-01T00:00:00Z", "again");
  EXPECT_EQ(e.updated_at, "2026-03-09T00:00:00Z");
  EXPECT_EQ(std::count(e.content.begin(), e.content.end(), '\n'), 1);
  EXPECT_EQ(e.merges, 2);
}

TEST(WriteRules, PastKeptSourcesTheOnesAfterTheFirstMoveOutOldestFirst) {
  auto e = full_entry();
  e.sources = {{"email", "m-0", "ev-0", ""}};
  EXPECT_TRUE(shed_sources(e).empty());
  for (int i = 1; i <= 20; ++i) {
    merge_into(e, statement("again", 0.1), {}, {"email", "m-" + std::to_string(i), "ev-" + std::to_string(i), ""}, {},
               "2026-03-09T00:00:00Z", "again");
    const auto moved = shed_sources(e);
    ASSERT_EQ(moved.size(), i >= 16 ? 1u : 0u) << i;
    if (!moved.empty())
      EXPECT_EQ(moved[0].event_id, "ev-" + std::to_string(i - 15));
  }
  ASSERT_EQ(e.sources.size(), kept_sources);
  EXPECT_EQ(e.sources_moved, 5u);
  EXPECT_EQ(e.sources.front().event_id, "ev-0");
  EXPECT_EQ(e.sources[1].event_id, "ev-6");
  EXPECT_EQ(e.sources.back().event_id, "ev-20");
  // A record stored before the bound (40 sources) sheds all it holds past it at once.
  for (int i = 21; i <= 44; ++i)
    e.sources.push_back({"email", "m-" + std::to_string(i), "ev-" + std::to_string(i), ""});
  const auto moved = shed_sources(e);
  ASSERT_EQ(moved.size(), 24u);
  EXPECT_EQ(moved.front().event_id, "ev-6");
  EXPECT_EQ(moved.back().event_id, "ev-29");
  EXPECT_EQ(e.sources_moved, 29u);
  EXPECT_EQ(e.sources[1].event_id, "ev-30");
}

TEST(WriteRules, ValidationMovesConfidenceHalfWayAndRejectionHalvesIt) {
  auto e = full_entry();
  e.confidence = 0.6;
  e.validations.clear();
  validate(e, "approved", "2026-04-01T00:00:00Z", "agent-1");
  EXPECT_DOUBLE_EQ(e.confidence, 0.8);
  EXPECT_EQ(e.last_validated_at, "2026-04-01T00:00:00Z");
  validate(e, "rejected", "2026-04-02T00:00:00Z", "agent-2");
  EXPECT_DOUBLE_EQ(e.confidence, 0.4);
  EXPECT_EQ(e.last_validated_at, "2026-04-01T00:00:00Z");
  ASSERT_EQ(e.validations.size(), 2u);
  EXPECT_EQ(e.validations[1].by, "agent-2");
}

TEST(WriteRules, FlagThenResolveKeepingEachSide) {
  for (const std::string keep : {"newer", "older", "both"}) {
    auto older = full_entry();
    older.id = "old";
    older.status = entry_status::active;
    older.review.reset();
    older.superseded_by.clear();
    auto newer = full_entry();
    newer.id = "new";
    newer.status = entry_status::active;
    newer.superseded_by.clear();
    EXPECT_FALSE(awaiting_review(older));
    EXPECT_EQ(resolve_review(older, &newer, keep, "2026-05-01T00:00:00Z", "agent-1").error,
              "id: entry 'old' is not awaiting review");
    EXPECT_TRUE(flag(older, "new", "different dates"));
    EXPECT_EQ(awaiting_review(older), "new");
    const auto out = resolve_review(older, &newer, keep, "2026-05-01T00:00:00Z", "agent-1");
    ASSERT_FALSE(out.error) << keep;
    EXPECT_EQ(older.review->resolved, keep);
    EXPECT_EQ(older.review->resolved_by, "agent-1");
    EXPECT_FALSE(awaiting_review(older));
    if (keep == "newer") {
      EXPECT_EQ(out.superseded, &older);
      EXPECT_EQ(older.superseded_by, "new");
      EXPECT_EQ(newer.status, entry_status::active);
    } else if (keep == "older") {
      EXPECT_EQ(out.superseded, &newer);
      EXPECT_EQ(newer.superseded_by, "old");
      EXPECT_EQ(newer.updated_at, "2026-05-01T00:00:00Z");
      EXPECT_EQ(older.status, entry_status::active);
    } else {
      EXPECT_EQ(out.superseded, nullptr);
      EXPECT_EQ(older.status, entry_status::active);
      EXPECT_EQ(newer.status, entry_status::active);
    }
  }
}

TEST(WriteRules, ASupersededEntryIsNotFlaggedAndLeavesRecall) {
  auto e = full_entry();
  e.status = entry_status::active;
  e.expires_at.clear();
  supersede(e, "e-8", "2026-01-01T00:00:00Z");
  EXPECT_EQ(e.superseded_by, "e-8");
  EXPECT_EQ(e.updated_at, "2026-03-02T10:00:00Z");  // never back in time
  EXPECT_FALSE(flag(e, "e-9", "later contradiction"));
  EXPECT_EQ(e.status, entry_status::superseded);
  EXPECT_FALSE(visible(e, "2026-01-01T00:00:00Z"));
}

TEST(WriteRules, RelationsAreRecordedOnBothEndsAndForgottenWithTheOtherEnd) {
  auto a = full_entry(), b = full_entry();
  a.id = "a";
  b.id = "b";
  a.relations.clear();
  b.relations.clear();
  relate(a, b, schemas::relation_type::supports, "same numbers");
  ASSERT_EQ(a.relations.size(), 1u);
  EXPECT_EQ(a.relations[0].to_id, "b");
  EXPECT_EQ(b.relations[0].from_id, "a");
  EXPECT_EQ(to_json(a)["relations"][0],
            json({{"relationType", "supports"}, {"toId", "b"}, {"reason", "same numbers"}}));
  forget_relations_with(b, "a");
  EXPECT_TRUE(b.relations.empty());
}

TEST(WriteRules, AReminderIsRecordedOnce) {
  auto e = full_entry();
  e.reminder_id.clear();
  EXPECT_TRUE(record_reminder(e, "r-1", "2026-03-05T09:00:00Z"));
  EXPECT_FALSE(record_reminder(e, "r-2", "2026-03-06T09:00:00Z"));
  EXPECT_EQ(e.reminder_id, "r-1");
  EXPECT_EQ(e.reminder_sent_at, "2026-03-05T09:00:00Z");
}

TEST(ReadRules, ExpiryAndDecayDecideWhatRecallShows) {
  auto e = full_entry();
  e.status = entry_status::active;
  e.type = schemas::entry_type::fact;
  e.confidence = 0.8;
  e.expires_at = "2026-06-01T00:00:00Z";
  EXPECT_TRUE(visible(e, "2026-05-31T23:59:59Z"));
  EXPECT_FALSE(visible(e, "2026-06-01T00:00:00Z"));
  read_policy p;
  const auto validated = *schemas::parse_rfc3339(e.last_validated_at);
  const double half = p.decay.half_life_days[static_cast<std::size_t>(e.type)];
  EXPECT_NEAR(effective_confidence(e, validated + static_cast<std::int64_t>(half * 86400000), p), 0.4, 1e-9);
  const auto shown = present(e, validated, p);
  EXPECT_EQ(shown["effectiveConfidence"], 0.8);
  EXPECT_FALSE(shown.contains("signature"));  // internal fields stay in the store
  EXPECT_FALSE(shown.contains("author"));
}

}  // namespace
}  // namespace engram::knowledge

namespace engram::dedup {
namespace {

TEST(ValuesKey, DiffersWhereDedupRequiresEqualityAndIsTheSameOnEveryBuild) {
  schemas::entry e;
  e.title = "We cut churn to 5% next quarter";
  e.sig.numbers = {"5%"};
  const auto key = knowledge::values_key(e);
  // Pinned: stores keep the key in their title index, so it must not change between builds
  // (a change needs a new layout version). The second title reaches every word list of
  // markers_of: the standalone words, a preposition before a number, before a month.
  EXPECT_EQ(key, 0x0dfba87fe487012cull);
  schemas::entry every;
  every.title = "Since Monday we ship fewer units, over 20 by May 5 and less after";
  EXPECT_EQ(knowledge::markers_of(every.title), "after by# fewer less monday over# since");
  EXPECT_EQ(knowledge::values_key(every), 0xaad51ae154472ff9ull);
  auto other = e;
  other.positive = false;
  EXPECT_NE(knowledge::values_key(other), key);
  other = e;
  other.title = "We cut churn by 5% next quarter";  // another marker ("by#" for "to#")
  EXPECT_NE(knowledge::values_key(other), key);
  other = e;
  other.sig.numbers = {"6%"};
  EXPECT_NE(knowledge::values_key(other), key);
  other = e;
  other.sig.dates = {"5%"};  // the same text in another list
  EXPECT_NE(knowledge::values_key(other), key);
  other = e;
  other.content = "Anything else";  // content, entities and the wording are compared on the entries
  other.sig.entities = {"acme"};
  other.sig.words = "churn cut quarter";
  EXPECT_EQ(knowledge::values_key(other), key);
}

}  // namespace
}  // namespace engram::dedup
