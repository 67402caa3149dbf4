// The hnswlib wrapper: search quality against brute force, removal, snapshots (including
// hnswlib 0.6.2's uninitialised num_deleted_ on load), refusal of damaged files.

#include "storage/vector_index.hpp"
#include "base/hash.hpp"
#include "storage/internal/snapshot_file.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <unistd.h>

using namespace engram;

namespace {

std::vector<schemas::vector8> unit_vectors(std::size_t n, std::size_t dim, unsigned seed) {
  // Clustered, like sentence embeddings: 50 centres, points scattered around them.
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0, 1);
  std::vector<std::vector<float>> centres(50, std::vector<float>(dim));
  for (auto& c : centres)
    for (auto& x : c)
      x = g(rng);
  std::vector<std::vector<float>> out(n, std::vector<float>(dim));
  for (std::size_t i = 0; i < n; ++i) {
    const auto& c = centres[i % centres.size()];
    double ss = 0;
    for (std::size_t j = 0; j < dim; ++j) {
      out[i][j] = c[j] + 0.8f * g(rng);
      ss += double(out[i][j]) * out[i][j];
    }
    for (auto& x : out[i])
      x = static_cast<float>(x / std::sqrt(ss));
  }
  std::vector<schemas::vector8> q;
  for (const auto& v : out)
    q.push_back(schemas::quantise(v));
  return q;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string temp(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("engram-vi-" + std::to_string(::getpid()) + "-" + name)).string();
}

/// The labels (i + 1) of the 10 of data[0, n) most similar to data[q], by exhaustive search.
std::set<std::uint64_t> exact_ten(const std::vector<schemas::vector8>& data, std::size_t q, std::size_t n) {
  std::vector<std::pair<float, std::uint64_t>> exact;
  for (std::size_t i = 0; i < n; ++i)
    exact.emplace_back(-schemas::similarity(data[q], data[i]), i + 1);
  std::partial_sort(exact.begin(), exact.begin() + 10, exact.end());
  std::set<std::uint64_t> truth;
  for (int k = 0; k < 10; ++k)
    truth.insert(exact[static_cast<std::size_t>(k)].second);
  return truth;
}

TEST(VectorIndex, RecallAt10AgainstBruteForce) {
  const std::size_t dim = 64, n = 5000, queries = 200;
  auto data = unit_vectors(n + queries, dim, 7);
  storage::vector_index index(dim);
  for (std::size_t i = 0; i < n; ++i)
    index.add(i + 1, data[i]);
  EXPECT_EQ(index.size(), n);
  std::size_t found = 0;
  for (std::size_t q = n; q < n + queries; ++q) {
    const auto truth = exact_ten(data, q, n);
    auto hits = index.search(data[q], 10);
    ASSERT_EQ(hits.size(), 10u);
    for (std::size_t k = 1; k < hits.size(); ++k)
      EXPECT_GE(hits[k - 1].similarity, hits[k].similarity);
    // The similarity reported is the decisions' own, to the bit.
    for (const auto& h : hits)
      EXPECT_EQ(h.similarity, schemas::similarity(data[q], data[h.label - 1]));
    for (const auto& h : hits)
      found += truth.count(h.label);
  }
  EXPECT_GE(double(found) / double(queries * 10), 0.95);
}

