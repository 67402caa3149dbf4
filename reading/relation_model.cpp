#include "reading/relation_model.hpp"

#include "embedding/embedder.hpp"
#include "reading/text.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <utility>

namespace engram::reading {

namespace {

// reading/relation_examples/*.txt, written into the build tree by reading/CMakeLists.txt.
constexpr relation_example_file example_files[] = {
#include "relation_examples.inc"
};

std::optional<end_kind> kind_named(std::string_view k) {
  if (k == "person")
    return end_kind::person;
  if (k == "org")
    return end_kind::org;
  if (k == "place")
    return end_kind::place;
  if (k == "tech")
    return end_kind::tech;
  if (k == "product")
    return end_kind::product;
  return std::nullopt;
}

/// The token a mention of kind `k` is replaced by, as a relation's subject or object.
std::string_view token_of(end_kind k, bool subject) {
  switch (k) {
    case end_kind::person: return subject ? "Alex Morgan" : "Sam Lee";
    case end_kind::org: return subject ? "Acme" : "Globex";
    default: return subject ? "Zeta" : "Orion";
  }
}

/// Whether a mention read as `seen` may be an end the example has as `wanted`: people are
/// only people; an organisation or an unkinded name may be any of the others (a name's
/// kind is what the relation says it is).
bool compatible(end_kind seen, end_kind wanted) {
  if (seen == end_kind::person || wanted == end_kind::person)
    return seen == wanted;
  return true;
}

bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// The last `n` words of `s` (with what separates them).
std::string_view last_words(std::string_view s, std::size_t n) {
  std::size_t i = s.size();
  while (i > 0 && space(s[i - 1]))
    --i;
  for (std::size_t words = 0; i > 0 && words < n; ++words) {
    while (i > 0 && !space(s[i - 1]))
      --i;
    if (words + 1 < n)
      while (i > 0 && space(s[i - 1]))
        --i;
  }
  return s.substr(i);
}

/// The first `n` words of `s`.
std::string_view first_words(std::string_view s, std::size_t n) {
  std::size_t i = 0;
  while (i < s.size() && space(s[i]))
    ++i;
  for (std::size_t words = 0; i < s.size() && words < n; ++words) {
    while (i < s.size() && !space(s[i]))
      ++i;
    if (words + 1 < n)
      while (i < s.size() && space(s[i]))
        ++i;
  }
  return s.substr(0, i);
}

float dot(const std::vector<float>& a, const std::vector<float>& b) {
  float s = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
    s += a[i] * b[i];
  return s;
}

/// An example's text as the model embeds it: its ends replaced by their tokens.
std::string rendered(const relation_example& e) {
  std::string out;
  std::string_view t = e.text;
  while (!t.empty()) {
    const auto open = t.find('{');
    if (open == std::string_view::npos) {
      out += t;
      break;
    }
    out += t.substr(0, open);
    const auto close = t.find('}', open);
    const bool subject = t.substr(open + 1, 1) == "S";
    out += token_of(subject ? e.subject : e.object, subject);
    t = t.substr(close + 1);
  }
  return out;
}

}  // namespace

engram::result<std::vector<relation_example>> parse_relation_examples(std::string_view predicate,
                                                                      std::string_view text) {
  std::vector<relation_example> out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string line = std::string(text::trim(text.substr(0, nl)));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.empty() || line[0] == '#')
      continue;
    relation_example e;
    e.predicate = std::string(predicate);
    if (line[0] == '!') {
      e.ended = true;
      line = std::string(text::trim(std::string_view(line).substr(1)));
    }
    const auto where = std::string(predicate) + ".txt:" + std::to_string(line_no) + ": ";
    bool s = false, o = false;
    for (std::size_t i = line.find('{'); i != std::string::npos; i = line.find('{', i + 1)) {
      const auto close = line.find('}', i);
      const auto colon = line.find(':', i);
      if (close == std::string::npos || colon == std::string::npos || colon > close || colon != i + 2)
        return fail(where + "an end is written {S:kind} or {O:kind}");
      const auto kind = kind_named(std::string_view(line).substr(colon + 1, close - colon - 1));
      if (!kind)
        return fail(where + "an end's kind is person, org, place, tech or product");
      const char role = line[i + 1];
      if (role == 'S' && !s)
        s = true, e.subject = *kind;
      else if (role == 'O' && !o)
        o = true, e.object = *kind;
      else
        return fail(where + "each of {S:…} and {O:…} appears once");
    }
    if (!s || !o)
      return fail(where + "an example names both ends, {S:kind} and {O:kind}");
    e.text = std::move(line);
    out.push_back(std::move(e));
  }
  return out;
}

std::span<const relation_example_file> builtin_relation_example_files() { return example_files; }

