// The cache of candidates' facts dedup keeps (dedup/internal/facts_cache.hpp).
#include "dedup/internal/facts_cache.hpp"

#include <gtest/gtest.h>

namespace {

using engram::dedup::facts;
using engram::dedup::detail::facts_cache;

facts of(const std::string& id, const std::string& status = "active") {
  facts f;
  f.id = id;
  f.subject = "falcon";
  f.slot = "budget";
  f.status = status;
  return f;
}

/// What dedup does on a miss: find, read, fill with the generation the find gave.
void read_into(facts_cache& cache, const std::string& org, const facts& f) {
  facts out;
  std::uint64_t gen = 0;
  if (!cache.find(org, f.id, out, gen))
    cache.fill(org, f, gen);
}

TEST(FactsCache, HoldsWhatWasFilledUpToItsCapacityLeastRecentlyUsedFirstOut) {
  facts_cache cache(2);
  facts out;
  std::uint64_t gen = 0;
  EXPECT_FALSE(cache.find("acme", "e-1", out, gen));
  cache.fill("acme", of("e-1"), gen);
  ASSERT_TRUE(cache.find("acme", "e-1", out, gen));
  EXPECT_EQ(out.id, "e-1");
  EXPECT_EQ(out.slot, "budget");
  EXPECT_FALSE(cache.find("acme-2", "e-1", out, gen));  // another organisation's entry
  cache.fill("acme", of("e-2"), gen);
  ASSERT_TRUE(cache.find("acme", "e-1", out, gen));  // e-1 used last: e-2 goes first
  cache.fill("acme", of("e-3"), gen);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_FALSE(cache.find("acme", "e-2", out, gen));
  EXPECT_TRUE(cache.find("acme", "e-1", out, gen));
  EXPECT_TRUE(cache.find("acme", "e-3", out, gen));
  EXPECT_EQ(cache.hits(), 4u);
}

TEST(FactsCache, ForgetsWrittenEntriesAndNeverKeepsAReadThatAWriteOverlapped) {
  facts_cache cache(8);
  facts out;
  std::uint64_t gen = 0;
  read_into(cache, "acme", of("e-1"));
  read_into(cache, "acme", of("e-2"));
  read_into(cache, "acme-2", of("e-1"));
  const std::vector<std::string> written{"e-1"};
  cache.forget("acme", written, false);
  EXPECT_FALSE(cache.find("acme", "e-1", out, gen));
  EXPECT_TRUE(cache.find("acme", "e-2", out, gen));
  EXPECT_TRUE(cache.find("acme-2", "e-1", out, gen));
  // A read that missed before a batch was written fills nothing after it: what it read may
  // be the entry before the batch.
  std::uint64_t before = 0;
  EXPECT_FALSE(cache.find("acme", "e-1", out, before));
  cache.forget("acme", std::vector<std::string>{"e-9"}, false);
  cache.fill("acme", of("e-1"), before);
  EXPECT_FALSE(cache.find("acme", "e-1", out, gen));
  cache.fill("acme", of("e-1", "superseded"), gen);
  ASSERT_TRUE(cache.find("acme", "e-1", out, gen));
  EXPECT_EQ(out.status, "superseded");
  // All of one organisation's entries (a failed batch, a dropped organisation).
  cache.forget("acme", {}, true);
  EXPECT_FALSE(cache.find("acme", "e-1", out, gen));
  EXPECT_FALSE(cache.find("acme", "e-2", out, gen));
  EXPECT_TRUE(cache.find("acme-2", "e-1", out, gen));
  EXPECT_EQ(cache.size(), 1u);
}

TEST(FactsCache, CountsTheBytesItKeepsAndGivesThemBackAsEntriesLeave) {
  facts_cache cache(64);
  const auto empty = cache.memory_bytes();
  auto big = [](const std::string& id) {
    auto f = of(id);
    f.title = f.sig.words = std::string(400, 'w');  // beyond the strings' inline buffers
    f.sig.entities = {std::string(100, 'e'), std::string(100, 'f')};
    f.sense.modal = {"will", "should"};
    return f;
  };
  read_into(cache, "acme", big("e-1"));
  const auto one = cache.memory_bytes() - empty;
  EXPECT_GT(one, 1000u);  // two strings of 400 bytes and two of 100, at least
  EXPECT_LT(one, 4000u);
  read_into(cache, "acme", big("e-2"));
  EXPECT_EQ(cache.memory_bytes() - empty, 2 * one);
  cache.forget("acme", std::vector<std::string>{"e-1"}, false);
  EXPECT_EQ(cache.memory_bytes() - empty, one);
  facts_cache small(1);
  const auto none = small.memory_bytes();
  read_into(small, "acme", big("e-1"));
  read_into(small, "acme", big("e-2"));  // e-1 evicted
  EXPECT_EQ(small.memory_bytes() - none, one);
  cache.forget("acme", {}, true);
  EXPECT_EQ(cache.memory_bytes(), empty);
}

TEST(FactsCache, OfCapacityZeroHoldsNothing) {
  facts_cache cache(0);
  facts out;
  std::uint64_t gen = 0;
  read_into(cache, "acme", of("e-1"));
  EXPECT_FALSE(cache.find("acme", "e-1", out, gen));
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
