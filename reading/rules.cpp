#include "reading/rules.hpp"

#include "reading/relation_classifier.hpp"
#include "reading/signature.hpp"

#include "reading/amounts.hpp"
#include "reading/cleaner.hpp"
#include "reading/injection.hpp"
#include "reading/dates.hpp"
#include "reading/internal/classify.hpp"
#include "reading/internal/entities.hpp"
#include "reading/internal/relations.hpp"
#include "reading/internal/slots.hpp"
#include "reading/lexicon.hpp"
#include "reading/parse.hpp"
#include "reading/phrases.hpp"
#include "reading/sentences.hpp"
#include "reading/text.hpp"
#include "embedding/type_model.hpp"
#include "reading/validator.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

namespace engram::reading {
namespace {

/// The due date of an action item among the sentence's dates: the one a deadline word leads
/// ("by Wednesday", "before the 15th", "due March 3", "until Friday", "no later than ..."; not
/// "on" or "for", which also lead dates that are not deadlines),
/// else a day ("today", "Thursday") before a period ("the February accruals", "Q2"), else the
/// first; a period gives its last day. "" when the sentence names no date.
std::string due_date(std::string_view sentence, const std::vector<detail::span_mention>& spans) {
  static constexpr std::string_view cues[] = {"by",       "before",   "until",    "till",     "due",
                                              "latest",   "deadline", "eod",      "goes out", "no later than",
                                              "ahead of", "due on",   "go out on"};
  const detail::span_mention* best = nullptr;
  int best_score = -1;
  for (const auto& sp : spans) {
    if (sp.m.kind != schemas::entity_kind::date)
      continue;
    const bool period = sp.m.value.find('/') != std::string::npos;
    int score = period ? 0 : 1;
    std::string before(sentence.substr(0, sp.begin));
    while (!before.empty() && (before.back() == ' ' || before.back() == ','))
      before.pop_back();
    for (auto& c : before)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (before.ends_with(" the"))
      before.resize(before.size() - 4);
    for (auto cue : cues)
      if (before == cue || before.ends_with(" " + std::string(cue)) || before.ends_with(":" + std::string(cue))) {
        score = 2;
        break;
      }
    if (score > best_score || (score == best_score && best && sp.begin < best->begin)) {
      best = &sp;
      best_score = score;
    }
  }
  if (!best)
    return "";
  auto slash = best->m.value.find('/');
  return slash == std::string::npos ? best->m.value : best->m.value.substr(slash + 1);
}

/// The type of a sentence from the cues' reading `v` (none: uncued) and the model's
/// probabilities `p` (embedding::type_choice_options says how they weigh).
std::optional<detail::verdict> type_choice(std::optional<detail::verdict> v, const embedding::type_probabilities& p,
                                           const embedding::type_choice_options& o) {
  std::size_t top = 0;
  for (std::size_t c = 1; c < embedding::type_classes; ++c)
    if (p[c] > p[top])
      top = c;
  if (v) {
    std::size_t cued = 0;
    while (schemas::all_entry_types[cued] != v->type)
      ++cued;
    if (p[embedding::type_none] >= o.drop_min)
      return std::nullopt;
    if (top != embedding::type_none && top != cued && p[top] >= o.override_min && p[cued] <= o.rules_max)
      v->type = schemas::all_entry_types[top];
    return v;
  }
  if (top != embedding::type_none && p[top] >= o.add_min)
    return detail::verdict{schemas::all_entry_types[top], o.added_confidence};
  return std::nullopt;
}

using detail::classify;
using detail::date_word_phrases;
using detail::find_names_by_model;
using detail::find_people_and_orgs;
using detail::find_relations;
using detail::found_relation;
using detail::is_legal_suffix;
using detail::meaning_pair;
using detail::meaning_pairs;
using detail::message_context;
using detail::negation_phrases;
using detail::org_from_address;
using detail::read_subject_slot_value;
using detail::relation_of;
using detail::span_mention;
using detail::verdict;
using schemas::entity_kind;
using schemas::entity_mention;
using schemas::entry_type;

// ---------------------------------------------------------------------------------------
// Sentence glue of the driver (sentences.cpp splits, classify.cpp types, entities.cpp
// finds names, slots.cpp reads subject, slot and value).

}  // namespace

bool is_noise(std::string_view s) {
  if (s.size() > 600)
    return true;
  std::size_t letters = 0, visible = 0;
  for (char c : s) {
    if (c == ' ')
      continue;
    ++visible;
    letters += text::is_alpha(c) || text::is_digit(c) || static_cast<unsigned char>(c) >= 0x80;
  }
  if (visible == 0 || letters * 10 < visible * 6)
    return true;  // under 60% letters and digits
  return (s.find("http://") != std::string_view::npos || s.find("https://") != std::string_view::npos ||
          s.find("www.") != std::string_view::npos) &&
         text::words(s).size() < 8;
}

namespace {

/// "@dana pls send ..." -> "pls send ..."; "Dana, please ..." -> "please ...": the words
/// that address someone say nothing about the type of the sentence.
std::string strip_vocative(const std::string& s, const message_context& ctx) {
  std::string_view v = s;
  while (!v.empty() && v[0] == '@') {
    auto sp = v.find(' ');
    if (sp == std::string_view::npos)
      return s;
    v = text::trim(v.substr(sp + 1));
  }
  auto comma = v.find(", ");
  if (comma != std::string_view::npos && comma < 30) {
    auto head = text::words(v.substr(0, comma));
    bool names = !head.empty() && head.size() <= 3;
    for (auto w : head) {
      auto lw = lower_ascii(text::strip_punct(w));
      names &= text::is_upper(w[0]) && (lexicon::is_first_name(lw) || ctx.person_by_first.count(lw) || lw == "team" ||
                                        lw == "all" || lw == "folks");
    }
    if (names)
      v = text::trim(v.substr(comma + 2));
  }
  return std::string(v);
}

/// A sentence its writer says of themselves ("I", "I'm", "my", "me").
bool speaks_for_self(const token_view& tv) {
  for (auto t : tv.tokens)
    if (t == "i" || t == "i'm" || t == "i've" || t == "i'd" || t == "i'll" || t == "my" || t == "me" || t == "im")
      return true;
  return false;
}

/// A sentence in the first person, singular or plural ("our dispatch team", "reports to me"):
/// the writer, or the writer's organisation, is one of what it relates.
/// The plural is read as written: "US" in capitals is the country, not "us".
bool speaks_as_writer(std::string_view sentence) {
  if (speaks_for_self(token_view(sentence)))
    return true;
  for (auto w : text::words(sentence)) {
    w = text::strip_punct(w);
    if (w.size() >= 2 && std::none_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; }))
      continue;
    const auto t = lower_ascii(w.substr(0, w.find('\'')));
    if (t == "we" || t == "our" || t == "ours" || t == "us")
      return true;
  }
  return false;
}

