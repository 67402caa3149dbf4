#include "knowledge/resolve.hpp"

#include "base/text.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <map>
#include <set>

namespace engram::knowledge {

namespace {

using names::split_words;

bool is_title(std::string_view w) {
  static const std::set<std::string_view> titles{"mr", "ms", "mrs", "miss", "dr", "prof", "sir", "herr", "frau"};
  return titles.count(w) > 0;
}

/// True when every word of `mention` is a word of `name` (a one-letter word: a word's
/// initial), each word of `name` used once, and at least one matched word is whole.
bool words_within(const std::vector<std::string>& mention, const std::vector<std::string>& name) {
  std::vector<bool> used(name.size(), false);
  bool whole = false;
  for (const auto& w : mention) {
    bool found = false;
    for (std::size_t k = 0; k < name.size() && !found; ++k) {
      if (used[k])
        continue;
      if (name[k] == w || (w.size() == 1 && name[k].front() == w.front())) {
        used[k] = found = true;
        whole = whole || w.size() > 1;
      }
    }
    if (!found)
      return false;
  }
  return whole;
}

/// The candidates one rule picks, narrowed to those in the message, then in the thread,
/// while more than one remains.
std::optional<resolved_mention> pick(const std::vector<const resolution_candidate*>& matched, const std::string& why) {
  if (matched.size() == 1)
    return resolved_mention{matched.front()->id, "the only " + why};
  static constexpr std::array<std::pair<bool resolution_candidate::*, const char*>, 3> tiers{
      {{&resolution_candidate::in_message, " in the message"},
       {&resolution_candidate::in_thread, " in the thread"},
       {&resolution_candidate::acquainted, " known to the message's participants"}}};
  for (const auto& [in, where] : tiers) {
    const resolution_candidate* only = nullptr;
    std::size_t n = 0;
    for (const auto* c : matched)
      if (c->*in) {
        only = c;
        ++n;
      }
    if (n == 1)
      return resolved_mention{only->id, "the " + why + where};
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> person_words(std::string_view folded) {
  auto words = split_words(folded);
  std::erase_if(words, [](const std::string& w) { return is_title(w); });
  return words;
}

std::vector<std::string> address_words(std::string_view address) {
  const auto local = address.substr(0, address.find('@'));
  if (local.size() == address.size())
    return {};
  std::vector<std::string> words(1);
  for (char c : local) {
    if (c == '.' || c == '_' || c == '-') {
      words.emplace_back();
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      words.back().push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else {
      return {};
    }
  }
  if (words.size() < 2 || std::any_of(words.begin(), words.end(), [](const auto& w) { return w.size() < 2; }))
    return {};
  return words;
}

std::optional<resolved_mention> resolve_person(std::string_view mention,
                                               const std::vector<resolution_candidate>& candidates) {
  const auto words = person_words(fold_name(mention));
  if (words.empty())
    return std::nullopt;
  const std::string written(mention);
  std::vector<const resolution_candidate*> shorter_of, fuller_of;
  for (const auto& c : candidates) {
    bool within = false, fuller = false;
    for (const auto& n : c.names) {
      within = within || (n.size() >= words.size() && words_within(words, n));
      // A person known only by one word ("Marcus", read in text) that the mention's
      // full name contains.
      fuller = fuller || (!c.has_address && n.size() == 1 && words.size() > 1 && words_within(n, words));
    }
    if (within)
      shorter_of.push_back(&c);
    else if (fuller && std::all_of(c.names.begin(), c.names.end(), [](const auto& n) { return n.size() == 1; }))
      fuller_of.push_back(&c);
  }
  // A person known only from text is no second candidate beside a fuller one: by a
  // contact's full name it is that contact ("wei chen" read before Wei Chen wrote); by one
  // word it is a short form read before (or while) its owner could be told.
  const auto matched = shorter_of;
  auto one_word = [](const resolution_candidate* c) {
    return std::all_of(c->names.begin(), c->names.end(), [](const auto& n) { return n.size() <= 1; });
  };
  std::erase_if(shorter_of, [&](const resolution_candidate* c) {
    if (c->has_address)
      return false;
    return std::any_of(matched.begin(), matched.end(), [&](const resolution_candidate* d) {
      if (d == c)
        return false;
      if (one_word(c))
        return !one_word(d);
      return d->has_address && std::any_of(c->names.begin(), c->names.end(), [&](const auto& n) {
               return n.size() > 1 && std::find(d->names.begin(), d->names.end(), n) != d->names.end();
             });
    });
  });
  // One word in lower case (chat) names many people: it joins a person of the message, of its
  // thread or known to its participants, never a stranger ("marta" in a colleagues' chat is not
  // the customer Marta Ruiz who once wrote to the support address).
  const bool lower_case = std::none_of(mention.begin(), mention.end(),
                                       [](char ch) { return std::isupper(static_cast<unsigned char>(ch)); });
  if (words.size() == 1 && lower_case)
    std::erase_if(shorter_of,
                  [](const resolution_candidate* c) { return !c->in_message && !c->in_thread && !c->acquainted; });
  if (!shorter_of.empty())
    return pick(shorter_of, "person whose name has the words of \"" + written + "\"");
  if (!fuller_of.empty())
    if (auto r = pick(fuller_of, "person known by a part of \"" + written + "\"")) {
      r->short_form = false;
      return r;
    }
  return std::nullopt;
}

std::optional<resolved_mention> resolve_organisation(std::string_view mention,
                                                     const std::vector<resolution_candidate>& candidates) {
  const auto key = organisation_key(mention);
  if (key.empty() || key.find(' ') != std::string::npos)
    return std::nullopt;
  std::vector<const resolution_candidate*> matched;
  for (const auto& c : candidates)
    if (std::any_of(c.names.begin(), c.names.end(), [&](const auto& n) { return n.size() > 1 && n.front() == key; }))
      matched.push_back(&c);
  return pick(matched, "organisation whose name starts with \"" + std::string(mention) + "\"");
}

}  // namespace engram::knowledge
