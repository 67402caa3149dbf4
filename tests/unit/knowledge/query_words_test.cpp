// The words a question is searched by: stop words out, as the index spells them.
#include "query/query.hpp"
#include "query/words.hpp"
#include "reading/signature.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace engram {
namespace {

using strings = std::vector<std::string>;

TEST(QueryWords, StopWordsLeaveTheWordsSearchedUnlessNothingElseIsLeft) {
  EXPECT_EQ(query::without_stop_words(reading::index_terms("budget for the rollout with Acme, or by Friday")),
            (strings{"budget", "rollout", "acm"}));
  // A question of only such words is searched by them.
  EXPECT_EQ(query::without_stop_words(reading::index_terms("for or with")), (strings{"for", "or", "with"}));
  EXPECT_EQ(query::without_stop_words({}), strings{});
}

TEST(QueryWords, EveryStopWordIsATermTheIndexKeepsAsSpelled) {
  // The list is matched against the index's terms: a word the stemmer spelled otherwise, or
  // one reading's fillers already drop, would never match and never be left out.
  for (const char* word : {"but", "by", "for", "if", "into", "or", "such", "then", "there", "with"}) {
    EXPECT_EQ(reading::index_terms(word), strings{word}) << word;
    EXPECT_TRUE(query::stop_word(word)) << word;
  }
  for (const char* word : {"budget", "form", "bye", "therefor", "intot"})
    EXPECT_FALSE(query::stop_word(word)) << word;
}

TEST(QueryWords, ARecallSearchesItsWordsLessStopWordsThenLessTheNamesItNames) {
  query::query_dependencies deps;
  deps.terms = reading::index_terms;
  const query::query_service q(deps, knowledge::read_policy{});
  const std::vector<query::named_person> bob{{"ent-bob", {"bob"}}};
  EXPECT_EQ(q.searched_terms("budget for Bob", bob), strings{"budget"});
  // Only a name and stop words: the name is searched, not the stop words.
  EXPECT_EQ(q.searched_terms("Bob for", bob), strings{"bob"});
  EXPECT_EQ(q.searched_terms("for with", bob), (strings{"for", "with"}));
  EXPECT_EQ(q.searched_terms("budget for Bob", {}), (strings{"budget", "bob"}));
}

}  // namespace
}  // namespace engram