std::string title_of(std::string_view content) {
  constexpr std::size_t max_chars = 80;
  std::size_t chars = 0, cut = content.size();
  for (std::size_t i = 0; i < content.size(); ++i) {
    if ((static_cast<unsigned char>(content[i]) & 0xC0) != 0x80) {
      if (chars == max_chars - 1) {
        cut = i;
        break;
      }
      ++chars;
    }
  }
  if (cut == content.size())
    return std::string(content);
  auto space = content.substr(0, cut).rfind(' ');
  if (space != std::string_view::npos && space > 40)
    cut = space;
  return std::string(text::trim(content.substr(0, cut))) + "\xE2\x80\xA6";
}

/// The clauses of a sentence, cut at ", " and "; " (not inside a number: "$52,000", nor
/// between two of `names`, a list: "Globex, Initech and Contoso", nor before a dependent clause), each of three words or more
/// (a shorter piece joins the clause before it: "Dana, please ..." stays whole). One clause
/// when there is nothing to cut.
std::vector<std::string> split_clauses(const std::string& sentence, const std::vector<name_span>& names) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // [begin, end) in the sentence
  auto words_in = [&](std::size_t b, std::size_t e) {
    return text::words(std::string_view(sentence).substr(b, e - b)).size();
  };
  std::size_t from = 0;
  auto push = [&](std::size_t to) {
    if (!spans.empty() && (words_in(from, to) < 3 || words_in(spans.back().first, spans.back().second) < 3))
      spans.back().second = to;  // too short to stand alone: part of the clause before
    else
      spans.emplace_back(from, to);
  };
  auto in_list = [&](std::size_t comma) {
    const bool after_name = std::any_of(names.begin(), names.end(), [&](const name_span& n) { return n.end == comma; });
    return after_name &&
           std::any_of(names.begin(), names.end(), [&](const name_span& n) { return n.begin == comma + 2; });
  };
  // A clause that depends on the one before ("…, so nobody has to visit twice", "…, because
  // the team is busy", "…, who will follow up") says nothing alone: no cut before it.
  static const std::set<std::string_view> dependent{
      "so",        "because", "which",   "who",     "whom",  "whose",  "where", "though", "although",
      "since",     "as",      "while",   "unless",  "until", "if",     "when",  "than",   "ahead",
      "including", "whereas", "leaving", "meaning", "given", "thanks", "due",   "with",   "without"};
  auto depends = [&](std::size_t at) {
    auto next = text::words(std::string_view(sentence).substr(at, 24));
    return !next.empty() && dependent.count(lower_ascii(std::string(next[0]))) > 0;
  };
  for (std::size_t i = 0; i + 1 < sentence.size(); ++i)
    if ((sentence[i] == ',' || sentence[i] == ';') && sentence[i + 1] == ' ' && !in_list(i) && !depends(i + 2)) {
      push(i);
      from = i + 2;
    }
  push(sentence.size());
  std::vector<std::string> out;
  for (auto [b, e] : spans)
    out.emplace_back(text::trim(std::string_view(sentence).substr(b, e - b)));
  return out;
}

/// What read_statement asks of extract: the body is one statement of a given type.
struct statement_mode {
  entry_type type;
  std::string_view title;
  double confidence;
};

/// The working state of extract: the extraction being built, its mentions indexed so that
/// each is kept once, and what the message itself says about names.
struct extraction_state {
  schemas::extraction& x;
  message_context ctx;
  std::map<std::pair<entity_kind, std::string>, std::size_t> index;  // (kind, lower value) -> mention
  /// The name model; null: the rules read names.
  const name_tagger* names = nullptr;
  /// The name model's spans of each sentence (each tagged once), and the kind of each name in
  /// the message: that of its most probable mention in the message's sentences.
  std::map<std::string, std::vector<name_span>> tagged;
  detail::message_names name_kinds;
  /// A chat message: each of its lines is a sentence.
  bool chat = false;

  /// The names of `sentence`; `vote`: its names weigh in on the message's kinds.
  const std::vector<name_span>& names_in(const std::string& sentence, bool vote) {
    auto it = tagged.find(sentence);
    if (it == tagged.end())
      it = tagged.emplace(sentence, names->tag(sentence)).first;
    if (vote)
      for (const auto& sp : it->second) {
        auto [kind, added] =
            name_kinds.emplace(lower_ascii(sentence.substr(sp.begin, sp.end - sp.begin)), std::pair{sp.score, sp.type});
        if (!added && sp.score > kind->second.first)
          kind->second = {sp.score, sp.type};
      }
    return it->second;
  }

  /// The index of mention `em` in x.mentions: the one of its kind and value already there
  /// (given `em`'s address when it had none), else `em` appended.
  std::size_t add_mention(entity_mention em) {
    auto key = std::make_pair(em.kind, lower_ascii(em.value));
    if (auto it = index.find(key); it != index.end()) {
      auto& have = x.mentions[it->second];
      if (have.address.empty())
        have.address = em.address;
      return it->second;
    }
    x.mentions.push_back(std::move(em));
    index.emplace(key, x.mentions.size() - 1);
    return x.mentions.size() - 1;
  }
};

/// Participants: people of the headers, organisations of their domains (as a lexicon).
void add_participants(extraction_state& s, const schemas::inbound_message& m) {
  std::vector<const schemas::participant*> people{&m.from};
  for (const auto& p : m.to)
    people.push_back(&p);
  for (const auto& p : m.cc)
    people.push_back(&p);
  for (const auto* p : people) {
    auto org = org_from_address(p->address);
    if (!org.empty() && lower_ascii(org) != lower_ascii(m.organization_id))
      s.ctx.known_orgs.emplace(lower_ascii(org), org);
    auto name = std::string(text::trim(p->name));
    if (name.empty() || name.find('@') != std::string::npos)
      continue;
    auto first = lower_ascii(name.substr(0, name.find(' ')));
    s.ctx.person_by_first.emplace(first, name);
    entity_mention em{entity_kind::person, name, name, {}, p->address, {}, {}, {}};
    s.add_mention(std::move(em));
  }
}

