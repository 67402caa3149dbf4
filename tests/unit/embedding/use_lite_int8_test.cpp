// The int8 USE Lite (embedding/use_lite_int8.cpp): the same bits on every path the
// CPU has (portable always; AVX2 and AVX-512 VNNI when present), the same bits alone or in
// any batch and with one thread or two, and close to the float encoder (use_lite.cpp).

#include "embedding/embedder.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

using namespace engram;
using embedding::encoder_isa;

namespace {

/// The sentences of the embedder reference, the dedup pairs and the contradiction cases
/// (each once, in file order), then an empty text.
std::vector<std::string> test_sentences() {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& s) {
    if (seen.insert(s).second)
      out.push_back(s);
  };
  auto each_line = [](const std::string& file, const auto& fn) {
    std::ifstream in(std::string(ENGRAM_SOURCE_DIR) + "/" + file);
    EXPECT_TRUE(in) << file;
    for (std::string line; std::getline(in, line);)
      if (!line.empty())
        fn(nlohmann::json::parse(line));
  };
  each_line("tests/data/embedder/reference.jsonl", [&](const nlohmann::json& j) { add(j.at("text")); });
  each_line("tests/data/dedup/pairs.jsonl", [&](const nlohmann::json& j) {
    add(j.at("a"));
    add(j.at("b"));
  });
  each_line("tests/data/contradiction/cases.jsonl", [&](const nlohmann::json& j) {
    add(j.at("older").at("text"));
    add(j.at("newer").at("text"));
  });
  out.emplace_back();
  return out;
}

/// Whether this CPU has what the path needs (asked independently of the embedder).
bool cpu_has(encoder_isa isa) {
  switch (isa) {
    case encoder_isa::automatic:
    case encoder_isa::portable: return true;
#if defined(__x86_64__)
    case encoder_isa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vnni");
    case encoder_isa::avx2: return __builtin_cpu_supports("avx2");
#else
    default: return false;
#endif
  }
  return false;
}

constexpr encoder_isa paths[] = {encoder_isa::portable, encoder_isa::avx2, encoder_isa::avx512};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

class UseLiteInt8 : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    sentences_ = new std::vector<std::string>(test_sentences());
    models_ = new std::map<encoder_isa, std::unique_ptr<embedding::use_lite_int8_embedder>>();
    for (auto isa : paths) {
      if (!cpu_has(isa))
        continue;
      auto loaded = embedding::use_lite_int8_embedder::load(ENGRAM_MODEL_PATH, isa);
      ASSERT_TRUE(loaded) << to_string(isa) << ": " << loaded.error();
      (*loaded)->set_two_threads(true);
      models_->emplace(isa, std::move(*loaded));
    }
  }
  static void TearDownTestSuite() {
    delete models_;
    delete sentences_;
    models_ = nullptr;
    sentences_ = nullptr;
  }

  static std::vector<std::string_view> texts() { return {sentences_->begin(), sentences_->end()}; }

  static std::vector<std::string>* sentences_;
  static std::map<encoder_isa, std::unique_ptr<embedding::use_lite_int8_embedder>>* models_;
};

std::vector<std::string>* UseLiteInt8::sentences_ = nullptr;
std::map<encoder_isa, std::unique_ptr<embedding::use_lite_int8_embedder>>* UseLiteInt8::models_ = nullptr;

TEST_F(UseLiteInt8, EveryPathTheCpuHasGivesTheSameBits) {
  const auto all = texts();
  ASSERT_GE(all.size(), 250u);
  ASSERT_TRUE(models_->count(encoder_isa::portable));
  auto reference = models_->at(encoder_isa::portable)->embed(all);
  ASSERT_TRUE(reference) << reference.error();
  std::size_t compared = 0;
  for (const auto& [isa, model] : *models_) {
    EXPECT_EQ(model->active_isa(), isa);
    EXPECT_EQ(model->name(), "use-lite-int8");
    EXPECT_EQ(model->dim(), 512u);
    auto got = model->embed(all);
    ASSERT_TRUE(got) << got.error();
    ASSERT_EQ(got->size(), all.size());
    for (std::size_t i = 0; i < all.size(); ++i)
      ASSERT_TRUE(same_bits((*got)[i], (*reference)[i]))
          << to_string(isa) << " differs from portable on '" << all[i] << "'";
    ++compared;
    std::cout << "[ paths    ] " << to_string(isa) << ": " << all.size() << " sentences, same bits as portable\n";
  }
  EXPECT_EQ(compared, models_->size());
}