TEST(VectorIndex, AnEfForOneSearchFindsWhatAnIndexWithThatEfFinds) {
  // Two indexes grown alike are the same graph; one searches with its own ef of 40, the
  // other with 40 given for each search (its own stays 128): the same hits, in the same
  // order, with hidden labels too (hnswlib's other level-0 search).
  const std::size_t dim = 32, n = 3000;
  auto data = unit_vectors(n + 100, dim, 11);
  storage::vector_index given(dim);
  storage::vector_index own(dim, storage::vector_index_options{.ef_search = 40});
  for (std::size_t i = 0; i < n; ++i) {
    given.add(i + 1, data[i]);
    own.add(i + 1, data[i]);
  }
  auto same = [&](std::size_t k) {
    std::size_t differ = 0;
    for (std::size_t q = n; q < n + 100; ++q) {
      const auto a = given.search(data[q], k, 40), b = own.search(data[q], k);
      EXPECT_EQ(a.size(), b.size());
      for (std::size_t r = 0; r < std::min(a.size(), b.size()); ++r)
        differ += a[r].label != b[r].label || a[r].similarity != b[r].similarity;
    }
    return differ;
  };
  EXPECT_EQ(same(10), 0u);
  EXPECT_EQ(same(60), 0u);  // k above ef: a list of k
  for (std::uint64_t label = 1; label <= n; label += 7) {
    given.remove(label);
    own.remove(label);
  }
  EXPECT_EQ(same(10), 0u);
  // Nearly every label hidden: the lists are mostly hidden nodes, which hnswlib's search with
  // deletions walks through and never returns.
  for (std::uint64_t label = 1; label <= n; ++label)
    if (label % 200 != 0) {
      given.remove(label);
      own.remove(label);
    }
  EXPECT_EQ(same(10), 0u);
  for (std::size_t q = n; q < n + 100; ++q)
    for (const auto& h : given.search(data[q], 10, 40))
      EXPECT_EQ(h.label % 200, 0u) << h.label;
  // A longer list finds more of the exact ten (over the queries), in an index without hidden
  // labels.
  storage::vector_index fresh(dim);
  for (std::size_t i = 0; i < n; ++i)
    fresh.add(i + 1, data[i]);
  std::size_t short_found = 0, long_found = 0;
  for (std::size_t q = n; q < n + 100; ++q) {
    const auto truth = exact_ten(data, q, n);
    for (const auto& h : fresh.search(data[q], 10, 10))
      short_found += truth.count(h.label);
    for (const auto& h : fresh.search(data[q], 10, 400))
      long_found += truth.count(h.label);
  }
  EXPECT_GT(long_found, short_found);
  EXPECT_GE(double(long_found) / 1000.0, 0.98);
}

TEST(VectorIndex, RemovedLabelsAreNotFoundAndComeBackWhenAddedAgain) {
  auto data = unit_vectors(100, 16, 3);
  storage::vector_index index(16);
  for (std::size_t i = 0; i < data.size(); ++i)
    index.add(i + 1, data[i]);
  index.remove(5);
  index.remove(5);    // twice: no effect
  index.remove(999);  // unknown: no effect
  EXPECT_EQ(index.size(), 99u);
  for (const auto& h : index.search(data[4], 10))
    EXPECT_NE(h.label, 5u);
  index.add(5, data[4]);
  EXPECT_EQ(index.size(), 100u);
  EXPECT_EQ(index.search(data[4], 1).at(0).label, 5u);
}

TEST(VectorIndex, GrowsPastItsInitialCapacity) {
  auto data = unit_vectors(3000, 8, 11);
  storage::vector_index index(8);
  for (std::size_t i = 0; i < data.size(); ++i)
    index.add(i + 1, data[i]);
  EXPECT_EQ(index.size(), 3000u);
  EXPECT_NEAR(index.search(data[2999], 1).at(0).similarity, 1.0f, 1e-5f);
}

TEST(VectorIndex, SnapshotRoundTripKeepsResultsAndDeletions) {
  auto data = unit_vectors(2000, 32, 5);
  storage::vector_index index(32);
  for (std::size_t i = 0; i < data.size(); ++i)
    index.add(i + 1, data[i]);
  for (std::uint64_t l : {3u, 30u, 300u})
    index.remove(l);
  auto path = temp("snap");
  auto saved = index.save(path);
  ASSERT_TRUE(saved) << saved.error();
  auto opened = storage::vector_index::load(path, 32, {});
  ASSERT_TRUE(opened) << opened.error();
  auto& loaded = *opened;
  // hnswlib 0.6.2 leaves num_deleted_ uninitialised on load: the count must be exact.
  EXPECT_EQ(loaded->size(), index.size());
  for (std::size_t q = 0; q < 50; ++q) {
    auto a = index.search(data[q * 7], 10), b = loaded->search(data[q * 7], 10);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t k = 0; k < a.size(); ++k)
      EXPECT_EQ(a[k].label, b[k].label);
  }
  // Adding after a load works like before it.
  loaded->add(5000, data[0]);
  EXPECT_EQ(loaded->size(), index.size() + 1);
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".sum");
}

