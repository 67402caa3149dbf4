#include "reading/cleaner.hpp"

#include "reading/text.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace engram::reading {
namespace {

using text::starts_with_ci;
using text::trim;

bool is_quote_header(const std::vector<std::string_view>& ls, std::size_t i) {
  auto t = trim(ls[i]);
  if (t.empty())
    return false;
  if (starts_with_ci(t, "On ") &&
      (text::contains_ci(t, "wrote:") || (i + 1 < ls.size() && text::contains_ci(ls[i + 1], "wrote:"))))
    return true;
  if (t.find("--") != std::string_view::npos &&
      (text::contains_ci(t, "original message") || text::contains_ci(t, "forwarded message")))
    return true;
  if (starts_with_ci(t, "Begin forwarded message"))
    return true;
  if (starts_with_ci(t, "From:")) {
    for (std::size_t k = i + 1; k < ls.size() && k <= i + 3; ++k) {
      auto n = trim(ls[k]);
      if (starts_with_ci(n, "Sent:") || starts_with_ci(n, "Date:") || starts_with_ci(n, "To:"))
        return true;
    }
  }
  if (t.size() >= 10 && std::all_of(t.begin(), t.end(), [](char c) { return c == '_'; }) && i + 1 < ls.size() &&
      starts_with_ci(trim(ls[i + 1]), "From:"))
    return true;
  return false;
}

bool is_footer_start(std::string_view line) {
  auto t = trim(line);
  if (t.size() < 8)
    return false;
  // Every pattern starts with one of these letters or holds "list"/"yahoo": skip the rest.
  char c0 = static_cast<char>(std::tolower(static_cast<unsigned char>(t[0])));
  if (std::string_view("cdtpynusg").find(c0) == std::string_view::npos && !text::contains_ci(t, "list") &&
      !text::contains_ci(t, "yahoo"))
    return false;
  auto l = lower_ascii(t);
  // clang-format off
  static constexpr std::string_view starts[] = {
      "confidentiality notice", "confidential:", "disclaimer:", "disclaimer -", "this email and any",
      "this e-mail and any", "this message and any", "this email is confidential", "this e-mail is confidential",
      "the information contained in this", "this message contains confidential", "privileged and confidential",
      "you received this message because", "you are receiving this", "to unsubscribe", "unsubscribe:",
      "this email was sent to", "sent from my iphone", "sent from my android", "sent from my mobile",
      "get outlook for", "notice: this", "you have received this message because", "this sf.net email is sponsored",
      "your use of yahoo! groups", "to post a message", "to unsubscribe from this group"};
  // clang-format on
  for (auto s : starts)
    if (l.rfind(s, 0) == 0)
      return true;
  return l.find("yahoo! groups sponsor") != std::string::npos || l.find("mailing list") != std::string::npos ||
         l.find("listinfo/") != std::string::npos;
}

/// "_____", "-----", "=====" or "*****" on a line of its own.
bool is_separator(std::string_view line) {
  auto t = trim(line);
  return t.size() >= 10 && t.find_first_not_of(t[0]) == std::string_view::npos &&
         (t[0] == '_' || t[0] == '-' || t[0] == '=' || t[0] == '*');
}

bool is_sign_off(std::string_view line) {
  auto l = lower_ascii(trim(line));
  while (!l.empty() && (l.back() == ',' || l.back() == '.' || l.back() == '!'))
    l.pop_back();
  // English, and the sign-offs of the languages business mail in English still ends with.
  static constexpr std::string_view offs[] = {"best",
                                              "regards",
                                              "best regards",
                                              "kind regards",
                                              "warm regards",
                                              "thanks",
                                              "thank you",
                                              "cheers",
                                              "sincerely",
                                              "many thanks",
                                              "all the best",
                                              "thx",
                                              "br",
                                              "best wishes",
                                              "yours",
                                              "talk soon",
                                              "with thanks",
                                              "rgds",
                                              "ta",
                                              "respectfully",
                                              "warmly",
                                              "yours sincerely",
                                              "yours faithfully",
                                              "yours truly",
                                              "with best regards",
                                              "with kind regards",
                                              "warm wishes",
                                              "speak soon",
                                              "thanks again",
                                              "saludos",
                                              "un saludo",
                                              "atentamente",
                                              "obrigado",
                                              "obrigada",
                                              "abraços",
                                              "atenciosamente",
                                              "cordialement",
                                              "bien à vous",
                                              "merci",
                                              "grazie",
                                              "cordiali saluti",
                                              "saluti",
                                              "mit freundlichen grüßen",
                                              "viele grüße",
                                              "beste grüße",
                                              "grüße",
                                              "met vriendelijke groet",
                                              "groeten",
                                              "med vänlig hälsning",
                                              "hälsningar",
                                              "pozdrawiam",
                                              "asante",
                                              "shukran"};
  return std::find(std::begin(offs), std::end(offs), l) != std::end(offs);
}

bool is_phone(std::string_view line) {
  std::size_t digits = 0;
  for (char c : line)
    digits += text::is_digit(c);
  if (digits < 7)
    return false;
  auto l = lower_ascii(line);
  for (auto p : {"tel", "phone", "mobile", "cell", "m:", "t:", "direct", "office", "fax"})
    if (l.find(p) != std::string::npos)
      return true;
  for (char c : trim(line))
    if (!(text::is_digit(c) || c == '+' || c == ' ' || c == '-' || c == '(' || c == ')' || c == '.'))
      return false;
  return true;
}

std::string phone_number(std::string_view line) {
  auto t = trim(line);
  auto colon = t.find(':');
  if (colon != std::string_view::npos && colon < 12)
    t = trim(t.substr(colon + 1));
  return std::string(t);
}

bool has_role_word(std::string_view s) {
  auto l = lower_ascii(s);
  return text::has_any(l, {"manager",       "director",   "vp",         "vice president",
                           "head",          "chief",      "ceo",        "cto",
                           "cfo",           "coo",        "cio",        "engineer",
                           "lead",          "officer",    "specialist", "coordinator",
                           "analyst",       "founder",    "co-founder", "president",
                           "partner",       "consultant", "associate",  "executive",
                           "administrator", "architect",  "designer",   "developer",
                           "controller",    "accountant", "counsel",    "supervisor",
                           "dispatcher",    "planner",    "buyer",      "representative",
                           "assistant",     "intern",     "owner",      "advisor",
                           "agent",         "sales",      "marketing",  "operations",
                           "procurement",   "finance",    "support",    "success",
                           "legal",         "account"});
}

bool looks_like_name(std::string_view s) {
  auto ws = text::words(s);
  if (ws.empty() || ws.size() > 4)
    return false;
  for (auto w : ws) {
    w = text::strip_punct(w);
    if (w.empty() || !text::is_upper(w[0]))
      return false;
  }
  return !has_role_word(s);
}

bool is_contact_noise(std::string_view line) {
  auto l = lower_ascii(line);
  return l.find("http") != std::string::npos || l.find("www.") != std::string::npos || l.find('@') != std::string::npos;
}

/// "VP Sales, Acme" or "VP Sales at Acme" -> role and company.
void split_role_company(std::string_view s, signature& sig) {
  s = trim(s);
  auto comma = s.rfind(',');
  auto at = lower_ascii(s).rfind(" at ");
  if (comma != std::string_view::npos) {
    sig.role = std::string(trim(s.substr(0, comma)));
    sig.company = std::string(trim(s.substr(comma + 1)));
  } else if (at != std::string::npos) {
    sig.role = std::string(trim(s.substr(0, at)));
    sig.company = std::string(trim(s.substr(at + 4)));
  } else if (has_role_word(s)) {
    sig.role = std::string(s);
  } else {
    sig.company = std::string(s);
  }
}

/// The lines before the first quote header, without "> " lines; `quoted` set when either is found.
std::vector<std::string_view> drop_quotes(const std::vector<std::string_view>& ls, bool& quoted) {
  std::size_t end = ls.size();
  for (std::size_t i = 0; i < ls.size(); ++i) {
    if (is_quote_header(ls, i)) {
      end = i;
      quoted = true;
      break;
    }
  }
  std::vector<std::string_view> kept;
  for (std::size_t i = 0; i < end; ++i) {
    if (!trim(ls[i]).empty() && trim(ls[i]).front() == '>') {
      quoted = true;
      continue;
    }
    kept.push_back(ls[i]);
  }
  return kept;
}

/// Cuts `kept` at a disclaimer or list footer (with the "--" or "__" line before it);
/// `disclaimer` set when one is found.
void drop_footer(std::vector<std::string_view>& kept, bool& disclaimer) {
  for (std::size_t i = 0; i < kept.size(); ++i) {
    bool separated_footer = is_separator(kept[i]) && i + 1 < kept.size() &&
                            (is_footer_start(kept[i + 1]) || (i + 2 < kept.size() && is_footer_start(kept[i + 2])));
    if (separated_footer) {
      disclaimer = true;
      kept.resize(i);
      break;
    }
    if (is_footer_start(kept[i])) {
      disclaimer = true;
      std::size_t cut = i;
      if (cut > 0) {
        auto prev = trim(kept[cut - 1]);
        if (prev == "--" || prev == "-- " ||
            (prev.size() >= 2 && prev.find_first_not_of("_-=") == std::string_view::npos))
          --cut;
      }
      kept.resize(cut);
      break;
    }
  }
}

/// Where a signature block starts and where the new text ends (lines of `kept`); unset when
/// not found.
struct signature_cut {
  std::optional<std::size_t> sig_start, body_end;
};

/// A signature after a "--" delimiter line.
void find_delimited_signature(const std::vector<std::string_view>& kept, signature_cut& cut) {
  for (std::size_t i = 0; i < kept.size(); ++i) {
    auto t = trim(kept[i]);
    if (t == "--" || kept[i] == "-- ") {
      cut.sig_start = i + 1;
      cut.body_end = i;
      break;
    }
  }
}

/// A signature after a sign-off line near the end; a sign-off with the signature on its own
/// line ("Regards, Priya Shah, ...") is parsed into `sig` here.
void find_signed_off_signature(const std::vector<std::string_view>& kept, std::string_view sender_name,
                               signature_cut& cut, std::optional<signature>& sig) {
  for (std::size_t i = kept.size(); i-- > 0;) {
    auto t = trim(kept[i]);
    if (t.empty())
      continue;
    std::size_t remaining = 0;
    for (std::size_t k = i + 1; k < kept.size(); ++k)
      remaining += !trim(kept[k]).empty();
    if (remaining > 6)
      break;
    if (is_sign_off(t)) {
      cut.sig_start = i + 1;
      cut.body_end = i + 1;  // the sign-off line itself is kept: it is junk, not knowledge
      break;
    }
    // "Regards, Priya Shah, Customer Success Manager, Initech"
    auto comma = t.find(',');
    if (comma != std::string_view::npos && is_sign_off(t.substr(0, comma + 1)) && remaining == 0) {
      sig = parse_signature(t.substr(comma + 1), sender_name);
      cut.body_end = i;
      break;
    }
  }
}

/// A trailing block after a blank line: a name line, then a few short lines.
void find_trailing_signature(const std::vector<std::string_view>& kept, std::string_view sender_name,
                             signature_cut& cut) {
  std::size_t last = kept.size();
  while (last > 0 && trim(kept[last - 1]).empty())
    --last;
  std::size_t first = last;
  while (first > 0 && !trim(kept[first - 1]).empty())
    --first;
  std::size_t n = last - first;
  if (first > 0 && n >= 1 && n <= 5) {
    auto name = trim(kept[first]);
    bool named =
        looks_like_name(name) || (!sender_name.empty() && lower_ascii(name) == lower_ascii(sender_name)) ||
        (!sender_name.empty() && lower_ascii(name) == lower_ascii(sender_name.substr(0, sender_name.find(' '))));
    bool short_lines = true;
    for (std::size_t k = first; k < last; ++k)
      short_lines &= trim(kept[k]).size() <= 60 && trim(kept[k]).find(". ") == std::string_view::npos;
    if (named && short_lines && name.size() <= 40) {
      cut.sig_start = first;
      cut.body_end = first;
    }
  }
}

/// A last line "Sarah Lee | VP Sales, Acme" with nothing after it.
void find_bar_signature(const std::vector<std::string_view>& kept, signature_cut& cut) {
  for (std::size_t i = kept.size(); i-- > 0;) {
    auto t = trim(kept[i]);
    if (t.empty())
      continue;
    if (t.find('|') != std::string_view::npos && t.size() < 100) {
      auto first = trim(t.substr(0, t.find('|')));
      if (looks_like_name(first)) {
        cut.sig_start = i;
        cut.body_end = i;
      }
    }
    break;
  }
}

}  // namespace

