// The C++ USE Lite against vectors the package's own JavaScript computed
// (tests/data/embedder/reference.jsonl; README there says how).

#include "embedding/embedder.hpp"
#include "base/hash.hpp"
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

// The adapter file (type_model.hpp, "ENGADPT1"): the encoder's change the type model is trained under.
namespace {

struct adapter_file {
  std::string header = R"({"encoder": "use-lite-int8", "format": 1, "rank": 1})";
  std::vector<std::pair<std::string, std::vector<float>>> tensors{{"tanh_w.a", std::vector<float>(512, 0.01f)},
                                                                  {"tanh_w.b", std::vector<float>(512, 0.02f)},
                                                                  {"tanh_b", std::vector<float>(512, 0.05f)}};

  [[nodiscard]] std::string bytes() const {
    std::string out = "ENGADPT1";
    auto u32 = [&](std::uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
    u32(static_cast<std::uint32_t>(header.size()));
    out += header;
    u32(static_cast<std::uint32_t>(tensors.size()));
    for (const auto& [name, values] : tensors) {
      u32(static_cast<std::uint32_t>(name.size()));
      out += name;
      u32(static_cast<std::uint32_t>(values.size()));
      out.append(reinterpret_cast<const char*>(values.data()), values.size() * 4);
    }
    return out;
  }
};

std::string parse_error(const std::string& bytes) {
  auto r = embedding::parse_encoder_adapter(bytes);
  return r ? std::string("parsed") : r.error();
}

}  // namespace

TEST(TypeAdapterFile, ReadsEachUpdateAndEachTensorReplaced) {
  const auto bytes = adapter_file{}.bytes();
  auto r = embedding::parse_encoder_adapter(bytes);
  ASSERT_TRUE(r) << r.error();
  ASSERT_EQ(r->updates.size(), 1u);
  EXPECT_EQ(r->updates[0].matrix, "tanh_w");
  EXPECT_EQ(r->updates[0].rank, 1u);
  EXPECT_EQ(r->updates[0].a, std::vector<float>(512, 0.01f));
  EXPECT_EQ(r->updates[0].b, std::vector<float>(512, 0.02f));
  ASSERT_EQ(r->replaced.size(), 1u);
  EXPECT_EQ(r->replaced[0].first, "tanh_b");
  EXPECT_EQ(r->digest, fnv1a(bytes));
}

TEST(TypeAdapterFile, WhatIsWrongWithAFileIsSaid) {
  const auto good = adapter_file{}.bytes();
  EXPECT_NE(parse_error("ENGUSE01" + good.substr(8)).find("bad magic"), std::string::npos);
  EXPECT_NE(parse_error(good.substr(0, good.size() - 5)).find("truncated"), std::string::npos);
  adapter_file f;
  f.header = R"({"encoder": "use-lite-int8", "format": 2, "rank": 1})";
  EXPECT_NE(parse_error(f.bytes()).find("format 1"), std::string::npos) << parse_error(f.bytes());
  f = {};
  f.tensors.erase(f.tensors.begin());
  EXPECT_NE(parse_error(f.bytes()).find("'tanh_w.b' follows no 'tanh_w.a'"), std::string::npos)
      << parse_error(f.bytes());
  f = {};
  f.tensors.erase(f.tensors.begin() + 1);
  EXPECT_NE(parse_error(f.bytes()).find("'tanh_w.a' has no 'tanh_w.b'"), std::string::npos) << parse_error(f.bytes());
}

TEST(TypeAdapterFile, TheBuiltInAdapterChangesTheTypeModelsEncoderAndItsVersion) {
  const auto& adapter = embedding::builtin_type_adapter();
  EXPECT_FALSE(adapter.updates.empty());
  auto m = embedding::load_type_model(ENGRAM_MODEL_PATH);
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ((*m)->encoder().name().rfind("use-lite-int8+adapter/", 0), 0u) << (*m)->encoder().name();
  EXPECT_EQ((*m)->version().rfind("types-3/", 0), 0u) << (*m)->version();
  // The built-in weights read the adapted encoder's vectors: on the plain encoder they give
  // other probabilities, and another version.
  auto plain = embedding::use_lite_int8_embedder::load(ENGRAM_MODEL_PATH);
  ASSERT_TRUE(plain) << plain.error();
  embedding::type_model on_plain(std::shared_ptr<const embedding::embedder>(std::move(*plain)));
  EXPECT_NE(on_plain.version(), (*m)->version());
  const std::string_view text = "Please send the signed contract by Friday.";
  auto adapted = (*m)->classify(std::span(&text, 1)), unadapted = on_plain.classify(std::span(&text, 1));
  ASSERT_TRUE(adapted && unadapted);
  EXPECT_NE((*adapted)[0], (*unadapted)[0]);
}
