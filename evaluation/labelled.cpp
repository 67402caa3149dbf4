#include "evaluation/labelled.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <stdexcept>
#include <tuple>

namespace engram::evaluation::labelled {

namespace {

labelled_item parse_item(const nlohmann::json& j) {
  labelled_item it{j.value("id", ""), j.value("writer", ""), j.value("style", ""), "", {}, {}};
  for (const auto& r : j.value("relations", nlohmann::json::array()))
    if (r.is_object())
      it.relations.push_back({r.value("s", ""), r.value("p", ""), r.value("o", ""), r.value("ended", false)});
  const std::string marked = j.value("text", "");
  std::size_t pos = 0;
  while (pos < marked.size()) {
    const auto open = marked.find("[[", pos);
    if (open == std::string::npos) {
      it.text += marked.substr(pos);
      break;
    }
    const auto colon = marked.find(':', open), close = marked.find("]]", open);
    if (colon == std::string::npos || close == std::string::npos || colon > close)
      throw std::runtime_error(it.id + ": a mark that does not parse");
    it.text += marked.substr(pos, open - pos);
    const auto type = marked.substr(open + 2, colon - open - 2);
    const auto name = marked.substr(colon + 1, close - colon - 1);
    it.spans.push_back({it.text.size(), it.text.size() + name.size(), type});
    it.text += name;
    pos = close + 2;
  }
  return it;
}

/// A span's edges without the punctuation around it.
std::pair<std::size_t, std::size_t> trimmed(const std::string& s, std::size_t b, std::size_t e) {
  auto punct = [](char c) { return c == '.' || c == ',' || c == ';' || c == ':' || c == '\'' || c == '"'; };
  while (e > b && punct(s[e - 1]))
    --e;
  while (b < e && punct(s[b]))
    ++b;
  return {b, e};
}

}  // namespace

std::vector<labelled_item> read_labelled(const std::vector<std::string>& files) {
  std::vector<labelled_item> out;
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in)
      throw std::runtime_error("cannot read " + f);
    std::string line;
    for (std::size_t n = 1; std::getline(in, line); ++n) {
      if (line.empty())
        continue;
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_object())
        throw std::runtime_error(f + ":" + std::to_string(n) + ": not a JSON object");
      out.push_back(parse_item(j));
    }
  }
  return out;
}

std::string type_tag(reading::name_type t) {
  static const char* n[] = {"PER", "ORG", "PROD", "LOC", "ID"};
  return n[static_cast<int>(t)];
}

name_scores score_names(const reading::name_tagger& tagger, const std::vector<labelled_item>& items,
                        std::int32_t threshold, std::size_t errors_wanted) {
  using typed = std::tuple<std::size_t, std::size_t, std::string>;
  name_scores s;
  auto error = [&](const char* what, const typed& t, const labelled_item& it) {
    if (s.errors.size() < errors_wanted)
      s.errors.push_back(std::string(what) + " " + std::get<2>(t) + " " +
                         it.text.substr(std::get<0>(t), std::get<1>(t) - std::get<0>(t)) + " | " + it.text);
  };
  for (const auto& it : items) {
    std::set<typed> gold, found;
    std::set<std::pair<std::size_t, std::size_t>> gold_untyped, found_untyped;
    for (const auto& g : it.spans) {
      auto [b, e] = trimmed(it.text, g.begin, g.end);
      gold.insert({b, e, g.type});
      gold_untyped.insert({b, e});
    }
    for (const auto& f : tagger.tag(it.text, threshold)) {
      auto [b, e] = trimmed(it.text, f.begin, f.end);
      found.insert({b, e, type_tag(f.type)});
      found_untyped.insert({b, e});
    }
    for (const auto& g : gold) {
      const bool hit = found.count(g) > 0;
      for (auto* c : {&s.all, &s.by_type[std::get<2>(g)], &s.by_style[it.style]})
        ++(hit ? c->tp : c->fn);
      if (!hit)
        error("missed", g, it);
    }
    for (const auto& f : found)
      if (!gold.count(f)) {
        for (auto* c : {&s.all, &s.by_type[std::get<2>(f)], &s.by_style[it.style]})
          ++c->fp;
        error("extra ", f, it);
      }
    for (const auto& g : gold_untyped)
      ++(found_untyped.count(g) ? s.untyped.tp : s.untyped.fn);
    for (const auto& f : found_untyped)
      s.untyped.fp += !gold_untyped.count(f);
  }
  return s;
}

}  // namespace engram::evaluation::labelled
