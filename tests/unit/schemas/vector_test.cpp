// The int8 vector every similarity is computed from: quantisation error against float
// cosine, exact and symmetric integer sums, and its two encodings (stored bytes, base64 on
// engram-log).
#include "schemas/vector.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace {

using namespace engram::schemas;

std::vector<float> unit(std::mt19937& rng, std::size_t dim) {
  std::normal_distribution<float> g(0, 1);
  std::vector<float> v(dim);
  double ss = 0;
  for (auto& x : v) {
    x = g(rng);
    ss += double(x) * x;
  }
  for (auto& x : v)
    x = static_cast<float>(x / std::sqrt(ss));
  return v;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    s += double(a[i]) * b[i];
  return s;
}

TEST(Vector8, QuantisedSimilarityIsTheCosineToAThousandth) {
  std::mt19937 rng(1);
  double worst = 0;
  for (int i = 0; i < 500; ++i) {
    auto a = unit(rng, 512), b = unit(rng, 512);
    // Mix so that some pairs are near (the range dedup decides in).
    const float mix = static_cast<float>(i % 10) / 10.0f;
    for (std::size_t k = 0; k < b.size(); ++k)
      b[k] = mix * a[k] + (1 - mix) * b[k];
    double n = std::sqrt(cosine(b, b));
    for (auto& x : b)
      x = static_cast<float>(x / n);
    const auto qa = quantise(a), qb = quantise(b);
    worst = std::max(worst, std::fabs(similarity(qa, qb) - cosine(a, b)));
    EXPECT_EQ(similarity(qa, qb), similarity(qb, qa));
  }
  EXPECT_LT(worst, 2e-3);
}

TEST(Vector8, AVectorIsItsOwnNearestAtSimilarityOne) {
  std::mt19937 rng(2);
  for (int i = 0; i < 50; ++i) {
    const auto q = quantise(unit(rng, 512));
    EXPECT_NEAR(similarity(q, q), 1.0f, 1e-6f);
    int top = 0;
    for (auto c : q.q)
      top = std::max(top, std::abs(int(c)));
    EXPECT_EQ(top, 127);  // the largest component uses the full range
  }
}

TEST(Vector8, EmptyZeroOrMismatchedVectorsHaveNoSimilarity) {
  EXPECT_TRUE(quantise(std::vector<float>{}).empty());
  EXPECT_TRUE(quantise(std::vector<float>(8, 0.0f)).empty());
  EXPECT_TRUE(quantise(std::vector<float>{1.0f, NAN}).empty());
  const auto a = quantise(std::vector<float>{1, 0, 0}), b = quantise(std::vector<float>{1, 0});
  EXPECT_EQ(similarity(a, b), 0.0f);
  EXPECT_EQ(similarity(a, vector8{}), 0.0f);
}

TEST(Vector8, IntegerDotProductMatchesTheScalarSumForEveryLength) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> d(-128, 127);  // -128 too: stored bytes may hold it
  std::vector<std::size_t> lengths{512, 513, 1023, 1024};
  for (std::size_t n = 0; n <= 600; n += (n < 140 ? 1 : 53))
    lengths.push_back(n);
  for (auto n : lengths) {
    std::vector<std::int8_t> a(n), b(n);
    std::int64_t want = 0;
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = static_cast<std::int8_t>(d(rng));
      b[i] = static_cast<std::int8_t>(d(rng));
      want += std::int64_t(a[i]) * b[i];
    }
    EXPECT_EQ(dot_i8(a.data(), b.data(), n), want) << n;
    EXPECT_EQ(dot_i8_portable(a.data(), b.data(), n), want) << n;
  }
  for (std::int8_t x : {std::int8_t(-128), std::int8_t(-127), std::int8_t(127)})
    for (std::int8_t y : {std::int8_t(-128), std::int8_t(-127), std::int8_t(127)}) {
      std::vector<std::int8_t> a(512, x), b(512, y);
      EXPECT_EQ(dot_i8(a.data(), b.data(), 512), 512 * int(x) * int(y)) << int(x) << " " << int(y);
      // Read from an odd address, as the index's rows (after their 4-byte scale) are.
      std::vector<std::int8_t> shifted(515, y);
      EXPECT_EQ(dot_i8(a.data(), shifted.data() + 3, 512), 512 * int(x) * int(y));
    }
}

TEST(Vector8, StoredBytesRoundTripToTheBit) {
  std::mt19937 rng(4);
  const auto v = quantise(unit(rng, 512));
  const auto bytes = to_bytes(v);
  EXPECT_EQ(bytes.size(), 4u + 512u);
  auto back = from_bytes(bytes);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, v);
  EXPECT_FALSE(from_bytes("abc"));
}

TEST(Vector8, Base64RoundTripsEveryLengthAndRefusesGarbage) {
  for (std::size_t n = 0; n < 12; ++n) {
    std::vector<std::int8_t> q(n);
    for (std::size_t i = 0; i < n; ++i)
      q[i] = static_cast<std::int8_t>(i * 97 - 128);
    const auto text = to_base64(q);
    EXPECT_EQ(text.size(), (n + 2) / 3 * 4);
    auto back = from_base64(text);
    ASSERT_TRUE(back) << text;
    EXPECT_EQ(*back, q) << text;
  }
  EXPECT_EQ(to_base64(std::vector<std::int8_t>{'M', 'a', 'n'}), "TWFu");  // RFC 4648's example
  for (const char* bad : {"TWF", "TW=u", "T!Fu", "TWFu=", "=WFu", "TWFuTW=u"})
    EXPECT_FALSE(from_base64(bad)) << bad;
}

}  // namespace
