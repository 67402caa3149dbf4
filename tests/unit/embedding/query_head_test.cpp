// Recall's query head (embedding/query_head.hpp): the compiled-in head loads, maps a vector to a
// unit vector the same way every time, and a malformed file is refused with its reason.

#include "embedding/query_head.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using namespace engram::embedding;

namespace {

/// A head file of dim `dim` and rank `rank` whose U and V hold `u` and `v` everywhere.
std::string head_file(std::size_t dim, std::size_t rank, float u, float v, std::size_t drop = 0) {
  const std::string header = R"({"format":1,"name":"t","encoder":"use-lite-int8","dim":)" + std::to_string(dim) +
                             R"(,"rank":)" + std::to_string(rank) + "}";
  std::string out = "ENGHEAD1";
  for (int i = 0; i < 4; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  out += header;
  auto put = [&](float f, std::size_t n) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    for (std::size_t k = 0; k < n; ++k)
      for (int i = 0; i < 4; ++i)
        out += static_cast<char>((bits >> (8 * i)) & 0xFF);
  };
  put(u, dim * rank);
  put(v, dim * rank);
  out.resize(out.size() - drop);
  return out;
}

double norm(const std::vector<float>& x) {
  double s = 0;
  for (float f : x)
    s += double(f) * f;
  return std::sqrt(s);
}

TEST(QueryHead, TheBuiltinHeadMapsA512dVectorToAnotherUnitVectorTheSameEveryTime) {
  auto head = query_head::builtin();
  ASSERT_TRUE(head);
  EXPECT_EQ(head->dim(), 512u);
  EXPECT_EQ(head->encoder(), "use-lite-int8");
  EXPECT_EQ(head->version().rfind("query-head-1/", 0), 0u);
  std::vector<float> q(512);
  for (std::size_t i = 0; i < q.size(); ++i)
    q[i] = static_cast<float>(std::sin(double(i) * 0.37));
  const double n = norm(q);
  for (auto& f : q)
    f = static_cast<float>(f / n);
  const auto a = head->apply(q), b = head->apply(q);
  EXPECT_EQ(a, b);
  EXPECT_NEAR(norm(a), 1.0, 1e-5);
  EXPECT_NE(a, q) << "a trained head moves the vector";
  // A vector of another size is left as it is.
  std::vector<float> small(3, 0.5f);
  EXPECT_EQ(head->apply(small), small);
}

TEST(QueryHead, AHeadFileIsReadAsWrittenAndAMalformedOneIsRefusedWithItsReason) {
  // U = 1/dim everywhere and V = 0: the map is the identity.
  auto parsed = query_head::parse(head_file(4, 2, 0.25f, 0.0f));
  ASSERT_TRUE(std::holds_alternative<std::shared_ptr<const query_head>>(parsed));
  const auto& h = std::get<std::shared_ptr<const query_head>>(parsed);
  std::vector<float> q{0.6f, 0.8f, 0.0f, 0.0f};
  const auto same = h->apply(q);
  for (std::size_t i = 0; i < q.size(); ++i)
    EXPECT_NEAR(same[i], q[i], 1e-6);
  // U = 1, V = 1: q + (sum of q) * rank in every coordinate, then normalised.
  parsed = query_head::parse(head_file(4, 2, 1.0f, 1.0f));
  const auto moved = std::get<std::shared_ptr<const query_head>>(parsed)->apply(q);
  const double t = (0.6 + 0.8) * 2;
  const double want[4] = {0.6 + t, 0.8 + t, t, t};
  const double n = std::sqrt(want[0] * want[0] + want[1] * want[1] + want[2] * want[2] + want[3] * want[3]);
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(moved[i], want[i] / n, 1e-6);

  auto error = [](const std::string& bytes) {
    auto p = query_head::parse(bytes);
    return std::holds_alternative<std::string>(p) ? std::get<std::string>(p) : std::string("(parsed)");
  };
  EXPECT_NE(error("ENGNAME1....").find("ENGHEAD1"), std::string::npos);
  EXPECT_NE(error(head_file(4, 2, 1.0f, 1.0f, 4)).find("not 64"), std::string::npos) << error(head_file(4, 2, 1, 1, 4));
  EXPECT_NE(error(head_file(4, 8, 1.0f, 1.0f)).find("rank"), std::string::npos);
  EXPECT_NE(error(head_file(4, 2, NAN, 1.0f)).find("not finite"), std::string::npos);
  auto bad_header = head_file(4, 2, 1.0f, 1.0f);
  const auto at = bad_header.find("\"dim\":4");
  bad_header.replace(at, 7, "\"dim\":\"4\"");
  bad_header[8] = static_cast<char>(bad_header[8] + 2);  // the header is two bytes longer
  EXPECT_NE(error(bad_header).find("\"dim\" is not a positive whole number"), std::string::npos) << error(bad_header);
  auto loaded = query_head::load("/nonexistent/head.bin");
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().find("/nonexistent/head.bin"), std::string::npos);
}

}  // namespace
