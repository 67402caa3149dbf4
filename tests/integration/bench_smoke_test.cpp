// `tools/dev.sh bench --quick`, the test of the benchmark table (docs/benchmarks.md): it runs the same code
// as the full table on small inputs and checks the table's shape, not its figures (speed is
// never asserted by a test).
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace {

using namespace engram;

/// `tools/dev.sh bench ARGS` on this build tree, as a user runs it: its exit code, its output.
int bench(const std::string& args, std::string* out) {
  return test::run("cd " ENGRAM_SOURCE_DIR " && ENGRAM_BUILD_DIR=" ENGRAM_BINARY_DIR " tools/dev.sh bench " + args,
                   out);
}

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line.substr(1));  // after the leading '|'
  while (std::getline(in, cell, '|')) {
    auto b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? std::string() : cell.substr(b, e - b + 1));
  }
  return out;
}

TEST(BenchQuick, PrintsOneTableWithEveryFigureItsCoresAndTheCommit) {
  std::string out;
  // This test's own build tree: dev.sh then only checks that engram_bench is up to date.
  const int rc = bench("--quick", &out);
  ASSERT_EQ(rc, 0) << out;

  std::string head;
  ASSERT_EQ(test::run("git -C " ENGRAM_SOURCE_DIR " rev-parse --short=12 HEAD", &head), 0) << head;
  head = head.substr(0, head.find('\n'));

  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(out);
  bool header = false, separator = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| figure |", 0) == 0) {
      EXPECT_FALSE(header) << "two tables:\n" << out;
      header = true;
      EXPECT_EQ(cells(line), (std::vector<std::string>{"figure", "value", "unit", "compared with", "cores", "commit"}));
    } else if (line == "|---|---|---|---|---|---|") {
      separator = true;
    } else if (header && line.rfind("| ", 0) == 0) {
      rows.push_back(cells(line));
    }
  }
  ASSERT_TRUE(header && separator) << out;

  // Every figure docs/benchmarks.md shows, in this order, with its unit.
  const std::vector<std::pair<std::string, std::string>> expected{
      {"ingest, ham corpus end to end (20 messages)", "messages/s"},
      {"ingest, 16 organisations on 16 partitions, dense mail (80 messages)", "messages/s"},
      {"ingest, real mail, hard-ham and spam (40 messages)", "messages/s"},
      {"stop while a backlog is applied", "s"},
      {"recall p50, 500 entries", "ms"},
      {"recall p99, 500 entries", "ms"},
      {"recall p50, 2,000 entries", "ms"},
      {"recall p99, 2,000 entries", "ms"},
      {"save round trip p50, 2,000 entries", "ms"},
      {"save round trip p99, 2,000 entries", "ms"},
      {"replay of engram-log into a new store", "records/s"},
      {"replay, 16 organisations on 16 partitions, 2 store appliers", "records/s"},
      {"RSS per stored entry, 2,000 entries", "bytes"},
      {"embedding, one sentence at a time", "ms/sentence"},
      {"embedding, in runs of 64", "ms/sentence"},
      {"embedding, a query", "ms"},
      {"cosine int8 vs float32, mean over 100 ham sentences", "cosine"},
  };
  ASSERT_EQ(rows.size(), expected.size()) << out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    ASSERT_EQ(r.size(), 6u) << out;
    EXPECT_EQ(r[0].rfind(expected[i].first, 0), 0u) << "row " << i << ": " << r[0];
    char* end = nullptr;
    const double v = std::strtod(r[1].c_str(), &end);
    EXPECT_TRUE(!r[1].empty() && *end == '\0' && std::isfinite(v) && v >= 0) << "row " << i << " value: " << r[1];
    if (expected[i].second != "bytes") {  // a rate or a latency of 0 would mean nothing was measured
      EXPECT_GT(v, 0) << r[0];
    }
    EXPECT_EQ(r[2], expected[i].second) << r[0];
    EXPECT_FALSE(r[3].empty()) << r[0];
    EXPECT_EQ(r[4], std::to_string(std::thread::hardware_concurrency())) << r[0];
    EXPECT_EQ(r[5].rfind(head, 0), 0u) << r[0] << ": commit " << r[5] << ", HEAD " << head;
  }
  // The replayed records are counted: the live engine wrote 2 x 20 + 1 inbound records at least.
  const auto& replay = rows[10][0];
  const auto open = replay.find('('), space = replay.find(' ', open);
  ASSERT_NE(open, std::string::npos) << replay;
  EXPECT_GE(std::stoll(replay.substr(open + 1, space - open - 1)), 41) << replay;
}

