// The extractor against the labelled set: the floors of the quality bar. The bench
// (`engram_bench extraction`) prints the full table.
#include "embedding/type_model.hpp"
#include "evaluation/extraction.hpp"
#include "evaluation/resolution.hpp"

#include <gtest/gtest.h>

namespace {

TEST(ExtractionQuality, LabelledSetMeetsTheFloors) {
  auto r = engram::evaluation::evaluate(std::string(ENGRAM_SOURCE_DIR) + "/tests/data/extraction/labelled.jsonl", {});
  ASSERT_TRUE(r.error.empty()) << r.error;
  std::printf("%s", r.table().c_str());
  ASSERT_GE(r.messages, 40u);
  ASSERT_GE(r.gold_entries, 150u);
  for (const auto& c : r.types)
    ASSERT_GE(c.tp + c.fn, 15u) << "every type needs labelled examples";
  EXPECT_GE(r.macro_f1(), 0.80);
  EXPECT_GE(r.entities_total().f1(), 0.85);
  EXPECT_GE(r.date_accuracy(), 0.90);
  EXPECT_GE(r.due_date_accuracy(), 0.90);
  EXPECT_EQ(r.injection_messages_flagged, r.injection_messages);
}

// Deadlines alone: 160 sentences a helper wrote in the many ways mail and chat name a day
// (tests/data/dates/README.md), each read as an action item. The date reader was mended on them.
TEST(ExtractionQuality, DeadlinesAreReadWhicheverWayTheDayIsWritten) {
  auto r = engram::evaluation::evaluate_due_dates(std::string(ENGRAM_SOURCE_DIR) + "/tests/data/dates/due_dev.jsonl");
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(r.sentences, 160u);
  std::string wrong;
  for (const auto& w : r.wrong)
    wrong += "  " + w + "\n";
  EXPECT_GE(r.accuracy(), 0.99) << wrong;
}

// The type model (extraction.type_model, on by default) is trained on this set among others:
// these floors say it keeps what the cues read; what it adds on unseen text is the
// held-out figure `engram_bench extraction` prints.
TEST(ExtractionQuality, TypeModelKeepsTheLabelledSetsFloors) {
  const auto set = std::string(ENGRAM_SOURCE_DIR) + "/tests/data/extraction/labelled.jsonl";
  auto types = engram::embedding::load_type_model(ENGRAM_MODEL_PATH);
  ASSERT_TRUE(types) << types.error();
  engram::reading::validator_options opts;
  opts.types = *types;
  auto cues = engram::evaluation::evaluate(set, {});
  auto with = engram::evaluation::evaluate(set, opts);
  ASSERT_TRUE(with.error.empty()) << with.error;
  std::printf("%s", with.table().c_str());
  EXPECT_GE(with.typed_recall(), cues.typed_recall());
  EXPECT_GE(with.typed_recall(), 0.85);
  EXPECT_GE(with.typed_precision(), 0.85);
  EXPECT_GE(with.macro_f1(), 0.85);
  EXPECT_GE(with.due_date_accuracy(), 0.90);
  EXPECT_EQ(with.injection_messages_flagged, with.injection_messages);
}

// The second development set (written apart; the type model is not trained on it, its
// thresholds were chosen on it) and the held-out sets (never tuned on; the second written
// after the model was trained), held to floors a
// little under what the default reader reads on them (docs/extraction.md), so that a reader
// that loses statements on text it was not written for is seen on every landing.
TEST(ExtractionQuality, TheSetsWrittenApartKeepTheirFloors) {
  auto types = engram::embedding::load_type_model(ENGRAM_MODEL_PATH);
  ASSERT_TRUE(types) << types.error();
  engram::reading::validator_options opts;
  opts.types = *types;
  struct floor {
    const char* file;
    std::size_t messages;
    double recall, precision, due;
  };
  for (const floor& f : {floor{"dev2.jsonl", 80, 0.75, 0.75, 0.85}, floor{"heldout.jsonl", 73, 0.60, 0.72, 0.80},
                         floor{"heldout2.jsonl", 70, 0.58, 0.65, 0.70}}) {
    auto r = engram::evaluation::evaluate(std::string(ENGRAM_SOURCE_DIR) + "/tests/data/extraction/" + f.file, opts);
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.messages, f.messages) << f.file;
    EXPECT_GE(r.typed_recall(), f.recall) << f.file << "\n" << r.table();
    EXPECT_GE(r.typed_precision(), f.precision) << f.file << "\n" << r.table();
    EXPECT_GE(r.due_date_accuracy(), f.due) << f.file << "\n" << r.table();
  }
}

}  // namespace

