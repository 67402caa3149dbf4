#include "actors/extractor/rules.hpp"
#include "actors/extractor/signature.hpp"

#include "actors/extractor/amounts.hpp"
#include "actors/extractor/cleaner.hpp"
#include "actors/extractor/injection.hpp"
#include "actors/extractor/dates.hpp"
#include "actors/extractor/lexicon.hpp"
#include "actors/extractor/phrases.hpp"
#include "actors/extractor/text.hpp"
#include "actors/extractor/validator.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>

namespace engram::extractor {
namespace {

using schemas::entity_kind;
using schemas::entity_mention;
using schemas::entry_type;
using text::has_any;
using text::has_word;

// ---------------------------------------------------------------------------------------
// Sentences

bool is_abbreviation(std::string_view before) {
  auto raw = before.substr(before.rfind(' ') == std::string_view::npos ? 0 : before.rfind(' ') + 1);
  auto w = text::lower(raw);
  static const std::set<std::string> abbrev{"e.g", "i.e", "inc", "ltd", "corp", "vs", "etc", "approx", "a.m", "p.m",
                                            "u.s", "dept", "ext", "(e.g", "(i.e", "cf", "incl", "esp"};
  // Titles and month abbreviations only when capitalised: "ms" after a number is a unit.
  static const std::set<std::string> titled{"mr", "mrs", "ms", "dr", "st", "jr", "sr", "no", "co", "jan", "feb", "mar",
                                            "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "fig"};
  if (abbrev.count(w))
    return true;
  if (!raw.empty() && text::is_upper(raw[0]) && titled.count(w))
    return true;
  return w.size() == 1 && text::is_alpha(w[0]) && text::is_upper(before.back());  // an initial
}

bool is_bullet(std::string_view line) {
  auto t = text::trim(line);
  if (t.empty())
    return false;
  if (t[0] == '-' || t[0] == '*' || t.substr(0, 3) == "\xE2\x80\xA2")
    return true;
  std::size_t i = 0;
  while (i < t.size() && text::is_digit(t[i]))
    ++i;
  return i > 0 && i < t.size() && (t[i] == '.' || t[i] == ')');
}

std::string strip_bullet(std::string_view line) {
  auto t = text::trim(line);
  if (t.substr(0, 3) == "\xE2\x80\xA2")
    t.remove_prefix(3);
  else if (!t.empty() && (t[0] == '-' || t[0] == '*'))
    t.remove_prefix(1);
  else {
    std::size_t i = 0;
    while (i < t.size() && text::is_digit(t[i]))
      ++i;
    if (i > 0 && i < t.size() && (t[i] == '.' || t[i] == ')'))
      t.remove_prefix(i + 1);
  }
  return std::string(text::trim(t));
}

/// Up to `n` whitespace-separated words of `s`, without scanning further.
std::vector<std::string_view> first_words(std::string_view s, std::size_t n) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size() && out.size() < n) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n'))
      ++i;
    std::size_t b = i;
    while (i < s.size() && !(s[i] == ' ' || s[i] == '\t' || s[i] == '\n'))
      ++i;
    if (i > b)
      out.push_back(s.substr(b, i - b));
  }
  return out;
}

/// Splits a sentence into clauses at ';' and at ", and"/", but"/" and" before a new subject.
void split_clauses(std::string_view s, std::vector<std::string>& out) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == ';') {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(s.substr(start));
  for (auto part : parts) {
    part = text::trim(part);
    std::size_t from = 0;
    for (std::string_view conj : {", and ", ", but ", " and ", ", so "}) {
      std::size_t pos = part.find(conj, from);
      while (pos != std::string_view::npos) {
        auto rest = part.substr(pos + conj.size());
        auto next = first_words(rest, 3);
        auto left_words = first_words(part.substr(from, pos - from), 4).size();
        bool new_subject = next.size() >= 3 && left_words >= 4 &&
                           (has_any(text::lower(next[0]), {"i", "we", "you", "they", "he", "she", "i'll", "we'll",
                                                           "we've", "i've", "they'll", "she'll", "he'll", "please",
                                                           "could", "can", "would", "let's", "pls", "i'd", "we'd",
                                                           "they'd", "it's", "there's", "everyone", "the", "our",
                                                           "their", "his", "her", "its", "my", "your"}) ||
                            (text::is_upper(next[0][0]) && lexicon::is_first_name(text::lower(text::strip_punct(next[0])))));
        if (new_subject) {
          out.emplace_back(text::trim(part.substr(from, pos - from)));
          from = pos + conj.size();
        }
        pos = part.find(conj, pos + conj.size());
      }
    }
    auto last = text::trim(part.substr(from));
    if (!last.empty())
      out.emplace_back(last);
  }
}

}  // namespace

