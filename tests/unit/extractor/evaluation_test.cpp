// The extractor against the labelled set: the floors of the quality bar. The bench
// (`engram_bench extraction`) prints the full table.
#include "tools/bench/evaluation.hpp"

#include <gtest/gtest.h>

namespace {

TEST(ExtractionQuality, LabelledSetMeetsTheFloors) {
  auto r = engram::evaluation::evaluate(std::string(ENGRAM_SOURCE_DIR) + "/tests/data/extraction/labelled.jsonl", {});
  ASSERT_TRUE(r.error.empty()) << r.error;
  std::printf("%s", r.table().c_str());
  ASSERT_GE(r.messages, 40u);
  ASSERT_GE(r.gold_entries, 150u);
  for (const auto& c : r.types)
    ASSERT_GE(c.tp + c.fn, 15u) << "every type needs labelled examples";
  EXPECT_GE(r.macro_f1(), 0.80);
  EXPECT_GE(r.entities_total().f1(), 0.85);
  EXPECT_GE(r.date_accuracy(), 0.90);
  EXPECT_GE(r.due_date_accuracy(), 0.90);
  EXPECT_EQ(r.injection_messages_flagged, r.injection_messages);
}

}  // namespace
