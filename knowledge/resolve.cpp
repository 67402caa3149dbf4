#include "knowledge/resolve.hpp"

#include "base/text.hpp"

#include <algorithm>
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
  for (auto in : {&resolution_candidate::in_message, &resolution_candidate::in_thread}) {
    const resolution_candidate* only = nullptr;
    std::size_t n = 0;
    for (const auto* c : matched)
      if (c->*in) {
        only = c;
        ++n;
      }
    if (n == 1)
      return resolved_mention{
          only->id, "the " + why + (in == &resolution_candidate::in_message ? " in the message" : " in the thread")};
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> person_words(std::string_view folded) {
  auto words = split_words(folded);
  std::erase_if(words, [](const std::string& w) { return is_title(w); });
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