// Relations between entities on their development set
// (tests/data/relations/dev.jsonl; the rules were written against its misses).
TEST(RelationQuality, DevelopmentSetMeetsTheFloors) {
  auto r =
      engram::evaluation::evaluate_relations(std::string(ENGRAM_SOURCE_DIR) + "/tests/data/relations/dev.jsonl", {});
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.messages, 38u);  // 30 messages and 8 document chunks
  EXPECT_GE(r.total.precision(), 0.80) << r.table();
  EXPECT_GE(r.total.recall(), 0.60) << r.table();
  EXPECT_EQ(r.ended_right, r.ended_checked) << "an end read as a start, or the reverse\n" << r.table();
}

// The held-out sets, never tuned on, held to floors a little under what the relation classifier
// and the cue rules read on them (docs/graph-queries.md), so that a reader that loses relations
// is seen on every landing.
TEST(RelationQuality, HeldOutSetsMeetTheirFloors) {
  struct held_out {
    const char* file;
    std::size_t messages;
    double precision, recall;
  };
  for (const auto& set : {
           held_out{"heldout", 60, 0.70, 0.56},  // 45 messages and 15 document chunks
           held_out{"heldout2", 69, 0.50, 0.32},
           // Written after the relation classifier was trained, by a writer who saw neither the
           // code nor the training data.
           held_out{"heldout3", 60, 0.36, 0.24},
       }) {
    SCOPED_TRACE(set.file);
    auto h = engram::evaluation::evaluate_relations(
        std::string(ENGRAM_SOURCE_DIR) + "/tests/data/relations/" + set.file + ".jsonl", {});
    ASSERT_TRUE(h.error.empty()) << h.error;
    EXPECT_EQ(h.messages, set.messages);
    EXPECT_GE(h.total.precision(), set.precision) << h.table();
    EXPECT_GE(h.total.recall(), set.recall) << h.table();
  }
}

namespace {

/// What a labelled pair set (tests/data/entities/<file>) holds, and the floors resolution
/// is held to on it: given the labelled mentions, and end to end on what reading finds.
struct resolution_set {
  const char* file;
  std::size_t events, pairs, identifiers;
  double labelled_precision, labelled_recall, read_precision, read_recall;
};

/// Scores both ways on `set` and checks its counts, its floors and that no identifier is
/// ever a person or company.
void check_resolution(const resolution_set& set) {
  using engram::evaluation::resolution_mentions;
  using engram::evaluation::resolution_report;
  const auto path = std::string(ENGRAM_SOURCE_DIR) + "/tests/data/entities/" + set.file;
  for (auto mentions : {resolution_mentions::labelled, resolution_mentions::read}) {
    const auto r = engram::evaluation::evaluate_resolution(path, {}, mentions);
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.events, set.events);
    EXPECT_EQ(r.total().same + r.total().different, set.pairs);
    std::string errors;
    for (const auto& e : r.errors)
      errors += e + "\n";
    const bool labelled = mentions == resolution_mentions::labelled;
    EXPECT_GE(resolution_report::precision(r.total()), labelled ? set.labelled_precision : set.read_precision)
        << r.table() << errors;
    EXPECT_EQ(r.identifiers, set.identifiers);
    EXPECT_EQ(r.identifiers_as_people_or_organisations, 0u) << errors;
    EXPECT_GE(resolution_report::recall(r.total()), labelled ? set.labelled_recall : set.read_recall) << r.table();
  }
}

}  // namespace

// Entity resolution on mention pairs from mail no one here wrote
// (tests/data/entities/heldout_pairs.jsonl): the acceptance's precision (>= 0.95 of joins
// right) and its rule that no identifier is ever a person or company are held, and its
// recall (>= 0.80) given the labelled mentions; end to end, recall is a floor below what
// was measured (0.40: reading misses most short forms; docs/entity-graph.md#resolution).
// This set's misses were studied when the acquaintance, address and placeholder rules were
// written, so it is no longer blind: heldout_pairs2.jsonl is (below).
TEST(ResolutionQuality, HeldOutPairsJoinRightAndNoIdentifierIsAPersonOrCompany) {
  check_resolution({"heldout_pairs.jsonl", 64, 148, 35, 0.95, 0.80, 0.95, 0.35});
}

// The second set (tests/data/entities/heldout_pairs2.jsonl: 70 events of another
// organisation, 131 pairs, 39 identifiers), written after the rules by a helper that never
// saw the code, and never looked into for tuning. Measured when it arrived (docs/
// entity-graph.md#resolution): given the labelled mentions P 0.91 / R 0.66, below the
// acceptance's 0.95 / 0.80, which is what the first set's figures overstate; end to end
// P 1.00 / R 0.22. The floors keep what was measured; no identifier is ever a person or company.
TEST(ResolutionQuality, TheSecondHeldOutSetIsMeasuredAndNoIdentifierIsAPersonOrCompany) {
  check_resolution({"heldout_pairs2.jsonl", 70, 131, 39, 0.90, 0.60, 0.95, 0.20});
}