/// The company a signature's company line names: up to a comma that no legal form follows
/// ("Lumenfield Analytics Ltd, London": the rest says where); "Pipewell, Inc." is one name.
std::string company_of_signature_line(const std::string& line) {
  for (auto comma = line.find(','); comma != std::string::npos; comma = line.find(',', comma + 1)) {
    auto next = text::words(std::string_view(line).substr(comma + 1));
    if (next.empty() || !is_legal_suffix(text::strip_punct(next.front())))
      return std::string(text::trim(std::string_view(line).substr(0, comma)));
  }
  return line;
}

/// The sender's signature: the sender's mention (with role, company and phone), and the
/// company as an organisation the sender works at.
void add_signature(extraction_state& s, const schemas::inbound_message& m, const signature& sig) {
  auto& x = s.x;
  entity_mention em{entity_kind::person,
                    sig.name.empty() ? m.from.name : sig.name,
                    sig.name.empty() ? m.from.name : sig.name,
                    {},
                    m.from.address,
                    sig.role,
                    sig.company,
                    sig.phone};
  if (em.value.empty())
    em.value = em.text = m.from.address;
  x.sender_signature = em;
  auto idx = s.add_mention(em);
  const auto written = company_of_signature_line(sig.company);
  x.mentions[idx].role = sig.role;
  x.mentions[idx].company = written;
  x.mentions[idx].phone = sig.phone;
  if (!written.empty()) {
    std::string company = written;
    auto ws = text::words(company);
    if (ws.size() >= 2 && is_legal_suffix(ws.back()))
      company = std::string(company, 0, static_cast<std::size_t>(ws.back().data() - company.data()));
    company = std::string(text::trim(company));
    while (!company.empty() && company.back() == ',')
      company.pop_back();
    s.ctx.known_orgs.emplace(lower_ascii(company), company);
    auto org = s.add_mention({entity_kind::organization, written, company, {}, {}, {}, {}, {}});
    // The signature says where its writer works (and as what).
    if (org != idx)
      x.relations.push_back({idx, org, "works_at", 0.85, std::nullopt, false, sig.role});
  }
}

struct sentence_reading {
  std::string sentence, core;
  std::vector<span_mention> spans;
  std::vector<std::size_t> ids;
  std::optional<verdict> v;
  bool uncued = false;
  /// Relations the sentence states, added with its entry.
  std::vector<found_relation> relations;
  /// A clause of a sentence whose clauses read as different types (kept when typed).
  bool clause = false;
};

/// A sentence that states a relation the cues did not type is still a statement: who
/// works where or with whom is a relationship, what an organisation uses, where it is or
/// what it belongs to a fact.
void type_by_relation(sentence_reading& r) {
  const auto stated =
      std::find_if(r.relations.begin(), r.relations.end(), [](const found_relation& f) { return !f.across; });
  if (r.v || stated == r.relations.end())
    return;
  const auto& p = stated->predicate;
  const bool structural = p == "uses" || p == "located_in" || p == "part_of" || p == "makes";
  r.v = verdict{structural ? entry_type::fact : entry_type::relationship, 0.7};
  r.uncued = false;
}

/// One sentence read: its entities (added as mentions), its relations and the cues' reading
/// of its type (for a saved statement, `st`, the type it was saved as).
sentence_reading read_sentence(extraction_state& s, std::string sentence, std::int64_t sent_day,
                               const statement_mode* st) {
  sentence_reading r;
  std::vector<span_mention>& spans = r.spans;
  r.core = strip_vocative(sentence, s.ctx);
  const token_view tv(r.core);
  const bool has_number = std::any_of(sentence.begin(), sentence.end(), [](char c) { return text::is_digit(c); });
  // Every date has a digit or one of these words ("Wednesday's" holds one, as "day");
  // most sentences have neither.
  if (has_number || date_word_phrases.any(tv) || tv.lower.find("day") != std::string::npos)
    for (auto& d : find_dates(sentence, sent_day))
      spans.push_back({d.begin,
                       d.end,
                       {entity_kind::date, sentence.substr(d.begin, d.end - d.begin), d.resolved, {}, {}, {}, {}, {}}});
  if (has_number)  // every amount has a digit
    for (auto& a : find_amounts(sentence))
      spans.push_back(
          {a.begin,
           a.end,
           {entity_kind::amount, sentence.substr(a.begin, a.end - a.begin), a.value, a.currency, {}, {}, {}, {}}});
  if (s.names)
    find_names_by_model(sentence, s.ctx, s.names_in(sentence, false), &s.name_kinds, spans);
  else
    find_people_and_orgs(sentence, 0, s.ctx, spans);
  bool has_date = false, has_amount = false, has_entity = false;
  for (const auto& sp : spans) {
    has_date |= sp.m.kind == entity_kind::date;
    has_amount |= sp.m.kind == entity_kind::amount;
    has_entity |= sp.m.kind == entity_kind::person || sp.m.kind == entity_kind::organization;
  }
  bool starts_with_name = !spans.empty() && std::any_of(spans.begin(), spans.end(), [](const span_mention& sp) {
    return sp.begin == 0 && (sp.m.kind == entity_kind::person || sp.m.kind == entity_kind::organization);
  });
  for (auto& sp : spans)
    r.ids.push_back(s.add_mention(sp.m));
  r.relations = find_relations(sentence, spans, s.ctx);
  // Technologies and places known by name (base/aliases.txt), beside the relations' own:
  // mentions of the statement, not chunks of its relations.
  std::vector<span_mention> known;
  find_known_things(sentence, spans, known);
  for (auto& sp : known)
    r.ids.push_back(s.add_mention(std::move(sp.m)));
  r.v = st ? std::optional<verdict>(verdict{st->type, st->confidence})
           : classify(r.core, tv, has_date, has_amount, has_number, has_entity, starts_with_name, &r.uncued);
  r.uncued = r.uncued && tv.tokens.size() >= 4;
  type_by_relation(r);
  r.sentence = std::move(sentence);
  return r;
}

/// Names further apart in the sentence's structure than this many links are not weighed.
constexpr std::size_t max_link_distance = 4;

