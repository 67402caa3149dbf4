#include "reading/bulk.hpp"

#include "reading/lexicon.hpp"
#include "base/text.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace engram::reading {

namespace {

bool contains(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

/// Phrases of list and bulk footers.
// clang-format off
constexpr std::array bulk_phrases = {
    "unsubscribe",          "to stop receiving",       "you are receiving this", "you received this email",
    "you are subscribed",   "manage your subscription", "email preferences",      "update your preferences",
    "view this email in",   "view it in your browser",  "opt out",                "opt-out",
    "mailing list",         "this newsletter",          "was sent to",            "privacy policy"};

/// Phrases of unsolicited sales mail.
constexpr std::array spam_phrases = {
    "click here",      "100% free",       "act now",         "limited time",     "risk free",      "risk-free",
    "no obligation",   "order now",       "buy now",         "money back",       "100% guarantee", "winner",
    "congratulations", "make money",      "earn money",      "extra income",     "work from home", "viagra",
    "casino",          "mortgage",        "credit card",     "dear friend",      "lowest price",   "special offer",
    "offer expires",   "this is not spam", "to be removed",  "remove yourself",  "bulk email",     "free gift",
    "$$$",             "double your",     "cash bonus",      "no cost",          "act immediately", "call now",
    "once in a lifetime", "not spam",     "increase your",   "amazing",          "weight loss",    "pre-approved",
    "million dollars", "business proposal", "strictly confidential", "opted in", "this advertisement", "as seen on",
    "lose weight",     "adult site",      "porn",            "xxx",              "erotic",         "nude",
    "fortune 500",     "excellent income", "financial freedom", "be removed",    "free membership", "guaranteed",
    "wire transfer",   "bank account",    "investment opportunity", "home based business", "marketing dollars",
    "email addresses", "free trial",      "save up to",      "best price",       "unsolicited",    "next of kin",
    // Advance-fee letters and sales copy.
    "urgent assistance", "extremely confidential", "private & confidential", "your partnership",
    "seeking your", "the sum of", "refinance", "loan is approved", "you're approved", "grow rich", "income stream",
    "tremendous savings", "email marketing", "interested in our", "one time only", "forgive the intrusion", "hottest",
    "webcam", "play poker", "online poker", "cartridges", "smokes", "cigarettes", "network marketing", "work at home",
    "no experience", "credit repair", "insurance quote", "low rates", "lowest rates", "satisfaction guaranteed",
    "order today", "limited offer", "special promotion", "click below", "visit our website", "reply with remove",
    "remove in the subject"};

/// Salutations of mail to no one in particular ("Dear Sir / Madam", "Dear Friend", "Hi Job
/// Seeker"): a person writing to a person names them.
constexpr std::array generic_salutations = {"dear sir", "dear madam", "sir or madam", "sir/madam", "sir / madam",
                                            "dear partner", "dear customer", "dear friend", "dear valued",
                                            "dear member", "dear user", "dear homeowner", "job seeker", "attn:",
                                            "attention:", "dear beneficiary", "dear colleague"};
// clang-format on

/// A token of random letters and digits ("4139YAEk3--9", "7099ocYT9-261UccU3485"), as spam
/// puts in subjects to defeat filters: letters and at least three digits mixed, both cases.
bool random_token(std::string_view subject) {
  std::size_t i = 0;
  while (i < subject.size()) {
    while (i < subject.size() && subject[i] == ' ')
      ++i;
    auto end = subject.find(' ', i);
    if (end == std::string_view::npos)
      end = subject.size();
    const auto w = subject.substr(i, end - i);
    std::size_t digits = 0, upper = 0, lower_letters = 0, switches = 0;
    int last = -1;
    for (char c : w) {
      const int kind = std::isdigit(static_cast<unsigned char>(c))   ? 0
                       : std::isalpha(static_cast<unsigned char>(c)) ? 1
                                                                     : 2;
      digits += kind == 0;
      upper += std::isupper(static_cast<unsigned char>(c)) != 0;
      lower_letters += std::islower(static_cast<unsigned char>(c)) != 0;
      switches += last >= 0 && kind != 2 && last != 2 && kind != last;
      last = kind;
    }
    if (w.size() >= 8 && digits >= 3 && upper >= 1 && lower_letters >= 1 && switches >= 3)
      return true;
    i = end;
  }
  return false;
}

// clang-format off
constexpr std::array automated_senders = {"noreply",   "no-reply", "donotreply", "do-not-reply", "mailer-daemon",
                                          "postmaster", "newsletter", "notifications", "notification", "bounce",
                                          "news@",      "alerts@",  "alert@",     "updates@",     "marketing@"};

/// Senders and subjects of lists' automated mail: trackers, digests, newsletters, daily
/// headlines, list administration, auto-replies.
constexpr std::array automated_list_senders = {"daemon", "-admin", "admin@", "owner", "listmanager", "listmaster",
                                               "subscriptions@", "update@", "updates@", "info@", "journal@",
                                               "ecartis", "mailman", "lyris", "majordomo", "enews", "refertofriend",
                                               "promo", "offers@", "deals@", "digest"};
constexpr std::array automated_subjects = {"[bug ", "headlines", "digest", "newsletter", "vol.", "vol ", "issue ",
                                           "stories for", "out of the office", "out of office", "auto-reply",
                                           "autoreply", "admin request", "mailing list memberships", "cvs commit",
                                           "cvs:", "commit:", "build failed", "cron ", "weekly", "daily ", "moviemail",
                                           "poem-a-day", "tips", "freebies", "sweepstakes"};
// clang-format on

/// How much a list message looks written by a person to people: a reply, quoted text, a
/// question, the writer speaking for themselves, a personal From.
int person_evidence(const schemas::inbound_message& m, std::string_view subject_lower, std::string_view body_lower,
                    std::vector<std::string>& signals) {
  int score = 0;
  if (subject_lower.starts_with("re:") || subject_lower.starts_with("re ") || subject_lower.starts_with("aw:") ||
      (!m.thread_id.empty() && m.thread_id != m.event_id)) {
    score += 2;
    signals.push_back("a reply");
  }
  bool quoted = contains(body_lower, " wrote:") || contains(body_lower, " writes:") || body_lower.starts_with(">");
  for (std::size_t at = body_lower.find("\n>"); !quoted && at != std::string_view::npos; at = std::string_view::npos)
    quoted = true;
  if (quoted) {
    score += 2;
    signals.push_back("quotes");
  }
  // The writer's own lines (not quoted ones) ask or speak for themselves.
  bool question = false, first_person = false;
  std::size_t start = 0;
  while (start < body_lower.size()) {
    auto end = body_lower.find('\n', start);
    if (end == std::string_view::npos)
      end = body_lower.size();
    const auto line = body_lower.substr(start, end - start);
    if (!line.starts_with(">")) {
      question |= contains(line, "?") && !contains(line, "http");
      first_person |= line.starts_with("i ") || contains(line, " i ") || contains(line, " i'") ||
                      contains(line, " my ") || line.starts_with("my ");
    }
    start = end + 1;
  }
  if (question) {
    ++score;
    signals.push_back("a question");
  }
  if (first_person) {
    ++score;
    signals.push_back("first person");
  }
  const auto& name = m.from.name;
  if (std::count(name.begin(), name.end(), ' ') >= 1 && name.find('@') == std::string::npos) {
    ++score;
    signals.push_back("personal sender");
  }
  return score;
}

/// The scores classify_message adds up as it reads a message.
struct message_scores {
  int bulk = 0, spam = 0;
  /// Spam phrases found.
  int phrases = 0;
  /// Marks of sales copy (score_sales_copy and on).
  int sales = 0;
  bool list = false, automated = false;
};

/// The value of header `name`, or null when the message has none.
const std::string* header_of(const schemas::inbound_message& m, const char* name) {
  auto it = m.headers.find(name);
  return it == m.headers.end() ? nullptr : &it->second;
}

/// List, precedence, auto-submitted and spam-flag headers.
void score_headers(const schemas::inbound_message& m, message_scores& sc, std::vector<std::string>& signals) {
  for (const char* h : {"list-id", "list-post", "list-help", "mailing-list", "x-mailing-list", "list-unsubscribe",
                        "feedback-id", "x-campaign"})
    if (header_of(m, h)) {
      sc.bulk += 3;
      signals.push_back(std::string("header ") + h);
      const std::string_view name(h);
      sc.list |= name != "feedback-id" && name != "x-campaign";
      sc.automated |= name == "feedback-id" || name == "x-campaign";
    }
  if (const auto* p = header_of(m, "precedence")) {
    const auto x = lower_ascii(*p);
    if (contains(x, "bulk") || contains(x, "list") || contains(x, "junk")) {
      sc.bulk += 3;
      signals.push_back("precedence " + x);
      sc.list |= contains(x, "list") || contains(x, "bulk");
    }
  }
  if (const auto* a = header_of(m, "auto-submitted"); a && lower_ascii(*a) != "no") {
    sc.bulk += 3;
    sc.automated = true;
    signals.push_back("auto-submitted");
  }
  if (const auto* f = header_of(m, "x-spam-flag"); f && lower_ascii(*f).starts_with("yes")) {
    sc.spam += 5;
    signals.push_back("x-spam-flag");
  }
}

/// An automated sender, and for a list message its automated senders and subjects
/// (`sender` and `subject` in lower case).
void score_sender(std::string_view sender, std::string_view subject, message_scores& sc,
                  std::vector<std::string>& signals) {
  for (const char* s : automated_senders)
    if (contains(sender, s)) {
      sc.bulk += 2;
      sc.automated = true;
      signals.push_back(std::string("sender ") + s);
      break;
    }
  if (sc.list) {
    for (const char* s : automated_list_senders)
      if (contains(sender, s)) {
        sc.automated = true;
        signals.push_back(std::string("list sender ") + s);
        break;
      }
    for (const char* s : automated_subjects)
      if (contains(subject, s)) {
        sc.automated = true;
        signals.push_back(std::string("list subject '") + s + "'");
        break;
      }
  }
}

/// Footers, sales phrases, a salutation to no one and tokens in the subject (`body` in lower
/// case; `text` the subject and body in lower case).
void score_sales_copy(const schemas::inbound_message& m, std::string_view body, std::string_view text,
                      message_scores& sc, std::vector<std::string>& signals) {
  for (const char* p : bulk_phrases)
    if (contains(body, p)) {
      sc.bulk += 2;
      signals.push_back(std::string("footer '") + p + "'");
      break;
    }
  for (const char* p : spam_phrases)
    if (contains(text, p)) {
      ++sc.phrases;
      if (sc.phrases <= 3)
        signals.push_back(std::string("phrase '") + p + "'");
    }
  sc.spam += 2 * std::min(sc.phrases, 3);
  // Marks of sales copy that make cold mail spam: two phrases (one is not: "amazing work on
  // the demo"), a salutation to no one, tokens in the subject, HTML alone, footers, shouting.
  sc.sales = sc.phrases >= 2 ? 1 : 0;
  // The first lines: a salutation to no one in particular.
  {
    // "Dear colleagues" to someone of the writer's own domain is a unit's head writing to its
    // staff, not a stranger.
    const auto domain = [](std::string_view address) {
      const auto at = address.rfind('@');
      return at == std::string_view::npos ? std::string() : lower_ascii(address.substr(at + 1));
    };
    // A free-mail domain (gmail.com) is no organisation's.
    const auto own = domain(m.from.address);
    const bool colleagues =
        !own.empty() && !lexicon::is_generic_domain(own.substr(0, own.find('.'))) &&
        std::any_of(m.to.begin(), m.to.end(), [&](const schemas::participant& p) { return domain(p.address) == own; });
    const auto head = body.substr(0, 300);
    for (std::string_view g : generic_salutations)
      if (contains(head, g) && !(colleagues && g == "dear colleague")) {
        sc.spam += 3;
        ++sc.sales;
        signals.push_back("salutation '" + std::string(g) + "'");
        break;
      }
  }
  if (random_token(m.subject)) {
    sc.spam += 3;
    ++sc.sales;
    signals.push_back("random token in the subject");
  }
  // An advertisement's two marks together: a sales phrase and an unsubscribe footer; or the
  // link text of HTML mail turned into words.
  if (sc.phrases > 0 && sc.bulk > 0 &&
      std::any_of(signals.begin(), signals.end(), [](const std::string& x) { return x.starts_with("footer"); }))
    sc.spam += 2;
  if (contains(text, "click here"))
    sc.spam += 2;
}

/// Links and capitals per word of the body.
void score_links_and_capitals(std::string_view body, message_scores& sc, std::vector<std::string>& signals) {
  std::size_t words = 0, links = 0, caps = 0;
  for (std::size_t i = 0; i < body.size();) {
    while (i < body.size() && std::isspace(static_cast<unsigned char>(body[i])))
      ++i;
    const auto start = i;
    while (i < body.size() && !std::isspace(static_cast<unsigned char>(body[i])))
      ++i;
    if (i == start)
      break;
    const std::string_view w(body.data() + start, i - start);
    ++words;
    const auto lw = lower_ascii(w);
    if (contains(lw, "http://") || contains(lw, "https://") || lw.starts_with("www."))
      ++links;
    std::size_t letters = 0, upper = 0;
    for (char c : w)
      if (std::isalpha(static_cast<unsigned char>(c))) {
        ++letters;
        upper += std::isupper(static_cast<unsigned char>(c)) != 0;
      }
    caps += letters >= 3 && upper == letters;
  }
  if (words >= 20 && links * 100 >= words * 3) {
    sc.spam += 2;
    sc.bulk += 1;
    signals.push_back("links " + std::to_string(links * 100 / words) + " per 100 words");
  }
  if (words >= 20 && caps * 100 >= words * 12) {
    sc.spam += 2;
    signals.push_back("capitals " + std::to_string(caps * 100 / words) + " per 100 words");
  }
}

/// Shouting and tracking: a subject in capitals, links and capitals in the body, "!!", a
/// tracking number at the end of the subject (`text` the subject and body in lower case).
void score_shouting(const schemas::inbound_message& m, std::string_view text, message_scores& sc,
                    std::vector<std::string>& signals) {
  // A subject in capitals ("HELP WANTED. WORK FROM HOME REPS.").
  std::size_t subject_letters = 0, subject_upper = 0;
  for (char c : m.subject)
    if (std::isalpha(static_cast<unsigned char>(c))) {
      ++subject_letters;
      subject_upper += std::isupper(static_cast<unsigned char>(c)) != 0;
    }
  if (subject_letters >= 8 && subject_upper * 10 >= subject_letters * 8) {
    sc.spam += 2;
    signals.push_back("subject in capitals");
  }
  // Links and capitals per word.
  score_links_and_capitals(m.body, sc, signals);
  if (contains(text, "!!")) {
    sc.spam += 1;
    signals.push_back("'!!'");
  }
  // A subject that ends in a tracking number after a run of spaces ("Make Huge Profits     951").
  if (const auto gap = m.subject.find("     "); gap != std::string::npos) {
    const auto tail = std::string_view(m.subject).substr(m.subject.find_first_not_of(' ', gap) == std::string::npos
                                                             ? m.subject.size()
                                                             : m.subject.find_first_not_of(' ', gap));
    if (!tail.empty() && tail.size() <= 24 &&
        std::any_of(tail.begin(), tail.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      sc.spam += 3;
      ++sc.sales;
      signals.push_back("tracking number in the subject");
    }
  }
}

/// Whether the message is cold mail (no list, neither a reply nor quoting anyone), and the
/// marks of sales copy that count for cold mail: HTML alone, a footer or shouting
/// (`subject` and `body` in lower case).
bool score_cold_mail(const schemas::inbound_message& m, std::string_view subject, std::string_view body,
                     message_scores& sc, std::vector<std::string>& signals) {
  // Cold mail (no list, neither a reply nor quoting anyone) needs one mark of sales copy,
  // not two.
  const bool reply = subject.starts_with("re:") || (!m.thread_id.empty() && m.thread_id != m.event_id);
  const bool quotes = contains(body, " wrote:") || contains(body, "\n>") || body.starts_with(">");
  // A chat message is a workspace member's: never cold.
  const bool cold = !sc.list && !reply && !quotes && !sc.automated && m.source != schemas::source_type::chat;
  // HTML alone, no text part: how mass mailers send (people's mail clients add a text part).
  if (const auto* ct = header_of(m, "content-type"); ct && lower_ascii(*ct).starts_with("text/html")) {
    ++sc.sales;
    signals.push_back("html only");
  }
  // Cold mail with a list's footer or shouting is selling too (a system's sender, noreply@,
  // is automated mail: bulk, below).
  if (cold)
    for (const auto& sg : signals)
      if (sg.starts_with("footer") || sg.starts_with("capitals") || sg == "'!!'" ||
          sg.starts_with("subject in capitals")) {
        ++sc.sales;
        break;
      }
  return cold;
}

}  // namespace

std::string_view to_string(message_class c) {
  switch (c) {
    case message_class::person: return "person";
    case message_class::bulk: return "bulk";
    case message_class::spam: return "spam";
  }
  return "person";
}

message_verdict classify_message(const schemas::inbound_message& m) {
  message_verdict v;
  // A document an operator ingested is read whatever its links or capitals look like.
  if (m.source == schemas::source_type::file) {
    v.signals.push_back("document");
    return v;
  }
  message_scores sc;
  score_headers(m, sc, v.signals);
  const auto sender = lower_ascii(m.from.address);
  const auto subject = lower_ascii(m.subject);
  score_sender(sender, subject, sc, v.signals);
  const auto body = lower_ascii(m.body);
  const auto text = lower_ascii(m.subject) + "\n" + body;
  score_sales_copy(m, body, text, sc, v.signals);
  score_shouting(m, text, sc, v.signals);
  const bool cold = score_cold_mail(m, subject, body, sc, v.signals);
  if (sc.spam >= 4 || (cold && sc.sales >= 1)) {
    v.cls = message_class::spam;
  } else if (sc.bulk >= 3) {
    // A discussion list is people: a list message a person wrote to people (a reply, quotes,
    // a question, the writer speaking for themselves) is read like person mail; the list's
    // automated mail, newsletters and marketing stay bulk.
    if (sc.list && !sc.automated && sc.phrases < 2 && person_evidence(m, subject, body, v.signals) >= 1)
      v.signals.push_back("list message written by a person");
    else
      v.cls = message_class::bulk;
  }
  return v;
}

}  // namespace engram::reading
