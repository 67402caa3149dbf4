#pragma once
// Classification of one sentence into an entry type (decision, action item, preference,
// goal, relationship, event, fact) by cue phrases, or none for small talk, greetings,
// questions that ask for nothing and injected instructions. Called by the rules extractor
// (rules.cpp) for every sentence. Internal to reading/. Pure and thread-safe.

#include "reading/phrases.hpp"
#include "schemas/knowledge.hpp"

#include <optional>
#include <string>

namespace engram::reading::detail {

/// The type of a sentence and the confidence of the reading.
struct verdict {
  schemas::entry_type type;
  double confidence;
};

/// Words without which a sentence holds no date (the date finder's prefilter).
extern const phrase_set date_word_phrases;
/// Negations: a sentence with one is read as a negative statement (entry::positive false).
extern const phrase_set negation_phrases;

/// The type of sentence `s` (`tv` is its token view; the flags say what the entity finders
/// found in it), or none when it records nothing. `uncued`, when given, is set when the
/// answer is none only for want of a cue (not small talk, a greeting, a question that asks
/// for nothing or an injected instruction): a sentence the type model may still read.
[[nodiscard]] std::optional<verdict> classify(const std::string& s, const token_view& tv, bool has_date,
                                              bool has_amount, bool has_number, bool has_entity, bool starts_with_name,
                                              bool* uncued = nullptr);

}  // namespace engram::reading::detail
