// Dedup and contradiction quality on the labelled sets, through the real encoder, the real
// store and the decisions the store stage makes. The floors are the issue's.

#include "tools/bench/semantic.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

using namespace engram;

namespace {

class SemanticQuality : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    auto loaded = extractor::use_lite_embedder::load(ENGRAM_MODEL_PATH);
    ASSERT_TRUE(loaded) << loaded.error();
    model_ = loaded->release();
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  std::string scratch(const char* name) {
    return (std::filesystem::temp_directory_path() / ("engram-quality-" + std::to_string(::getpid()) + "-" + name))
        .string();
  }
  void TearDown() override {
    std::filesystem::remove_all(scratch("dedup"));
    std::filesystem::remove_all(scratch("contradiction"));
  }
  static extractor::use_lite_embedder* model_;
};

extractor::use_lite_embedder* SemanticQuality::model_ = nullptr;

TEST_F(SemanticQuality, DifferentFactsAreNeverMergedAndNearDuplicatesAre) {
  auto r = evaluation::evaluate_dedup(ENGRAM_SOURCE_DIR "/tests/data/dedup/pairs.jsonl", *model_, scratch("dedup"));
  ASSERT_TRUE(r.error.empty()) << r.error;
  std::cout << r.table();
  std::size_t total = 0;
  for (const auto& [_, n] : r.pairs)
    total += n;
  ASSERT_GE(total, 80u);
  EXPECT_EQ(r.merged.count("different_fact") ? r.merged.at("different_fact") : 0, 0u);
  EXPECT_EQ(r.merged.count("unrelated") ? r.merged.at("unrelated") : 0, 0u);
  EXPECT_DOUBLE_EQ(r.precision(), 1.0);
  EXPECT_GE(r.recall(), 0.9);
}

TEST_F(SemanticQuality, ContradictionsAreFoundWithinOneSubjectOnly) {
  auto r = evaluation::evaluate_contradictions(ENGRAM_SOURCE_DIR "/tests/data/contradiction/cases.jsonl", *model_,
                                               scratch("contradiction"));
  ASSERT_TRUE(r.error.empty()) << r.error;
  std::cout << r.table();
  ASSERT_GE(r.cases, 30u);
  EXPECT_GE(r.precision(), 0.9);
  EXPECT_GE(r.recall(), 0.8);
  EXPECT_EQ(r.cross_subject, 0u);
}

}  // namespace