TEST_F(UseLiteInt8, EachSentenceAloneInABatchOf64AndOnOneThreadGivesTheSameBits) {
  const auto all = texts();
  for (const auto& [isa, model] : *models_) {
    SCOPED_TRACE(std::string(to_string(isa)));
    model->set_two_threads(true);
    // Batches of 64 (hundreds of token rows: the two-thread split and the chunking run) and
    // every sentence at once.
    std::vector<std::vector<float>> in64;
    for (std::size_t b = 0; b < all.size(); b += 64) {
      auto got = model->embed(std::span(all).subspan(b, std::min<std::size_t>(64, all.size() - b)));
      ASSERT_TRUE(got) << got.error();
      in64.insert(in64.end(), got->begin(), got->end());
    }
    auto together = model->embed(all);
    ASSERT_TRUE(together) << together.error();
    model->set_two_threads(false);
    auto serial = model->embed(all);
    model->set_two_threads(true);
    ASSERT_TRUE(serial) << serial.error();
    for (std::size_t i = 0; i < all.size(); ++i) {
      auto alone = model->embed(std::span(&all[i], 1));
      ASSERT_TRUE(alone) << alone.error();
      ASSERT_TRUE(same_bits((*alone)[0], in64[i])) << "'" << all[i] << "': alone and in a batch of 64 differ";
      ASSERT_TRUE(same_bits((*alone)[0], (*together)[i])) << "'" << all[i] << "': alone and in the full batch differ";
      ASSERT_TRUE(same_bits((*alone)[0], (*serial)[i])) << "'" << all[i] << "': two threads and one differ";
    }
  }
}

TEST_F(UseLiteInt8, StaysCloseToTheFloatEncoder) {
  auto loaded = embedding::use_lite_embedder::load(ENGRAM_MODEL_PATH);
  ASSERT_TRUE(loaded) << loaded.error();
  const auto all = texts();
  auto reference = (*loaded)->embed(all);
  ASSERT_TRUE(reference) << reference.error();
  const auto& model = models_->begin()->second;
  auto got = model->embed(all);
  ASSERT_TRUE(got) << got.error();
  double sum = 0, least = 1;
  std::string_view worst;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const double c = cosine((*got)[i], (*reference)[i]);
    sum += c;
    if (c < least) {
      least = c;
      worst = all[i];
    }
  }
  const double mean = sum / double(all.size());
  std::cout << "[ figures  ] cosine to the float encoder over " << all.size() << " sentences: mean " << mean << ", min "
            << least << " ('" << worst << "')\n";
  EXPECT_GE(mean, 0.995);
  EXPECT_GE(least, 0.98);
}

TEST_F(UseLiteInt8, VectorsAreUnitLengthAndTokensMatchTheFloatEncoder) {
  auto loaded = embedding::use_lite_embedder::load(ENGRAM_MODEL_PATH);
  ASSERT_TRUE(loaded) << loaded.error();
  const auto all = texts();
  const auto& model = models_->begin()->second;
  auto got = model->embed(all);
  ASSERT_TRUE(got) << got.error();
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(model->tokenize(all[i]), (*loaded)->tokenize(all[i])) << all[i];
    double ss = 0;
    for (float c : (*got)[i]) {
      ASSERT_TRUE(std::isfinite(c)) << all[i];
      ss += double(c) * c;
    }
    EXPECT_NEAR(ss, 1.0, 1e-5) << "'" << all[i] << "'";
  }
  // The empty text (last) embeds as the zero-token output, unlike any sentence.
  EXPECT_FALSE(same_bits(got->back(), (*got)[0]));
  auto none = model->embed({});
  ASSERT_TRUE(none) << none.error();
  EXPECT_TRUE(none->empty());
}

TEST_F(UseLiteInt8, AutomaticPicksTheWidestPathTheCpuHas) {
  auto loaded = embedding::use_lite_int8_embedder::load(ENGRAM_MODEL_PATH);
  ASSERT_TRUE(loaded) << loaded.error();
  const auto want = cpu_has(encoder_isa::avx512) ? encoder_isa::avx512
                    : cpu_has(encoder_isa::avx2) ? encoder_isa::avx2
                                                 : encoder_isa::portable;
  EXPECT_EQ((*loaded)->active_isa(), want) << to_string((*loaded)->active_isa());
}

TEST(UseLiteInt8Load, APathTheCpuLacksIsRefusedByName) {
  bool tried = false;
  for (auto isa : paths) {
    if (cpu_has(isa))
      continue;
    tried = true;
    auto loaded = embedding::use_lite_int8_embedder::load(ENGRAM_MODEL_PATH, isa);
    ASSERT_FALSE(loaded) << to_string(isa) << " loaded on a CPU without it";
    EXPECT_NE(loaded.error().find(std::string(to_string(isa))), std::string::npos) << loaded.error();
    EXPECT_NE(loaded.error().find("lacks"), std::string::npos) << loaded.error();
  }
  if (!tried)
    std::cout << "[ skipped  ] this CPU has every path: no refusal to test\n";
}

