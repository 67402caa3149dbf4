// Relations between the entities of one sentence: see internal/relations.hpp.
//
// A sentence is read as a row of chunks: the people and organisations find_people_and_orgs
// found, and runs of capitalised words no span covers (a company, product or place the
// lexicon does not know: "Contoso", "Snowflake", "Lisbon"). Two neighbouring chunks and the
// words between them (the gap) decide: "Mei Chen" | "joined" | "Contoso" is works_at. What
// a run is follows from the relation: the object of "uses" is a technology, of "based in"
// a location, of "joined" an organisation. A run never starts a relation a person would
// (only spans are people).
#include "reading/internal/relations.hpp"

#include "reading/lexicon.hpp"
#include "reading/text.hpp"

#include <algorithm>
#include <array>
#include <span>

namespace engram::reading::detail {
namespace {

using schemas::entity_kind;

struct chunk {
  std::size_t begin = 0, end = 0;
  /// Index into the spans; none for a capitalised run.
  std::optional<std::size_t> span;
  std::string text;
};

bool one_of(std::string_view s, std::initializer_list<std::string_view> options) {
  return std::find(options.begin(), options.end(), s) != options.end();
}

// Words of job titles: a title names the job, a department word narrows it.
// clang-format off
constexpr std::array<std::string_view, 44> title_words{
    "ceo",        "cto",       "cfo",      "coo",       "cmo",      "cio",       "ciso",       "cpo",
    "vp",         "svp",       "evp",      "head",      "director", "manager",   "lead",       "engineer",
    "founder",    "cofounder", "co-founder", "president", "chair",  "chairman",  "chairwoman", "counsel",
    "architect",  "analyst",   "designer", "developer", "consultant", "advisor", "adviser",    "officer",
    "owner",      "recruiter", "ae",       "executive", "administrator", "intern", "specialist", "coordinator",
    "representative", "rep",   "scientist", "controller"};
constexpr std::array<std::string_view, 40> department_words{
    "sales",    "marketing", "engineering", "finance",  "product",   "operations", "it",        "legal",
    "procurement", "security", "data",     "platform", "customer",  "success",    "support",   "hr",
    "people",   "senior",    "junior",     "chief",    "principal", "staff",      "regional",  "global",
    "technical", "account",  "general",    "managing", "deputy",    "associate",  "assistant", "of",
    "technology", "financial", "information", "research", "design",  "growth",     "revenue",   "partnerships"};
// clang-format on

bool is_title_word(std::string_view w) {
  return std::find(title_words.begin(), title_words.end(), w) != title_words.end();
}
bool is_department_word(std::string_view w) {
  return std::find(department_words.begin(), department_words.end(), w) != department_words.end();
}

/// The gap between two chunks, lower-case, typographic apostrophes plain, spaces single,
/// commas at either end dropped ("Mei Chen, CTO of Contoso" -> "cto of").
std::string normal_gap(std::string_view g) {
  std::string out;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (g.compare(i, 3, "\xE2\x80\x99") == 0) {
      out += '\'';
      i += 2;
      continue;
    }
    const char c = g[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (!out.empty() && out.back() != ' ')
        out += ' ';
    } else {
      out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
  }
  auto t = std::string(text::trim(out));
  while (!t.empty() && (t.front() == ',' || t.front() == ' '))
    t.erase(0, 1);
  while (!t.empty() && (t.back() == ',' || t.back() == ' '))
    t.pop_back();
  return t;
}

/// A gap as the cue lists write it: a relative pronoun, adverbs and tense helpers that do
/// not change the relation dropped ("who recently joined" -> "joined", "is now a division
/// of" -> "is a division of", "remains headquartered in" -> "is headquartered in").
std::string plain_gap(const std::string& g) {
  static constexpr std::string_view dropped[] = {"who",       "which",      "that",     "recently", "just",  "also",
                                                 "now",       "officially", "formally", "finally",  "still", "already",
                                                 "currently", "today",      "both",     "directly"};
  std::string out;
  std::size_t at = 0;
  bool first = true;
  while (at <= g.size()) {
    auto sp = g.find(' ', at);
    auto w = std::string_view(g).substr(at, sp == std::string::npos ? std::string::npos : sp - at);
    if (std::find(std::begin(dropped), std::end(dropped), w) == std::end(dropped)) {
      std::string word(w);
      if (first && (word == "remains" || word == "remain"))
        word = "is";
      out += (out.empty() ? "" : " ") + word;
      first = false;
    }
    if (sp == std::string::npos)
      break;
    at = sp + 1;
  }
  return out;
}

/// `s` without a leading word of `words` (and the space after it).
std::string_view drop_first(std::string_view s, std::initializer_list<std::string_view> words) {
  for (auto w : words)
    if (s.size() > w.size() && s.substr(0, w.size()) == w && s[w.size()] == ' ')
      return s.substr(w.size() + 1);
  return s;
}

/// The role in a gap "[is|was|as …] [the|our …] ROLE (at|of|for|with)" ("is the cto at"),
/// or nullopt.
std::optional<std::string> role_before_preposition(std::string_view g) {
  for (std::string_view prep : {" at", " of", " for", " with"}) {
    if (g.size() <= prep.size() || g.substr(g.size() - prep.size()) != prep)
      continue;
    auto body = g.substr(0, g.size() - prep.size());
    body = drop_first(body, {"is now", "is", "was", "as", "has been", "became", "will be", "serves as"});
    body = drop_first(body, {"the", "our", "their", "a", "an", "new"});
    if (is_role(body))
      return std::string(body);
  }
  return std::nullopt;
}

/// The role after an object: " as [the|our|a|an] ROLE" at the start of `after`.
std::string role_after(std::string_view after) {
  auto t = normal_gap(after.substr(0, std::min<std::size_t>(after.size(), 60)));
  if (t.rfind("as ", 0) != 0)
    return {};
  std::string_view body = drop_first(std::string_view(t).substr(3), {"the", "our", "their", "a", "an", "new"});
  // The longest run of title words from the start ("cto", "vp sales").
  std::string best;
  std::string_view rest = body;
  std::string prefix;
  while (!rest.empty()) {
    auto sp = rest.find_first_of(" ,.;");
    auto w = rest.substr(0, sp);
    prefix += (prefix.empty() ? "" : " ") + std::string(w);
    if (!is_title_word(w) && !is_department_word(w))
      break;
    if (is_role(prefix))
      best = prefix;
    if (sp == std::string_view::npos || rest[sp] != ' ')
      break;
    rest = rest.substr(sp + 1);
  }
  return best;
}

/// The role as the sentence writes it (case kept), given its lower-case form.
std::string as_written(std::string_view sentence, std::size_t from, std::size_t to, const std::string& lowered) {
  const auto window = lower_ascii(sentence.substr(from, to - from));
  const auto at = window.find(lowered);
  return at == std::string::npos ? lowered : std::string(sentence.substr(from + at, lowered.size()));
}

// Gaps between two organisations (or an organisation and a run).
struct org_cue {
  std::string_view gap;
  std::string_view predicate;
  bool reversed = false;  // "Globex acquired Initech": Initech part_of Globex
  bool ended = false;
  double confidence = 0.75;
};
// clang-format off
constexpr org_cue org_cues[] = {
    {"is a customer of", "customer_of"}, {"is a client of", "customer_of"}, {"became a customer of", "customer_of"},
    {"is now a customer of", "customer_of"}, {"buys from", "customer_of"}, {"purchases from", "customer_of"},
    {"is a customer at", "customer_of"}, {"is our customer", "customer_of"},
    {"partnered with", "partner_of"}, {"has partnered with", "partner_of"}, {"is partnering with", "partner_of"},
    {"is a partner of", "partner_of"}, {"is partner of", "partner_of"}, {"teamed up with", "partner_of"},
    {"is a reseller of", "partner_of"}, {"will partner with", "partner_of"}, {"signed a partnership with", "partner_of"},
    {"competes with", "competes_with"}, {"compete with", "competes_with"}, {"is a competitor of", "competes_with"},
    {"is a competitor to", "competes_with"}, {"is competing with", "competes_with"},
    {"is a subsidiary of", "part_of", false, false, 0.8}, {"a subsidiary of", "part_of", false, false, 0.8},
    {"is a division of", "part_of", false, false, 0.8}, {"a division of", "part_of", false, false, 0.8},
    {"is part of", "part_of", false, false, 0.8}, {"is owned by", "part_of", false, false, 0.8},
    {"was acquired by", "part_of", false, false, 0.8}, {"has been acquired by", "part_of", false, false, 0.8},
    {"is a unit of", "part_of", false, false, 0.8}, {"is a business unit of", "part_of", false, false, 0.8},
    {"acquired", "part_of", true}, {"has acquired", "part_of", true}, {"is acquiring", "part_of", true},
    {"bought", "part_of", true}, {"owns", "part_of", true},
    {"uses", "uses"}, {"use", "uses"}, {"is using", "uses"}, {"are using", "uses"}, {"runs on", "uses"},
    {"run on", "uses"}, {"is running on", "uses"}, {"migrated to", "uses"}, {"has migrated to", "uses"},
    {"is migrating to", "uses"}, {"switched to", "uses"}, {"has switched to", "uses"}, {"is switching to", "uses"},
    {"adopted", "uses"}, {"has adopted", "uses"}, {"deployed", "uses"}, {"has deployed", "uses"},
    {"standardised on", "uses"}, {"standardized on", "uses"}, {"relies on", "uses"}, {"is built on", "uses"},
    {"rolled out", "uses"}, {"is rolling out", "uses"}, {"implemented", "uses"}, {"has implemented", "uses"},
    {"licenses", "uses"}, {"is on", "uses", false, false, 0.65},
    {"no longer uses", "uses", false, true}, {"stopped using", "uses", false, true},
    {"has stopped using", "uses", false, true}, {"moved off", "uses", false, true},
    {"is moving off", "uses", false, true}, {"phased out", "uses", false, true},
    {"is based in", "located_in"}, {"based in", "located_in"}, {"is headquartered in", "located_in"},
    {"headquartered in", "located_in"}, {"is located in", "located_in"}, {"located in", "located_in"},
    {"has an office in", "located_in"}, {"has offices in", "located_in"}, {"opened an office in", "located_in"},
    {"opened a new office in", "located_in"}, {"is opening an office in", "located_in"},
    {"relocated to", "located_in"}, {"has a warehouse in", "located_in"}, {"opened a warehouse in", "located_in"},
    {"opened a new warehouse in", "located_in"}, {"has a site in", "located_in"},
    {"opened a new office in", "located_in"}, {"keeps its offices in", "located_in"},
    {"keeps its office in", "located_in"}, {"just opened an office in", "located_in"},
    {"defines", "defines"}, {"specifies", "defines"}, {"is defined in", "defines", true},
    {"is defined by", "defines", true}, {"is specified in", "defines", true},
    {"is defined in the", "defines", true}, {"is defined by the", "defines", true},
    {"is specified in the", "defines", true},
};

constexpr std::string_view join_gaps[] = {"works at", "works for", "is working at", "is working for", "joined",
                                          "has joined", "will join", "is joining", "just joined", "recently joined",
                                          "started at", "has started at", "is now at", "is now with", "has moved to"};
constexpr std::string_view leave_gaps[] = {"left",           "has left",          "is leaving",
                                           "will leave",     "quit",              "has quit",
                                           "resigned from",  "has resigned from", "retired from",
                                           "is no longer at", "no longer works at", "no longer works for",
                                           "is no longer with", "departed"};
// clang-format on
constexpr std::string_view hire_gaps[] = {"hired", "has hired", "appointed", "has appointed", "brought on", "welcomed"};
constexpr std::string_view reports_gaps[] = {"reports to",     "reports directly to", "report to",
                                             "now reports to", "will report to",      "works under",
                                             "is managed by",  "is reporting to",     "will be reporting to",
                                             "moves under",    "will move under",     "moved under"};
constexpr std::string_view manages_gaps[] = {"manages", "is managing", "is the manager of", "is the boss of",
                                             "supervises"};

bool starts_with_any(std::string_view w, std::initializer_list<std::string_view> stems) {
  for (auto s : stems)
    if (w.size() >= s.size() && w.substr(0, s.size()) == s)
      return true;
  return false;
}

bool in(std::string_view g, std::span<const std::string_view> set) {
  return std::find(set.begin(), set.end(), g) != set.end();
}

/// The chunks of `sentence`: the spans of people, organisations, products and places, and
/// capitalised runs outside every span, in order.
std::vector<chunk> chunks_of(std::string_view sentence, const std::vector<span_mention>& spans) {
  std::vector<chunk> out;
  for (std::size_t i = 0; i < spans.size(); ++i)
    if (schemas::is_named_entity(spans[i].m.kind))
      out.push_back({spans[i].begin, spans[i].end, i, spans[i].m.value});
  auto covered = [&](std::size_t b, std::size_t e) {
    return std::any_of(spans.begin(), spans.end(), [&](const span_mention& s) { return b < s.end && s.begin < e; });
  };
  const auto ws = text::words(sentence);
  for (std::size_t i = 0; i < ws.size(); ++i) {
    std::size_t j = i;
    std::string name;
    std::size_t b = 0, e = 0;
    while (j < ws.size() && j - i < 3) {
      const auto w = text::strip_punct(ws[j]);
      const auto wb = static_cast<std::size_t>(w.data() - sentence.data());
      // A title ends a name ("Initech CEO Bill Lumbergh": Initech, then the role).
      if (w.empty() || !text::starts_upper(w) || covered(wb, wb + w.size()) ||
          (name.empty() && lexicon::is_stop_capital(lower_ascii(w))) || is_title_word(lower_ascii(w)))
        break;
      if (name.empty())
        b = wb;
      name += (name.empty() ? "" : " ") + std::string(w);
      e = wb + w.size();
      const bool stops = ws[j].size() > w.size() && ws[j].substr(ws[j].size() - 1).find_first_of(",.;:!?)") == 0;
      ++j;
      if (stops ||
          (w.size() < ws[j - 1].size() && ws[j - 1].back() == 's' && ws[j - 1].find('\'') != std::string_view::npos))
        break;  // punctuation or a possessive ends the name
    }
    if (!name.empty()) {
      out.push_back({b, e, std::nullopt, name});
      i = j - 1;
    }
  }
  std::sort(out.begin(), out.end(), [](const chunk& a, const chunk& b) { return a.begin < b.begin; });
  return out;
}

/// Two organisations related by what the second one's noun says: "Cobalt is Stratus Data's
/// biggest rival", "Zephyr Retail is an Acme customer", "Lumen Insights, Acme's
/// implementation partner", "Brightline Media is no longer an Acme customer" (ended); and by
/// a gap that names a partnership ("has entered a strategic partnership with", "has ended
/// its alliance with"), a place ("Initech, a payroll software maker based in Austin") or an
/// end of use ("retired its old Nagios").
found_relation organisation_noun(const std::string& g, const std::string& after, const chunk& a, const chunk& b) {
  found_relation r;
  auto ends = [&](std::string_view suffix) {
    return g.size() >= suffix.size() && g.compare(g.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  auto link = [&](const chunk& subject, const chunk& object, entity_kind object_kind, const char* predicate,
                  double confidence, bool ended) {
    r.predicate = predicate;
    r.confidence = confidence;
    r.ended = ended;
    if (subject.span)
      r.subject_span = subject.span;
    else
      r.subject = schemas::entity_mention{entity_kind::organization, subject.text, subject.text, {}, {}, {}, {}, {}};
    if (object.span)
      r.object_span = object.span;
    else
      r.object = schemas::entity_mention{object_kind, object.text, object.text, {}, {}, {}, {}, {}};
  };
  const bool negated = g.find("no longer") != std::string::npos || g.find("former") != std::string::npos ||
                       g.find("ended") != std::string::npos || g.find("terminated") != std::string::npos;
  // The noun after the second name: "'s [adjectives] NOUN" or " NOUN".
  if (g.empty() ||
      one_of(g, {"is", "is a", "is an", "has been", "has been a", "has been an", "was", "became", "became a",
                 "became an", "is no longer", "is no longer a", "is no longer an", "is the", "is one of"})) {
    auto t = normal_gap(after);
    if (t.rfind("'s ", 0) == 0 || t.rfind("' ", 0) == 0)
      t = t.substr(t.find(' ') + 1);
    else if (g.empty())
      return r;  // an apposition needs the possessive: "Lumen, Acme's partner"
    std::string_view rest = t;
    for (int k = 0; k < 3 && !rest.empty(); ++k) {
      const auto sp = rest.find_first_of(" ,.;");
      const auto w = rest.substr(0, sp);
      const bool last = sp == std::string_view::npos || rest[sp] != ' ';
      if (starts_with_any(w, {"competitor", "rival"}))
        return link(a, b, entity_kind::organization, "competes_with", 0.75, negated), r;
      if (starts_with_any(w, {"customer", "client"}))
        return link(a, b, entity_kind::organization, "customer_of", 0.75, negated), r;
      if (starts_with_any(w, {"partner", "reseller", "distributor"}))
        return link(a, b, entity_kind::organization, "partner_of", 0.75, negated), r;
      if (starts_with_any(w, {"supplier", "vendor", "provider"}))
        return link(b, a, entity_kind::organization, "customer_of", 0.7, negated), r;
      if (starts_with_any(w, {"subsidiary", "division", "unit"}))
        return link(a, b, entity_kind::organization, "part_of", 0.75, negated), r;
      if (last)
        break;
      rest = rest.substr(sp + 1);
    }
    return r;
  }
  if (ends("partnership with") || ends("alliance with") || ends("partnered with"))
    return link(a, b, entity_kind::organization, "partner_of", 0.75, negated), r;
  if ((g.rfind("a ", 0) == 0 || g.rfind("an ", 0) == 0) && (ends("based in") || ends("headquartered in")))
    return link(a, b, entity_kind::location, "located_in", 0.7, false), r;
  if (ends("offices in") || ends("office in") || ends("headquarters in") || ends("headquarters to"))
    return link(a, b, entity_kind::location, "located_in", 0.7, false), r;
  for (std::string_view verb : {"retired", "dropped", "decommissioned", "replaced", "phased out", "moved off",
                                "stopped using", "switched off", "migrated off", "moved away from"})
    if (g.rfind(verb, 0) == 0 &&
        one_of(std::string_view(g).substr(verb.size()),
               {"", " its", " its old", " its legacy", " their", " their old", " the", " the old"}))
      return link(a, b, entity_kind::technology, "uses", 0.75, true), r;
  return r;
}

/// The kind of a chunk's span; none for a capitalised run.
std::optional<entity_kind> kind_of(const chunk& c, const std::vector<span_mention>& spans) {
  if (c.span)
    return spans[*c.span].m.kind;
  return std::nullopt;
}

/// An organisation the message knows (its participants' domains, its signature).
bool known_org(const chunk& c, const std::vector<span_mention>& spans, const message_context& ctx) {
  return c.span && ctx.known_orgs.count(lower_ascii(spans[*c.span].m.value)) > 0;
}

/// A run named as `k` becomes a mention of its own; a span stays what it is.
void end_of(const chunk& c, entity_kind k, std::optional<std::size_t>& span, schemas::entity_mention& m) {
  if (c.span)
    span = c.span;
  else
    m = schemas::entity_mention{k, c.text, c.text, {}, {}, {}, {}, {}};
}

/// Two neighbouring chunks of a sentence and the words between them, as find_relations reads them.
struct chunk_pair {
  const chunk& a;
  const chunk& b;
  /// The gap plainly (plain_gap), and without a perfect's "has" ("has standardized on").
  const std::string& g;
  const std::string& g_simple;
  /// Up to 60 characters of the sentence after `b`.
  const std::string& after;
  bool a_person, b_person, a_org, b_org;
};

/// A reporting line ("reports to", "manages") between `p.a` and `p.b`, both ends people, into
/// `r`; false when the gap says none.
bool reporting_line(const chunk_pair& p, found_relation& r) {
  const bool reports = in(p.g, reports_gaps), manages = !reports && in(p.g, manages_gaps);
  if (reports || manages) {
    r.predicate = "reports_to", r.confidence = 0.7;
    const auto& report = reports ? p.a : p.b;
    const auto& manager = reports ? p.b : p.a;
    end_of(report, entity_kind::person, r.subject_span, r.subject);
    end_of(manager, entity_kind::person, r.object_span, r.object);
    return true;
  }
  return false;
}

/// Two people: a reporting line.
void person_and_person(const chunk_pair& p, found_relation& r) {
  if (in(p.g, reports_gaps)) {
    r.subject_span = p.a.span, r.object_span = p.b.span, r.predicate = "reports_to", r.confidence = 0.8;
  } else if (in(p.g, manages_gaps)) {
    r.subject_span = p.b.span, r.object_span = p.a.span, r.predicate = "reports_to", r.confidence = 0.75;
  }
}

/// A person, then an organisation: where the person works (or worked), and as what.
void person_and_org(const chunk_pair& p, const std::vector<span_mention>& spans, const message_context& ctx,
                    found_relation& r) {
  const auto& g = p.g;
  // "Ana from Globex" / "Mei at Contoso": only for an organisation the message knows
  // (its participants' domains, its signature), not any capital after "at".
  if ((g == "at" || g == "from") && known_org(p.b, spans, ctx)) {
    r.predicate = "works_at", r.confidence = 0.7;
  } else if (in(g, join_gaps)) {
    r.predicate = "works_at", r.confidence = 0.8, r.role = role_after(p.after);
  } else if (in(g, leave_gaps)) {
    r.predicate = "works_at", r.confidence = 0.8, r.ended = true;
  } else if (auto role = role_before_preposition(g)) {
    r.predicate = "works_at", r.confidence = 0.8, r.role = *role;
  } else if (g.empty()) {
    // "José Álvarez, Fabrikam's Chief Data Officer"
    const auto t = normal_gap(p.after);
    if (t.rfind("'s ", 0) == 0) {
      const auto role = role_after("as " + t.substr(3));
      if (!role.empty())
        r.predicate = "works_at", r.confidence = 0.8, r.role = role;
    }
  }
  if (!r.predicate.empty()) {
    r.subject_span = p.a.span;
    end_of(p.b, entity_kind::organization, r.object_span, r.object);
  }
}

/// An organisation, then a person: a role there ("Initech CEO Bill"), or a hire.
void org_and_person(const chunk_pair& p, found_relation& r) {
  const auto& g = p.g;
  std::string_view role = g;
  if (role.rfind("'s ", 0) == 0)
    role.remove_prefix(3);
  if (is_role(role)) {
    r.predicate = "works_at", r.confidence = g.size() > role.size() ? 0.8 : 0.75, r.role = std::string(role);
  } else if (in(g, hire_gaps)) {
    r.predicate = "works_at", r.confidence = 0.75, r.role = role_after(p.after);
  }
  if (!r.predicate.empty()) {
    r.subject_span = p.b.span;
    end_of(p.a, entity_kind::organization, r.object_span, r.object);
  }
}

/// An organisation, then an organisation or a run: the org_cues relation its gap names. The
/// cue's object kind when a list may follow (the cue not reversed), else none.
std::optional<entity_kind> org_and_org(const chunk_pair& p, found_relation& r) {
  std::optional<entity_kind> list_kind;
  for (const auto& cue : org_cues) {
    if (cue.gap != p.g && cue.gap != p.g_simple)
      continue;
    r.predicate = cue.predicate, r.confidence = cue.confidence, r.ended = cue.ended;
    const auto object_kind = r.predicate == "uses" || r.predicate == "defines" ? entity_kind::technology
                             : r.predicate == "located_in"                     ? entity_kind::location
                                                                               : entity_kind::organization;
    end_of(cue.reversed ? p.b : p.a, entity_kind::organization, r.subject_span, r.subject);
    end_of(cue.reversed ? p.a : p.b, object_kind, r.object_span, r.object);
    if (!cue.reversed)
      list_kind = object_kind;
    break;
  }
  return list_kind;
}

/// Relation `r` again for each further member (a `list_kind`) of a list that starts with its
/// object cs[i + 1], appended to `out`.
void add_list_members(std::string_view sentence, const std::vector<span_mention>& spans, const std::vector<chunk>& cs,
                      std::size_t i, entity_kind list_kind, const found_relation& r, std::vector<found_relation>& out) {
  std::size_t last = i + 1;  // the list's last member that an "and" or "or" closes
  for (std::size_t j = i + 2; j < cs.size(); ++j) {
    // normal_gap drops the commas: "" is a comma, "and" also ", and".
    const auto joint = normal_gap(sentence.substr(cs[j - 1].end, cs[j].begin - cs[j - 1].end));
    if (kind_of(cs[j], spans) == entity_kind::person || !one_of(joint, {"", "and", "or", "as well as"}))
      break;
    if (!joint.empty())
      last = j;
  }
  for (std::size_t j = i + 2; j <= last; ++j) {
    found_relation more = r;
    more.object_span.reset();
    end_of(cs[j], list_kind, more.object_span, more.object);
    more.confidence = std::min(r.confidence, 0.7);
    out.push_back(std::move(more));
  }
}

}  // namespace

bool is_role(std::string_view lowered) {
  if (lowered.empty() || lowered.size() > 40)
    return false;
  bool title = false;
  std::size_t words = 0;
  for (auto w : text::words(lowered)) {
    w = text::strip_punct(w);
    if (is_title_word(w))
      title = true;
    else if (!is_department_word(w))
      return false;
    ++words;
  }
  return title && words <= 4;
}

std::vector<found_relation> find_relations(std::string_view sentence, const std::vector<span_mention>& spans,
                                           const message_context& ctx) {
  std::vector<found_relation> out;
  const auto cs = chunks_of(sentence, spans);
  for (std::size_t i = 0; i + 1 < cs.size(); ++i) {
    const auto& a = cs[i];
    const auto& b = cs[i + 1];
    if (b.begin < a.end)
      continue;
    const auto written_gap = normal_gap(sentence.substr(a.end, b.begin - a.end));
    if (written_gap.size() > 60)
      continue;
    // The gap plainly, and without a perfect's "has" ("has standardized on").
    const auto g = plain_gap(written_gap);
    const std::string g_simple = g.rfind("has ", 0) == 0 || g.rfind("have ", 0) == 0 ? g.substr(g.find(' ') + 1) : g;
    const auto ka = kind_of(a, spans), kb = kind_of(b, spans);
    const bool a_person = ka == entity_kind::person, b_person = kb == entity_kind::person;
    // Organisations and every other thing (a product, a place, a capitalised run no reader
    // named) are read alike; the predicate the gap names decides what the end is.
    auto thing = [](std::optional<entity_kind> k) {
      return !k || (*k != entity_kind::person && schemas::is_named_entity(*k));
    };
    const bool a_org = thing(ka), b_org = thing(kb);
    found_relation r;
    std::optional<entity_kind> list_kind;  // the cue's object kind, when a list may follow
    const std::string after(sentence.substr(b.end, std::min<std::size_t>(sentence.size() - b.end, 60)));
    const chunk_pair p{a, b, g, g_simple, after, a_person, b_person, a_org, b_org};

    if ((a_person && b_org && !known_org(b, spans, ctx)) || (a_org && !known_org(a, spans, ctx) && b_person)) {
      // A reporting line between a person and a name read as an organisation (or not read:
      // a first name no list knows, "Tomas Novak"): that name is a person too, unless the
      // message knows it as an organisation. rules.cpp makes it one.
      if (reporting_line(p, r)) {
        out.push_back(std::move(r));
        continue;
      }
    }
    if (a_person && b_person)
      person_and_person(p, r);
    else if (a_person && b_org)
      person_and_org(p, spans, ctx, r);
    else if (a_org && b_person)
      org_and_person(p, r);
    else if (a_org && !b_person)
      list_kind = org_and_org(p, r);
    if (r.predicate.empty() && a_org && b_org && !b_person)
      r = organisation_noun(g, after, a, b);
    if (r.predicate.empty())
      continue;
    if (!r.role.empty())
      r.role = as_written(sentence, a.begin, std::min(sentence.size(), b.end + after.size()), r.role);
    // A list after the cue shares it: "Contoso uses Kubernetes, Kafka and Datadog". Only a
    // list that ends with "and" or "or": "Globex runs on Snowflake, Initech on Kafka" is not.
    if (list_kind)
      add_list_members(sentence, spans, cs, i, *list_kind, r, out);
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

/// The meaning reader's kind of a chunk.
end_kind end_kind_of(const chunk& c, const std::vector<span_mention>& spans) {
  if (!c.span)
    return end_kind::thing;
  switch (spans[*c.span].m.kind) {
    case entity_kind::person: return end_kind::person;
    case entity_kind::technology:
    case entity_kind::location: return end_kind::thing;
    default: return end_kind::org;
  }
}

/// Whether `r` relates the two chunks already (either way round).
bool relates(const found_relation& r, const chunk& a, const chunk& b) {
  auto is = [](const std::optional<std::size_t>& span, const schemas::entity_mention& m, const chunk& c) {
    return c.span ? span == c.span : (!span && m.value == c.text);
  };
  return (is(r.subject_span, r.subject, a) && is(r.object_span, r.object, b)) ||
         (is(r.subject_span, r.subject, b) && is(r.object_span, r.object, a));
}

entity_kind entity_kind_of(end_kind k) {
  switch (k) {
    case end_kind::person: return entity_kind::person;
    case end_kind::place: return entity_kind::location;
    case end_kind::tech:
    case end_kind::product: return entity_kind::technology;
    default: return entity_kind::organization;
  }
}

}  // namespace

std::vector<meaning_pair> meaning_pairs(std::string_view sentence, const std::vector<span_mention>& spans,
                                        const std::vector<found_relation>& found, std::size_t reach) {
  // The names: a span and a run of capitals right after it are one name ("Northwind" read
  // as an organisation, then "Traders"); a one-word run that opens the sentence is as likely
  // a capitalised word as a name.
  struct name {
    chunk c;
    end_kind kind;
  };
  std::vector<name> names;
  for (auto& c : chunks_of(sentence, spans)) {
    const auto kind = end_kind_of(c, spans);
    if (!names.empty() && c.begin == names.back().c.end + 1 && sentence[names.back().c.end] == ' ' &&
        !(kind == end_kind::person && names.back().kind == end_kind::person)) {
      auto& last = names.back();
      last.c.end = c.end;
      last.c.text = std::string(sentence.substr(last.c.begin, last.c.end - last.c.begin));
      last.c.span.reset();
      if (last.kind == end_kind::thing)
        last.kind = kind;
      continue;
    }
    if (!c.span && c.begin == 0 && c.text.find(' ') == std::string::npos)
      continue;
    names.push_back({std::move(c), kind});
  }
  std::vector<meaning_pair> out;
  for (std::size_t i = 0; i + 1 < names.size(); ++i)
    for (std::size_t j = i + 1; j < names.size() && j <= i + reach; ++j) {
      const auto& a = names[i].c;
      const auto& b = names[j].c;
      if (b.begin < a.end || b.begin - a.end > 120 || lower_ascii(a.text) == lower_ascii(b.text))
        continue;
      // Names side by side, or in a list, are not related by the words between them.
      const auto gap = normal_gap(sentence.substr(a.end, b.begin - a.end));
      if (one_of(gap, {"", ",", "and", "or", "&", "/", "-", "(", ")", "and the", "or the"}) ||
          text::words(gap).size() > 16)
        continue;
      if (std::any_of(found.begin(), found.end(), [&](const found_relation& r) { return relates(r, a, b); }))
        continue;
      meaning_pair p{a.span, b.span, a.text, b.text, {}};
      p.candidate = {sentence, a.begin, a.end, b.begin, b.end, names[i].kind, names[j].kind};
      out.push_back(std::move(p));
    }
  return out;
}

std::optional<found_relation> relation_of(const meaning_pair& p, const relation_reading& r) {
  if (r.predicate.empty())
    return std::nullopt;
  found_relation f;
  auto end = [&](bool first, end_kind kind, std::optional<std::size_t>& span, schemas::entity_mention& m) {
    const auto& s = first ? p.a_span : p.b_span;
    const auto& text = first ? p.a_text : p.b_text;
    if (s)
      span = s;
    else
      m = schemas::entity_mention{entity_kind_of(kind), text, text, {}, {}, {}, {}, {}};
  };
  end(!r.reversed, r.subject, f.subject_span, f.subject);
  end(r.reversed, r.object, f.object_span, f.object);
  f.predicate = r.predicate;
  f.ended = r.ended;
  f.confidence = std::clamp(static_cast<double>(r.similarity), 0.6, 0.85);
  return f;
}

}  // namespace engram::reading::detail
