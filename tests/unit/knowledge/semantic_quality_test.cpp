// Dedup and contradiction quality on the labelled sets, through the real encoder, the real
// store and the decisions the store stage makes. The floors are the issue's. engramd runs the
// int8 encoder; the float32 one stays as the reference, and on every set (labelled and
// held out) the two must decide every pair and every case alike.

#include "dedup/dedup.hpp"
#include "reading/read.hpp"
#include "reading/signature.hpp"
#include "evaluation/semantic.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

using namespace engram;

namespace {

bool same_wording(const char* a, const char* b) {
  return dedup::same_wording(reading::content_words(a), reading::content_words(b), dedup::order_of(a),
                             dedup::order_of(b));
}

// The wording check of a merge, alone (the values, markers and polarity are checked apart).
TEST(SameWording, ReorderedOrMovedWordsAreTheSameStatement) {
  EXPECT_TRUE(
      same_wording("For 2026 the Orion project budget is $75,000", "The Orion project budget for 2026 is $75,000"));
  EXPECT_TRUE(same_wording("Dana prefers tea to coffee", "Dana prefers tea over coffee"));
  EXPECT_TRUE(same_wording("We are opening a Lisbon office", "We are opening an office in Lisbon"));
  EXPECT_TRUE(same_wording("Globex's budget is approved", "The budget of Globex is approved"));
  EXPECT_TRUE(same_wording("Globex has 180 seats", "Just to confirm, Globex has 180 seats on the Enterprise plan"));
}

TEST(SameWording, WhoDoesWhatToWhomAndSubstitutedWordsAreAnother) {
  EXPECT_FALSE(same_wording("Hugo reports to Claire", "Claire reports to Hugo"));
  EXPECT_FALSE(same_wording("Dana prefers tea over coffee", "Dana prefers coffee over tea"));
  EXPECT_FALSE(same_wording("Dana prefers tea to coffee", "Dana prefers coffee to tea"));
  EXPECT_FALSE(same_wording("Hugo is Claire's manager", "Claire is Hugo's manager"));
  EXPECT_FALSE(same_wording("Globex prefers email", "Globex prefers phone"));
  EXPECT_FALSE(same_wording("Acme sells to Globex", "Globex sells to Acme"));
  // Values swapped between the words they count.
  EXPECT_FALSE(
      same_wording("The Brussels office has 48 desks and 52 staff", "The Brussels office has 52 desks and 48 staff"));
  EXPECT_FALSE(same_wording("The Skagen offshore project will have 12 turbines of 15 MW each",
                            "The Skagen offshore project will have 15 turbines of 12 MW each"));
  EXPECT_TRUE(same_wording("The Brussels office has 48 desks and 52 staff",
                           "FYI the Brussels office has 48 desks and 52 staff"));
  EXPECT_TRUE(same_wording("In 2026 Globex has 180 seats", "Globex has 180 seats in 2026"));
}

TEST(SameWording, AWordReplacedOrPutBetweenTwoThatStoodTogetherIsAnother) {
  // A word the content words leave out (a pronoun, a direction) stands for another.
  EXPECT_FALSE(
      same_wording("the kafka upgrade on the eu cluster completed", "the kafka upgrade on the us cluster completed"));
  EXPECT_FALSE(same_wording("Tuomas will ship 16 pallets to the Vaasa depot",
                            "Tuomas will ship 16 pallets from the Vaasa depot"));
  // Words that qualify what follows.
  EXPECT_FALSE(same_wording("The app's crash rate is 99.2%", "The app's crash-free session rate is 99.2%"));
  // Values and calendar words are compared resolved, function words, auxiliaries, names and whose are no qualifier.
  EXPECT_TRUE(same_wording("The order ships from Rotterdam on August 3", "The order ships from Rotterdam on Aug 3"));
  EXPECT_TRUE(
      same_wording("The renewal quote is $1,200,000 for three years", "The renewal quote is $1.2M for three years"));
  EXPECT_TRUE(same_wording("The team has approved the plan", "The team have approved the plan"));
  EXPECT_TRUE(same_wording("Huda prefers Teams over Zoom", "Huda prefers MS Teams over Zoom"));
  EXPECT_TRUE(same_wording("Omid prefers to get payslips by post", "Omid prefers to get his payslips by post"));
}

bool sense_differs(const char* a, const char* b) {
  return dedup::sense_differs(dedup::sense_of(a), dedup::sense_of(b));
}

// Time, modality, standing and whose: words that are no value, name or negation and still make
// another statement.
TEST(Sense, TenseModalityStandingAndWhoseMakeAnotherStatement) {
  EXPECT_TRUE(sense_differs("Sandrine Moreau is the CFO of Liora Cosmetics",
                            "Sandrine Moreau is the former CFO of Liora Cosmetics"));
  EXPECT_TRUE(
      sense_differs("Kaarel Tamm is head of logistics at Tallmark", "Kaarel Tamm was head of logistics at Tallmark"));
  EXPECT_TRUE(sense_differs("The team decided to use Helm charts", "The team decided against using Helm charts"));
  EXPECT_TRUE(sense_differs("Reza will present the budget", "Reza might present the budget"));
  EXPECT_TRUE(sense_differs("Antonella must approve overtime", "Antonella may approve overtime"));
  EXPECT_TRUE(sense_differs("The dispute was resolved in our favour", "The dispute was resolved in their favour"));
  EXPECT_TRUE(sense_differs("Boateng is the exclusive distributor", "Boateng is a non-exclusive distributor"));
  EXPECT_TRUE(sense_differs("The Osaka team will own playout", "The Osaka team will stop owning playout"));
}

TEST(Sense, ContractionsFillersAndALeftOutAuxiliaryAreTheSame) {
  EXPECT_FALSE(sense_differs("We won't renew the contract", "We will not renew the contract"));
  EXPECT_FALSE(sense_differs("We won\u2019t renew the contract", "We won't renew the contract"));
  EXPECT_FALSE(sense_differs("We'll send the report", "We will send the report"));
  EXPECT_FALSE(sense_differs("The meeting was moved to Friday", "Meeting moved to Friday"));
  EXPECT_FALSE(sense_differs("Acme renews in May", "Just to confirm, Acme renews in May"));
  EXPECT_FALSE(sense_differs("Our budget is $2M", "FYI our budget is $2M"));
}

class SemanticQuality : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    auto reference = embedding::use_lite_embedder::load(ENGRAM_MODEL_PATH);
    ASSERT_TRUE(reference) << reference.error();
    float_ = reference->release();
    auto integer = embedding::use_lite_int8_embedder::load(ENGRAM_MODEL_PATH);
    ASSERT_TRUE(integer) << integer.error();
    int8_ = integer->release();
  }
  static void TearDownTestSuite() {
    delete float_;
    delete int8_;
    float_ = nullptr;
    int8_ = nullptr;
  }
  std::string scratch(const char* name) {
    return (std::filesystem::temp_directory_path() / ("engram-quality-" + std::to_string(::getpid()) + "-" + name))
        .string();
  }
  void TearDown() override {
    std::filesystem::remove_all(scratch("dedup"));
    std::filesystem::remove_all(scratch("contradiction"));
  }
  static evaluation::dedup_report dedup(const embedding::embedder& e, const char* set, const std::string& dir) {
    return evaluation::evaluate_dedup(std::string(ENGRAM_SOURCE_DIR "/tests/data/dedup/") + set + ".jsonl", e, dir);
  }
  static evaluation::contradiction_report contradictions(const embedding::embedder& e, const char* set,
                                                         const std::string& dir) {
    return evaluation::evaluate_contradictions(
        std::string(ENGRAM_SOURCE_DIR "/tests/data/contradiction/") + set + ".jsonl", e, dir);
  }
  static embedding::use_lite_embedder* float_;
  static embedding::use_lite_int8_embedder* int8_;
};