TEST(UseLiteInt8Load, PathNamesParseAndPrint) {
  for (auto isa : {encoder_isa::automatic, encoder_isa::avx512, encoder_isa::avx2, encoder_isa::portable})
    EXPECT_EQ(embedding::parse_encoder_isa(to_string(isa)), isa);
  EXPECT_EQ(to_string(encoder_isa::automatic), "auto");
  EXPECT_FALSE(embedding::parse_encoder_isa("sse9"));
  EXPECT_FALSE(embedding::parse_encoder_isa(""));
  EXPECT_FALSE(embedding::parse_encoder_isa("AVX512"));
}

TEST(UseLiteInt8Load, MissingWeightsAreAClearError) {
  auto loaded = embedding::use_lite_int8_embedder::load("/nonexistent/use-lite-en.bin", encoder_isa::portable);
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().find("/nonexistent/use-lite-en.bin"), std::string::npos) << loaded.error();
  EXPECT_NE(loaded.error().find("tools/dev.sh setup"), std::string::npos) << loaded.error();
}

/// Loads the int8 encoder (portable path) with `adapter`; fails the test when it cannot.
std::unique_ptr<embedding::use_lite_int8_embedder> adapted(const embedding::encoder_adapter& adapter) {
  auto loaded = embedding::use_lite_int8_embedder::load(ENGRAM_MODEL_PATH, encoder_isa::portable, &adapter);
  EXPECT_TRUE(loaded) << loaded.error();
  return loaded ? std::move(*loaded) : nullptr;
}

std::vector<std::vector<float>> vectors(const embedding::embedder& e, const std::vector<std::string>& texts) {
  std::vector<std::string_view> views(texts.begin(), texts.end());
  auto v = e.embed(views);
  EXPECT_TRUE(v) << v.error();
  return v ? *v : std::vector<std::vector<float>>{};
}

TEST(UseLiteInt8Adapter, AZeroUpdateAndUnchangedTensorsGiveThePlainEncodersBits) {
  auto plain = embedding::use_lite_int8_embedder::load(ENGRAM_MODEL_PATH, encoder_isa::portable);
  ASSERT_TRUE(plain) << plain.error();
  embedding::encoder_adapter adapter;
  adapter.updates.push_back({"l1.ffn2_w", 2, std::vector<float>(1536 * 2, 0.0f), std::vector<float>(2 * 512, 0.5f)});
  adapter.digest = 0xabcdef;
  auto same = adapted(adapter);
  ASSERT_TRUE(same);
  EXPECT_EQ((*plain)->name(), "use-lite-int8");
  EXPECT_EQ(same->name(), "use-lite-int8+adapter/0000000000abcdef");
  const std::vector<std::string> texts{"Please send the signed contract by Friday.", "We moved the launch to March."};
  EXPECT_EQ(vectors(**plain, texts), vectors(*same, texts));

  // A real update of the same matrix, and a bias replaced: other vectors, still unit length.
  adapter.updates[0].a.assign(1536 * 2, 0.01f);
  adapter.replaced.emplace_back("tanh_b", std::vector<float>(512, 0.1f));
  auto changed = adapted(adapter);
  ASSERT_TRUE(changed);
  auto before = vectors(**plain, texts), after = vectors(*changed, texts);
  ASSERT_EQ(after.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_NE(before[i], after[i]);
    double norm = 0;
    for (float x : after[i])
      norm += double(x) * x;
    EXPECT_NEAR(norm, 1.0, 1e-4);
  }
}

TEST(UseLiteInt8Adapter, ATensorTheModelLacksOrOfAnotherSizeIsAnErrorNamingIt) {
  embedding::encoder_adapter unknown;
  unknown.updates.push_back({"l2.qkv_w", 1, std::vector<float>(512), std::vector<float>(1536)});
  auto r = embedding::use_lite_int8_embedder::load(ENGRAM_MODEL_PATH, encoder_isa::portable, &unknown);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("'l2.qkv_w'"), std::string::npos) << r.error();

  embedding::encoder_adapter misshapen;  // l0.qkv_w is [256, 768]: a [512, 1] factor fits no row count
  misshapen.updates.push_back({"l0.qkv_w", 1, std::vector<float>(512), std::vector<float>(768)});
  r = embedding::use_lite_int8_embedder::load(ENGRAM_MODEL_PATH, encoder_isa::portable, &misshapen);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("'l0.qkv_w'"), std::string::npos) << r.error();

  embedding::encoder_adapter short_bias;
  short_bias.replaced.emplace_back("tanh_b", std::vector<float>(511));
  r = embedding::use_lite_int8_embedder::load(ENGRAM_MODEL_PATH, encoder_isa::portable, &short_bias);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("'tanh_b'"), std::string::npos) << r.error();
}

}  // namespace
