// The relation classifier (reading/relation_classifier.hpp): what it reads, that it reads alike
// on every machine, and that a file that is not a model is refused with the reason.
#include "reading/relation_classifier.hpp"
#include "evaluation/labelled.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace engram::reading;

const std::string source_dir = ENGRAM_SOURCE_DIR;

std::vector<classified_relation> read(const std::string& s, std::vector<typed_name> names) {
  return relation_classifier::builtin()->read(s, names);
}

TEST(RelationClassifier, ReadsThePredicateItsDirectionAndWhetherItEnded) {
  const auto joined = read("Priya Natarajan joined Contoso as CFO last spring.",
                           {{0, 15, name_type::person}, {23, 30, name_type::organization}});
  ASSERT_EQ(joined.size(), 1u);
  EXPECT_EQ(joined[0].predicate, "works_at");
  EXPECT_EQ(joined[0].subject, 0u);
  EXPECT_FALSE(joined[0].ended);
  // The person second: still the subject.
  const auto hired =
      read("Contoso hired Priya Natarajan as CFO.", {{0, 7, name_type::organization}, {14, 29, name_type::person}});
  ASSERT_EQ(hired.size(), 1u);
  EXPECT_EQ(hired[0].predicate, "works_at");
  EXPECT_EQ(hired[0].subject, 1u);
  EXPECT_EQ(hired[0].object, 0u);
  const auto moved = read("Northwind no longer uses Salesforce for its pipeline.",
                          {{0, 9, name_type::organization}, {25, 35, name_type::product}});
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].predicate, "uses");
  EXPECT_TRUE(moved[0].ended);
  const auto office =
      read("Fabrikam has its head office in Lisbon.", {{0, 8, name_type::organization}, {32, 38, name_type::place}});
  ASSERT_EQ(office.size(), 1u);
  EXPECT_EQ(office[0].predicate, "located_in");
  EXPECT_EQ(office[0].subject, 0u);
  // Two mentions of one name are no pair.
  EXPECT_TRUE(
      read("Contoso said Contoso would pay.", {{0, 7, name_type::organization}, {13, 20, name_type::organization}})
          .empty());
}

TEST(RelationClassifier, ReadsTheSameRelationsAndLeadsOnEveryMachine) {
  // Every pair of the labelled names of the development items, at any lead over "none".
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(source_dir + "/tools/train/data/labelled"))
    if (e.path().filename().string().rfind("w7-", 0) == 0)
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  const auto& model = *relation_classifier::builtin();
  std::uint64_t h = tagging::fnv1a("");
  std::size_t n = 0;
  for (const auto& it : engram::evaluation::labelled::read_labelled(files)) {
    std::vector<typed_name> names;
    for (const auto& s : it.spans)
      names.push_back({s.begin, s.end,
                       s.type == "PER"    ? name_type::person
                       : s.type == "ORG"  ? name_type::organization
                       : s.type == "PROD" ? name_type::product
                       : s.type == "LOC"  ? name_type::place
                                          : name_type::identifier});
    for (const auto& r : model.read(it.text, names, std::numeric_limits<std::int32_t>::min())) {
      h = tagging::fnv1a(it.id + ":" + std::to_string(r.subject) + ":" + r.predicate + ":" + std::to_string(r.object) +
                             ":" + std::to_string(r.ended) + ":" + std::to_string(r.lead) + ";",
                         h);
      ++n;
    }
  }
  EXPECT_GT(n, 200u);
  // Re-pinned with each trained model (tools/dev.sh train relations; docs/training.md).
  EXPECT_EQ(h, 17912729455913794276ULL) << "relations " << n << ", digest " << h;
}

TEST(RelationClassifier, RefusesAFileThatIsNotAModelNamingWhy) {
  auto error = [](std::string_view bytes) {
    auto parsed = relation_classifier::parse(bytes);
    return std::holds_alternative<std::string>(parsed) ? std::get<std::string>(parsed) : std::string("parsed");
  };
  EXPECT_EQ(error("ENGNAME1"), "not a relation model (no ENGREL01 at its start)");
  EXPECT_EQ(error("ENGREL01\x05"), "header: cut short");
  auto file = [](const std::string& header, std::size_t body) {
    std::string out = "ENGREL01";
    for (int i = 0; i < 4; ++i)
      out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
    return out + header + std::string(body, '\0');
  };
  const std::string good = R"({"format":1,"featureFormat":2,"labels":["none","uses>"],"buckets":2,"margin":0})";
  EXPECT_EQ(error(file(good, 2 * 3 + 3 * 4)), "parsed");
  EXPECT_EQ(error(file(good, 2 * 3)), "biases: cut short");
  EXPECT_EQ(error(file(good, 2)), "weights: cut short");
  EXPECT_EQ(error(file(good, 2 * 3 + 3 * 4 + 1)), "trailing bytes after the biases");
  EXPECT_EQ(error(file(R"({"format":1,"featureFormat":9,"labels":["none","uses>"],"buckets":2})", 0)),
            "header: featureFormat 9, this build reads 2");
  EXPECT_EQ(error(file(R"({"format":1,"featureFormat":2,"labels":["uses>","uses<"],"buckets":2})", 0)),
            "header: no label none");
  EXPECT_EQ(error(file(R"({"format":1,"featureFormat":2,"labels":["none","uses"],"buckets":2})", 0)),
            "header: label 'uses' is neither none nor a predicate with > or <");
}

}  // namespace