embedding::use_lite_embedder* SemanticQuality::float_ = nullptr;
embedding::use_lite_int8_embedder* SemanticQuality::int8_ = nullptr;

TEST_F(SemanticQuality, DifferentFactsAreNeverMergedAndNearDuplicatesAre) {
  auto r = dedup(*int8_, "pairs", scratch("dedup"));
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

TEST_F(SemanticQuality, NoSetHasAFalseMerge) {
  // A false merge destroys a fact. The held-out sets are measured here, never tuned on.
  // Links (complements above the cosine) are printed: some join different facts
  // (docs/recall.md#deduplication), which is still open.
  auto no_false_merge = [](const std::string& set, const evaluation::dedup_report& r) {
    ASSERT_TRUE(r.error.empty()) << set << ": " << r.error;
    std::cout << set << ":\n" << r.table();
    for (const char* kind : {"different_fact", "related", "unrelated"})
      EXPECT_EQ(r.merged.count(kind) ? r.merged.at(kind) : 0, 0u) << set << " " << kind << "\n" << r.table();
  };
  for (const char* set : {"pairs", "heldout", "heldout_paraphrase"})
    no_false_merge(set, dedup(*int8_, set, scratch("dedup")));
  // The pairs a fifth writer wrote for the paraphrase reader, who saw no rule and no other pair.
  const auto held = evaluation::jsonl_files(ENGRAM_SOURCE_DIR "/tests/data/dedup/paraphrase_heldout");
  ASSERT_EQ(held.size(), 3u);
  no_false_merge("paraphrase_heldout", evaluation::evaluate_dedup(held, *int8_, scratch("dedup")));
}

TEST_F(SemanticQuality, ThePairsWrittenForTheParaphraseReaderMergeOneDifferentFactAtMost) {
  // Four writers' 1,600 pairs (tools/train/data/paraphrases): the development set of the checks
  // dedup makes. One different fact is still merged, an added noun that changes the object ("the
  // lease for the warehouse" / "the lease for the warehouse extension", p4-0150); no other may be.
  const auto files = evaluation::jsonl_files(ENGRAM_SOURCE_DIR "/tools/train/data/paraphrases");
  ASSERT_GE(files.size(), 16u);
  auto r = evaluation::evaluate_dedup(files, *int8_, scratch("dedup"));
  ASSERT_TRUE(r.error.empty()) << r.error;
  std::cout << r.table();
  EXPECT_EQ(r.pairs.at("different_fact"), 560u);
  EXPECT_LE(r.merged.count("different_fact") ? r.merged.at("different_fact") : 0, 1u) << r.table();
  for (const char* kind : {"related", "unrelated"})
    EXPECT_EQ(r.merged.count(kind) ? r.merged.at(kind) : 0, 0u) << kind << "\n" << r.table();
  EXPECT_GE(r.recall(), 0.80) << "near-duplicates merged";
}

TEST_F(SemanticQuality, ContradictionsAreFoundWithinOneSubjectOnly) {
  auto r = contradictions(*int8_, "cases", scratch("contradiction"));
  ASSERT_TRUE(r.error.empty()) << r.error;
  std::cout << r.table();
  ASSERT_GE(r.cases, 30u);
  EXPECT_GE(r.precision(), 0.9);
  EXPECT_GE(r.recall(), 0.8);
  EXPECT_EQ(r.cross_subject, 0u);
}

TEST_F(SemanticQuality, AMessageEmbedsAtMostItsFirstEntries) {
  schemas::extraction big, small;
  for (int i = 0; i < 70; ++i) {
    schemas::entry en;
    en.content = "Statement number " + std::to_string(i) + " about the renewal.";
    big.entries.push_back(en);
  }
  small.entries.assign(big.entries.begin(), big.entries.begin() + 3);
  std::vector<schemas::extraction*> xs{&big, &small};
  ASSERT_TRUE(reading::embed_entries(*int8_, xs, 64));
  for (std::size_t i = 0; i < big.entries.size(); ++i)
    EXPECT_EQ(big.entries[i].embedding.size(), i < 64 ? 512u : 0u) << i;
  for (const auto& en : small.entries)
    EXPECT_EQ(en.embedding.size(), 512u) << "the bound is per message";
}

TEST_F(SemanticQuality, TheIntegerEncoderDecidesEveryPairAndCaseAsTheFloatOne) {
  for (const char* set : {"pairs", "heldout"}) {
    const auto a = dedup(*float_, set, scratch("dedup")), b = dedup(*int8_, set, scratch("dedup"));
    ASSERT_TRUE(a.error.empty() && b.error.empty()) << a.error << b.error;
    EXPECT_EQ(b.merged, a.merged) << set << "\nfloat:\n" << a.table() << "int8:\n" << b.table();
    EXPECT_EQ(b.wrong, a.wrong) << set;
  }
  for (const char* set : {"cases", "heldout"}) {
    const auto a = contradictions(*float_, set, scratch("contradiction"));
    const auto b = contradictions(*int8_, set, scratch("contradiction"));
    ASSERT_TRUE(a.error.empty() && b.error.empty()) << a.error << b.error;
    EXPECT_EQ(b.raised, a.raised) << set;
    EXPECT_EQ(b.correct, a.correct) << set;
    EXPECT_EQ(b.per_kind_correct, a.per_kind_correct) << set;
    EXPECT_EQ(b.wrong, a.wrong) << set << "\nfloat:\n" << a.table() << "int8:\n" << b.table();
  }
}

}  // namespace