/// The relations the relation model reads between names of each sentence that the cue rules
/// left unrelated (one run of the encoder for the whole message); a sentence that gains one
/// becomes a statement (type_by_relation).
void read_relations_by_meaning(std::vector<sentence_reading>& all, const relation_model& model,
                               const sentence_parser* parser) {
  std::vector<std::pair<std::size_t, meaning_pair>> pairs;
  for (std::size_t k = 0; k < all.size(); ++k) {
    // Without the parser, neighbouring names; with it, names up to three apart that its
    // linkage connects closely.
    auto ps = meaning_pairs(all[k].sentence, all[k].spans, all[k].relations, parser ? 3 : 1);
    std::optional<parsed_sentence> parsed;
    if (parser && !ps.empty())
      parsed = parser->parse(all[k].sentence);
    for (auto& p : ps) {
      if (parser) {
        const auto& c = p.candidate;
        const auto d =
            parsed ? link_distance(*parsed, c.first_begin, c.first_end, c.second_begin, c.second_end) : std::nullopt;
        if (!d || *d > max_link_distance)
          continue;
      }
      pairs.emplace_back(k, std::move(p));
    }
  }
  if (pairs.empty())
    return;
  std::vector<relation_candidate> cs;
  for (const auto& [k, p] : pairs)
    cs.push_back(p.candidate);
  const auto read = model.read(cs);
  if (!read)
    return;  // the int8 encoder does not fail; another encoder's failure leaves the cue rules' reading
  for (std::size_t i = 0; i < pairs.size(); ++i)
    if (auto f = relation_of(pairs[i].second, (*read)[i]))
      all[pairs[i].first].relations.push_back(std::move(*f));
  for (auto& r : all)
    type_by_relation(r);
}

/// The names of a sentence the relation classifier reads (people, organisations, products and
/// technologies, places), in order, none overlapping; span_of: each one's span in r.spans.
struct classifier_names {
  std::vector<typed_name> names;
  std::vector<std::size_t> span_of;
};

classifier_names classifier_names_of(const sentence_reading& r) {
  classifier_names out;
  std::vector<std::size_t> order(r.spans.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return r.spans[a].begin < r.spans[b].begin; });
  for (auto i : order) {
    const auto& sp = r.spans[i];
    std::optional<name_type> t;
    switch (sp.m.kind) {
      case entity_kind::person: t = name_type::person; break;
      case entity_kind::organization: t = name_type::organization; break;
      case entity_kind::technology: t = name_type::product; break;
      case entity_kind::location: t = name_type::place; break;
      default: break;
    }
    if (!t || sp.end > r.sentence.size() || (!out.names.empty() && sp.begin < out.names.back().end))
      continue;
    out.names.push_back({sp.begin, sp.end, *t});
    out.span_of.push_back(i);
  }
  return out;
}

bool is_graph_predicate(std::string_view p) {
  return std::any_of(schemas::relation_predicates, std::end(schemas::relation_predicates),
                     [&](std::string_view q) { return q == p; });
}

/// Names of one list are not related by it ("Globex, Initech, Contoso and Fabrikam get the new
/// price"): between names `first` and `second` of `sentence` only other names, commas, "and",
/// "or", "&" and "/", and the list longer than the pair: a comma, a slash or another name among
/// them, or a list of the same kind joining a name before or after them ("Globex and Initech"
/// may be partners; "Contoso, Fabrikam and Initech" are listed).
bool listed_together(std::string_view sentence, const std::vector<typed_name>& names, std::size_t first,
                     std::size_t second) {
  // Whether only list words lie between names i and j (i < j); `comma`: a comma or slash among them.
  auto joined = [&](std::size_t i, std::size_t j, bool& comma) {
    bool list = true;
    for (std::size_t at = names[i].end, k = i + 1; at < names[j].begin && list;) {
      if (k < j && at >= names[k].begin) {
        at = names[k++].end;
        continue;
      }
      const auto next = k < j ? names[k].begin : names[j].begin;
      const auto gap = sentence.substr(at, next - at);
      comma = comma || gap.find(',') != std::string_view::npos || gap.find('/') != std::string_view::npos;
      for (auto w : text::words(gap)) {
        w = text::strip_punct(w);
        list = list && (w.empty() || w == "and" || w == "or" || w == "&" || w == "/");
      }
      at = next;
    }
    return list;
  };
  bool comma = false;
  if (!joined(first, second, comma))
    return false;
  if (comma || second > first + 1)
    return true;
  bool before = false, after = false;
  return (first > 0 && joined(first - 1, first, before) && before) ||
         (second + 1 < names.size() && joined(second, second + 1, after) && after);
}

/// How many sentences the relation classifier reads as one passage: a sentence and the two
/// before it.
constexpr std::size_t classifier_window = 3;

/// The writer's signature block ("Tomasz Wiśniewski\nCommercial Director\nBaltra Freight Sp. z
/// o.o.\nGdańsk, Poland"), `sig`, read by the classifier as the e-mail paragraphs it was trained
/// on end: below the sentences. A sentence in the first person ("our dispatch team runs
/// everything on SAP TM", "she reports to me") with the sentences before it (the classifier's
/// window) and the signature, as one passage: the pairs with one end in the signature and one in
/// the window, each the sentence's relation across (the window's end a mention of its own).
/// The signature alone: the relations between its lines (the company and its city), in
/// `in_signature`, ends as mentions.
void read_relations_with_signature(std::vector<sentence_reading>& all, const std::vector<classifier_names>& named,
                                   const relation_classifier& model, const sentence_reading& sig,
                                   std::vector<found_relation>& in_signature) {
  const auto signed_names = classifier_names_of(sig);
  if (signed_names.names.empty())
    return;
  const auto end_in = [](const sentence_reading& r, std::size_t span) { return r.spans[span].m; };
  if (signed_names.names.size() >= 2)
    for (const auto& c : model.read(sig.sentence, signed_names.names))
      if (is_graph_predicate(c.predicate)) {
        found_relation f;
        f.subject = end_in(sig, signed_names.span_of[c.subject]);
        f.object = end_in(sig, signed_names.span_of[c.object]);
        f.predicate = c.predicate;
        f.ended = c.ended;
        f.confidence = 0.6;
        in_signature.push_back(std::move(f));
      }
  for (std::size_t k = 0; k < all.size(); ++k) {
    auto& r = all[k];
    if (!speaks_as_writer(r.sentence))
      continue;
    const std::size_t first = k + 1 >= classifier_window ? k + 1 - classifier_window : 0;
    std::string text;
    std::vector<typed_name> names;
    std::vector<std::pair<std::size_t, std::size_t>>
        origin;  // (sentence, index in its names); all.size(): the signature
    const auto append = [&](std::size_t j, const sentence_reading& in, const classifier_names& of) {
      if (!text.empty())
        text += j == all.size() || !(text.back() == '.' || text.back() == '!' || text.back() == '?') ? '\n' : ' ';
      const auto at = text.size();
      text += in.sentence;
      for (std::size_t i = 0; i < of.names.size(); ++i) {
        auto n = of.names[i];
        n.begin += at;
        n.end += at;
        names.push_back(n);
        origin.emplace_back(j, i);
      }
    };
    for (std::size_t j = first; j <= k; ++j)
      append(j, all[j], named[j]);
    if (names.empty())
      continue;
    append(all.size(), sig, signed_names);
    for (const auto& c : model.read(text, names)) {
      const bool subject_signed = origin[c.subject].first == all.size(),
                 object_signed = origin[c.object].first == all.size();
      if (subject_signed == object_signed || !is_graph_predicate(c.predicate))
        continue;
      const auto [j, i] = origin[subject_signed ? c.object : c.subject];
      const auto signed_end = end_in(sig, signed_names.span_of[origin[subject_signed ? c.subject : c.object].second]);
      const auto window_end = all[j].spans[named[j].span_of[i]].m;
      const auto x = lower_ascii(signed_end.value), y = lower_ascii(window_end.value);
      if (x == y)
        continue;
      // Two names related already in the window: that reading stands.
      bool related = false;
      for (std::size_t w = first; w <= k && !related; ++w)
        for (const auto& f : all[w].relations) {
          const auto fs = lower_ascii(f.subject_span ? all[w].spans[*f.subject_span].m.value : f.subject.value);
          const auto fo = lower_ascii(f.object_span ? all[w].spans[*f.object_span].m.value : f.object.value);
          related = related || (fs == x && fo == y) || (fs == y && fo == x);
        }
      if (related)
        continue;
      found_relation f;
      auto& window_side = subject_signed ? f.object : f.subject;
      auto& window_span = subject_signed ? f.object_span : f.subject_span;
      (subject_signed ? f.subject : f.object) = signed_end;
      if (j == k)
        window_span = named[j].span_of[i];
      else
        window_side = window_end;
      f.predicate = c.predicate;
      f.ended = c.ended;
      f.confidence = 0.6;
      f.across = true;
      r.relations.push_back(std::move(f));
    }
  }
}

