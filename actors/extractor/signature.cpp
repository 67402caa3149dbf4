#include "actors/extractor/signature.hpp"

#include <algorithm>
#include <set>

namespace engram::extractor {
namespace {

using schemas::entity_kind;

bool has_digit(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string> sorted(std::set<std::string> s) {
  return {s.begin(), s.end()};
}

}  // namespace

void sign(schemas::extraction& x) {
  for (auto& e : x.entries) {
    std::set<std::string> dates, amounts, entities, numbers;
    std::string rest = e.content;  // the content minus the text of its dates and amounts
    for (auto mi : e.mentions) {
      if (mi >= x.mentions.size())
        continue;
      const auto& m = x.mentions[mi];
      switch (m.kind) {
        case entity_kind::date: dates.insert(m.value); break;
        case entity_kind::amount: amounts.insert(m.value + (m.currency.empty() ? "" : " " + m.currency)); break;
        case entity_kind::person:
        case entity_kind::organization: entities.insert(schemas::normal_form(m.value)); break;
      }
      if (m.kind == entity_kind::date || m.kind == entity_kind::amount)
        for (auto at = rest.find(m.text); !m.text.empty() && at != std::string::npos; at = rest.find(m.text))
          rest.replace(at, m.text.size(), " ");
    }
    // What is left with digits: counts, versions, times ("180 seats", "v2", "15:00").
    std::string token;
    auto flush = [&] {
      if (has_digit(token))
        numbers.insert(token);
      token.clear();
    };
    for (char c : rest) {
      if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == ':')
        token += c;
      else
        flush();
    }
    flush();
    // "15:00." and "15:00" are one number: drop trailing separators.
    std::set<std::string> clean;
    for (auto n : numbers) {
      while (!n.empty() && (n.back() == '.' || n.back() == ':'))
        n.pop_back();
      if (!n.empty())
        clean.insert(n);
    }
    std::string words;
    auto nf = schemas::normal_form(e.content);
    for (std::size_t b = 0; b < nf.size();) {
      auto sp = std::min(nf.find(' ', b), nf.size());
      auto w = std::string_view(nf).substr(b, sp - b);
      if (!words.empty())
        words += ' ';
      words += has_digit(w) ? std::string_view("#") : w;
      b = sp + 1;
    }
    e.sig = {sorted(std::move(clean)), sorted(std::move(dates)), sorted(std::move(amounts)),
             sorted(std::move(entities)), std::move(words)};
  }
}

}  // namespace engram::extractor
