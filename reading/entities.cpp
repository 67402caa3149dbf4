#include "reading/internal/entities.hpp"

#include "base/names.hpp"

#include "reading/lexicon.hpp"
#include "reading/text.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <set>

namespace engram::reading::detail {

using schemas::entity_kind;
using schemas::entity_mention;

namespace {

std::string capitalise(std::string_view s) {
  std::string out(s);
  if (!out.empty())
    out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

bool is_org_word(std::string_view w) {
  static const std::set<std::string_view> s{
      "traders",     "logistics",     "systems",    "labs",       "technologies", "technology", "solutions",
      "partners",    "bank",          "industries", "consulting", "software",     "networks",   "foods",
      "motors",      "pharma",        "capital",    "media",      "health",       "energy",     "airlines",
      "freight",     "shipping",      "group",      "holdings",   "ventures",     "analytics",  "robotics",
      "dynamics",    "manufacturing", "insurance",  "retail",     "electronics",  "telecom",    "transport",
      "consultancy", "associates",    "agency",     "studios",    "university",   "institute",  "foundation",
      "hospital",    "council",       "ministry"};
  return s.count(lower_ascii(w)) != 0;
}

/// Lower-case words that are also first names or company names: never read as a name when
/// written in lower case.
bool is_common_word(std::string_view w) {
  static const std::set<std::string_view> s{
      "will",    "may",    "mark",  "bill",   "grace", "hope",   "joy",    "rose",  "june",   "april",   "august",
      "summer",  "art",    "dawn",  "sky",    "max",   "pat",    "sue",    "rob",   "frank",  "ray",     "jack",
      "drew",    "gene",   "chase", "faith",  "rich",  "win",    "ivy",    "amber", "ruby",   "jade",    "pearl",
      "page",    "lane",   "wade",  "dean",   "don",   "guy",    "hunter", "miles", "carter", "cash",    "penny",
      "sandy",   "stone",  "apple", "target", "box",   "square", "slack",  "zoom",  "notion", "shell",   "orange",
      "amazon",  "oracle", "the",   "and",    "for",   "you",    "all",    "team",  "sales",  "support", "ops",
      "finance", "legal",  "info",  "hello",  "admin", "office", "mail",   "news"};
  return s.count(w) != 0;
}

}  // namespace

bool is_capitalised(std::string_view w) { return text::starts_upper(w); }

bool is_legal_suffix(std::string_view w) {
  static const std::set<std::string_view> s{"inc", "inc.", "ltd",  "ltd.",  "llc",         "gmbh", "ag",      "s.a.",
                                            "sa",  "plc",  "corp", "corp.", "corporation", "co.",  "bv",      "b.v.",
                                            "nv",  "n.v.", "pty",  "se",    "sas",         "sarl", "limited", "llp",
                                            "oy",  "ab",   "as",   "kg",    "spa"};
  return s.count(lower_ascii(w)) != 0;
}

/// An organisation name derived from an e-mail domain ("ops@globex.example" -> "Globex").
std::string org_from_address(std::string_view address) {
  auto at = address.find('@');
  if (at == std::string_view::npos)
    return {};
  auto domain = lower_ascii(address.substr(at + 1));
  auto dot = domain.find('.');
  auto label = domain.substr(0, dot);
  if (label.empty() || lexicon::is_generic_domain(label))
    return {};
  return capitalise(label);
}

namespace {

/// A sentence as find_people_and_orgs reads it: its words, and where its mentions go.
struct name_reader {
  const std::string& s;
  std::size_t sentence_start;
  const message_context& ctx;
  std::vector<span_mention>& out;
  std::vector<std::string_view> ws;