const std::vector<relation_example>& builtin_relation_examples() {
  static const std::vector<relation_example> all = [] {
    std::vector<relation_example> v;
    for (const auto& f : example_files) {
      auto parsed = parse_relation_examples(f.predicate, f.text);
      // The files are checked by the tests; a malformed one is a build of bad data.
      if (parsed)
        for (auto& e : *parsed)
          v.push_back(std::move(e));
    }
    return v;
  }();
  return all;
}

std::string masked_text(const relation_candidate& c, bool reversed, std::size_t context_words) {
  const auto t = c.text;
  std::string out(last_words(t.substr(0, c.first_begin), context_words));
  out += token_of(c.first, !reversed);
  out += t.substr(c.first_end, c.second_begin - c.first_end);
  out += token_of(c.second, reversed);
  out += first_words(t.substr(c.second_end), context_words);
  return std::string(text::trim(out));
}

relation_model::relation_model(std::shared_ptr<const embedding::embedder> encoder,
                               std::vector<relation_example> examples, relation_model_options options)
    : encoder_(std::move(encoder)), examples_(std::move(examples)), options_(options) {}

engram::result<std::shared_ptr<const relation_model>> relation_model::make(
    std::shared_ptr<const embedding::embedder> encoder, const std::vector<relation_example>& examples,
    relation_model_options options) {
  if (!encoder)
    return fail("relation model: no encoder");
  std::shared_ptr<relation_model> m(new relation_model(encoder, examples, options));
  std::vector<std::string> texts;
  for (const auto& e : m->examples_)
    texts.push_back(rendered(e));
  std::vector<std::string_view> views(texts.begin(), texts.end());
  auto vs = encoder->embed(views);
  if (!vs)
    return fail("relation model: " + vs.error());
  for (std::size_t i = 0; i < m->examples_.size(); ++i) {
    const auto& e = m->examples_[i];
    m->oriented_[e.subject == end_kind::person][e.object == end_kind::person] = true;
    m->vectors_.push_back({&e, std::move((*vs)[i])});
  }
  return std::shared_ptr<const relation_model>(std::move(m));
}

engram::result<std::vector<relation_reading>> relation_model::read(std::span<const relation_candidate> cs) const {
  // Each candidate's orientations some example has, embedded in one run: at[2i + reversed]
  // is the text's index, or npos.
  constexpr auto none = std::numeric_limits<std::size_t>::max();
  std::vector<std::string> texts;
  std::vector<std::size_t> at(2 * cs.size(), none);
  for (std::size_t i = 0; i < cs.size(); ++i)
    for (int reversed = 0; reversed < 2; ++reversed) {
      const auto subject = reversed ? cs[i].second : cs[i].first;
      const auto object = reversed ? cs[i].first : cs[i].second;
      if (!oriented_[subject == end_kind::person][object == end_kind::person])
        continue;
      at[2 * i + static_cast<std::size_t>(reversed)] = texts.size();
      texts.push_back(masked_text(cs[i], reversed == 1, options_.context_words));
    }
  std::vector<std::string_view> views(texts.begin(), texts.end());
  auto vs = encoder_->embed(views);
  if (!vs)
    return fail("relation model: " + vs.error());
  std::vector<relation_reading> out;
  for (std::size_t i = 0; i < cs.size(); ++i) {
    // The closest example of each predicate, over both orientations.
    std::map<std::string_view, std::pair<float, relation_reading>> best;
    for (int reversed = 0; reversed < 2; ++reversed) {
      const auto text = at[2 * i + static_cast<std::size_t>(reversed)];
      if (text == none)
        continue;
      const auto& v = (*vs)[text];
      const auto subject = reversed ? cs[i].second : cs[i].first;
      const auto object = reversed ? cs[i].first : cs[i].second;
      for (const auto& ev : vectors_) {
        const auto& e = *ev.example;
        if (!compatible(subject, e.subject) || !compatible(object, e.object))
          continue;
        const float sim = dot(v, ev.v);
        auto [it, fresh] = best.try_emplace(e.predicate, -2.0f, relation_reading{});
        if (fresh || sim > it->second.first)
          it->second = {sim, {e.predicate, e.ended, reversed == 1, e.subject, e.object, sim, 0}};
      }
    }
    relation_reading r;
    float first = -2, second = -2;
    for (const auto& [p, b] : best) {
      if (b.first > first) {
        second = first;
        first = b.first;
        r = b.second;
      } else if (b.first > second) {
        second = b.first;
      }
    }
    r.margin = second > -2 ? first - second : first;
    if (r.predicate == "none" || r.similarity < options_.min_similarity || r.margin < options_.min_margin)
      r.predicate.clear();
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace engram::reading
