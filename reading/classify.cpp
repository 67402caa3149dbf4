#include "reading/internal/classify.hpp"

#include "reading/injection.hpp"
#include "reading/text.hpp"

#include <algorithm>
#include <initializer_list>
#include <set>
#include <string_view>

namespace engram::reading::detail {

using schemas::entry_type;
using text::has_any;
using text::has_word;

// ---------------------------------------------------------------------------------------
// Cue lists. Constants: internal to this file, except date_word_phrases and
// negation_phrases, which classify.hpp declares for the extractor's driver (rules.cpp).

// Words without which a sentence holds no date (the date finder's prefilter).
const phrase_set date_word_phrases{
    "today",    "tonight", "tomorrow",  "tmrw",    "yesterday", "eod",      "eow",    "eom",    "cob",     "end",
    "close",    "week",    "weeks",     "day",     "days",      "month",    "months", "monday", "tuesday", "wednesday",
    "thursday", "friday",  "saturday",  "sunday",  "mon",       "tue",      "tues",   "wed",    "thu",     "thur",
    "thurs",    "fri",     "sat",       "sun",     "january",   "february", "march",  "april",  "may",     "june",
    "july",     "august",  "september", "october", "november",  "december", "jan",    "feb",    "mar",     "apr",
    "jun",      "jul",     "aug",       "sep",     "sept",      "oct",      "nov",    "dec",    "q1",      "q2",
    "q3",       "q4",      "h1",        "h2"};

// Cue phrases of the classifier (lower-case, matched at word boundaries).

// Words that keep a sentence starting with thanks from being junk ("thanks, we agreed ...").
const phrase_set thanks_exceptions_phrases{"decided", "agreed", "approved", "will", "please", "prefer"};
// Chat pleasantries: compliments, sympathy, catching up. A short sentence with one and
// nothing dated, counted or decided is not knowledge (it stays in the message's passages).
// clang-format off
const phrase_set pleasantry_phrases{
    "so happy for you", "happy for you", "proud of you", "so proud", "that's so", "that is so", "that sounds",
    "sounds amazing", "sounds lovely", "sounds wonderful", "sounds fun", "sounds awesome", "sounds like fun", "so cool",
    "how cool", "love that", "love this", "glad to hear", "so glad", "glad you", "miss you", "since we last",
    "last chatted", "last talked", "last spoke", "been a while", "long time no", "what's new", "how have you been",
    "how've you been", "how are things", "how's everything", "take care", "haha", "lol", "omg", "aww", "thanks for asking",
    "you too", "me too", "sorry to hear", "hang in there", "that's awesome", "that's amazing", "that's great",
    "that's wonderful", "that's lovely", "that's fantastic", "that's incredible", "what a", "a lot has happened",
    "good for you", "well done", "you deserve", "can't wait to hear", "tell me more", "keep me posted", "so sweet",
    "so nice", "you're amazing", "you're the best", "thank you so much", "thanks so much", "means a lot"};

// Small talk, pleasantries and scheduling chatter: a sentence with one is junk.
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
// Requests addressed to someone ("can you", "make sure"): an action item.
const phrase_set request_cue_phrases{"can you", "could you", "would you",
      "will you", "can someone", "could someone", "would you mind", "need you to", "make sure", "don't forget",
      "do not forget", "remember to", "please make sure", "please send", "please review", "please confirm",
      "please share", "please update", "please sign", "please submit", "please prepare", "action item", "action:",
      "can we", "could we", "shall we", "should we",
      "todo", "to-do", "can we get", "could we get", "i need you", "we need you",
      "requested", "asked for", "asked us to", "asked me to", "asked whether", "asked if", "would like a copy", "would like the", "would like an", "could the team", "can the team", "we owe", "owe them", "someone needs to", "someone should", "needs to be done", "should reconcile", "should chase"};
// Commitments and obligations ("I'll send", "we need to", "pls"): an action item.
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
      "should share", "should review", "should submit", "should prepare", "should update", "should confirm",
      "is due", "are due", "due by", "due on", "goes out", "go out on", "ahead of"};
// Decisions: agreements, approvals, choices, cancellations, postponements, changes of policy.
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
      "has been postponed", "was postponed", "has been cancelled", "was cancelled", "approve", "sign off on",
      "is off", "are off", "we're killing", "we are killing", "killed the", "picked", "must go through", "must be approved", "need two sign-offs", "need sign-off", "caps", "is capped", "final answer", "we ship without", "will no longer", "scrapped", "shelved", "call it off", "called off"};
