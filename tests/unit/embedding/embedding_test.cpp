// The C++ USE Lite against vectors the package's own JavaScript computed
// (tests/data/embedder/reference.jsonl; README there says how).

#include "embedding/embedder.hpp"
#include "embedding/type_model.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

using namespace engram;

namespace {

struct reference {
  std::string text;
  std::vector<std::int32_t> tokens;
  std::vector<float> vector;
};

std::vector<reference> load_references() {
  std::vector<reference> out;
  std::ifstream in(ENGRAM_SOURCE_DIR "/tests/data/embedder/reference.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    out.push_back({j["text"], j["tokens"].get<std::vector<std::int32_t>>(), j["vector"].get<std::vector<float>>()});
  }
  return out;
}

class UseLite : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    auto loaded = embedding::use_lite_embedder::load(ENGRAM_MODEL_PATH);
    ASSERT_TRUE(loaded) << loaded.error();
    model_ = loaded->release();
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  static embedding::use_lite_embedder* model_;
};

embedding::use_lite_embedder* UseLite::model_ = nullptr;

TEST_F(UseLite, TokensMatchTheJavaScriptTokenizer) {
  auto refs = load_references();
  ASSERT_GE(refs.size(), 40u);
  for (const auto& r : refs)
    EXPECT_EQ(model_->tokenize(r.text), r.tokens) << r.text;
}

TEST_F(UseLite, VectorsMatchTheJavaScriptWithin1e5PerComponent) {
  auto refs = load_references();
  std::vector<std::string_view> texts;
  for (const auto& r : refs)
    texts.push_back(r.text);
  // One at a time and all together (stacked rows) must both match.
  auto batched = model_->embed(texts);
  ASSERT_TRUE(batched) << batched.error();
  const auto& batch = *batched;
  float worst = 0;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    auto alone = model_->embed(std::span(&texts[i], 1));
    ASSERT_TRUE(alone) << alone.error();
    const auto& one = *alone;
    ASSERT_EQ(one[0].size(), 512u);
    for (std::size_t j = 0; j < 512; ++j) {
      worst = std::max({worst, std::abs(one[0][j] - refs[i].vector[j]), std::abs(batch[i][j] - refs[i].vector[j])});
      ASSERT_NEAR(one[0][j], refs[i].vector[j], 1e-5f) << refs[i].text << " component " << j;
    }
    // Bit for bit: the stored vectors are part of the digest, and a replay cuts batches
    // differently from the live run.
    ASSERT_EQ(batch[i], one[0]) << refs[i].text << ": batched and alone differ";
  }
  // And with the products on one thread.
  model_->set_two_threads(false);
  auto serial = model_->embed(texts);
  ASSERT_TRUE(serial) << serial.error();
  model_->set_two_threads(true);
  EXPECT_EQ(*serial, batch);
  std::cout << "[ figures  ] largest difference from the JavaScript: " << worst << "\n";
}

TEST_F(UseLite, EmptyTextEmbedsAsTheZeroTokenOutputAndIsUnitLength) {
  std::vector<std::string_view> texts{"", "The Q3 budget is $50,000."};
  auto embedded = model_->embed(texts);
  ASSERT_TRUE(embedded) << embedded.error();
  const auto& out = *embedded;
  double ss = 0;
  for (float c : out[0])
    ss += double(c) * c;
  EXPECT_NEAR(ss, 1.0, 1e-5);
  EXPECT_NE(out[0], out[1]);
}

TEST(UseLiteLoad, MissingWeightsAreAClearError) {
  auto loaded = embedding::use_lite_embedder::load("/nonexistent/use-lite-en.bin");
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().find("/nonexistent/use-lite-en.bin"), std::string::npos) << loaded.error();
  EXPECT_NE(loaded.error().find("tools/dev.sh setup"), std::string::npos) << loaded.error();
}

}  // namespace

namespace {

/// Counts what reaches it.
class counting_embedder final : public embedding::embedder {
public:
  std::size_t dim() const noexcept override { return 2; }
  std::string name() const override { return "counting"; }
  engram::result<std::vector<std::vector<float>>> embed(std::span<const std::string_view> texts) const override {
    std::vector<std::vector<float>> out;
    for (auto t : texts) {
      ++computed;
      out.push_back({static_cast<float>(t.size()), 1.0f});
    }
    return out;
  }
  mutable std::size_t computed = 0;
};

TEST(CachedEmbedder, RepeatedTextsAreComputedOnceAndTheOldestGoFirst) {
  auto inner = std::make_shared<counting_embedder>();
  embedding::cached_embedder cache(inner, 2);
  std::vector<std::string_view> first{"a", "bb", "a"};
  auto out = cache.embed(first);
  ASSERT_TRUE(out);
  EXPECT_EQ(inner->computed, 3u);  // "a" twice in one call reaches the model twice, is kept once
  EXPECT_EQ((*out)[0], (*out)[2]);
  std::vector<std::string_view> again{"bb", "a"};
  out = cache.embed(again);
  ASSERT_TRUE(out);
  EXPECT_EQ(inner->computed, 3u);
  EXPECT_EQ((*out)[0], (std::vector<float>{2, 1}));
  std::vector<std::string_view> third{"ccc"};  // evicts the least recently used: "bb"
  ASSERT_TRUE(cache.embed(third));
  std::vector<std::string_view> bb{"bb"}, a{"a"};
  ASSERT_TRUE(cache.embed(a));
  EXPECT_EQ(inner->computed, 4u);
  ASSERT_TRUE(cache.embed(bb));
  EXPECT_EQ(inner->computed, 5u);
  EXPECT_EQ(cache.hits_and_misses(), (std::pair<std::uint64_t, std::uint64_t>{3, 5}));
}

}  // namespace

// The type model's words: lower-case words and word pairs, counted, hashed, at a fixed length.
TEST(TypeModelWords, CountWordsAndPairsAtTheGivenLength) {
  auto f = embedding::word_features("Ab ab", std::size_t{1} << 20, 2.0f);
  ASSERT_EQ(f.size(), 2u);  // "ab" twice, "ab ab" once
  EXPECT_LT(f[0].bucket, f[1].bucket);
  float squares = 0.0f, values[2] = {f[0].value, f[1].value};
  for (const auto& w : f)
    squares += w.value * w.value;
  EXPECT_NEAR(squares, 4.0f, 1e-5f);
  std::sort(values, values + 2);
  EXPECT_NEAR(values[1] / values[0], 2.0f, 1e-5f);
}

TEST(TypeModelWords, CaseAndDigitsDoNotMatterPunctuationAndOtherLettersSplit) {
  auto buckets = [](std::string_view s) {
    std::vector<std::uint32_t> out;
    for (const auto& w : embedding::word_features(s, 8192, 1.0f))
      out.push_back(w.bucket);
    return out;
  };
  EXPECT_EQ(buckets("Send it by 3pm"), buckets("send IT by 11pm"));
  EXPECT_EQ(buckets("we'll ship v12"), buckets("We'll ship v7."));
  EXPECT_EQ(buckets("caf\xc3\xa9 bar"), buckets("caf, bar"));
  EXPECT_NE(buckets("we'll ship"), buckets("well ship"));
  EXPECT_TRUE(embedding::word_features("--- !!", 8192, 1.0f).empty());
  EXPECT_TRUE(embedding::word_features("words", 0, 1.0f).empty());
}