/// The relations the relation classifier reads between the names of each sentence (the
/// people, organisations, products and places among its mentions) that the cue rules left
/// unrelated, then across a sentence and the two before it; predicates the graph has no name
/// for (acquired) are left out. A sentence that gains one of its own becomes a statement
/// (type_by_relation).
void read_relations_by_classifier(std::vector<sentence_reading>& all, const relation_classifier& model,
                                  const sentence_reading* sig, std::vector<found_relation>& in_signature) {
  std::vector<classifier_names> named;
  for (const auto& r : all)
    named.push_back(classifier_names_of(r));
  for (std::size_t k = 0; k < all.size(); ++k) {
    auto& r = all[k];
    const auto& [names, span_of] = named[k];
    if (names.size() < 2)
      continue;
    for (const auto& c : model.read(r.sentence, names)) {
      if (listed_together(r.sentence, names, std::min(c.subject, c.object), std::max(c.subject, c.object)))
        continue;
      const auto s = span_of[c.subject], o = span_of[c.object];
      const bool related = std::any_of(r.relations.begin(), r.relations.end(), [&](const found_relation& f) {
        return (f.subject_span == s && f.object_span == o) || (f.subject_span == o && f.object_span == s);
      });
      if (!is_graph_predicate(c.predicate) || related)
        continue;
      found_relation f;
      f.subject_span = s;
      f.object_span = o;
      f.predicate = c.predicate;
      f.ended = c.ended;
      f.confidence = 0.7;
      r.relations.push_back(std::move(f));
    }
  }
  // Across sentences ("I met Ruta Kalnins yesterday. She runs procurement at Marrowby Foods."):
  // a sentence and the two before it read as one passage, as the classifier was trained on
  // passages; the pairs with one end in the sentence and one before it. The relation is the
  // sentence's, its earlier end a mention of its own; it does not make the sentence a statement.
  for (std::size_t k = 1; k < all.size(); ++k) {
    auto& r = all[k];
    const auto& b = named[k];
    if (b.names.empty())
      continue;
    const std::size_t first = k + 1 >= classifier_window ? k + 1 - classifier_window : 0;
    std::string text;
    std::vector<typed_name> names;
    std::vector<std::pair<std::size_t, std::size_t>> origin;  // (sentence, index in its names)
    for (std::size_t j = first; j <= k; ++j) {
      // Sentences as a passage writes them: a line that ends no sentence ends its line.
      if (!text.empty())
        text += text.back() == '.' || text.back() == '!' || text.back() == '?' ? ' ' : '\n';
      const auto at = text.size();
      text += all[j].sentence;
      for (std::size_t i = 0; i < named[j].names.size(); ++i) {
        auto n = named[j].names[i];
        n.begin += at;
        n.end += at;
        names.push_back(n);
        origin.emplace_back(j, i);
      }
    }
    if (names.size() == b.names.size())
      continue;
    for (const auto& c : model.read(text, names)) {
      const bool subject_before = origin[c.subject].first < k, object_before = origin[c.object].first < k;
      if (subject_before == object_before || !is_graph_predicate(c.predicate))
        continue;
      const auto [j, i] = origin[subject_before ? c.subject : c.object];
      const auto& earlier = all[j].spans[named[j].span_of[i]].m;
      const auto later = b.span_of[origin[subject_before ? c.object : c.subject].second];
      // Two names related already, in a sentence of the window or across: the nearer reading stands.
      const auto value_of = [&](const sentence_reading& in, const std::optional<std::size_t>& span,
                                const schemas::entity_mention& end) {
        return lower_ascii(span ? in.spans[*span].m.value : end.value);
      };
      const auto x = lower_ascii(earlier.value), y = lower_ascii(r.spans[later].m.value);
      bool related = false;
      for (std::size_t w = first; w <= k && !related; ++w)
        for (const auto& f : all[w].relations) {
          const auto fs = value_of(all[w], f.subject_span, f.subject), fo = value_of(all[w], f.object_span, f.object);
          related = related || (fs == x && fo == y) || (fs == y && fo == x);
        }
      // A name the sentence itself gives is related by the sentence's own reading.
      const bool named_here = std::any_of(b.span_of.begin(), b.span_of.end(), [&](std::size_t sp) {
        return lower_ascii(r.spans[sp].m.value) == lower_ascii(earlier.value);
      });
      if (related || named_here)
        continue;
      found_relation f;
      if (subject_before) {
        f.subject = earlier;
        f.object_span = later;
      } else {
        f.subject_span = later;
        f.object = earlier;
      }
      f.predicate = c.predicate;
      f.ended = c.ended;
      f.confidence = 0.6;
      f.across = true;
      r.relations.push_back(std::move(f));
    }
  }
  if (sig)
    read_relations_with_signature(all, named, model, *sig, in_signature);
  for (auto& r : all)
    type_by_relation(r);
}