  /// The offset of word `w` in the sentence.
  std::size_t offset(std::string_view w) const { return static_cast<std::size_t>(w.data() - s.data()); }
};

/// A word not capitalised (`lw` lower-case).
void read_lower_case_name(name_reader& r, std::string_view w, const std::string& lw) {
  // Chat is often lower-case: a participant's first name or an organisation this message
  // knows (its domains, its signature) is recognised in any case, unless it is also a
  // common word ("will", "may", "target").
  if (w.size() < 3 || is_common_word(lw))
    return;
  if (auto it = r.ctx.known_orgs.find(lw); it != r.ctx.known_orgs.end()) {
    entity_mention m{entity_kind::organization, std::string(w), it->second, {}, {}, {}, {}, {}};
    r.out.push_back({r.sentence_start + r.offset(w), r.sentence_start + r.offset(w) + w.size(), m});
  } else if (auto p = r.ctx.person_by_first.find(lw); p != r.ctx.person_by_first.end()) {
    entity_mention m{entity_kind::person, std::string(w), p->second, {}, {}, {}, {}, {}};
    r.out.push_back({r.sentence_start + r.offset(w), r.sentence_start + r.offset(w) + w.size(), m});
  }
}

/// "Contoso Ltd", "Northwind Traders", "Acme Corp." from word `i` (`w` stripped, `lw`
/// lower-case); true when found (`i` then at its last word).
bool read_company(name_reader& r, std::size_t& i, std::string_view w, const std::string& lw) {
  const auto& ws = r.ws;
  std::size_t j = i;
  std::array<std::string_view, 4> run{};
  std::size_t n = 0;
  // A legal form written in lower case ends a name too ("Brightmoor Bank plc"); only the
  // forms that are no English word ("as", "co" are).
  auto lower_legal_form = [&](std::size_t k) {
    static const std::set<std::string_view> forms{"plc", "inc", "ltd", "llc", "gmbh", "corp"};
    return k < ws.size() && forms.count(text::strip_punct(ws[k])) > 0;
  };
  while (j < ws.size() && n < run.size() && is_capitalised(text::strip_punct(ws[j]))) {
    run[n++] = text::strip_punct(ws[j]);
    bool ends = ws[j].back() == ',' || ws[j].back() == '.' || ws[j].back() == ';';
    ++j;
    // "Pipewell, Inc.": a comma before a legal form does not end the name.
    if (ends && ws[j - 1].back() == ',' && j < ws.size() && is_legal_suffix(text::strip_punct(ws[j])))
      continue;
    if (ends && !is_legal_suffix(ws[j - 1]))
      break;
  }
  if (n >= 1 && n < run.size() && lower_legal_form(j) && ws[j - 1].back() != '.' && ws[j - 1].back() != ',' &&
      ws[j - 1].back() != ';')
    run[n++] = text::strip_punct(ws[j++]);
  std::vector<std::string_view> caps;
  if (n >= 2 && (is_legal_suffix(ws[i + n - 1]) || is_org_word(run[n - 1])))
    caps.assign(run.begin(), run.begin() + static_cast<std::ptrdiff_t>(n));
  if (caps.size() >= 2 && !lexicon::is_stop_capital(lw)) {
    std::string written;
    for (std::size_t k = 0; k < caps.size(); ++k)
      written += (k ? " " : "") + std::string(caps[k]);
    std::string name;
    for (std::size_t k = 0; k < caps.size(); ++k)
      if (!(k + 1 == caps.size() && is_legal_suffix(ws[i + k])))
        name += (name.empty() ? "" : " ") + std::string(caps[k]);
    auto b = r.offset(caps.front());
    entity_mention m{entity_kind::organization, written, name, {}, {}, {}, {}, {}};
    r.out.push_back({r.sentence_start + b, r.sentence_start + r.offset(caps.back()) + caps.back().size(), m});
    i += caps.size() - 1;
    return true;
  }
  return false;
}

/// People: a known first name at word `i`, optionally followed by a capitalised surname;
/// true when found (`i` then at its last word).
bool read_person(name_reader& r, std::size_t& i, std::string_view w, const std::string& lw) {
  const auto& ws = r.ws;
  const auto& ctx = r.ctx;
  bool first = lexicon::is_first_name(lw) || ctx.person_by_first.count(lw);
  if (first && !lexicon::is_stop_capital(lw)) {
    std::string name(w);
    auto end_word = w;
    if (i + 1 < ws.size()) {
      auto next = text::strip_punct(ws[i + 1]);
      bool joined = ws[i].back() != ',' && ws[i].back() != '.';
      if (joined && is_capitalised(next) && !lexicon::is_stop_capital(lower_ascii(next)) &&
          !ctx.known_orgs.count(lower_ascii(next)) &&
          (!lexicon::is_first_name(lower_ascii(next)) || !lexicon::is_first_name(lw) || i + 2 >= ws.size() ||
           !is_capitalised(text::strip_punct(ws[i + 2])))) {
        // A surname may be a first name too ("Siobhán Kelly"), unless a third capital
        // follows: "Dana Kelly Smith" reads as Dana and Kelly Smith.
        name += " " + std::string(next);
        end_word = next;
        ++i;
      }
    }
    std::string value = name;
    if (name.find(' ') == std::string::npos)
      if (auto it = ctx.person_by_first.find(lw); it != ctx.person_by_first.end())
        value = it->second;
    entity_mention m{entity_kind::person, name, value, {}, {}, {}, {}, {}};
    r.out.push_back({r.sentence_start + r.offset(w), r.sentence_start + r.offset(end_word) + end_word.size(), m});
    return true;
  }
  return false;
}

/// "subsidiary of Contoso", "joined Fabrikam", "at Initech", "with Coho Winery",
/// "Globex's team": a capitalised name (up to three words) after an organisation cue, or
/// in the possessive, that is no one's first name (`i` then at its last word).
void read_cued_org(name_reader& r, std::size_t& i, std::string_view w, const std::string& lw) {
  const auto& ws = r.ws;
  const bool possessive_word = ws[i].size() > 2 && (ws[i].find("'s") != std::string_view::npos ||
                                                    ws[i].find("\xE2\x80\x99s") != std::string_view::npos);
  if ((i > 0 || possessive_word) && !lexicon::is_stop_capital(lw) && !lexicon::is_first_name(lw) &&
      !r.ctx.person_by_first.count(lw) && w.size() >= 3) {
    auto prev = i > 0 ? lower_ascii(text::strip_punct(ws[i - 1])) : std::string();
    bool cue = prev == "of" || prev == "at" || prev == "joined" || prev == "acquired" || prev == "with" ||
               prev == "for" || prev == "from" || prev == "by" || prev == "to" || prev == "via" || prev == "and";
    bool possessive = possessive_word;
    if (!cue && !possessive)
      return;
    std::size_t n = 1;
    while (!possessive && n < 3 && i + n < ws.size() && ws[i + n - 1].back() != ',' && ws[i + n - 1].back() != '.') {
      auto next = text::strip_punct(ws[i + n]);
      auto ln = lower_ascii(next);
      if (!is_capitalised(next) || lexicon::is_stop_capital(ln) || lexicon::is_first_name(ln))
        break;
      ++n;
    }
    auto last = text::strip_punct(ws[i + n - 1]);
    std::string name(r.s.substr(r.offset(w), r.offset(last) + last.size() - r.offset(w)));
    if (prev == "and" && r.out.empty())
      return;  // "and X" counts only next to another name
    entity_mention m{entity_kind::organization, name, name, {}, {}, {}, {}, {}};
    r.out.push_back({r.sentence_start + r.offset(w), r.sentence_start + r.offset(last) + last.size(), m});
    i += n - 1;
  }
}

}  // namespace

void find_people_and_orgs(const std::string& s, std::size_t sentence_start, const message_context& ctx,
                          std::vector<span_mention>& out) {
  name_reader r{s, sentence_start, ctx, out, text::words(s)};
  const auto& ws = r.ws;
  for (std::size_t i = 0; i < ws.size(); ++i) {
    auto w = text::strip_punct(ws[i]);
    if (w.size() < 2)
      continue;
    auto lw = lower_ascii(w);
    if (!is_capitalised(w)) {
      read_lower_case_name(r, w, lw);
      continue;
    }
    // Organisation names known from the message (domains, signature) or with a suffix.
    if (auto it = ctx.known_orgs.find(lw); it != ctx.known_orgs.end()) {
      entity_mention m{entity_kind::organization, std::string(w), it->second, {}, {}, {}, {}, {}};
      out.push_back({sentence_start + r.offset(w), sentence_start + r.offset(w) + w.size(), m});
      continue;
    }
    if (read_company(r, i, w, lw))
      continue;
    if (read_person(r, i, w, lw))
      continue;
    read_cued_org(r, i, w, lw);
  }
}

void find_known_things(const std::string& s, const std::vector<span_mention>& taken, std::vector<span_mention>& out) {
  constexpr std::size_t max_words = 4;
  const auto ws = text::words(s);
  auto covered = [&](std::size_t b, std::size_t e) {
    for (const std::vector<span_mention>* list : {&taken, static_cast<const std::vector<span_mention>*>(&out)})
      for (const auto& sp : *list)
        if (b < sp.end && sp.begin < e)
          return true;
    return false;
  };
  for (std::size_t i = 0; i < ws.size(); ++i) {
    for (std::size_t n = std::min(max_words, ws.size() - i); n >= 1; --n) {
      const auto first = text::strip_punct(ws[i]), last = text::strip_punct(ws[i + n - 1]);
      if (first.empty() || last.empty())
        continue;
      const auto b = static_cast<std::size_t>(first.data() - s.data());
      const auto e = static_cast<std::size_t>(last.data() - s.data()) + last.size();
      if (e <= b)
        continue;
      const std::string written = s.substr(b, e - b);
      const auto* k = names::known(names::fold_name(written));
      if (!k)
        continue;
      const auto lw = lower_ascii(written);
      if (n == 1 && (lw == written && is_common_word(lw)))
        break;
      if (covered(b, e))
        break;
      // Named as written ("Postgres" stays Postgres: resolution joins it to PostgreSQL by
      // its alias); chat's lower case takes the canonical spelling ("k8s" -> Kubernetes).
      out.push_back({b,
                     e,
                     {k->kind == names::known_kind::place ? entity_kind::location : entity_kind::technology,
                      written,
                      lw == written ? k->written : written,
                      {},
                      {},
                      {},
                      {},
                      {}}});
      i += n - 1;
      break;
    }
  }
}

namespace {

/// The name `written` without a legal form at its end ("Acme Corp" -> "Acme").
std::string without_legal_form(const std::string& written) {
  const auto space = written.rfind(' ');
  if (space == std::string::npos || !is_legal_suffix(text::strip_punct(std::string_view(written).substr(space + 1))))
    return written;
  return std::string(text::trim(std::string_view(written).substr(0, space)));
}

/// The mention of a name the model found: its kind and value as the rules would give them.
std::optional<entity_mention> mention_of(const name_span& n, const std::string& written, const message_context& ctx,
                                         const message_names* names) {
  const auto lw = lower_ascii(written);
  auto type = n.type;
  if (names)
    if (auto it = names->find(lw); it != names->end())
      type = it->second.second;
  // What the message itself says is exact: a name its participants' domains or its signature
  // give is an organisation, a participant's name a person, whatever the model read.
  if (ctx.known_orgs.count(lw))
    type = name_type::organization;
  else if (ctx.person_by_first.count(lw) || std::any_of(ctx.person_by_first.begin(), ctx.person_by_first.end(),
                                                        [&](const auto& p) { return lower_ascii(p.second) == lw; }))
    type = name_type::person;
  switch (type) {
    case name_type::person: {
      std::string value = written;
      if (written.find(' ') == std::string::npos)
        if (auto it = ctx.person_by_first.find(lw); it != ctx.person_by_first.end())
          value = it->second;
      return entity_mention{entity_kind::person, written, value, {}, {}, {}, {}, {}};
    }
    case name_type::organization: {
      auto it = ctx.known_orgs.find(lw);
      const auto value = it != ctx.known_orgs.end() ? it->second : without_legal_form(written);
      return entity_mention{entity_kind::organization, written, value, {}, {}, {}, {}, {}};
    }
    case name_type::product:
    case name_type::place: {
      const auto* k = names::known(names::fold_name(written));
      const bool place = k ? k->kind == names::known_kind::place : n.type == name_type::place;
      const auto value = k && lw == written ? k->written : written;
      return entity_mention{
          place ? entity_kind::location : entity_kind::technology, written, value, {}, {}, {}, {}, {}};
    }
    case name_type::identifier: return std::nullopt;
  }
  return std::nullopt;
}

/// Whether a word of `s` starts with a capital.
bool has_capital_word(std::string_view s) {
  for (auto w : text::words(s))
    if (text::starts_upper(text::strip_punct(w)))
      return true;
  return false;
}

/// Where the names the message itself gives (its participants' names and first names, the
/// organisations of their domains and signature) occur in `s`, as whole words, any case; a
/// lower-case occurrence of a common word ("will") is none.
std::vector<std::pair<std::size_t, std::size_t>> known_names_in(const std::string& s, const message_context& ctx) {
  const auto ls = lower_ascii(s);
  std::vector<std::pair<std::size_t, std::size_t>> out;
  auto boundary = [&](std::size_t i) { return i >= ls.size() || !(text::is_alpha(ls[i]) || text::is_digit(ls[i])); };
  auto add = [&](const std::string& name) {
    const auto needle = lower_ascii(name);
    if (needle.size() < 3)
      return;
    for (auto at = ls.find(needle); at != std::string::npos; at = ls.find(needle, at + 1))
      if ((at == 0 || boundary(at - 1)) && boundary(at + needle.size()) &&
          !(is_common_word(needle) && s.compare(at, needle.size(), needle) == 0))
        out.emplace_back(at, at + needle.size());
  };
  for (const auto& [lower, name] : ctx.known_orgs)
    add(lower);
  for (const auto& [first, name] : ctx.person_by_first) {
    add(first);
    add(name);
  }
  return out;
}

}  // namespace

void find_names_by_model(const std::string& s, const message_context& ctx, const std::vector<name_span>& found,
                         const message_names* names, std::vector<span_mention>& out) {
  const std::size_t before = out.size();
  auto overlaps = [](std::size_t b, std::size_t e, const std::vector<std::pair<std::size_t, std::size_t>>& taken) {
    return std::any_of(taken.begin(), taken.end(), [&](const auto& t) { return b < t.second && t.first < e; });
  };
  std::vector<std::pair<std::size_t, std::size_t>> values, named;  // dates and amounts; the model's names
  for (std::size_t i = 0; i < before; ++i)
    values.emplace_back(out[i].begin, out[i].end);
  const auto known = known_names_in(s, ctx);
  for (auto n : found) {
    if (overlaps(n.begin, n.end, values))
      continue;
    // A name the message itself gives is exact: "globex renewal" read as one name is Globex
    // when globex is a participant's domain (the model's span only adds lower-case words).
    for (const auto& [kb, ke] : known)
      if (n.begin <= kb && ke <= n.end && (n.begin != kb || n.end != ke) &&
          !has_capital_word(s.substr(n.begin, kb - n.begin)) && !has_capital_word(s.substr(ke, n.end - ke))) {
        n.begin = kb;
        n.end = ke;
        break;
      }
    named.emplace_back(n.begin, n.end);
    if (auto m = mention_of(n, s.substr(n.begin, n.end - n.begin), ctx, names))
      out.push_back({n.begin, n.end, std::move(*m)});
  }
  std::vector<span_mention> rules;
  find_people_and_orgs(s, 0, ctx, rules);
  for (auto& r : rules)
    if (!overlaps(r.begin, r.end, named) && !overlaps(r.begin, r.end, values))
      out.push_back(std::move(r));
}

}  // namespace engram::reading::detail