TEST(VectorIndex, VectorsAddedAfterALoadMakeTheGraphOneRunWouldHaveMade) {
  // hnswlib draws each new node's level from its generator: a loaded index must draw what
  // the index it was saved from would have drawn next, or every vector added after a
  // restart lands on other levels than in a replay, and searches (dedup's decisions) differ.
  auto data = unit_vectors(3000, 32, 11);
  const std::size_t half = data.size() / 2;
  storage::vector_index one_run(32), first_half(32);
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (i == half) {  // a removed vector keeps its node, and the level it drew
      one_run.remove(7);
      first_half.remove(7);
    }
    one_run.add(i + 1, data[i]);
    if (i < half)
      first_half.add(i + 1, data[i]);
  }
  const auto saved = temp("half"), whole = temp("whole"), again = temp("again");
  ASSERT_TRUE(first_half.save(saved));
  auto opened = storage::vector_index::load(saved, 32, {});
  ASSERT_TRUE(opened) << opened.error();
  for (std::size_t i = half; i < data.size(); ++i)
    (*opened)->add(i + 1, data[i]);
  ASSERT_TRUE(one_run.save(whole));
  ASSERT_TRUE((*opened)->save(again));
  const auto a = bytes_of(again), b = bytes_of(whole);
  EXPECT_EQ(a.size(), b.size());
  EXPECT_TRUE(a == b) << "the graph grown after a load is not the one grown in one run";
  for (const auto& p : {saved, whole, again}) {
    std::filesystem::remove(p);
    std::filesystem::remove(p + ".sum");
  }
}

TEST(VectorIndex, ARemovedVectorIsInNoSnapshot) {
  constexpr std::size_t dim = 48;
  auto data = unit_vectors(300, dim, 9);
  storage::vector_index index(dim);
  for (std::size_t i = 0; i < data.size(); ++i)
    index.add(i + 1, data[i]);
  // The bytes of vector 42 as hnswlib stores them (its int8 values after the scale).
  const std::string forgotten(data[41].q.begin(), data[41].q.end());
  const auto before = temp("before"), after = temp("after");
  ASSERT_TRUE(index.save(before));
  EXPECT_NE(bytes_of(before).find(forgotten), std::string::npos);
  index.remove(42);
  ASSERT_TRUE(index.save(after));
  EXPECT_EQ(bytes_of(after).find(forgotten), std::string::npos);
  // The rest is found as before; the removed one never.
  for (std::size_t q = 0; q < 40; ++q)
    for (const auto& hit : index.search(data[q], 5))
      EXPECT_NE(hit.label, 42u);
  EXPECT_EQ(index.search(data[0], 1).at(0).label, 1u);
  for (const auto& p : {before, after}) {
    std::filesystem::remove(p);
    std::filesystem::remove(p + ".sum");
  }
}

/// An index of `n` clustered vectors of 16 dimensions, labels 1..n.
std::unique_ptr<storage::vector_index> index_of(std::size_t n, unsigned seed) {
  auto index = std::make_unique<storage::vector_index>(16);
  auto data = unit_vectors(n, 16, seed);
  for (std::size_t i = 0; i < data.size(); ++i)
    index->add(i + 1, data[i]);
  return index;
}

TEST(VectorIndex, DamagedOrForeignSnapshotsAreRefused) {
  const auto index = index_of(200, 9);
  auto path = temp("damaged");
  auto saved = index->save(path);
  ASSERT_TRUE(saved) << saved.error();
  auto other_dim = storage::vector_index::load(path, 32, {});
  ASSERT_FALSE(other_dim);
  EXPECT_NE(other_dim.error().find("dimension"), std::string::npos) << other_dim.error();
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  auto cut = storage::vector_index::load(path, 16, {});
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().find("checksum"), std::string::npos) << cut.error();
  auto missing = storage::vector_index::load(temp("missing"), 16, {});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("no readable checksum file"), std::string::npos) << missing.error();
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".sum");
}