// Preferences: likes, dislikes, how someone wants things done.
const phrase_set preference_phrases{"prefer", "prefers", "preferred", "preference", "would rather", "'d rather",
      "rather have", "rather not", "likes to", "like to receive", "like to get", "doesn't like", "does not like",
      "don't like", "dislikes", "hates", "loves", "favourite", "favorite", "is keen on", "are keen on",
      "not a fan", "big fan", "works best for", "always wants", "wants everything", "wants all", "only wants",
      "no calls", "no meetings", "allergic", "no longer want", "no longer wants", "don't want", "do not want", "doesn't want", "does not want",
      "want to keep", "wants to keep", "wants the", "want the", "insist on", "insists on", "insist that",
      "insists that", "rather than", "rather pay", "rather sign", "rather keep", "rather handle", "prefer to",
      "happier with", "would like us", "they'd like", "she'd like", "he'd like", "is fussy", "particular about",
      "likes", "favours", "favors", "favour", "wants paper", "wants fewer", "wants more", "want fewer", "want more", "would prefer", "is happiest", "works better", "work better", "best way to reach"};
// Goals, targets and objectives.
const phrase_set goal_phrases{"goal", "goals", "target", "targets", "targeting", "aim to", "aims to", "aiming", "aim is",
      "objective", "objectives", "okr", "okrs", "kpi", "ambition", "we want to reach", "want to hit", "hope to reach",
      "plan to reach", "plan to hit", "on track to", "strive", "mission is", "north star", "aiming for",
      "want to be live", "want to be at", "want to get to", "want to reach", "hoping to", "we'd want to",
      "ambitious", "push for", "the plan is to", "by year end", "by end of year",
      "want to double", "wants to double", "want to triple", "want to grow", "wants to grow", "want to cut", "wants to cut", "want to reduce", "wants to reduce", "want to increase", "wants to increase", "wants to hit", "hope to sign", "hope to close", "want to ship", "wants to ship", "want to launch", "wants to launch", "wants to consolidate", "want to consolidate", "wants nps", "want nps", "hit $", "get to $", "reach $"};
// Relations between people and organisations: roles, reporting lines, customers, ownership.
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
      "new owner", "took over from", "handed over", "moved to the", "introduced", "is the main", "their new",
      "resell", "resells", "supplies", "supplies all", "chairs", "reports into", "our auditors", "are our", "is our auditor", "is our lawyer", "our account manager", "our main contact"};
// Events: what happened, or is scheduled to happen, at some time.
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
      "was locked", "were locked", "come thursday", "come monday", "come friday",
      "we had our", "took effect", "goes live", "go live", "signed up", "ended on", "demoed", "handed in", "onboarded", "was held", "wrapped up", "went ahead", "closed out", "kicked off", "had a call", "had a meeting", "met yesterday", "met today"};
// Hedges ("maybe", "I think"): they lower the confidence of any reading.
const phrase_set hedge_phrases{"maybe", "might", "perhaps", "possibly", "probably", "i think", "not sure", "i guess",
                             "tentatively", "if possible", "could be", "i believe", "likely"};
// clang-format on
// Attachment notices ("please find attached"): not a request in themselves.
const phrase_set attachment_notice_phrases{"please find attached", "please find enclosed", "attached is",
                                           "attached are", "attached you'll find"};
// The writer's own commitments: a sentence with one is not a preference.
const phrase_set first_person_commitment_phrases{"i'll", "i will", "we'll send", "i'm drafting", "i am drafting"};
// Stative verbs of a plain statement ("is", "costs", "renews"): a fact, given a number, entity or length.
const phrase_set stative_phrases{
    "is",       "are",      "was",       "were",    "has",     "have",     "costs",     "cost",     "renews",
    "expires",  "we're",    "they're",   "it's",    "there's", "that's",   "stays",     "stay",     "charge",
    "charges",  "quoted",   "currently", "gets",    "get",     "helps",    "handle",    "handles",  "now",
    "'s",       "means",    "sits",      "lives",   "works",   "work",     "runs at",   "averages", "grew",
    "grows",    "includes", "include",   "runs",    "covers",  "remains",  "stands at", "totals",   "comes to",
    "will be",  "starts",   "ends",      "is due",  "are due", "contains", "holds",     "uses",     "use",
    "requires", "take",     "takes",     "charges", "pay",     "pays",     "offers",    "supports", "allows",
    "ships",    "closes",   "opens",     "needs",   "need",    "operates", "employs",   "serves"};
// First and second person: a plain statement with one is about the writer, not a fact.
const phrase_set personal_phrases{"i", "you", "me"};
// Negations: a sentence with one is a negative statement (entry::positive false).
const phrase_set negation_phrases{"not",   "no longer", "never",  "don't",  "doesn't", "didn't", "won't",
                                  "isn't", "aren't",    "wasn't", "cannot", "can't",   "no"};