/// The sentences of `body` worth an entry, read in order (for a saved statement, `st`, the
/// body is one sentence): typed by the cues or by a relation they state, or uncued and left
/// to the type model.
std::vector<sentence_reading> read_sentences(extraction_state& s, const std::string& body, std::int64_t sent_day,
                                             const statement_mode* st, const reading_models& models,
                                             const signature* sig) {
  std::size_t uncued_kept = 0;
  auto worth_reading = [&](const sentence_reading& r) {
    return r.v || (models.types && r.uncued && uncued_kept++ < models.types->choice().max_uncued);
  };
  std::vector<sentence_reading> all;
  // The relation classifier reads a block's short lines apart, as it was trained on them.
  auto sentences = st ? std::vector<std::string>{body}
                      : split_sentences(body, s.chat              ? line_joining::every_line
                                              : models.classifier ? line_joining::short_lines_apart
                                                                  : line_joining::wrapped);
  // One kind per name in a message: every sentence is tagged before any is read.
  if (s.names && !st)
    for (const auto& sentence : sentences)
      if (!is_noise(sentence))
        s.names_in(sentence, true);
  for (auto& sentence : sentences) {
    if (!st && is_noise(sentence))
      continue;
    // One sentence, several statements: clauses the cues read as different types are
    // entries of their own ("the budget is now $52,000, finance approved the increase").
    if (!st) {
      auto clauses = split_clauses(sentence, s.names ? s.names_in(sentence, false) : std::vector<name_span>{});
      if (clauses.size() >= 2) {
        std::vector<sentence_reading> parts;
        std::set<entry_type> types_read;
        for (auto& c : clauses) {
          parts.push_back(read_sentence(s, std::move(c), sent_day, st));
          if (parts.back().v)
            types_read.insert(parts.back().v->type);
        }
        if (types_read.size() >= 2) {
          for (auto& p : parts)
            if (p.v) {
              p.clause = true;
              all.push_back(std::move(p));
            }
          continue;
        }
      }
    }
    all.push_back(read_sentence(s, std::move(sentence), sent_day, st));
  }
  if (models.relations && !st)
    read_relations_by_meaning(all, *models.relations, models.parser);
  if (models.classifier && !st) {
    // The writer's signature block, its names as the name model reads them.
    std::optional<sentence_reading> signed_block;
    if (sig && !sig->block.empty() && s.names) {
      auto& b = signed_block.emplace();
      b.sentence = sig->block;
      find_names_by_model(b.sentence, s.ctx, s.names_in(b.sentence, false), &s.name_kinds, b.spans);
    }
    std::vector<found_relation> in_signature;
    read_relations_by_classifier(all, *models.classifier, signed_block ? &*signed_block : nullptr, in_signature);
    // What the signature says between its lines, as its works_at (add_signature): no
    // statement's; two names related already keep that relation. Where the block's reading
    // places its writer at another company than the line add_signature took for it (a title
    // with no English role word, "Gerente General", or a department after the title's comma,
    // "Vice President, Strategic Alliances"), the reading of the block stands.
    bool redirected = false;  // the writer's works_at placed once
    for (auto& f : in_signature) {
      const auto a = s.add_mention(std::move(f.subject)), b = s.add_mention(std::move(f.object));
      const bool related = std::any_of(s.x.relations.begin(), s.x.relations.end(), [&](const auto& r) {
        return (r.subject == a && r.object == b) || (r.subject == b && r.object == a);
      });
      if (a == b || related)
        continue;
      const auto signed_at =
          std::find_if(s.x.relations.begin(), s.x.relations.end(), [&](const schemas::entity_relation& r) {
            return f.predicate == "works_at" && r.predicate == "works_at" && r.subject == a && !r.entry;
          });
      if (signed_at != s.x.relations.end() && !redirected && s.x.sender_signature &&
          s.x.mentions[b].kind == entity_kind::organization &&
          lower_ascii(s.x.mentions[a].value) == lower_ascii(s.x.sender_signature->value)) {
        signed_at->object = b;
        s.x.mentions[a].company = s.x.mentions[b].value;
        redirected = true;
        continue;
      }
      s.x.relations.push_back({a, b, std::move(f.predicate), f.confidence, std::nullopt, f.ended, {}});
    }
  }
  std::vector<sentence_reading> read;
  std::optional<std::size_t> last_read;  // in `all`
  for (std::size_t k = 0; k < all.size(); ++k) {
    auto& r = all[k];
    if (r.clause || worth_reading(r)) {
      read.push_back(std::move(r));
      last_read = k;
      continue;
    }
    // A sentence that is no statement keeps no relation; one it states with a sentence before
    // it is the statement's before it (within the classifier's window), its ends named.
    if (!last_read || k - *last_read >= classifier_window)
      continue;
    for (auto& f : r.relations) {
      if (!f.across)
        continue;
      if (f.subject_span)
        f.subject = r.spans[*std::exchange(f.subject_span, std::nullopt)].m;
      if (f.object_span)
        f.object = r.spans[*std::exchange(f.object_span, std::nullopt)].m;
      read.back().relations.push_back(std::move(f));
    }
  }
  return read;
}

/// The type model's say on the type of every sentence read (type_choice), in one run of the encoder.
void weigh_type_model(std::vector<sentence_reading>& read, const embedding::type_model& types) {
  const auto bound = types.choice().max_weighed;
  const std::size_t n = bound ? std::min(bound, read.size()) : read.size();
  std::vector<std::string_view> texts;
  for (std::size_t i = 0; i < n; ++i)
    texts.push_back(read[i].sentence);
  // The encoder failing leaves the cues' reading (the entries' own embedding fails alike
  // and is counted there).
  if (auto p = types.classify(texts))
    for (std::size_t i = 0; i < n; ++i)
      read[i].v = type_choice(read[i].v, (*p)[i], types.choice());
}

/// The writer's own mention (a person of the headers), for first-person statements.
std::optional<std::size_t> writer_mention(const schemas::extraction& x, const schemas::inbound_message& m) {
  std::optional<std::size_t> sender_mention;
  for (std::size_t i = 0; i < x.mentions.size() && !sender_mention; ++i)
    if (x.mentions[i].kind == entity_kind::person && !m.from.address.empty() && x.mentions[i].address == m.from.address)
      sender_mention = i;
  return sender_mention;
}

