// Sealed engram-log records (actors/ingest/sealing.hpp) and the key topic's settings
// (key_ring.hpp): what crypto-shredding rests on.

#include "actors/ingest/key_ring.hpp"
#include "actors/ingest/sealing.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

using namespace engram::ingest;

namespace {

const std::string clear = R"({"formatVersion":3,"message":{"body":"The Qwertymarker budget is 40,000 EUR."}})";

TEST(Sealing, ARecordOpensWithItsKeyOnlyAndSaysNothingInClear) {
  const auto key = new_data_key();
  ASSERT_EQ(key.bytes.size(), 32u);
  ASSERT_EQ(key.id.size(), 16u);
  const auto sealed = seal("acme", "evt-1", "extracted-message", clear, key);
  EXPECT_EQ(sealed.find("Qwertymarker"), std::string::npos) << sealed;
  std::string why;
  auto e = read_envelope(sealed, &why);
  ASSERT_TRUE(e) << why;
  EXPECT_EQ(e->organization_id, "acme");
  EXPECT_EQ(e->event_id, "evt-1");
  EXPECT_EQ(e->kind, "extracted-message");
  EXPECT_EQ(e->key_id, key.id);
  EXPECT_EQ(open(*e, key.bytes), clear);
  // Another key, an altered byte, or the record moved to another message: it does not open.
  EXPECT_FALSE(open(*e, new_data_key().bytes));
  auto altered = *e;
  altered.data[3] ^= 1;
  EXPECT_FALSE(open(altered, key.bytes));
  auto moved = *e;
  moved.event_id = "evt-2";
  EXPECT_FALSE(open(moved, key.bytes));
  // Two seals of the same record differ (a fresh iv each time).
  EXPECT_NE(seal("acme", "evt-1", "extracted-message", clear, key), sealed);
  EXPECT_EQ(key_name("acme", "evt-1", key.id), "acme/evt-1/" + key.id);
}

TEST(Sealing, AnEnvelopeThatIsNotOneIsRefusedWithTheField) {
  std::string why;
  EXPECT_FALSE(read_envelope("not json", &why));
  EXPECT_EQ(why, "sealed: not a sealed record");
  EXPECT_FALSE(read_envelope(R"({"sealed":1,"organizationId":"acme"})", &why));
  EXPECT_EQ(why, "sealed: not a sealed record");  // no ciphertext after a newline
  EXPECT_FALSE(read_envelope(std::string(R"({"sealed":1,"organizationId":"acme"})") + "\n0123456789abcdef0", &why));
  EXPECT_EQ(why, "sealed /eventId: must be a non-empty string");
  EXPECT_FALSE(read_envelope(
      std::string(R"({"sealed":1,"organizationId":"a","eventId":"e","keyId":"k","kind":"x","iv":"AAAA"})") +
          "\n0123456789abcdef0",
      &why));
  EXPECT_NE(why.find("12-byte iv"), std::string::npos) << why;
  // "sealed" of another type: refused, not thrown (found by fuzz_sealed_envelope: the reader of
  // engram-log would have died on such a record).
  for (const char* header : {R"({"sealed":"acme"})", R"({"sealed":[1]})", R"({"sealed":1.5})"}) {
    EXPECT_FALSE(read_envelope(std::string(header) + "\n0123456789abcdef0", &why)) << header;
    EXPECT_EQ(why, "sealed: not a sealed record");
  }
  // A sealed record is the clear one and a header, not a third more (no base64 of it).
  EXPECT_LT(seal("acme", "evt-1", "extracted-message", clear, new_data_key()).size(), clear.size() + 200);
}

TEST(KeyTopic, IsCompactedKeepsTheLastKeyForEverAndATombstoneForADay) {
  const auto s = key_topic_settings();
  EXPECT_EQ(s.at("cleanup.policy"), "compact");
  EXPECT_EQ(s.at("retention.ms"), "-1");
  EXPECT_EQ(s.at("delete.retention.ms"), "86400000");
  EXPECT_EQ(s.at("min.compaction.lag.ms"), "0");
}

}  // namespace

namespace {

TEST(KeyTopic, DockerComposeCreatesItWithTheseSettings) {
  std::ifstream in(ENGRAM_SOURCE_DIR "/docker-compose.yml");
  std::string line, created;
  while (std::getline(in, line))
    if (line.find("--topic engram-keys") != std::string::npos)
      created = line;
  ASSERT_NE(created, "") << "docker-compose.yml creates no engram-keys topic";
  for (const auto& [k, v] : key_topic_settings())
    EXPECT_NE(created.find("--config " + k + "=" + v), std::string::npos) << k << "=" << v << " in " << created;
}

}  // namespace
