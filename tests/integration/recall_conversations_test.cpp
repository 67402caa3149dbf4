// Recall on long conversations no one here wrote, on every test run: the held-out sets
// (heldout/ and heldout2/) of tests/data/conversations (written by helper sessions that never
// saw the code; the rules and weights were tuned on the development set only), measured by
// evaluation::recall_conversations as `engram_bench recall-conversations` measures them: chat
// events into an engine over a broker in this process, every question asked with
// recall_knowledge over MCP, beside a BM25 over the raw messages. Quality figures, not speed:
// the same data gives the same ranks on any CPU.
#include "evaluation/conversations.hpp"
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace engram;

double recall_at_10(const evaluation::conversation_figures::row& r) {
  return r.questions ? double(r.engram) / double(r.questions) : 0.0;
}
double bm25_at_10(const evaluation::conversation_figures::row& r) {
  return r.questions ? double(r.bm25) / double(r.questions) : 0.0;
}

/// recall@10 of the answerable questions at least 0.80 and `margin` above raw-text BM25 over at
/// least `questions` questions, and no kind of question below BM25.
void expect_floors(const std::string& set, std::size_t questions, double margin) {
  config::engram_config engine;  // engramd's defaults
  engine.embedder.model_path = test::model_path;
  const auto f = evaluation::recall_conversations(std::string(ENGRAM_SOURCE_DIR) + "/tests/data/conversations/" + set,
                                                  set, engine);
  ASSERT_TRUE(f.by_kind.count("all"));
  const auto& all = f.by_kind.at("all");
  EXPECT_GE(all.questions, questions);
  EXPECT_GE(recall_at_10(all), 0.80);
  EXPECT_GE(recall_at_10(all), bm25_at_10(all) + margin);
  for (const char* kind : {"single", "multi", "temporal", "inference"}) {
    ASSERT_TRUE(f.by_kind.count(kind)) << kind;
    const auto& r = f.by_kind.at(kind);
    EXPECT_GE(recall_at_10(r), bm25_at_10(r)) << kind << ": below raw-text BM25";
  }
}

TEST(RecallConversations, HeldOutRecallBeatsRawTextSearchByAFifteenthAndReachesEightyPercent) {
  expect_floors("heldout", 300, 0.15);
}

// heldout2: long conversations as hard as real ones (tests/data/conversations/README.md), never
// tuned on.
TEST(RecallConversations, HeldOut2RecallBeatsRawTextSearchByAFifthAndReachesEightyPercent) {
  expect_floors("heldout2", 1000, 0.20);
}

}  // namespace
