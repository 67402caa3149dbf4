#include "reading/signature.hpp"
#include "base/text.hpp"

#include <libstemmer.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <unordered_set>

namespace engram::reading {
namespace {

using schemas::entity_kind;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool has_digit(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string> sorted(const std::set<std::string>& s) { return {s.begin(), s.end()}; }

/// Words that carry no fact of their own: articles, auxiliaries, pronouns, greetings and
/// fillers, polarity words (compared apart) and calendar and currency words (dates and
/// amounts are compared apart).
// clang-format off
const std::unordered_set<std::string_view>& filler_words() {
  static const std::unordered_set<std::string_view> words{
      "a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "am", "will", "would", "shall",
      "should", "can", "could", "may", "might", "must", "do", "does", "did", "has", "have", "had", "to", "of",
      "it", "its", "this", "that", "these", "those", "we", "our", "us", "you", "your", "they", "their", "them",
      "i", "me", "my", "he", "she", "his", "her", "just", "please", "note", "fyi", "re", "fw", "fwd", "hi",
      "hello", "hey", "team", "all", "thanks", "thank", "so", "also", "and", "ll", "ve", "d", "s", "t", "m",
      "not", "no", "never", "longer", "now", "confirm", "confirmed", "confirming", "reminder", "update", "quick",
      "as", "per", "on", "in", "at", "january", "february", "march", "april", "may", "june", "july", "august",
      "september", "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
      "sept", "oct", "nov", "dec", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
      "q1", "q2", "q3", "q4", "don", "doesn", "didn", "won", "isn", "aren", "wasn", "weren", "hasn", "haven", "hadn", "can",
      "cannot", "couldn", "shouldn", "wouldn"};
  // clang-format on
  return words;
}

/// Units written beside a number ("EUR 24,000", "$50k", "3 pm", "5th"): fillers there, and
/// content elsewhere ("pay in EUR").
bool number_unit(std::string_view w) {
  static const std::unordered_set<std::string_view> units{
      "usd", "eur",     "gbp",   "chf",    "jpy", "cad", "aud", "k",  "m",       "bn",       "mn",     "am",
      "pm",  "dollars", "euros", "pounds", "st",  "nd",  "rd",  "th", "million", "thousand", "billion"};
  return units.count(w) > 0;
}

/// A number written as a word ("fourteen", "forty"), or none. "one" before "of" names one of
/// several, no count ("one of our customers"): `next` is the word after.
std::optional<int> number_word(std::string_view w, std::string_view next) {
  static constexpr std::string_view units[] = {
      "zero", "one",    "two",    "three",    "four",     "five",    "six",     "seven",     "eight",    "nine",
      "ten",  "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"};
  static constexpr std::string_view tens[] = {"twenty", "thirty",  "forty",  "fifty",
                                              "sixty",  "seventy", "eighty", "ninety"};
  for (int i = 0; i < 20; ++i)
    if (w == units[i])
      return i == 1 && next == "of" ? std::nullopt : std::optional<int>(i);
  for (int i = 0; i < 8; ++i)
    if (w == tens[i])
      return 20 + 10 * i;
  return std::nullopt;
}

/// The Snowball English stemmer; one per thread (sb_stemmer is not thread-safe).
std::string stem(std::string_view w) {
  struct closer {
    void operator()(sb_stemmer* s) const { sb_stemmer_delete(s); }
  };
  thread_local std::unique_ptr<sb_stemmer, closer> st(sb_stemmer_new("english", nullptr));
  if (!st)
    return std::string(w);
  auto* out = sb_stemmer_stem(st.get(), reinterpret_cast<const sb_symbol*>(w.data()), static_cast<int>(w.size()));
  return out ? std::string(reinterpret_cast<const char*>(out), static_cast<std::size_t>(sb_stemmer_length(st.get())))
             : std::string(w);
}

}  // namespace

std::string content_words(std::string_view text) {
  const auto& filler = filler_words();
  std::string out;
  const auto nf = schemas::normal_form(text);
  const auto ws = schemas::split_words(nf);
  for (std::size_t i = 0; i < ws.size(); ++i) {
    auto w = ws[i];
    if (has_digit(w) || filler.count(w) || number_word(w, i + 1 < ws.size() ? ws[i + 1] : ""))
      continue;
    auto number_at = [&](std::size_t k) {
      return k < ws.size() && (has_digit(ws[k]) || number_word(ws[k], k + 1 < ws.size() ? ws[k + 1] : ""));
    };
    if (number_unit(w) && ((i > 0 && number_at(i - 1)) || number_at(i + 1)))
      continue;
    if (!out.empty())
      out += ' ';
    out += stem(w);
  }
  return out;
}

std::vector<std::string> index_terms(std::string_view text) {
  const auto words = content_words(text);
  const auto ws = schemas::split_words(words);
  return std::vector<std::string>(ws.begin(), ws.end());
}

namespace {

/// The zeros a multiplier adds ("k", "thousand": 3; "m", "million": 6; "bn", "billion": 9).
std::optional<int> multiplier(std::string_view w) {
  if (w == "k" || w == "thousand")
    return 3;
  if (w == "m" || w == "mn" || w == "million")
    return 6;
  if (w == "bn" || w == "billion")
    return 9;
  if (w == "hundred")
    return 2;
  return std::nullopt;
}

/// A decimal number ("3.2", "450") times 10^zeros, written without leading zeros and, past the
/// point, without trailing ones: ("3.2", 6) is "3200000", ("0.5", 0) "0.5", ("2.50", 0) "2.5".
std::string scaled(std::string_view number, int zeros) {
  const auto point = number.find('.');
  std::string digits(number.substr(0, point));
  std::string fraction(point == std::string_view::npos ? std::string_view() : number.substr(point + 1));
  for (; zeros > 0; --zeros) {
    digits += fraction.empty() ? '0' : fraction.front();
    if (!fraction.empty())
      fraction.erase(0, 1);
  }
  while (!fraction.empty() && fraction.back() == '0')
    fraction.pop_back();
  const auto nz = digits.find_first_not_of('0');
  digits = nz == std::string::npos ? "0" : digits.substr(nz);
  return fraction.empty() ? digits : digits + "." + fraction;
}

}  // namespace

std::string normal_number(std::string n) {
  while (!n.empty() && (n.back() == '.' || n.back() == ':'))
    n.pop_back();
  std::string lower;
  for (char c : n)
    lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  // Times: "3pm", "3:30 pm" (joined by the caller), "08:00" -> "15:00", "15:30", "8:00".
  int h = -1, m = 0;
  std::size_t i = 0;
  auto digits = [&](int& v) {
    std::size_t start = i;
    v = 0;
    while (i < lower.size() && lower[i] >= '0' && lower[i] <= '9' && i - start < 2)
      v = v * 10 + (lower[i++] - '0');
    return i > start;
  };
  if (digits(h)) {
    bool colon = i < lower.size() && lower[i] == ':';
    if (colon) {
      ++i;
      if (!digits(m) || m > 59)
        h = -1;
    }
    std::string rest = lower.substr(i);
    if (h >= 0 && (rest == "am" || rest == "pm") && h >= 1 && h <= 12) {
      if (rest == "pm" && h != 12)
        h += 12;
      if (rest == "am" && h == 12)
        h = 0;
    } else if (!(h >= 0 && colon && rest.empty() && h <= 23)) {
      h = -1;
    }
    if (h >= 0) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "%d:%02d", h, m);
      return buf;
    }
  }
  // Plain numbers: no leading zeros ("007" -> "7").
  if (std::all_of(lower.begin(), lower.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    auto nz = lower.find_first_not_of('0');
    return nz == std::string::npos ? "0" : lower.substr(nz);
  }
  // A number with a multiplier or a unit written onto it: "12k" is 12000, "3.2m" 3200000, "500gb"
  // and "7d" are 500 and 7 (the unit is a word beside it elsewhere: "500 GB"), "v4.12" is 4.12.
  std::string_view body = lower;
  if (body.size() > 1 && body[0] == 'v' && is_digit(body[1]))
    body.remove_prefix(1);
  const auto end = body.find_first_not_of("0123456789.");
  const auto figures = body.substr(0, end);
  const auto suffix = end == std::string_view::npos ? std::string_view() : body.substr(end);
  if (figures.empty() || !is_digit(figures[0]) || std::count(figures.begin(), figures.end(), '.') > 1 ||
      figures.back() == '.')
    return lower;
  if (auto zeros = multiplier(suffix))
    return scaled(figures, *zeros);
  static const std::set<std::string_view> units = {"gb", "mb", "tb",   "kb",   "ms",   "s",   "sec", "secs", "d",
                                                   "h",  "hr", "hrs",  "min",  "mins", "x",   "kg",  "km",   "mw",
                                                   "kw", "gw", "mbps", "gbps", "rps",  "tps", "qps", "w"};
  if (suffix.empty() || units.count(suffix))
    return scaled(figures, 0);
  return lower;
}

std::set<std::string> read_numbers(std::string_view text, const std::set<std::string>& years) {
  // Tokens of digits, letters, points and colons. A comma or a space before a group of three
  // digits, in a number of groups, separates thousands ("4,000", "12 000"; not "2026 100").
  auto group_follows = [&](std::size_t i) {
    return i + 3 < text.size() && is_digit(text[i + 1]) && is_digit(text[i + 2]) && is_digit(text[i + 3]) &&
           (i + 4 == text.size() || !is_digit(text[i + 4]));
  };
  std::vector<std::string> tokens;
  std::string token;
  bool joined = false;  // a separator was read in the token
  auto grouping = [&] {
    return !token.empty() && std::all_of(token.begin(), token.end(), [](char d) { return is_digit(d); }) &&
           (joined || token.size() <= 3);
  };
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ' ';
    if (is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == ':') {
      token += c;
    } else if ((c == ',' || c == ' ') && grouping() && group_follows(i)) {
      joined = true;
    } else if (!token.empty()) {
      tokens.push_back(lower_ascii(token));
      token.clear();
      joined = false;
    }
  }
  auto word = [&](std::size_t k) { return k < tokens.size() ? tokens[k] : std::string(); };
  std::set<std::string> numbers;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::string n;
    if (!has_digit(tokens[i])) {
      // Numbers written as words count as their digits: "fourteen" is "14", "twenty-five" "25".
      auto v = number_word(tokens[i], word(i + 1));
      if (!v)
        continue;
      if (*v >= 20 && *v % 10 == 0)
        if (auto unit = number_word(word(i + 1), word(i + 2)); unit && *unit >= 1 && *unit <= 9) {
          *v += *unit;
          ++i;
        }
      n = std::to_string(*v);
    } else {
      n = normal_number(word(i + 1) == "am" || word(i + 1) == "pm" ? tokens[i] + word(i + 1) : tokens[i]);
    }
    // "3.2 million", "five thousand": the multiplier is the number's.
    if (auto zeros = multiplier(word(i + 1));
        zeros && !n.empty() && n.find(':') == std::string::npos &&
        std::all_of(n.begin(), n.end(), [](char c) { return is_digit(c) || c == '.'; })) {
      n = scaled(n, *zeros);
      ++i;
    }
    if (!n.empty() && !years.count(n))
      numbers.insert(n);
  }
  return numbers;
}

