// The dedup index's label -> entry id map: appends, out-of-order adds, removals and the
// compaction that reclaims removed ids keep every surviving id readable.
#include "dedup/internal/label_ids.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace engram::dedup::detail {
namespace {

std::vector<std::pair<std::uint64_t, std::string>> rows(const label_ids& ids) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  ids.for_each([&](std::uint64_t label, std::string_view id) { out.emplace_back(label, std::string(id)); });
  return out;
}

TEST(LabelIds, FindsWhatWasAddedInAnyOrderAndKeepsLabelOrder) {
  label_ids ids;
  ids.emplace(2, "e-two");
  ids.emplace(5, "e-five");
  ids.emplace(1, "e-one");    // a snapshot's labels, then newer ones: usually ascending, not always
  ids.emplace(5, "ignored");  // a label keeps its first id
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids.find(1), "e-one");
  EXPECT_EQ(ids.find(5), "e-five");
  EXPECT_EQ(ids.find(3), std::nullopt);
  EXPECT_EQ(ids.find(9), std::nullopt);
  EXPECT_EQ(rows(ids), (std::vector<std::pair<std::uint64_t, std::string>>{{1, "e-one"}, {2, "e-two"}, {5, "e-five"}}));
}

TEST(LabelIds, RemovalsAndCompactionKeepTheRest) {
  label_ids ids;
  for (std::uint64_t l = 1; l <= 1000; ++l)
    ids.emplace(l, "entry-" + std::to_string(l));
  EXPECT_FALSE(ids.erase(5000));
  // Removing three in four compacts the id text more than once on the way.
  for (std::uint64_t l = 1; l <= 1000; ++l)
    if (l % 4 != 0)
      EXPECT_TRUE(ids.erase(l)) << l;
  EXPECT_FALSE(ids.erase(1));
  EXPECT_EQ(ids.size(), 250u);
  for (std::uint64_t l = 1; l <= 1000; ++l)
    if (l % 4 == 0)
      EXPECT_EQ(ids.find(l), "entry-" + std::to_string(l)) << l;
    else
      EXPECT_EQ(ids.find(l), std::nullopt) << l;
  ids.emplace(1001, "entry-1001");
  EXPECT_EQ(ids.find(1001), "entry-1001");
  ids.clear();
  EXPECT_EQ(ids.size(), 0u);
  EXPECT_EQ(ids.find(4), std::nullopt);
}

}  // namespace
}  // namespace engram::dedup::detail
