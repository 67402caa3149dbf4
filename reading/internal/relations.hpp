#pragma once
// Relations between the entities of one sentence (docs/graph-queries.md): the words
// between two named entities, or after an organisation, say how they relate ("Mei Chen
// joined Contoso as CTO", "Hugo reports to Claire", "Globex runs on Snowflake", "Initech is
// headquartered in Lisbon"). Rules over the spans find_people_and_orgs found; internal to
// the rules extractor (rules.cpp attaches what they find to the sentence's entry).

#include "reading/internal/entities.hpp"
#include "reading/relation_model.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram::reading::detail {

struct found_relation {
  /// Each end: a span (its index), or a name no span covers, read here (a run of capitals:
  /// an organisation, technology or location, as the relation says).
  std::optional<std::size_t> subject_span, object_span;
  schemas::entity_mention subject, object;
  std::string predicate;
  double confidence = 0;
  bool ended = false;
  std::string role;
  /// Read across sentences (its earlier end in a sentence before): the sentence does not state
  /// it alone, so it makes no statement of the sentence.
  bool across = false;
};

/// The relations `sentence` states between its people and organisations (`spans`, offsets
/// into `sentence`), and from an organisation to a technology or location it names. `ctx`
/// says which organisations the message knows (a bare "Mei at X" relates only to those).
[[nodiscard]] std::vector<found_relation> find_relations(std::string_view sentence,
                                                         const std::vector<span_mention>& spans,
                                                         const message_context& ctx);

/// Two names of a sentence the relation model weighs (relation_model.hpp): neighbouring
/// chunks, or next but one, that the rules did not relate. Each end: a span (its index) or a
/// run of capitals (its text).
struct meaning_pair {
  std::optional<std::size_t> a_span, b_span;
  std::string a_text, b_text;
  /// Views the sentence it was made from.
  relation_candidate candidate;
};

/// The pairs of `sentence` (spans as find_relations reads them; `found`, what it read) whose
/// gap is short enough to state a relation: each name with the next `reach` names.
[[nodiscard]] std::vector<meaning_pair> meaning_pairs(std::string_view sentence, const std::vector<span_mention>& spans,
                                                      const std::vector<found_relation>& found, std::size_t reach);

/// The relation `r` reads between the ends of `p`, or none.
[[nodiscard]] std::optional<found_relation> relation_of(const meaning_pair& p, const relation_reading& r);

/// A job title ("CTO", "VP Sales", "head of engineering"): every word a title or
/// department word, at least one of them a title. Lower-case input.
[[nodiscard]] bool is_role(std::string_view lowered);

}  // namespace engram::reading::detail
