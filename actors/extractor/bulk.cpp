#include "actors/extractor/bulk.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace engram::extractor {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool contains(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

/// Phrases of list and bulk footers.
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
    "email addresses", "free trial",      "save up to",      "best price",       "unsolicited",    "next of kin"};

constexpr std::array automated_senders = {"noreply",   "no-reply", "donotreply", "do-not-reply", "mailer-daemon",
                                          "postmaster", "newsletter", "notifications", "notification", "bounce",
                                          "news@",      "alerts@",  "alert@",     "updates@",     "marketing@"};

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
  int bulk = 0, spam = 0;
  auto header = [&](const char* name) -> const std::string* {
    auto it = m.headers.find(name);
    return it == m.headers.end() ? nullptr : &it->second;
  };
  for (const char* h : {"list-id", "list-post", "list-help", "mailing-list", "x-mailing-list", "list-unsubscribe",
                        "feedback-id", "x-campaign"})
    if (header(h)) {
      bulk += 3;
      v.signals.push_back(std::string("header ") + h);
    }
  if (const auto* p = header("precedence")) {
    const auto x = lower(*p);
    if (contains(x, "bulk") || contains(x, "list") || contains(x, "junk")) {
      bulk += 3;
      v.signals.push_back("precedence " + x);
    }
  }
  if (const auto* a = header("auto-submitted"); a && lower(*a) != "no") {
    bulk += 3;
    v.signals.push_back("auto-submitted");
  }
  if (const auto* f = header("x-spam-flag"); f && lower(*f).starts_with("yes")) {
    spam += 5;
    v.signals.push_back("x-spam-flag");
  }
  const auto sender = lower(m.from.address);
  for (const char* s : automated_senders)
    if (contains(sender, s)) {
      bulk += 2;
      v.signals.push_back(std::string("sender ") + s);
      break;
    }
  const auto body = lower(m.body);
  for (const char* p : bulk_phrases)
    if (contains(body, p)) {
      bulk += 2;
      v.signals.push_back(std::string("footer '") + p + "'");
      break;
    }
  const auto text = lower(m.subject) + "\n" + body;
  int phrases = 0;
  for (const char* p : spam_phrases)
    if (contains(text, p)) {
      ++phrases;
      if (phrases <= 3)
        v.signals.push_back(std::string("phrase '") + p + "'");
    }
  spam += 2 * std::min(phrases, 3);
  // An advertisement's two marks together: a sales phrase and an unsubscribe footer; or the
  // link text of HTML mail turned into words.
  if (phrases > 0 && bulk > 0 && std::any_of(v.signals.begin(), v.signals.end(),
                                             [](const std::string& x) { return x.starts_with("footer"); }))
    spam += 2;
  if (contains(text, "click here"))
    spam += 2;
  // A subject in capitals ("HELP WANTED. WORK FROM HOME REPS.").
  std::size_t subject_letters = 0, subject_upper = 0;
  for (char c : m.subject)
    if (std::isalpha(static_cast<unsigned char>(c))) {
      ++subject_letters;
      subject_upper += std::isupper(static_cast<unsigned char>(c)) != 0;
    }
  if (subject_letters >= 8 && subject_upper * 10 >= subject_letters * 8) {
    spam += 2;
    v.signals.push_back("subject in capitals");
  }
  // Links and capitals per word.
  std::size_t words = 0, links = 0, caps = 0;
  for (std::size_t i = 0; i < m.body.size();) {
    while (i < m.body.size() && std::isspace(static_cast<unsigned char>(m.body[i])))
      ++i;
    const auto start = i;
    while (i < m.body.size() && !std::isspace(static_cast<unsigned char>(m.body[i])))
      ++i;
    if (i == start)
      break;
    const std::string_view w(m.body.data() + start, i - start);
    ++words;
    const auto lw = lower(w);
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
    spam += 2;
    bulk += 1;
    v.signals.push_back("links " + std::to_string(links * 100 / words) + " per 100 words");
  }
  if (words >= 20 && caps * 100 >= words * 12) {
    spam += 2;
    v.signals.push_back("capitals " + std::to_string(caps * 100 / words) + " per 100 words");
  }
  if (contains(text, "!!")) {
    spam += 1;
    v.signals.push_back("'!!'");
  }
  if (spam >= 4)
    v.cls = message_class::spam;
  else if (bulk >= 3)
    v.cls = message_class::bulk;
  return v;
}

}  // namespace engram::extractor