/// The entry of a typed sentence `r`: content, title, mentions, polarity, subject, slot,
/// value and (for an action item) due date. `sig` is the sender's signature (may be null).
schemas::entry entry_of(const sentence_reading& r, const schemas::extraction& x, const signature* sig,
                        const statement_mode* st, std::optional<std::size_t> sender_mention) {
  const token_view tv(r.core);
  schemas::entry e;
  e.type = r.v->type;
  e.confidence = r.v->confidence;
  e.content = r.sentence;
  e.title = st ? std::string(st->title) : title_of(r.sentence);
  e.mentions = r.ids;
  std::sort(e.mentions.begin(), e.mentions.end());
  e.mentions.erase(std::unique(e.mentions.begin(), e.mentions.end()), e.mentions.end());
  e.positive = !negation_phrases.any(tv);
  read_subject_slot_value(e, r.spans, sig ? std::string_view(sig->company) : std::string_view(), st != nullptr, r.core,
                          tv);
  // "I went to a support group yesterday": what the writer says of themselves is about
  // them (its subject, and a mention of them), unless it names someone else first.
  if (!st && sender_mention && speaks_for_self(tv) && (e.subject.empty() || (sig && e.subject == sig->company))) {
    e.subject = x.mentions[*sender_mention].value;
    e.mentions.push_back(*sender_mention);
    std::sort(e.mentions.begin(), e.mentions.end());
    e.mentions.erase(std::unique(e.mentions.begin(), e.mentions.end()), e.mentions.end());
  }
  if (e.type == entry_type::action_item)
    e.due_at = due_date(r.sentence, r.spans);
  return e;
}

/// The relations sentence `r` states, for the entry about to be appended to x.entries.
void add_sentence_relations(extraction_state& s, sentence_reading& r) {
  auto& x = s.x;
  // Its relations; an end no span covered becomes a mention now (never for a sentence
  // that gives no entry).
  for (auto& f : r.relations) {
    const auto subject = f.subject_span ? r.ids[*f.subject_span] : s.add_mention(std::move(f.subject));
    const auto object = f.object_span ? r.ids[*f.object_span] : s.add_mention(std::move(f.object));
    // Both ends of a reporting line are people, whatever a name was first read as.
    if (f.predicate == "reports_to")
      for (auto end : {subject, object})
        if (x.mentions[end].kind == entity_kind::organization)
          x.mentions[end].kind = entity_kind::person;
    if (subject != object)
      x.relations.push_back(
          {subject, object, std::move(f.predicate), f.confidence, x.entries.size(), f.ended, std::move(f.role)});
  }
}

/// An organisation's name without what follows the name itself: legal forms ("Hanami Retail
/// Co., Ltd.", "Baltra Freight Sp. z o.o.", "Calloway Pharmaceuticals plc") and a place in
/// brackets ("JadeStone Electronics (Suzhou) Co.").
std::string organisation_name(std::string name) {
  static const std::set<std::string_view> more_forms{"co",     "pvt",  "pte",    "sl",  "s.l.", "srl",
                                                     "s.r.l.", "ltda", "bhd",    "sdn", "k.k.", "kk",
                                                     "oyj",    "asa",  "s.p.a.", "lp",  "&"};
  for (bool cut = true; cut;) {
    cut = false;
    while (!name.empty() && (name.back() == ',' || name.back() == ';' || name.back() == ' '))
      name.pop_back();
    const auto lower = lower_ascii(name);
    for (std::string_view polish : {" sp. z o.o.", " sp. z o. o.", " sp z o.o.", " sp. z.o.o."})
      if (lower.size() > polish.size() && lower.ends_with(polish)) {
        name.resize(name.size() - polish.size());
        cut = true;
      }
    const auto space = name.rfind(' ');
    if (cut || space == std::string::npos)
      continue;
    const auto last = std::string_view(name).substr(space + 1);
    const auto bare = lower_ascii(text::strip_punct(last));
    if (is_legal_suffix(text::strip_punct(last)) || more_forms.count(bare) || more_forms.count(lower_ascii(last)) ||
        (last.size() > 2 && last.front() == '(' && last.back() == ')')) {
      name.resize(space);
      cut = true;
    }
  }
  return name;
}

/// A message names someone or something in full once and by a short form after ("Kwame
/// Mensah joins us ... Kwame will lead", "Quillpoint Consulting ... Quillpoint has signed"): a
/// person's first name, or the first words of an organisation's or a product's name, stand for
/// the one full name of the message they begin. Each short form's mention is joined to that
/// full name's (its entries and relations follow); a short form that begins two names
/// ("Hanami" of Hanami Retail and Hanami Digital) stands for neither and stays. An
/// organisation's mentions are its name without legal form first (organisation_name), one
/// mention for one name.
void join_short_forms(schemas::extraction& x) {
  const auto named = [](const entity_mention& m) {
    return m.kind == entity_kind::person || m.kind == entity_kind::organization || m.kind == entity_kind::technology;
  };
  std::vector<std::string> written(x.mentions.size());
  std::vector<std::vector<std::string>> words(x.mentions.size());
  for (std::size_t i = 0; i < x.mentions.size(); ++i) {
    auto& m = x.mentions[i];
    written[i] = m.value;
    if (m.kind == entity_kind::organization)
      if (auto name = organisation_name(m.value); !name.empty())
        m.value = std::move(name);
    if (named(m))
      for (auto w : text::words(m.value))
        words[i].push_back(lower_ascii(w));
  }
  const auto begins = [&](std::size_t shorter, std::size_t longer) {
    const auto &a = words[shorter], &b = words[longer];
    return !a.empty() && a.size() < b.size() && std::equal(a.begin(), a.end(), b.begin());
  };
  // Two addresses are two people, whatever their names ("Priya" <priya@initech.example> is not
  // "Priya Shah" <priya.shah@globex.example>).
  const auto addresses_agree = [&](std::size_t i, std::size_t j) {
    const auto &a = x.mentions[i].address, &b = x.mentions[j].address;
    return a.empty() || b.empty() || lower_ascii(a) == lower_ascii(b);
  };
  std::vector<std::size_t> to(x.mentions.size());
  bool joined = false;
  // One name of one kind, one mention: the first.
  for (std::size_t i = 0; i < x.mentions.size(); ++i) {
    to[i] = i;
    for (std::size_t j = 0; j < i && to[i] == i; ++j)
      if (to[j] == j && x.mentions[j].kind == x.mentions[i].kind && !words[i].empty() && words[j] == words[i] &&
          addresses_agree(i, j))
        to[i] = j;
    joined = joined || to[i] != i;
  }
  for (std::size_t i = 0; i < x.mentions.size(); ++i) {
    if (to[i] != i)
      continue;
    std::optional<std::size_t> longest;
    bool one = true;  // every name the short form begins is a beginning of the longest
    for (std::size_t j = 0; j < x.mentions.size() && one; ++j) {
      // A first name stands for a person however it was read; an organisation's or a
      // product's short form is one of its own kind (Microsoft is not Microsoft Dynamics 365).
      const bool kind_fits =
          x.mentions[j].kind == entity_kind::person ? words[i].size() == 1 : x.mentions[i].kind == x.mentions[j].kind;
      if (to[j] != j || !begins(i, j) || !kind_fits || !addresses_agree(i, j))
        continue;
      if (!longest || begins(*longest, j))
        longest = j;
      else if (!begins(j, *longest))
        one = false;
    }
    if (longest && one) {
      to[i] = *longest;
      joined = true;
    }
  }
  for (auto& t : to)
    while (to[t] != t)
      t = to[t];
  for (auto& e : x.entries)
    for (std::size_t i = 0; i < x.mentions.size(); ++i)
      if (!written[i].empty() && e.subject == written[i]) {
        e.subject = x.mentions[to[i]].value;
        break;
      }
  if (!joined)
    return;
  // The mentions kept, renumbered; entries and relations point at the full names.
  std::vector<std::size_t> index(x.mentions.size());
  std::vector<entity_mention> kept;
  for (std::size_t i = 0; i < x.mentions.size(); ++i)
    if (to[i] == i) {
      index[i] = kept.size();
      kept.push_back(std::move(x.mentions[i]));
    }
  for (std::size_t i = 0; i < x.mentions.size(); ++i)
    if (to[i] != i) {
      index[i] = index[to[i]];
      // What the short form's mention knew and the full name's did not.
      auto& full = kept[index[i]];
      for (auto field :
           {&entity_mention::address, &entity_mention::role, &entity_mention::company, &entity_mention::phone})
        if ((full.*field).empty())
          full.*field = x.mentions[i].*field;
    }
  for (auto& e : x.entries) {
    for (auto& m : e.mentions)
      m = index[m];
    std::sort(e.mentions.begin(), e.mentions.end());
    e.mentions.erase(std::unique(e.mentions.begin(), e.mentions.end()), e.mentions.end());
  }
  std::vector<schemas::entity_relation> relations;
  for (auto& r : x.relations) {
    r.subject = index[r.subject];
    r.object = index[r.object];
    // A name related to its own short form (or to itself read as another kind): none; the same
    // relation of the same statement, read under both forms: once.
    if (r.subject == r.object || lower_ascii(kept[r.subject].value) == lower_ascii(kept[r.object].value) ||
        std::find(relations.begin(), relations.end(), r) != relations.end())
      continue;
    relations.push_back(std::move(r));
  }
  x.relations = std::move(relations);
  x.mentions = std::move(kept);
}