std::vector<std::string> split_sentences(std::string_view body) {
  // Paragraphs: blank lines, bullets and short salutation lines end them.
  std::vector<std::string> paragraphs;
  std::string cur;
  auto flush = [&] {
    auto t = text::trim(cur);
    if (!t.empty())
      paragraphs.emplace_back(t);
    cur.clear();
  };
  for (auto line : text::lines(body)) {
    auto t = text::trim(line);
    if (t.empty()) {
      flush();
      continue;
    }
    if (is_bullet(t)) {
      flush();
      cur = strip_bullet(t);
      flush();
      continue;
    }
    bool salutation = t.size() < 40 && (t.back() == ',' || t.back() == ':' || t.back() == '!');
    if (salutation) {
      flush();
      cur = std::string(t);
      flush();
      continue;
    }
    if (!cur.empty())
      cur += ' ';
    cur += t;
    // A chat line or a line ending a sentence on its own is one paragraph per line when
    // the next line starts a new thought; joining is for wrapped lines only.
    if (t.back() == '.' || t.back() == '!' || t.back() == '?')
      flush();
  }
  flush();

  std::vector<std::string> out;
  for (const auto& p : paragraphs) {
    std::size_t start = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      char c = p[i];
      if ((static_cast<unsigned char>(c) & 0xF8) == 0xF0 && i + 4 < p.size() && p[i + 4] == ' ' &&
          first_words(std::string_view(p).substr(start, i - start), 3).size() >= 3) {
        // An emoji followed by a space ends a chat sentence.
        split_clauses(std::string_view(p).substr(start, i + 4 - start), out);
        start = i + 5;
        i += 3;
        continue;
      }
      if (c != '.' && c != '!' && c != '?')
        continue;
      std::size_t j = i;
      while (j + 1 < p.size() && (p[j + 1] == '.' || p[j + 1] == '!' || p[j + 1] == '?' || p[j + 1] == '"' || p[j + 1] == ')'))
        ++j;
      bool end = j + 1 >= p.size() || (p[j + 1] == ' ' && j + 2 < p.size() &&
                                       (text::is_upper(p[j + 2]) || text::is_digit(p[j + 2]) || p[j + 2] == '"' ||
                                        p[j + 2] == '@' || static_cast<unsigned char>(p[j + 2]) >= 0x80 ||
                                        p[j + 2] == '(' || p[j + 2] == '*'));
      // Chat writes sentences in lower case: ". it's" ends one when both sides are long enough.
      if (!end && j + 2 < p.size() && p[j + 1] == ' ' && text::is_alpha(p[j + 2]) &&
          first_words(std::string_view(p).substr(start, i - start), 3).size() >= 3 &&
          first_words(std::string_view(p).substr(j + 2), 3).size() >= 3)
        end = true;
      if (!end)
        continue;
      if (c == '.' && is_abbreviation(std::string_view(p).substr(start, i - start)))
        continue;
      if (c == '.' && i > 0 && text::is_digit(p[i - 1]) && j + 1 < p.size() && text::is_digit(p[j + 1]))
        continue;
      split_clauses(std::string_view(p).substr(start, j + 1 - start), out);
      start = j + 1;
    }
    if (start < p.size())
      split_clauses(std::string_view(p).substr(start), out);
  }
  out.erase(std::remove_if(out.begin(), out.end(), [](const std::string& s) { return text::trim(s).empty(); }),
            out.end());
  return out;
}

