// The graph store's key codec (storage/internal/keys.hpp): parts joined by '\0' so that an
// organisation is one contiguous, prefix-seekable range; big-endian integers so that key
// order is numeric order.
#include "storage/internal/keys.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace {

using namespace engram::storage::detail;
using engram::lower_ascii;
using engram::normalise_name;

std::vector<std::string> split(const std::string& k) {
  std::vector<std::string> parts(1);
  for (char c : k)
    if (c == '\0')
      parts.emplace_back();
    else
      parts.back() += c;
  return parts;
}

TEST(Keys, PartsRoundTripAndAnOrganisationIsOnePrefix) {
  const auto k = key("acme", "e-0123", "fact");
  EXPECT_EQ(split(k), (std::vector<std::string>{"acme", "e-0123", "fact"}));
  EXPECT_EQ(key("acme"), "acme");
  EXPECT_EQ(split(key("acme", "")), (std::vector<std::string>{"acme", ""}));
  // "acme" \0 ... never collides with "acme-2" \0 ...: the separator sorts before every byte
  // an id may hold.
  EXPECT_EQ(k.rfind(key("acme", ""), 0), 0u);
  EXPECT_NE(key("acme-2", "x").rfind(key("acme", ""), 0), 0u);
}

TEST(Keys, IntegersRoundTripAndSortNumerically) {
  for (std::uint64_t v : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{255}, std::uint64_t{256},
                          std::uint64_t{1} << 40, std::numeric_limits<std::uint64_t>::max()}) {
    EXPECT_EQ(encode_u64(v).size(), 8u);
    EXPECT_EQ(decode_u64(encode_u64(v)), v);
  }
  for (std::uint32_t v : {0u, 1u, 65535u, 65536u, std::numeric_limits<std::uint32_t>::max()}) {
    EXPECT_EQ(encode_u32(v).size(), 4u);
    EXPECT_EQ(decode_u32(encode_u32(v)), v);
  }
  EXPECT_LT(encode_u64(255), encode_u64(256));
  EXPECT_LT(encode_u64(1'700'000'000'000), encode_u64(1'800'000'000'000));
  EXPECT_LT(encode_u32(9), encode_u32(10));
}

TEST(Keys, NamesNormaliseToTheirLookupForm) {
  EXPECT_EQ(normalise_name("  Sarah   LEE\t"), "sarah lee");
  EXPECT_EQ(normalise_name("Acme"), normalise_name("ACME "));
  EXPECT_EQ(lower_ascii("Bob@Acme.Example"), "bob@acme.example");
}

TEST(Keys, EveryColumnFamilyHasAName) {
  EXPECT_STREQ(cf_names[cf_entries], "entries");
  EXPECT_STREQ(cf_names[cf_review], "review");
}

}  // namespace