schemas::extraction extract(const schemas::inbound_message& m, std::string* cleaned_text, const statement_mode* st,
                            const reading_models& models) {
  schemas::extraction x;
  x.extractor = st ? "agent" : "rules";
  cleaned_message cleaned;
  if (st)
    cleaned.text = std::string(text::trim(m.body));
  else
    cleaned = clean(m.body, m.from.name);
  if (cleaned_text)
    *cleaned_text = cleaned.text;
  const std::int64_t sent_day = m.sent_at_ms >= 0 ? m.sent_at_ms / 86400000 : (m.sent_at_ms - 86399999) / 86400000;

  extraction_state s{x, {}, {}, models.names};
  s.chat = m.source == schemas::source_type::chat;
  if (models.names)
    x.reader = models.names->version();
  if (models.classifier)
    x.reader += (x.reader.empty() ? "" : "+") + models.classifier->version();
  add_participants(s, m);
  if (cleaned.sig)
    add_signature(s, m, *cleaned.sig);
  const auto sender_mention = writer_mention(x, m);

  // Injected instructions are cut out before sentences are read: what follows a closing
  // tag starts a sentence of its own, and nothing inside the tags becomes an entry.
  // First every sentence's entities and the cues' reading; then, with the type model, the
  // types of the sentences read or left uncued (one run of the encoder); then the entries.
  const std::string body = st ? cleaned.text : cut_injected_blocks(cleaned.text);
  std::vector<sentence_reading> read =
      read_sentences(s, body, sent_day, st, models, cleaned.sig ? &*cleaned.sig : nullptr);
  if (models.types && !st && !read.empty()) {
    weigh_type_model(read, *models.types);
    x.reader += (x.reader.empty() ? "" : "+") + models.types->version();
  }

  for (auto& r : read) {
    if (!r.v)
      continue;
    auto e = entry_of(r, x, cleaned.sig ? &*cleaned.sig : nullptr, st, sender_mention);
    add_sentence_relations(s, r);
    x.entries.push_back(std::move(e));
  }
  if (models.classifier && !st)
    join_short_forms(x);
  return x;
}

}  // namespace

schemas::extraction extract_rules(const schemas::inbound_message& m, std::string* cleaned_text,
                                  const reading_models& models) {
  return extract(m, cleaned_text, nullptr, models);
}

schemas::extraction read_statement(const schemas::inbound_message& m, entry_type type, std::string_view title,
                                   double confidence) {
  statement_mode st{type, title, confidence};
  auto x = extract(m, nullptr, &st, {});
  sign(x);
  return x;
}

schemas::extraction read_save(const schemas::knowledge_save& s) {
  auto x = read_statement(schemas::as_message(s), s.type, s.title, s.confidence);
  for (auto& en : x.entries) {
    en.tags = s.tags;
    en.expires_at = s.expires_at;
  }
  return x;
}

}  // namespace engram::reading

namespace engram::reading {

std::vector<schemas::passage> make_passages(std::string_view cleaned_text, std::int64_t sent_at_ms) {
  const std::int64_t sent_day = sent_at_ms >= 0 ? sent_at_ms / 86400000 : (sent_at_ms - 86399999) / 86400000;
  std::vector<schemas::passage> out;
  std::string window;
  auto flush = [&] {
    if (!window.empty() && out.size() < schemas::max_passages_per_message) {
      std::vector<std::string> dates;
      for (auto& d : find_dates(window, sent_day))
        if (std::find(dates.begin(), dates.end(), d.resolved) == dates.end())
          dates.push_back(std::move(d.resolved));
      out.push_back({window, content_words(window), std::move(dates), false, {}});
    }
    window.clear();
  };
  for (auto& sentence : split_sentences(cut_injected_blocks(cleaned_text))) {
    const auto s = text::trim(sentence);
    // An instruction aimed at a model is never kept as what was said.
    if (s.empty() || is_noise(s) || is_injected_instruction(s))
      continue;
    if (!window.empty() && window.size() + 1 + s.size() > passage_window_chars)
      flush();
    if (out.size() == schemas::max_passages_per_message)
      break;
    if (!window.empty())
      window.push_back(' ');
    window.append(s);
  }
  flush();
  return out;
}

}  // namespace engram::reading