TEST(VectorIndex, ALayoutThatDoesNotHoldTogetherIsRefusedEvenWithAMatchingChecksum) {
  const auto index = index_of(300, 5);
  auto path = temp("layout");
  ASSERT_TRUE(index->save(path));
  const std::string good = bytes_of(path);
  // Each damaged file gets a sidecar that matches it: only the reader of the layout stands
  // between it and the index.
  auto load_as = [&](const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    auto sum = storage::detail::sum_of_file(path, storage::detail::sum_kind::xxh3);
    EXPECT_TRUE(sum);
    std::ofstream(path + ".sum", std::ios::trunc) << "16 " << sum->size << ' ' << sum->hash << " xxh3\n";
    return storage::vector_index::load(path, 16, {});
  };
  const auto refused = [&](const std::string& bytes, const std::string& why) {
    auto loaded = load_as(bytes);
    ASSERT_FALSE(loaded) << why;
    EXPECT_NE(loaded.error().find(why), std::string::npos) << loaded.error();
  };
  refused(good + std::string(4, '\0'), "bytes after the last link list");
  refused(good.substr(0, good.size() - 3), "truncated");
  refused(good.substr(0, 40), "truncated");
  std::string other_space = good;
  other_space[3 * 8] ^= 1;  // size_data_per_element_: another vector size
  refused(other_space, "a header this build does not write");
  auto again = load_as(good);
  ASSERT_TRUE(again) << again.error();
  EXPECT_EQ((*again)->size(), index->size());
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".sum");
}

TEST(VectorIndex, ASidecarOfTheFirstFormatIsCheckedWithFnv1aAndAnUnknownKindIsRefused) {
  const auto index = index_of(200, 4);
  auto path = temp("first-format");
  ASSERT_TRUE(index->save(path));
  const std::string bytes = bytes_of(path);
  {
    std::ifstream side(path + ".sum");
    std::string line;
    std::getline(side, line);
    EXPECT_EQ(line.substr(line.size() - 5), " xxh3") << line;
  }
  auto write_sidecar = [&](const std::string& line) { std::ofstream(path + ".sum", std::ios::trunc) << line << '\n'; };
  // Three numbers, as the first snapshots were written: dimension, size, FNV-1a.
  write_sidecar("16 " + std::to_string(bytes.size()) + " " + std::to_string(fnv1a(bytes)));
  auto old = storage::vector_index::load(path, 16, {});
  ASSERT_TRUE(old) << old.error();
  EXPECT_EQ((*old)->size(), index->size());
  // The same FNV-1a named as XXH3 is a mismatch, not a load.
  write_sidecar("16 " + std::to_string(bytes.size()) + " " + std::to_string(fnv1a(bytes)) + " xxh3");
  auto wrong = storage::vector_index::load(path, 16, {});
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().find("checksum mismatch"), std::string::npos) << wrong.error();
  write_sidecar("16 " + std::to_string(bytes.size()) + " 1 md5");
  auto unknown = storage::vector_index::load(path, 16, {});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().find("unknown kind 'md5'"), std::string::npos) << unknown.error();
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".sum");
}

TEST(SnapshotFile, AFileIsMarkedWithXxh3AndAMarkOfEitherKindChecksItsBytes) {
  using namespace storage::detail;
  const auto path = temp("snapshot-file");
  std::string payload;
  for (int i = 0; i < 300000; ++i)  // past the 1 MiB buffer: the sum runs over several drains
    payload += static_cast<char>('a' + i % 23);
  snapshot_out out(path);
  out.bytes(payload);
  out.u32(7);
  auto sum = out.install();
  ASSERT_TRUE(sum) << sum.error();
  EXPECT_EQ(sum->kind, sum_kind::xxh3);
  auto again = sum_of_file(path, sum_kind::xxh3);
  ASSERT_TRUE(again) << again.error();
  EXPECT_EQ(*again, *sum);
  auto in = snapshot_in::open(path, *sum);
  ASSERT_TRUE(in) << in.error();
  EXPECT_EQ(in->bytes(), payload);
  EXPECT_EQ(in->u32(), 7u);
  EXPECT_TRUE(in->ok() && in->at_end());
  // A mark of the first format: FNV-1a of the same bytes.
  auto fnv = sum_of_file(path, sum_kind::fnv1a);
  ASSERT_TRUE(fnv) << fnv.error();
  const std::string bytes = bytes_of(path);
  EXPECT_EQ(fnv->hash, fnv1a(bytes));
  EXPECT_NE(fnv->hash, sum->hash);
  EXPECT_TRUE(snapshot_in::open(path, *fnv));
  auto swapped = snapshot_in::open(path, {sum->size, sum->hash, sum_kind::fnv1a});
  ASSERT_FALSE(swapped);
  EXPECT_NE(swapped.error().find("checksum differs"), std::string::npos) << swapped.error();
  std::filesystem::remove(path);
}

}  // namespace