// `bench replay`: the records written to the file and replayed from it, by one applier and by
// two, rebuild the live store exactly (its digest), three organisations on three partitions.
TEST(BenchReplay, AFileOfRecordsReplaysToTheLiveStoresDigestWithOneApplierAndWithTwo) {
  const std::string dir = ::testing::TempDir() + "engram-bench-replay-" + std::to_string(::getpid());
  std::string out;
  const int rc = bench("replay --entries 1500 --organisations 3 --appliers 1 2 --dir " + dir + " 2>&1", &out);
  EXPECT_EQ(rc, 0) << out;
  std::size_t equal = 0;
  for (std::size_t at = 0; (at = out.find("digest equal to the live store's", at)) != std::string::npos; ++at)
    ++equal;
  EXPECT_EQ(equal, 2u) << out;
  EXPECT_NE(out.find("replay from the file, 2 applier(s)"), std::string::npos) << out;
  std::filesystem::remove_all(dir);
}

// `outside --ef-curve`: a line for each candidate list, each share of the exact nearest between
// 0 and 1, and on a store this small (1,656 vectors, where HNSW's longest list searches most of
// them) the longest list finds nearly all of the exact ten: a curve compared with the wrong
// vectors or the wrong order would not.
TEST(BenchOutside, TheEfCurveComparesTheStoresVectorsWithAnExactSearch) {
  const std::string dir = ::testing::TempDir() + "engram-bench-ef-" + std::to_string(::getpid());
  std::string out;
  ASSERT_EQ(bench("outside --entries 600 --queries 40 --store " + dir + " --build-only 2>&1", &out), 0) << out;
  ASSERT_EQ(bench("outside --entries 600 --queries 40 --store " + dir + " --ef-curve 2>&1", &out), 0) << out;
  std::map<int, std::pair<double, double>> found;  // ef -> (of the exact 10, of the exact 70)
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    int ef = 0;
    double ten = -1, seventy = -1;
    if (std::sscanf(line.c_str(), " ef %d: recall@10 %lf, recall@70 %lf", &ef, &ten, &seventy) == 3)
      found[ef] = {ten, seventy};
  }
  ASSERT_EQ(found.size(), 6u) << out;
  EXPECT_EQ(found.begin()->first, 70) << out;
  for (const auto& [ef, shares] : found) {
    EXPECT_GE(shares.first, 0.0) << ef;
    EXPECT_LE(shares.first, 1.0) << ef;
    EXPECT_GE(shares.second, 0.0) << ef;
    EXPECT_LE(shares.second, 1.0) << ef;
  }
  EXPECT_GE(found.rbegin()->second.first, 0.98) << out;
  // Dedup's search replayed: the entries it was asked for, and what each list found of the
  // exact neighbours above the threshold, between 0 and 1.
  const auto at = out.find("dedup's search before ");
  ASSERT_NE(at, std::string::npos) << out;
  std::size_t asked = 0, above = 0;
  double by_ef[3] = {-1, -1, -1};
  ASSERT_EQ(std::sscanf(out.c_str() + at,
                        "dedup's search before %zu of the entries was added: %zu of their exact ten above 0.92; ef 64 "
                        "found %lf, ef 128 found %lf, ef 256 found %lf",
                        &asked, &above, &by_ef[0], &by_ef[1], &by_ef[2]),
            5)
      << out;
  EXPECT_GT(asked, 0u);
  EXPECT_GT(above, 0u);  // dense mail repeats itself: some entry has a neighbour above 0.92
  for (const double f : by_ef) {
    EXPECT_GE(f, 0.0);
    EXPECT_LE(f, 1.0);
  }
  EXPECT_GE(by_ef[2], by_ef[0]);
  EXPECT_GE(by_ef[2], 0.95);  // a list of 256 in a store this small searches nearly all of it
  std::filesystem::remove_all(dir);
}

// A store `outside --store` kept for another memory budget is refused with both keys named,
// not built over: a kept store of a million entries takes hours to build again.
TEST(BenchOutside, AStoreKeptForAnotherMemoryBudgetIsLeftAsItIs) {
  const std::string dir = ::testing::TempDir() + "engram-bench-outside-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/outside-bench.json")
      << R"({"key":{"memory_mb":32,"model":".cache/models/use-lite-en.bin"},"target":1000,"complete":true,)"
      << R"("entries":1000})";
  std::ofstream(dir + "/000001.sst") << "a table";
  std::string out;
  const int rc = bench("outside --entries 1000 --memory-mb 64 --store " + dir + " 2>&1", &out);
  EXPECT_NE(rc, 0) << out;
  EXPECT_NE(out.find(R"(kept for {"memory_mb":32)"), std::string::npos) << out;
  EXPECT_NE(out.find(R"(not for {"memory_mb":64)"), std::string::npos) << out;
  EXPECT_NE(out.find("left as it is"), std::string::npos) << out;
  EXPECT_TRUE(std::filesystem::exists(dir + "/000001.sst"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/outside-bench.json"));
  std::filesystem::remove_all(dir);
}

}  // namespace
