#pragma once
// People and organisations named in a sentence, for the rules extractor (rules.cpp, per
// sentence): participants and organisations the message itself names, company names with
// a legal suffix or an organisation word ("Contoso Ltd", "Northwind Traders"), known first
// names with a surname, and capitalised names after an organisation cue ("joined Fabrikam")
// or in the possessive. Word lists are in lexicon.hpp; dates and amounts have their own
// finders (dates.hpp, amounts.hpp). Internal to reading/. Pure and thread-safe.

#include "reading/name_tagger.hpp"
#include "schemas/knowledge.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace engram::reading::detail {

/// A mention found in a sentence, with its byte range in the sentence.
struct span_mention {
  std::size_t begin, end;
  schemas::entity_mention m;
};

/// What the message itself says about names (its headers and signature).
struct message_context {
  /// Participants by lower-case first name -> full name.
  std::map<std::string, std::string> person_by_first;
  /// Organisations the message itself names (domains, signature): lower-case -> as written.
  std::map<std::string, std::string> known_orgs;
};

/// True when `w` starts with an upper-case (ASCII) letter.
[[nodiscard]] bool is_capitalised(std::string_view w);

/// True for a legal form that ends a company name ("Ltd", "GmbH", "Inc."), any case.
[[nodiscard]] bool is_legal_suffix(std::string_view w);

/// An organisation name derived from an e-mail domain ("ops@globex.example" -> "Globex").
[[nodiscard]] std::string org_from_address(std::string_view address);

/// Appends the people and organisations named in sentence `s` to `out`, their offsets
/// shifted by `sentence_start`.
void find_people_and_orgs(const std::string& s, std::size_t sentence_start, const message_context& ctx,
                          std::vector<span_mention>& out);

/// Appends the technologies and places of base/aliases.txt named in sentence `s` (the
/// longest run of up to four words first; value: the name as written, or the canonical
/// name when written in lower case, "k8s" -> Kubernetes)
/// that no span of `taken` covers. A one-word name written in lower case that is also a
/// common word is left alone.
void find_known_things(const std::string& s, const std::vector<span_mention>& taken, std::vector<span_mention>& out);

/// The kind of each name in a message (lower-cased): that of its most probable mention.
using message_names = std::map<std::string, std::pair<std::int32_t, name_type>>;

/// Appends the names the name model found in sentence `s` (`found`, name_tagger.hpp): people,
/// organisations, products (as technologies) and places, each of the kind its most probable
/// mention in the message has (`names`, when given), and valued as the rules value theirs (a
/// participant's first name as their full name, an organisation without its legal form, a
/// product written in lower case by its canonical name). A name the message itself gives (a
/// participant's domain or signature company, a participant's name) keeps that kind whatever
/// the model read. A name overlapping a span already in
/// `out` (a date, an amount) is left out; so is an identifier, which is no entity. Then the
/// rules' people and organisations (find_people_and_orgs) that overlap none of the model's
/// names, identifiers included.
void find_names_by_model(const std::string& s, const message_context& ctx, const std::vector<name_span>& found,
                         const message_names* names, std::vector<span_mention>& out);

}  // namespace engram::reading::detail
