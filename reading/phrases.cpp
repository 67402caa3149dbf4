#include "reading/phrases.hpp"
#include "base/hash.hpp"

#include <cassert>
#include <unordered_map>

namespace engram::reading {
namespace {

bool word_char(char c) {
  auto u = static_cast<unsigned char>(c);
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '\'' || u >= 0x80;
}

std::vector<std::string_view> tokenize(std::string_view l) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < l.size()) {
    while (i < l.size() && !word_char(l[i]))
      ++i;
    std::size_t b = i;
    while (i < l.size() && (word_char(l[i]) || (l[i] == '-' && i + 1 < l.size() && word_char(l[i + 1]) && i > b)))
      ++i;
    if (i > b)
      out.push_back(l.substr(b, i - b));
  }
  return out;
}

std::uint64_t fnv(std::string_view s) { return fnv1a(s); }

/// Every phrase of every set, by the hash of its first token.
struct phrase_index {
  struct tail {
    unsigned set;
    std::vector<std::uint64_t> rest;
  };
  std::unordered_map<std::uint64_t, std::vector<tail>> by_first;
  /// Phrases starting with an apostrophe ("'d rather"): the first token is a suffix.
  std::vector<std::pair<unsigned, std::vector<std::string>>> suffixed;
  /// Phrases with characters that are not word characters ("action:", "<system").
  std::vector<std::pair<unsigned, std::string>> raw;
  unsigned sets = 0;
};

phrase_index& index() {
  static phrase_index idx;
  return idx;
}

void compute(const token_view& t) {
  const auto& idx = index();
  std::uint64_t m = 0;
  std::vector<std::uint64_t> hs;
  hs.reserve(t.tokens.size());
  for (auto tok : t.tokens)
    hs.push_back(fnv(tok));
  for (std::size_t i = 0; i < hs.size(); ++i) {
    auto it = idx.by_first.find(hs[i]);
    if (it == idx.by_first.end())
      continue;
    for (const auto& tl : it->second) {
      if ((m >> tl.set) & 1 || i + 1 + tl.rest.size() > hs.size())
        continue;
      bool all = true;
      for (std::size_t k = 0; k < tl.rest.size() && all; ++k)
        all = hs[i + 1 + k] == tl.rest[k];
      if (all)
        m |= std::uint64_t{1} << tl.set;
    }
  }
  const auto& ts = t.tokens;
  for (const auto& [set, p] : idx.suffixed) {
    if ((m >> set) & 1)
      continue;
    for (std::size_t i = 0; i < ts.size(); ++i) {
      if (ts[i].size() <= p[0].size() || ts[i].substr(ts[i].size() - p[0].size()) != p[0] || i + p.size() > ts.size())
        continue;
      bool all = true;
      for (std::size_t k = 1; k < p.size() && all; ++k)
        all = ts[i + k] == p[k];
      if (all) {
        m |= std::uint64_t{1} << set;
        break;
      }
    }
  }
  for (const auto& [set, r] : idx.raw)
    if (!((m >> set) & 1) && t.lower.find(r) != std::string::npos)
      m |= std::uint64_t{1} << set;
  t.matched = m;
  t.computed = true;
}

}  // namespace

token_view::token_view(std::string_view s) : lower(s) {
  for (auto& c : lower)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  tokens = tokenize(lower);
}

phrase_set::phrase_set(std::initializer_list<std::string_view> phrases) {
  auto& idx = index();
  id_ = idx.sets++;
  assert(id_ < 64 && "at most 64 phrase sets");
  for (auto p : phrases) {
    bool plain = true;
    for (char c : p)
      plain &= word_char(c) || c == ' ' || c == '-';
    if (!plain) {
      idx.raw.emplace_back(id_, std::string(p));
      continue;
    }
    auto toks = tokenize(p);
    if (toks.empty())
      continue;
    if (p.front() == '\'') {
      std::vector<std::string> parts(toks.begin(), toks.end());
      idx.suffixed.emplace_back(id_, std::move(parts));
      continue;
    }
    std::vector<std::uint64_t> rest;
    for (std::size_t k = 1; k < toks.size(); ++k)
      rest.push_back(fnv(toks[k]));
    idx.by_first[fnv(toks.front())].push_back({id_, std::move(rest)});
  }
}

bool phrase_set::any(const token_view& t) const {
  if (!t.computed)
    compute(t);
  return (t.matched >> id_) & 1;
}

}  // namespace engram::reading
