#include "reading/signature.hpp"

#include <libstemmer.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <unordered_set>

namespace engram::reading {
namespace {

using schemas::entity_kind;

bool has_digit(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string> sorted(const std::set<std::string>& s) { return {s.begin(), s.end()}; }

/// Words that carry no fact of their own: articles, auxiliaries, pronouns, greetings and
/// fillers, polarity words (compared apart) and calendar and currency words (dates and
/// amounts are compared apart).
// clang-format off
const std::unordered_set<std::string_view>& filler_words() {
  static const std::unordered_set<std::string_view> words{
      "a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "am", "will", "would", "shall",
      "should", "can", "could", "may", "might", "must", "do", "does", "did", "has", "have", "had", "to", "of",
      "it", "its", "this", "that", "these", "those", "we", "our", "us", "you", "your", "they", "their", "them",
      "i", "me", "my", "he", "she", "his", "her", "just", "please", "note", "fyi", "re", "fw", "fwd", "hi",
      "hello", "hey", "team", "all", "thanks", "thank", "so", "also", "and", "ll", "ve", "d", "s", "t", "m",
      "not", "no", "never", "longer", "now", "confirm", "confirmed", "confirming", "reminder", "update", "quick",
      "as", "per", "on", "in", "at", "january", "february", "march", "april", "may", "june", "july", "august",
      "september", "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
      "sept", "oct", "nov", "dec", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
      "q1", "q2", "q3", "q4", "don", "doesn", "didn", "won", "isn", "aren", "wasn", "weren", "hasn", "haven", "hadn", "can",
      "cannot", "couldn", "shouldn", "wouldn"};
  // clang-format on
  return words;
}

/// Units written beside a number ("EUR 24,000", "$50k", "3 pm", "5th"): fillers there, and
/// content elsewhere ("pay in EUR").
bool number_unit(std::string_view w) {
  static const std::unordered_set<std::string_view> units{
      "usd", "eur",     "gbp",   "chf",    "jpy", "cad", "aud", "k",  "m",       "bn",       "mn",     "am",
      "pm",  "dollars", "euros", "pounds", "st",  "nd",  "rd",  "th", "million", "thousand", "billion"};
  return units.count(w) > 0;
}

/// The Snowball English stemmer; one per thread (sb_stemmer is not thread-safe).
std::string stem(std::string_view w) {
  struct closer {
    void operator()(sb_stemmer* s) const { sb_stemmer_delete(s); }
  };
  thread_local std::unique_ptr<sb_stemmer, closer> st(sb_stemmer_new("english", nullptr));
  if (!st)
    return std::string(w);
  auto* out = sb_stemmer_stem(st.get(), reinterpret_cast<const sb_symbol*>(w.data()), static_cast<int>(w.size()));
  return out ? std::string(reinterpret_cast<const char*>(out), static_cast<std::size_t>(sb_stemmer_length(st.get())))
             : std::string(w);
}

}  // namespace

std::string content_words(std::string_view text) {
  const auto& filler = filler_words();
  std::string out;
  const auto nf = schemas::normal_form(text);
  const auto ws = schemas::split_words(nf);
  for (std::size_t i = 0; i < ws.size(); ++i) {
    auto w = ws[i];
    if (has_digit(w) || filler.count(w))
      continue;
    if (number_unit(w) && ((i > 0 && has_digit(ws[i - 1])) || (i + 1 < ws.size() && has_digit(ws[i + 1]))))
      continue;
    if (!out.empty())
      out += ' ';
    out += stem(w);
  }
  return out;
}

std::vector<std::string> index_terms(std::string_view text) {
  const auto words = content_words(text);
  const auto ws = schemas::split_words(words);
  return std::vector<std::string>(ws.begin(), ws.end());
}

std::string normal_number(std::string n) {
  while (!n.empty() && (n.back() == '.' || n.back() == ':'))
    n.pop_back();
  std::string lower;
  for (char c : n)
    lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  // Times: "3pm", "3:30 pm" (joined by the caller), "08:00" -> "15:00", "15:30", "8:00".
  int h = -1, m = 0;
  std::size_t i = 0;
  auto digits = [&](int& v) {
    std::size_t start = i;
    v = 0;
    while (i < lower.size() && lower[i] >= '0' && lower[i] <= '9' && i - start < 2)
      v = v * 10 + (lower[i++] - '0');
    return i > start;
  };
  if (digits(h)) {
    bool colon = i < lower.size() && lower[i] == ':';
    if (colon) {
      ++i;
      if (!digits(m) || m > 59)
        h = -1;
    }
    std::string rest = lower.substr(i);
    if (h >= 0 && (rest == "am" || rest == "pm") && h >= 1 && h <= 12) {
      if (rest == "pm" && h != 12)
        h += 12;
      if (rest == "am" && h == 12)
        h = 0;
    } else if (!(h >= 0 && colon && rest.empty() && h <= 23)) {
      h = -1;
    }
    if (h >= 0) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "%d:%02d", h, m);
      return buf;
    }
  }
  // Plain numbers: no leading zeros ("007" -> "7").
  if (std::all_of(lower.begin(), lower.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    auto nz = lower.find_first_not_of('0');
    return nz == std::string::npos ? "0" : lower.substr(nz);
  }
  return lower;
}

void sign(schemas::extraction& x) {
  for (auto& e : x.entries) {
    std::set<std::string> dates, amounts, entities, numbers;
    std::set<std::string> years;   // years of the dates: "1 October 2026" may leave "2026" behind
    std::string rest = e.content;  // the content minus the text of its dates and amounts
    for (auto mi : e.mentions) {
      if (mi >= x.mentions.size())
        continue;
      const auto& m = x.mentions[mi];
      switch (m.kind) {
        case entity_kind::date:
          dates.insert(m.value);
          for (std::size_t p = 0; p + 4 <= m.value.size(); p += 11)
            years.insert(m.value.substr(p, 4));
          break;
        case entity_kind::amount: amounts.insert(m.value + (m.currency.empty() ? "" : " " + m.currency)); break;
        case entity_kind::person:
        case entity_kind::organization:
        case entity_kind::technology:
        case entity_kind::location: entities.insert(schemas::normal_form(m.value)); break;
      }
      if (m.kind == entity_kind::date || m.kind == entity_kind::amount)
        for (auto at = rest.find(m.text); !m.text.empty() && at != std::string::npos; at = rest.find(m.text))
          rest.replace(at, m.text.size(), " ");
    }
    // What is left with digits: counts, versions, times ("180 seats", "v2", "15:00", "3 pm").
    std::vector<std::string> tokens;
    std::string token;
    for (char c : rest + " ") {
      if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == ':') {
        token += c;
      } else if (!token.empty()) {
        tokens.push_back(token);
        token.clear();
      }
    }
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (!has_digit(tokens[i]))
        continue;
      auto t = tokens[i];
      if (i + 1 < tokens.size() &&
          (tokens[i + 1] == "am" || tokens[i + 1] == "pm" || tokens[i + 1] == "AM" || tokens[i + 1] == "PM"))
        t += tokens[i + 1];
      auto n = normal_number(t);
      if (!n.empty() && !years.count(n))
        numbers.insert(n);
    }
    e.sig = {sorted(numbers),          sorted(dates),         sorted(amounts), sorted(entities),
             content_words(e.content), content_words(e.title)};
  }
}

}  // namespace engram::reading