std::optional<signature> parse_signature(std::string_view block, std::string_view sender_name) {
  signature sig;
  std::vector<std::string_view> rest;
  for (auto line : text::lines(block)) {
    line = trim(line);
    if (line.empty() || is_contact_noise(line))
      continue;
    if (is_phone(line)) {
      if (sig.phone.empty())
        sig.phone = phone_number(line);
      continue;
    }
    rest.push_back(line);
    sig.block.append(sig.block.empty() ? "" : "\n").append(line);
  }
  for (std::size_t i = 0; i < rest.size(); ++i) {
    auto line = rest[i];
    if (line.find('|') != std::string_view::npos) {
      std::vector<std::string_view> parts;
      std::size_t start = 0;
      while (true) {
        auto bar = line.find('|', start);
        parts.push_back(trim(line.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start)));
        if (bar == std::string_view::npos)
          break;
        start = bar + 1;
      }
      if (sig.name.empty() && looks_like_name(parts[0])) {
        sig.name = std::string(parts[0]);
        parts.erase(parts.begin());
      }
      for (auto p : parts) {
        if (p.empty())
          continue;
        if (is_phone(p))
          sig.phone = phone_number(p);
        else if (sig.role.empty() && has_role_word(p))
          split_role_company(p, sig);
        else if (sig.company.empty())
          sig.company = std::string(p);
      }
      continue;
    }
    // "Priya Shah, Customer Success Manager, Initech" on one line.
    if (sig.name.empty() && line.find(',') != std::string_view::npos) {
      auto comma = line.find(',');
      auto first = trim(line.substr(0, comma));
      if (looks_like_name(first)) {
        sig.name = std::string(first);
        split_role_company(line.substr(comma + 1), sig);
        continue;
      }
    }
    if (sig.name.empty() &&
        (looks_like_name(line) || (!sender_name.empty() && lower_ascii(line) == lower_ascii(sender_name)))) {
      sig.name = std::string(line);
    } else if (sig.role.empty() && has_role_word(line)) {
      split_role_company(line, sig);
    } else if (sig.company.empty() && !sig.name.empty()) {
      sig.company = std::string(line);
    }
  }
  if (sig.name.empty() && sig.role.empty() && sig.phone.empty())
    return std::nullopt;
  return sig;
}

