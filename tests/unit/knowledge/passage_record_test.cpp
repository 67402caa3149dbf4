// Passage records read back as storage writes them (a JSON object a passage).
#include "query/passage_record.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <random>
#include <string>
#include <vector>

namespace engram {
namespace {

using nlohmann::json;

/// A record the way storage/passages.cpp writes one (nlohmann's dump, keys in order; `after`
/// on a reply's first passage).
json record(const std::string& text) {
  return json{{"id", "p-00000000000000ab"},
              {"after", "evt-0"},
              {"eventId", "evt-1"},
              {"index", 3},
              {"text", text},
              {"sourceType", "email"},
              {"sourceId", "msg-1@example.com"},
              {"threadId", "t-9"},
              {"sentAt", "2026-03-02T09:00:00Z"},
              {"from", {{"name", "Zoë \"Z\" Park"}, {"address", "zoe@example.com"}, {"contactId", "c-1"}}},
              {"contactIds", {"c-1", "c-2"}},
              {"dates", {"2026-03-04", "2026-03-01/2026-03-31"}},
              {"suspicious", true}};
}

void expect_read_as(const json& j, const std::optional<query::passage_hit>& p,
                    const std::vector<std::string>& contacts) {
  ASSERT_TRUE(p) << j.dump();
  EXPECT_EQ(p->id, j.value("id", ""));
  EXPECT_EQ(p->event_id, j.value("eventId", ""));
  EXPECT_EQ(p->text, j.value("text", ""));
  EXPECT_EQ(p->source_type, j.value("sourceType", ""));
  EXPECT_EQ(p->source_id, j.value("sourceId", ""));
  EXPECT_EQ(p->thread_id, j.value("threadId", ""));
  EXPECT_EQ(p->sent_at, j.value("sentAt", ""));
  const json from = j.value("from", json::object());
  EXPECT_EQ(p->from.name, from.value("name", ""));
  EXPECT_EQ(p->from.address, from.value("address", ""));
  EXPECT_EQ(p->from.contact_id, from.value("contactId", ""));
  EXPECT_EQ(p->dates, j.value("dates", std::vector<std::string>{}));
  EXPECT_EQ(p->suspicious, j.value("suspicious", false));
  EXPECT_EQ(contacts, j.value("contactIds", std::vector<std::string>{}));
}

TEST(PassageRecord, ReadsEveryFieldStorageWrites) {
  const auto j = record("Line one\n\t\"quoted\" \\ back — naïve café 😀 \x01 end");
  std::vector<std::string> contacts;
  const auto p = query::read_passage(j.dump(), &contacts);
  ASSERT_NO_FATAL_FAILURE(expect_read_as(j, p, contacts));
  EXPECT_EQ(p->dates.size(), 2u);
  EXPECT_TRUE(p->suspicious);
}

TEST(PassageRecord, ReadsFieldsInAnyOrderAndSkipsOnesItDoesNotKnow) {
  const std::string raw =
      R"({"extra": {"a": [1, {"b": null}]}, "text": "hi", "from": {"x": 1, "address": "a@b.c"}, "n": 2.5,)"
      R"( "id": "p-1", "contactIds": [], "later": [true, false]})";
  std::vector<std::string> contacts{"left over"};
  const auto p = query::read_passage(raw, &contacts);
  expect_read_as(json::parse(raw), p, contacts);
}

TEST(PassageRecord, FieldsItSkipsAreNotChecked) {
  // index and after are skipped by their brackets and quotes (storage writes valid JSON).
  const auto p = query::read_passage(R"({"index": tru, "after": "p-\q", "id": "p-1"})");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->id, "p-1");
}

TEST(PassageRecord, ARecordReadsTheSameAfterOneThatWasRefused) {
  // The parser is kept between records (one a thread): a refusal half way through an object
  // leaves nothing behind for the next record.
  const auto j = record("after a refusal");
  EXPECT_FALSE(query::read_passage(R"({"id": "p-1", "dates": ["2026-01-01", 7], "text": "x"})"));
  EXPECT_FALSE(query::read_passage(R"({"from": {"name": "Zo)"));
  std::vector<std::string> contacts;
  expect_read_as(j, query::read_passage(j.dump(), &contacts), contacts);
}

TEST(PassageRecord, AbsentFieldsReadEmpty) {
  std::vector<std::string> contacts{"left over"};
  const auto p = query::read_passage("{}", &contacts);
  expect_read_as(json::object(), p, contacts);
  EXPECT_TRUE(query::read_passage(R"({"text": "no contacts asked for"})"));
}

TEST(PassageRecord, WhatIsNotARecordOfItsTypesIsNotRead) {
  for (const char* raw : {"", "[]", "\"text\"", "{", R"({"id": "p-1")", R"({"id": 5})", R"({"text": null})",
                          R"({"dates": ["2026-01-01", 7]})", R"({"dates": "2026-01-01"})", R"({"suspicious": "yes"})",
                          R"({"from": "zoe@example.com"})", R"({"from": {"name": 1}})", R"({"contactIds": [null]})",
                          R"({"id": "p-1"} {"id": "p-2"})", R"({"id": "p-1"} x)", R"({"id": "p-\q"})"})
    EXPECT_FALSE(query::read_passage(raw)) << raw;
}

TEST(PassageRecord, ReadsAsAFullJsonParserDoesOnRecordsOfEveryCharacter) {
  // Texts of characters that JSON escapes or that are several bytes long, and every field
  // left out some of the time: the fixed seed makes the same records every run.
  const std::vector<std::string> pieces{
      "a", " ", "\"", "\\", "/", "\n", "\r", "\t", "\b", "\f", "\x1f", "\x7f", std::string(1, '\0'),
      "é", "—", "😀",  "{",  "]", ","};
  std::mt19937 draw(20261206);
  auto text = [&] {
    std::string s;
    for (auto n = draw() % 40; n > 0; --n)
      s += pieces[draw() % pieces.size()];
    return s;
  };
  for (int i = 0; i < 300; ++i) {
    json j = record(text());
    j["sourceId"] = text();
    j["from"]["name"] = text();
    j["dates"] = json::array();
    for (auto n = draw() % 3; n > 0; --n)
      j["dates"].push_back(text());
    for (const char* key : {"threadId", "from", "contactIds", "dates", "suspicious"})
      if (draw() % 4 == 0)
        j.erase(key);
    std::vector<std::string> contacts;
    expect_read_as(j, query::read_passage(j.dump(), &contacts), contacts);
  }
}

}  // namespace
}  // namespace engram