namespace {

bool is_junk(const token_view& tv, std::size_t nwords) {
  const std::string& l = tv.lower;
  auto starts = [&](std::string_view p) { return l.rfind(p, 0) == 0; };
  if (nwords <= 6 && (starts("hi") || starts("hello") || starts("hey") || starts("dear") || starts("good morning") ||
                      starts("good afternoon") || starts("good evening") || starts("morning")))
    return true;
  if (nwords <= 3)
    return true;
  if ((starts("thanks") || starts("thank you") || starts("thx") || starts("many thanks") ||
       starts("much appreciated") || starts("appreciate")) &&
      !thanks_exceptions_phrases.any(tv))
    return true;
  // Small talk, unless the sentence also decides, prefers or aims ("Claire prefers a quick
  // call over a long email thread").
  if (small_talk_phrases.any(tv) && !decision_phrases.any(tv) && !preference_phrases.any(tv) && !goal_phrases.any(tv))
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
    "send",     "share",      "review",      "submit",   "sign",         "prepare",  "draft",   "update",  "confirm",
    "finalize", "finalise",   "check",       "book",     "call",         "email",    "forward", "provide", "complete",
    "fix",      "upload",     "approve",     "file",     "pay",          "order",    "ship",    "deliver", "schedule",
    "arrange",  "set",        "follow",      "get",      "loop",         "reach",    "ping",    "chase",   "add",
    "remove",   "create",     "write",       "compile",  "put",          "make",     "ask",     "collect", "circulate",
    "invoice",  "renew",      "cancel",      "look",     "double-check", "validate", "test",    "run",     "organize",
    "organise", "coordinate", "return",      "escalate", "contact",      "notify",   "publish", "post",    "reply",
    "respond",  "clarify",    "investigate", "confirm",  "tell",         "settle",   "go",      "bring",   "let",
    "kindly",   "pack",       "move",        "talk",     "sort",         "keep",     "hold",    "draft"};

/// "Approve ..." or "Cancel ..." at the start reads as a decision when it is past tense.
bool decision_word_first(const std::string& l) {
  return l.rfind("approved", 0) == 0 || l.rfind("decided", 0) == 0 || l.rfind("agreed", 0) == 0;
}

/// "<someone> will|'ll <task verb>": she'll countersign, Ines will brief.
bool will_do_task(const token_view& tv) {
  const auto& ws = tv.tokens;
  for (std::size_t k = 0; k + 1 < ws.size(); ++k) {
    auto w0 = ws[k];
    bool will = w0 == "will" || (w0.size() > 3 && w0.substr(w0.size() - 3) == "'ll");
    if (will && (task_verbs.count(ws[k + 1]) ||
                 has_any(ws[k + 1], {"countersign", "brief", "handle", "draft", "present", "demo", "book", "host",
                                     "bring", "train", "migrate", "install", "configure", "deploy", "send"})))
      return true;
  }
  return false;
}

/// A sentence that starts with a name: "to", "will", "needs" or "should" then a task verb
/// among its next words ("Dana to send the deck").
bool name_then_task(const token_view& tv) {
  const auto& ws = tv.tokens;
  for (std::size_t k = 1; k + 1 < ws.size() && k <= 3; ++k)
    if ((ws[k] == "to" || ws[k] == "will" || ws[k] == "needs" || ws[k] == "should") && task_verbs.count(ws[k + 1]))
      return true;
  return false;
}

}  // namespace

std::optional<verdict> classify(const std::string& s, const token_view& tv, bool has_date, bool has_amount,
                                bool has_number, bool has_entity, bool starts_with_name, bool* uncued) {
  const std::string& l = tv.lower;
  if (uncued)
    *uncued = false;
  const auto nwords = tv.tokens.size();
  if (is_injected_instruction(s))
    return std::nullopt;  // an instruction aimed at a model is not knowledge
  bool question = !s.empty() && s.back() == '?';
  if (is_junk(tv, nwords) && !(has_amount && !question))
    return std::nullopt;
  if (nwords <= 14 && !has_date && !has_amount && !has_number && pleasantry_phrases.any(tv) &&
      !decision_phrases.any(tv) && !preference_phrases.any(tv) && !goal_phrases.any(tv))
    return std::nullopt;

  // Requests and commitments.
  bool request_cue = request_cue_phrases.any(tv);
  bool request = first_word_is(l, {"please", "pls", "kindly"}) || request_cue;
  bool commitment = commitment_phrases.any(tv);
  // "<someone> will|'ll <task verb>": she'll countersign, Ines will brief.
  if (!commitment)
    commitment = will_do_task(tv);
  bool name_to_verb = false;
  if (starts_with_name)
    name_to_verb = name_then_task(tv);
  bool imperative = task_verbs.count(text::strip_punct(l.substr(0, l.find(' ')))) && !question;

  // Decisions first: "we'll go with the annual plan" is a decision, not a task.
  bool decision = decision_phrases.any(tv);
  bool preference = preference_phrases.any(tv);
  bool goal = goal_phrases.any(tv);
  bool relationship = relationship_phrases.any(tv);
  bool event = event_phrases.any(tv);

  double hedge = hedge_phrases.any(tv) ? 0.12 : 0.0;
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
  if (uncued)
    *uncued = true;
  return std::nullopt;
}

}  // namespace engram::reading::detail
