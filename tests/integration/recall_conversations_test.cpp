// Recall on long conversations no one here wrote, on every test run: the held-out
// sets (heldout/ and heldout2/) of tests/data/conversations (written by helper sessions that never saw the code; the
// rules and weights were tuned on the development set only) through `engram_bench
// recall-conversations --set heldout`: chat events into an engine over the test broker, every
// question asked with recall_knowledge over MCP, beside a BM25 over the raw messages.
// Quality figures, not speed: the same data gives the same ranks on any CPU.
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

namespace {

using namespace engram;

struct row {
  int questions = 0;
  double engram = 0, bm25 = 0;
};

/// The rows of `engram_bench recall-conversations --set SET`, by kind, and its whole output.
std::map<std::string, row> rows_of(const std::string& set, std::string& out) {
  const int rc = test::run(std::string("cd ") + ENGRAM_SOURCE_DIR + " && " + ENGRAM_BENCH_PATH + " --model " +
                               test::model_path + " recall-conversations --set " + set + " 2>&1",
                           &out);
  EXPECT_EQ(rc, 0) << out;
  // "  single           199   159 (0.799)    86 (0.432)   +0.367   0.497 / 0.809, 0.181 / 0.342"
  std::map<std::string, row> rows;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::string kind, a, b;
    row r;
    int na = 0, nb = 0;
    if (in >> kind >> r.questions >> na >> a >> nb >> b && a.size() > 2 && a.front() == '(' && b.front() == '(') {
      r.engram = std::stod(a.substr(1));
      r.bm25 = std::stod(b.substr(1));
      rows[kind] = r;
    }
  }
  return rows;
}

/// recall@10 of the answerable questions at least 0.80 and `margin` above raw-text BM25 over at
/// least `questions` questions, and no kind of question below BM25.
void expect_floors(const std::string& set, int questions, double margin) {
  std::string out;
  auto rows = rows_of(set, out);
  ASSERT_TRUE(rows.count("all")) << out;
  EXPECT_GE(rows["all"].questions, questions) << out;
  EXPECT_GE(rows["all"].engram, 0.80) << out;
  EXPECT_GE(rows["all"].engram, rows["all"].bm25 + margin) << out;
  for (const char* kind : {"single", "multi", "temporal", "inference"}) {
    ASSERT_TRUE(rows.count(kind)) << kind << "\n" << out;
    EXPECT_GE(rows[kind].engram, rows[kind].bm25) << kind << ": below raw-text BM25\n" << out;
  }
  std::printf("%s", out.c_str());
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