namespace {

// ---------------------------------------------------------------------------------------
// Classification

struct verdict {
  entry_type type;
  double confidence;
};

// Words without which a sentence holds no date (the date finder's prefilter).
const phrase_set date_word_phrases{
    "today", "tonight", "tomorrow", "yesterday", "eod", "eow", "eom", "cob", "end", "close", "week", "weeks", "day",
    "days", "month", "months", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "mon",
    "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun", "january", "february", "march", "april", "may",
    "june", "july", "august", "september", "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul",
    "aug", "sep", "sept", "oct", "nov", "dec", "q1", "q2", "q3", "q4", "h1", "h2"};

// Cue phrases of the classifier (lower-case, matched at word boundaries).
const phrase_set thanks_exceptions_phrases{"decided", "agreed", "approved", "will", "please", "prefer"};
const phrase_set small_talk_phrases{"hope you", "hope all", "hope everyone", "hope this finds", "have a great", "have a good",
                  "have a nice", "enjoy the", "enjoy your", "how are you", "how was your", "how's it going",
                  "nice to meet", "great to meet", "good to hear", "great to hear", "congrats", "congratulations",
                  "happy friday", "happy monday", "welcome back", "sorry for the delay", "apologies for the delay",
                  "sorry for the late", "talk soon", "speak soon", "see you", "looking forward", "let me know if you have",
                  "let me know what you think", "let me know if", "any questions", "feel free", "ping me", "shout if",
                  "let me check my calendar", "check my calendar", "calendar invite", "send an invite", "sent an invite",
                  "send over an invite", "are you free", "are you available", "does that work", "does this work",
                  "would that work", "works for me", "work for you", "quick call", "quick chat", "hop on a call",
                  "jump on a call", "catch up", "hope that helps", "hope this helps", "have a lovely", "good luck",
                  "fingers crossed", "just checking in", "just following up", "following up on", "circling back",
                  "gentle reminder", "sounds good", "sounds great", "got it", "makes sense", "no worries", "no problem",
                  "will do", "noted", "on my way", "running late", "be there", "out of office", "ooo", "lunch",
                  "enjoy the weekend", "enjoy your weekend", "nice weekend", "good weekend"};
const phrase_set request_cue_phrases{"can you", "could you", "would you",
      "will you", "can someone", "could someone", "would you mind", "need you to", "make sure", "don't forget",
      "do not forget", "remember to", "please make sure", "please send", "please review", "please confirm",
      "please share", "please update", "please sign", "please submit", "please prepare", "action item", "action:",
      "todo", "to-do", "can we get", "could we get", "i need you", "we need you"};
const phrase_set commitment_phrases{"i'll", "i will", "i'm going to", "i am going to", "i can send", "i can share",
      "i'll make sure", "we'll send", "we will send", "we'll share", "we will share", "we'll prepare", "we'll get",
      "we will get", "we'll update", "we will update", "let me send", "let me get", "let me share", "i need to",
      "we need to", "i have to", "we have to", "we must", "you need to", "you must", "i'll get", "i'll have",
      "we'll have", "i'm on it", "we will prepare", "will follow up", "will send", "will share", "will review",
      "will prepare", "will update", "will confirm", "will submit", "will sign", "will deliver", "will provide",
      "will check", "will draft", "will circulate", "is going to send", "to send", "owes us", "i need the",
      "i need a", "we need the", "i'm drafting", "i am drafting", "i'm preparing", "i'm sending", "i'll be sending",
      "pls", "plz", "i want an", "i want a", "i want the", "i want you", "i'd like you to", "we'd like you to",
      "i'd like a", "we'd like a", "i expect", "get me", "i need your", "we need your", "should send",
      "should share", "should review", "should submit", "should prepare", "should update", "should confirm"};
const phrase_set decision_phrases{"decided", "decision is", "decision was", "final decision", "we've agreed",
      "we have agreed", "we agreed", "agreed to", "agreed that", "agreed on", "it's agreed", "approved", "signed off",
      "sign-off on", "go with", "going with", "went with", "we chose", "we've chosen", "have chosen", "opted",
      "settled on", "green light", "green-lit", "greenlit", "go ahead with", "going ahead", "proceed with",
      "will proceed", "we're proceeding", "postponed", "postpone", "pushed back", "push the", "moved the", "moving the",
      "move the launch", "cancelled", "canceled", "we're cancelling", "we are cancelling", "dropped the", "rejected",
      "declined", "not renewing", "won't renew", "will not renew", "switching to", "switch to", "we'll switch",
      "we will switch", "chosen", "selected", "we're going to use", "we will use", "we'll use", "locked in",
      "confirmed that we", "we confirm", "is confirmed", "are confirmed", "has been confirmed", "final call",
      "from now on", "effective immediately", "effective from", "starting next", "new policy", "we're moving",
      "we'll take", "we will take", "we're opening", "we are opening", "standardising on", "standardizing on",
      "won't be renewed", "will not be renewed", "hard no", "we can accept", "we accept", "accepted", "approved by",
      "we're keeping", "we'll keep", "we will keep", "we're dropping", "dropping the", "we're going", "we'll go",
      "no more", "we're renting", "we are renting", "we're adding", "we'll add", "we're switching",
      "we're not", "we won't", "we will not", "we've chosen", "we've picked", "we picked", "we're picking",
      "decision:", "we're consolidating", "we're retiring", "retire the", "sunset", "we're extending", "extended the",
      "we'll extend", "we will extend", "we're raising", "we're lowering", "we're holding", "hold the price",
      "we are moving", "will be moved", "has been moved", "was moved", "has been pushed", "was pushed",
      "has been postponed", "was postponed", "has been cancelled", "was cancelled", "approve", "sign off on"};
const phrase_set preference_phrases{"prefer", "prefers", "preferred", "preference", "would rather", "'d rather",
      "rather have", "rather not", "likes to", "like to receive", "like to get", "doesn't like", "does not like",
      "don't like", "dislikes", "hates", "loves", "favourite", "favorite", "is keen on", "are keen on",
      "not a fan", "big fan", "works best for", "always wants", "wants everything", "wants all", "only wants",
      "no calls", "no meetings", "allergic", "no longer want", "no longer wants", "don't want", "do not want", "doesn't want", "does not want",
      "want to keep", "wants to keep", "wants the", "want the", "insist on", "insists on", "insist that",
      "insists that", "rather than", "rather pay", "rather sign", "rather keep", "rather handle", "prefer to",
      "happier with", "would like us", "they'd like", "she'd like", "he'd like", "is fussy", "particular about"};
const phrase_set goal_phrases{"goal", "goals", "target", "targets", "targeting", "aim to", "aims to", "aiming", "aim is",
      "objective", "objectives", "okr", "okrs", "kpi", "ambition", "we want to reach", "want to hit", "hope to reach",
      "plan to reach", "plan to hit", "on track to", "strive", "mission is", "north star", "aiming for",
      "want to be live", "want to be at", "want to get to", "want to reach", "hoping to", "we'd want to",
      "ambitious", "push for", "the plan is to", "by year end", "by end of year"};
const phrase_set relationship_phrases{"reports to", "report to", "reporting to", "works for", "works at", "works with",
      "is our contact", "is our new", "is the new", "is now the", "will be the new", "will be our", "has joined",
      "joined", "took over", "taking over", "is replacing", "will replace", "replaces", "account manager for",
      "account manager at", "customer of", "client of", "partner of", "partnered with", "partnership with",
      "subsidiary of", "parent company", "owned by", "owns", "acquired", "acquisition of", "reseller", "distributor",
      "supplier to", "supplier for", "vendor for", "is a customer", "are a customer", "is our customer",
      "is our supplier", "is our partner", "is a partner", "point of contact", "main contact", "manages the",
      "now a customer", "a new customer", "became a customer", "is now a", "signed on as",
      "is managed by", "managed by", "in charge of", "responsible for", "leads the", "heads up", "heads the",
      "introduced me", "is the ceo", "is the cto", "is the cfo", "is the head", "is head of", "is the owner",
      "sister company", "spun off", "merged with", "works closely with", "is the decision maker", "sponsor",
      "champion", "is the lead", "our contact at", "contact at", "is married", "is related", "looks after",
      "now leads", "leads all", "will be your", "is your", "replacement is", "work with", "we currently use",
      "currently use", "budget owner", "owner for", "head of", "is our head", "reports directly", "works under",
      "is in the", "belongs to", "sits in", "is part of", "part of the", "runs the", "runs our", "now runs",
      "new owner", "took over from", "handed over", "moved to the", "introduced", "is the main", "their new"};
const phrase_set event_phrases{"took place", "happened", "occurred", "was held", "were held", "went live", "go-live",
      "launched", "kicked off", "kick-off", "outage", "incident", "went down", "was down", "was delivered",
      "were delivered", "arrived", "we had a", "we held", "completed", "was completed", "finished", "shipped",
      "was shipped", "closed the", "hired", "visited", "met with", "attended", "presented", "passed the",
      "failed", "broke down", "was signed", "were signed", "signed the", "signed yesterday", "signed today",
      "signed last", "signed on", "has signed", "have signed", "was released", "released", "was audited",
      "the audit", "inspection", "was damaged", "got damaged", "were damaged", "delayed by", "was delayed",
      "were delayed", "breach", "recall", "strike", "went through", "received", "paid the", "was paid",
      "were paid", "announced", "resigned", "left the company", "was promoted", "promoted", "crashed",
      "delivered", "escalated", "changed", "asked again", "ordered", "booked", "countersigned", "placed",
      "placing", "failed", "expired", "launches", "meets on", "cutover", "lands", "land in", "arrives",
      "arriving", "leaving", "departs", "kicks off", "is scheduled", "scheduled for", "takes place",
      "will take place", "went", "came in", "showed up", "broke", "was hit", "were hit", "spiked", "dropped to",
      "rose to", "fell to", "came back", "reopened", "restarted", "rolled out", "rolled back", "deployed",
      "migrated", "migration finished", "went out", "sent out", "signed a", "renewed", "churned", "cancelled their",
      "got approved", "passed", "won", "lost", "filed", "was fined", "stopped", "started", "cuts over", "cut over",
      "starts on", "start on", "is set for", "set for", "happens", "happening", "is leaving", "leaving",
      "confirmed yesterday", "confirmed today", "confirmed this morning", "eta", "reached", "cut all", "closed its",
      "closed a", "closed our", "delivered to", "scheduled delivery", "next delivery", "ships on", "sailing",
      "was locked", "were locked", "come thursday", "come monday", "come friday"};
const phrase_set hedge_phrases{"maybe", "might", "perhaps", "possibly", "probably", "i think", "not sure", "i guess",
                             "tentatively", "if possible", "could be", "i believe", "likely"};
const phrase_set attachment_notice_phrases{"please find attached", "please find enclosed", "attached is", "attached are",
                  "attached you'll find"};
const phrase_set first_person_commitment_phrases{"i'll", "i will", "we'll send", "i'm drafting", "i am drafting"};
const phrase_set stative_phrases{"is", "are", "was", "were", "has", "have", "costs", "cost", "renews", "expires",
                             "we're", "they're", "it's", "there's", "that's", "stays", "stay", "charge", "charges",
                             "quoted", "currently", "gets", "get", "helps", "handle", "handles", "now", "'s",
                             "means", "sits", "lives", "works", "work", "runs at", "averages", "grew", "grows",
                             "includes", "include", "runs", "covers", "remains", "stands at", "totals", "comes to",
                             "will be", "starts", "ends", "is due", "are due", "contains", "holds", "uses", "use",
                             "requires", "take", "takes", "charges", "pay", "pays", "offers", "supports", "allows",
                             "ships", "closes", "opens", "needs", "need", "operates", "employs", "serves"};
const phrase_set personal_phrases{"i", "you", "me"};
const phrase_set negation_phrases{"not", "no longer", "never", "don't", "doesn't", "didn't", "won't", "isn't", "aren't",
                              "wasn't", "cannot", "can't", "no"};

bool is_junk(const token_view& tv, std::size_t nwords) {
  const std::string& l = tv.lower;
  auto starts = [&](std::string_view p) { return l.rfind(p, 0) == 0; };
  if (nwords <= 6 && (starts("hi") || starts("hello") || starts("hey") || starts("dear") || starts("good morning") ||
                      starts("good afternoon") || starts("good evening") || starts("morning")))
    return true;
  if (nwords <= 3)
    return true;
  if ((starts("thanks") || starts("thank you") || starts("thx") || starts("many thanks") || starts("much appreciated") ||
       starts("appreciate")) &&
      !thanks_exceptions_phrases.any(tv))
    return true;
  if (small_talk_phrases.any(tv))
    return true;
  return false;
}

bool first_word_is(const std::string& l, std::initializer_list<std::string_view> ws) {
  auto sp = l.find(' ');
  auto first = l.substr(0, sp);
  while (!first.empty() && (first.back() == ',' || first.back() == ':'))
    first.pop_back();
  return std::find(ws.begin(), ws.end(), first) != ws.end();
}

const std::set<std::string_view> task_verbs = {
    "send", "share", "review", "submit", "sign", "prepare", "draft", "update", "confirm", "finalize", "finalise",
    "check", "book", "call", "email", "forward", "provide", "complete", "fix", "upload", "approve", "file", "pay",
    "order", "ship", "deliver", "schedule", "arrange", "set", "follow", "get", "loop", "reach", "ping", "chase",
    "add", "remove", "create", "write", "compile", "put", "make", "ask", "collect", "circulate", "invoice", "renew",
    "cancel", "look", "double-check", "validate", "test", "run", "organize", "organise", "coordinate", "return",
    "escalate", "contact", "notify", "publish", "post", "reply", "respond", "clarify", "investigate", "confirm",
    "tell", "settle", "go", "bring", "let", "kindly", "pack", "move", "talk", "sort", "keep", "hold", "draft"};

/// "Approve ..." or "Cancel ..." at the start reads as a decision when it is past tense.
bool decision_word_first(const std::string& l) {
  return l.rfind("approved", 0) == 0 || l.rfind("decided", 0) == 0 || l.rfind("agreed", 0) == 0;
}

std::optional<verdict> classify(const std::string& s, const token_view& tv, bool has_date, bool has_amount, bool has_number,
                                bool has_entity, bool starts_with_name) {
  const std::string& l = tv.lower;
  const auto nwords = tv.tokens.size();
  if (is_injected_instruction(s))
    return std::nullopt;  // an instruction aimed at a model is not knowledge
  bool question = !s.empty() && s.back() == '?';
  if (is_junk(tv, nwords) && !(has_amount && !question))
    return std::nullopt;

  // Requests and commitments.
  bool request_cue = request_cue_phrases.any(tv);
  bool request = first_word_is(l, {"please", "pls", "kindly"}) || request_cue;
  bool commitment = commitment_phrases.any(tv);
  // "<someone> will|'ll <task verb>": she'll countersign, Ines will brief.
  if (!commitment) {
    const auto& ws = tv.tokens;
    for (std::size_t k = 0; k + 1 < ws.size(); ++k) {
      auto w0 = ws[k];
      bool will = w0 == "will" || (w0.size() > 3 && w0.substr(w0.size() - 3) == "'ll");
      if (will && (task_verbs.count(ws[k + 1]) ||
                   has_any(ws[k + 1], {"countersign", "brief", "handle", "draft", "present",
                                                          "demo", "book", "host", "bring", "train", "migrate",
                                                          "install", "configure", "deploy", "send"}))) {
        commitment = true;
        break;
      }
    }
  }
  bool name_to_verb = false;
  if (starts_with_name) {
    const auto& ws = tv.tokens;
    for (std::size_t k = 1; k + 1 < ws.size() && k <= 3; ++k)
      if ((ws[k] == "to" || ws[k] == "will" || ws[k] == "needs" || ws[k] == "should") && task_verbs.count(ws[k + 1])) {
        name_to_verb = true;
        break;
      }
  }
  bool imperative = task_verbs.count(text::strip_punct(l.substr(0, l.find(' ')))) && !question;

  // Decisions first: "we'll go with the annual plan" is a decision, not a task.
  bool decision = decision_phrases.any(tv);
  bool preference = preference_phrases.any(tv);
  bool goal = goal_phrases.any(tv);
  bool relationship = relationship_phrases.any(tv);
  bool event = event_phrases.any(tv);

  double hedge = hedge_phrases.any(tv)
                     ? 0.12
                     : 0.0;
  auto make = [&](entry_type t, double c) { return verdict{t, std::max(0.0, c - hedge)}; };

  if (question && !request && !(has_word(l, "could") && has_word(l, "you")))
    return std::nullopt;  // a question that asks for nothing records nothing
  // "Please find attached ..." announces a document; what it says decides the type.
  if (attachment_notice_phrases.any(tv)) {
    request = false;
    imperative = false;
  }
  bool first_person_commitment = first_person_commitment_phrases.any(tv);
  if (imperative && !decision_word_first(l))
    return make(entry_type::action_item, 0.78);
  if (decision && !request && !question)
    return make(entry_type::decision, 0.85);
  if (preference && !question && !first_person_commitment)
    return make(entry_type::preference, 0.85);
  if (goal && !request)
    return make(entry_type::goal, 0.82);
  if (request || name_to_verb || imperative)
    return make(entry_type::action_item, request || name_to_verb ? 0.85 : 0.72);
  if (commitment)
    return make(entry_type::action_item, 0.8);
  if (relationship && (has_entity || starts_with_name))
    return make(entry_type::relationship, 0.8);
  if (event && (has_date || has_entity || has_number))
    return make(entry_type::event, 0.8);
  if (event)
    return make(entry_type::event, 0.68);
  if (relationship)
    return make(entry_type::relationship, 0.66);
  bool stative = stative_phrases.any(tv);
  if (stative && (has_amount || has_number || has_date))
    return make(entry_type::fact, 0.75);
  if (stative && has_entity && nwords >= 5)
    return make(entry_type::fact, 0.66);
  // A plain statement about a thing ("the cold room compressor is making noise again").
  if (stative && nwords >= 6 && !personal_phrases.any(tv))
    return make(entry_type::fact, 0.62);
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------
// Entities

struct span_mention {
  std::size_t begin, end;
  entity_mention m;
};

std::string capitalise(std::string_view s) {
  std::string out(s);
  if (!out.empty())
    out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

bool is_capitalised(std::string_view w) { return !w.empty() && text::is_upper(w[0]); }

bool is_legal_suffix(std::string_view w) {
  static const std::set<std::string_view> s{"inc", "inc.", "ltd", "ltd.", "llc", "gmbh", "ag", "s.a.", "sa", "plc",
                                            "corp", "corp.", "corporation", "co.", "bv", "b.v.", "nv", "n.v.", "pty",
                                            "se", "sas", "sarl", "limited", "llp", "oy", "ab", "as", "kg", "spa"};
  return s.count(text::lower(w)) != 0;
}

bool is_org_word(std::string_view w) {
  static const std::set<std::string_view> s{
      "traders", "logistics", "systems", "labs", "technologies", "technology", "solutions", "partners", "bank",
      "industries", "consulting", "software", "networks", "foods", "motors", "pharma", "capital", "media", "health",
      "energy", "airlines", "freight", "shipping", "group", "holdings", "ventures", "analytics", "robotics",
      "dynamics", "manufacturing", "insurance", "retail", "electronics", "telecom", "transport", "consultancy",
      "associates", "agency", "studios", "university", "institute", "foundation", "hospital", "council", "ministry"};
  return s.count(text::lower(w)) != 0;
}

/// An organisation name derived from an e-mail domain ("ops@globex.example" -> "Globex").
std::string org_from_address(std::string_view address) {
  auto at = address.find('@');
  if (at == std::string_view::npos)
    return {};
  auto domain = text::lower(address.substr(at + 1));
  auto dot = domain.find('.');
  auto label = domain.substr(0, dot);
  if (label.empty() || lexicon::is_generic_domain(label))
    return {};
  return capitalise(label);
}

struct message_context {
  /// Participants by lower-case first name -> full name.
  std::map<std::string, std::string> person_by_first;
  /// Organisations the message itself names (domains, signature): lower-case -> as written.
  std::map<std::string, std::string> known_orgs;
};

void find_people_and_orgs(const std::string& s, std::size_t sentence_start, const message_context& ctx,
                          std::vector<span_mention>& out) {
  auto ws = text::words(s);
  auto offset = [&](std::string_view w) { return static_cast<std::size_t>(w.data() - s.data()); };
  for (std::size_t i = 0; i < ws.size(); ++i) {
    auto w = text::strip_punct(ws[i]);
    if (!is_capitalised(w) || w.size() < 2)
      continue;
    auto lw = text::lower(w);
    // Organisation names known from the message (domains, signature) or with a suffix.
    if (auto it = ctx.known_orgs.find(lw); it != ctx.known_orgs.end()) {
      entity_mention m{entity_kind::organization, std::string(w), it->second, {}, {}, {}, {}, {}};
      out.push_back({sentence_start + offset(w), sentence_start + offset(w) + w.size(), m});
      continue;
    }
    // "Contoso Ltd", "Northwind Traders", "Acme Corp."
    std::size_t j = i;
    std::array<std::string_view, 4> run{};
    std::size_t n = 0;
    while (j < ws.size() && n < run.size() && is_capitalised(text::strip_punct(ws[j]))) {
      run[n++] = text::strip_punct(ws[j]);
      bool ends = ws[j].back() == ',' || ws[j].back() == '.' || ws[j].back() == ';';
      ++j;
      if (ends && !is_legal_suffix(ws[j - 1]))
        break;
    }
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
      auto b = offset(caps.front());
      entity_mention m{entity_kind::organization, written, name, {}, {}, {}, {}, {}};
      out.push_back({sentence_start + b, sentence_start + offset(caps.back()) + caps.back().size(), m});
      i += caps.size() - 1;
      continue;
    }
    // People: a known first name, optionally followed by a capitalised surname.
    bool first = lexicon::is_first_name(lw) || ctx.person_by_first.count(lw);
    if (first && !lexicon::is_stop_capital(lw)) {
      std::string name(w);
      auto end_word = w;
      if (i + 1 < ws.size()) {
        auto next = text::strip_punct(ws[i + 1]);
        bool joined = ws[i].back() != ',' && ws[i].back() != '.';
        if (joined && is_capitalised(next) && !lexicon::is_stop_capital(text::lower(next)) &&
            !ctx.known_orgs.count(text::lower(next)) && !lexicon::is_first_name(text::lower(next))) {
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
      out.push_back({sentence_start + offset(w), sentence_start + offset(end_word) + end_word.size(), m});
      continue;
    }
    // "subsidiary of Contoso", "joined Fabrikam", "at Initech", "with Coho Winery",
    // "Globex's team": a capitalised name (up to three words) after an organisation cue, or
    // in the possessive, that is no one's first name.
    const bool possessive_word = ws[i].size() > 2 && (ws[i].find("'s") != std::string_view::npos ||
                                                      ws[i].find("\xE2\x80\x99s") != std::string_view::npos);
    if ((i > 0 || possessive_word) && !lexicon::is_stop_capital(lw) && !lexicon::is_first_name(lw) &&
        !ctx.person_by_first.count(lw) && w.size() >= 3) {
      auto prev = i > 0 ? text::lower(text::strip_punct(ws[i - 1])) : std::string();
      bool cue = prev == "of" || prev == "at" || prev == "joined" || prev == "acquired" || prev == "with" ||
                 prev == "for" || prev == "from" || prev == "by" || prev == "to" || prev == "via" || prev == "and";
      bool possessive = possessive_word;
      if (!cue && !possessive)
        continue;
      std::size_t n = 1;
      while (!possessive && n < 3 && i + n < ws.size() && ws[i + n - 1].back() != ',' &&
             ws[i + n - 1].back() != '.') {
        auto next = text::strip_punct(ws[i + n]);
        auto ln = text::lower(next);
        if (!is_capitalised(next) || lexicon::is_stop_capital(ln) || lexicon::is_first_name(ln))
          break;
        ++n;
      }
      auto last = text::strip_punct(ws[i + n - 1]);
      std::string name(s.substr(offset(w), offset(last) + last.size() - offset(w)));
      if (prev == "and" && out.empty())
        continue;  // "and X" counts only next to another name
      entity_mention m{entity_kind::organization, name, name, {}, {}, {}, {}, {}};
      out.push_back({sentence_start + offset(w), sentence_start + offset(last) + last.size(), m});
      i += n - 1;
    }
  }
}

/// Text no one writes as a sentence: ASCII art, link lists, navigation bars, code, and
/// run-on blocks far longer than any sentence.
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
      auto lw = text::lower(text::strip_punct(w));
      names &= text::is_upper(w[0]) &&
               (lexicon::is_first_name(lw) || ctx.person_by_first.count(lw) || lw == "team" || lw == "all" || lw == "folks");
    }
    if (names)
      v = text::trim(v.substr(comma + 2));
  }
  return std::string(v);
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

/// Attribute slots by cue word, first match wins. Built at static initialisation (the
/// phrase index is not written after that).
const std::vector<std::pair<phrase_set, const char*>> slots = [] {
    std::vector<std::pair<phrase_set, const char*>> v;
    v.emplace_back(phrase_set{"price", "pricing", "cost", "costs", "fee", "fees", "rate", "quote", "quoted",
                              "discount"}, "price");
    v.emplace_back(phrase_set{"budget"}, "budget");
    v.emplace_back(phrase_set{"seats", "licenses", "licences", "users", "headcount"}, "seats");
    v.emplace_back(phrase_set{"payment terms", "net 30", "net 45", "net 60", "net 90"}, "payment_terms");
    v.emplace_back(phrase_set{"launch", "go-live", "go live"}, "launch_date");
    v.emplace_back(phrase_set{"renewal", "renews", "renew"}, "renewal_date");
    v.emplace_back(phrase_set{"start date", "starts", "start on", "begins"}, "start_date");
    v.emplace_back(phrase_set{"deadline", "due"}, "deadline");
    v.emplace_back(phrase_set{"invoice", "invoices", "invoicing", "billing"}, "invoicing");
    v.emplace_back(phrase_set{"support", "helpdesk", "support line"}, "support");
    v.emplace_back(phrase_set{"contract", "agreement", "sow", "msa"}, "contract");
    v.emplace_back(phrase_set{"delivery", "deliveries", "shipment", "shipments"}, "delivery");
    v.emplace_back(phrase_set{"meeting", "call", "calls"}, "meetings");
    v.emplace_back(phrase_set{"account manager", "point of contact", "contact"}, "contact");
    return v;
  }();

std::string slot_of(const token_view& tv, entry_type t) {
  for (const auto& [phrases, slot] : slots)
    if (phrases.any(tv))
      return slot;
  return t == entry_type::preference ? "preference" : "";
}

}  // namespace

namespace {

/// What read_statement asks of extract: the body is one statement of a given type.
struct statement_mode {
  entry_type type;
  std::string_view title;
  double confidence;
};

schemas::extraction extract(const schemas::inbound_message& m, std::string* cleaned_text, const statement_mode* st) {
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

  message_context ctx;
  std::map<std::pair<entity_kind, std::string>, std::size_t> index;  // (kind, lower value) -> mention
  auto add_mention = [&](entity_mention em) -> std::size_t {
    auto key = std::make_pair(em.kind, text::lower(em.value));
    if (auto it = index.find(key); it != index.end()) {
      auto& have = x.mentions[it->second];
      if (have.address.empty())
        have.address = em.address;
      return it->second;
    }
    x.mentions.push_back(std::move(em));
    index.emplace(key, x.mentions.size() - 1);
    return x.mentions.size() - 1;
  };

  // Participants: people of the headers, organisations of their domains (as a lexicon).
  std::vector<const schemas::participant*> people{&m.from};
  for (const auto& p : m.to)
    people.push_back(&p);
  for (const auto& p : m.cc)
    people.push_back(&p);
  for (const auto* p : people) {
    auto org = org_from_address(p->address);
    if (!org.empty() && text::lower(org) != text::lower(m.organization_id))
      ctx.known_orgs.emplace(text::lower(org), org);
    auto name = std::string(text::trim(p->name));
    if (name.empty() || name.find('@') != std::string::npos)
      continue;
    auto first = text::lower(name.substr(0, name.find(' ')));
    ctx.person_by_first.emplace(first, name);
    entity_mention em{entity_kind::person, name, name, {}, p->address, {}, {}, {}};
    add_mention(std::move(em));
  }
  if (cleaned.sig) {
    auto& sig = *cleaned.sig;
    entity_mention em{entity_kind::person, sig.name.empty() ? m.from.name : sig.name,
                      sig.name.empty() ? m.from.name : sig.name, {}, m.from.address, sig.role, sig.company, sig.phone};
    if (em.value.empty())
      em.value = em.text = m.from.address;
    x.sender_signature = em;
    auto idx = add_mention(em);
    x.mentions[idx].role = sig.role;
    x.mentions[idx].company = sig.company;
    x.mentions[idx].phone = sig.phone;
    if (!sig.company.empty()) {
      std::string company = sig.company;
      auto ws = text::words(company);
      if (ws.size() >= 2 && is_legal_suffix(ws.back()))
        company = std::string(company, 0, static_cast<std::size_t>(ws.back().data() - company.data()));
      company = std::string(text::trim(company));
      while (!company.empty() && company.back() == ',')
        company.pop_back();
      ctx.known_orgs.emplace(text::lower(company), company);
      add_mention({entity_kind::organization, sig.company, company, {}, {}, {}, {}, {}});
    }
  }

  // Injected instructions are cut out before sentences are read: what follows a closing
  // tag starts a sentence of its own, and nothing inside the tags becomes an entry.
  const std::string body = st ? cleaned.text : cut_injected_blocks(cleaned.text);
  for (auto& sentence : st ? std::vector<std::string>{body} : split_sentences(body)) {
    if (!st && is_noise(sentence))
      continue;
    std::vector<span_mention> spans;
    const std::string core = strip_vocative(sentence, ctx);
    const token_view tv(core);
    const bool has_number = std::any_of(sentence.begin(), sentence.end(), [](char c) { return text::is_digit(c); });
    // Every date has a digit or one of these words; most sentences have neither.
    if (has_number || date_word_phrases.any(tv))
      for (auto& d : find_dates(sentence, sent_day))
        spans.push_back({d.begin, d.end,
                         {entity_kind::date, sentence.substr(d.begin, d.end - d.begin), d.resolved, {}, {}, {}, {}, {}}});
    if (has_number)  // every amount has a digit
      for (auto& a : find_amounts(sentence))
      spans.push_back({a.begin, a.end,
                       {entity_kind::amount, sentence.substr(a.begin, a.end - a.begin), a.value, a.currency, {}, {}, {},
                        {}}});
    find_people_and_orgs(sentence, 0, ctx, spans);
    bool has_date = false, has_amount = false, has_entity = false;
    for (const auto& sp : spans) {
      has_date |= sp.m.kind == entity_kind::date;
      has_amount |= sp.m.kind == entity_kind::amount;
      has_entity |= sp.m.kind == entity_kind::person || sp.m.kind == entity_kind::organization;
    }
    bool starts_with_name = !spans.empty() && std::any_of(spans.begin(), spans.end(), [](const span_mention& sp) {
      return sp.begin == 0 && (sp.m.kind == entity_kind::person || sp.m.kind == entity_kind::organization);
    });
    std::vector<std::size_t> ids;
    for (auto& sp : spans)
      ids.push_back(add_mention(sp.m));
    auto v = st ? std::optional<verdict>(verdict{st->type, st->confidence})
                : classify(core, tv, has_date, has_amount, has_number, has_entity, starts_with_name);
    if (!v)
      continue;
    schemas::entry e;
    e.type = v->type;
    e.confidence = v->confidence;
    e.content = sentence;
    e.title = st ? std::string(st->title) : title_of(sentence);
    e.mentions = ids;
    std::sort(e.mentions.begin(), e.mentions.end());
    e.mentions.erase(std::unique(e.mentions.begin(), e.mentions.end()), e.mentions.end());
    e.positive = !negation_phrases.any(tv);
    // Subject: the first organisation, else the first person, else the sender's company.
    for (auto kind : {entity_kind::organization, entity_kind::person})
      for (const auto& sp : spans)
        if (e.subject.empty() && sp.m.kind == kind)
          e.subject = sp.m.value;
    if (e.subject.empty() && cleaned.sig && !cleaned.sig->company.empty())
      e.subject = cleaned.sig->company;
    // A saved statement names what it is about first: "Contoso has 150 seats". An action
    // item starts with its verb ("Send Borex the contract"): its subject is the capitalised
    // name right after the verb, never the verb.
    if (e.subject.empty() && st) {
      auto ws = text::words(core);
      const std::size_t at = st->type == entry_type::action_item ? 1 : 0;
      if (ws.size() > at) {
        auto w = text::strip_punct(ws[at]);
        auto lw = text::lower(w);
        if (w.size() >= 3 && is_capitalised(w) && !lexicon::is_stop_capital(lw) && !lexicon::is_first_name(lw) &&
            std::all_of(w.begin(), w.end(), [](char c) { return text::is_alpha(c) || c == '-'; }))
          e.subject = std::string(w);
      }
    }
    e.slot = slot_of(tv, e.type);
    for (auto kind : {entity_kind::amount, entity_kind::date})
      for (const auto& sp : spans)
        if (e.value.empty() && sp.m.kind == kind)
          e.value = sp.m.kind == entity_kind::amount ? sp.m.value + " " + sp.m.currency : sp.m.value;
    if (e.type == entry_type::action_item)
      for (const auto& sp : spans)
        if (sp.m.kind == entity_kind::date) {
          auto slash = sp.m.value.find('/');
          e.due_at = slash == std::string::npos ? sp.m.value : sp.m.value.substr(slash + 1);
          break;
        }
    x.entries.push_back(std::move(e));
  }
  return x;
}

}  // namespace

schemas::extraction extract_rules(const schemas::inbound_message& m, std::string* cleaned_text) {
  return extract(m, cleaned_text, nullptr);
}

schemas::extraction read_statement(const schemas::inbound_message& m, entry_type type, std::string_view title,
                                   double confidence) {
  statement_mode st{type, title, confidence};
  auto x = extract(m, nullptr, &st);
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

}  // namespace engram::extractor