cleaned_message clean(std::string_view body, std::string_view sender_name) {
  cleaned_message out;
  auto ls = text::lines(body);
  // 1. Quoted replies and forwards end the new text.
  std::vector<std::string_view> kept = drop_quotes(ls, out.quoted);
  // 2. Disclaimers and list footers end it too (with a "--" or "__" line before them).
  drop_footer(kept, out.disclaimer);
  // 3. The signature: after a "--" delimiter, or after a sign-off line near the end.
  signature_cut cut;
  find_delimited_signature(kept, cut);
  if (!cut.sig_start)
    find_signed_off_signature(kept, sender_name, cut, out.sig);
  if (!cut.sig_start && !cut.body_end)
    find_trailing_signature(kept, sender_name, cut);
  if (!cut.sig_start && !cut.body_end)
    find_bar_signature(kept, cut);
  if (cut.sig_start) {
    std::string block;
    for (std::size_t i = *cut.sig_start; i < kept.size(); ++i)
      block.append(kept[i]).push_back('\n');
    out.sig = parse_signature(block, sender_name);
  }
  std::size_t stop = cut.body_end.value_or(kept.size());
  for (std::size_t i = 0; i < stop; ++i)
    out.text.append(kept[i]).push_back('\n');
  while (!out.text.empty() && (out.text.back() == '\n' || out.text.back() == ' '))
    out.text.pop_back();
  return out;
}

}  // namespace engram::reading