void sign(schemas::extraction& x) {
  for (auto& e : x.entries) {
    std::set<std::string> dates, amounts, entities, numbers;
    std::set<std::string> years;   // years of the dates: "1 October 2026" may leave "2026" behind
    std::string rest = e.content;  // the content minus the text of its dates and amounts
    for (auto mi : e.mentions) {
      if (mi >= x.mentions.size())
        continue;
      const auto& m = x.mentions[mi];
      switch (m.kind) {
        case entity_kind::date:
          dates.insert(m.value);
          for (std::size_t p = 0; p + 4 <= m.value.size(); p += 11)
            years.insert(m.value.substr(p, 4));
          break;
        case entity_kind::amount: amounts.insert(m.value + (m.currency.empty() ? "" : " " + m.currency)); break;
        case entity_kind::person:
        case entity_kind::organization:
        case entity_kind::technology:
        case entity_kind::location: entities.insert(schemas::normal_form(m.value)); break;
      }
      if (m.kind == entity_kind::date || m.kind == entity_kind::amount)
        for (auto at = rest.find(m.text); !m.text.empty() && at != std::string::npos; at = rest.find(m.text))
          rest.replace(at, m.text.size(), " ");
    }
    numbers = read_numbers(rest, years);
    e.sig = {sorted(numbers),          sorted(dates),         sorted(amounts), sorted(entities),
             content_words(e.content), content_words(e.title)};
  }
}

}  // namespace engram::reading
