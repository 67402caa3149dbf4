#include "reading/dates.hpp"

#include "reading/text.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <optional>

namespace engram::reading {
namespace {

struct civil {
  int y;
  unsigned m, d;
};

civil civil_from_days(std::int64_t z) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {static_cast<int>(y + (m <= 2)), m, d};
}

unsigned days_in_month(int y, unsigned m) {
  static constexpr std::array<unsigned, 12> md{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : md[m - 1];
}

/// Monday = 0 ... Sunday = 6.
int weekday(std::int64_t day) { return static_cast<int>(((day + 3) % 7 + 7) % 7); }

std::string period(std::int64_t a, std::int64_t b) { return format_day(a) + "/" + format_day(b); }

struct token {
  std::string_view lower;  // a view into the lower-cased sentence
  std::size_t begin, end;
};

/// Words and numbers of `lowered` (the sentence lower-cased, same offsets).
std::vector<token> tokenize(std::string_view lowered) {
  std::vector<token> out;
  std::size_t i = 0;
  while (i < lowered.size()) {
    if (text::is_alpha(lowered[i]) || text::is_digit(lowered[i])) {
      std::size_t b = i;
      while (i < lowered.size() && (text::is_alpha(lowered[i]) || text::is_digit(lowered[i])))
        ++i;
      out.push_back({lowered.substr(b, i - b), b, i});
    } else {
      ++i;
    }
  }
  return out;
}

std::optional<unsigned> month_of(std::string_view w) {
  static constexpr std::array<std::string_view, 12> full{"january",   "february", "march",    "april",
                                                         "may",       "june",     "july",     "august",
                                                         "september", "october",  "november", "december"};
  for (unsigned i = 0; i < 12; ++i)
    if (w == full[i] || (w.size() == 3 && full[i].substr(0, 3) == w))
      return i + 1;
  if (w == "sept")
    return 9u;
  return std::nullopt;
}

std::optional<int> weekday_of(std::string_view w) {
  static constexpr std::array<std::string_view, 7> names{"monday", "tuesday",  "wednesday", "thursday",
                                                         "friday", "saturday", "sunday"};
  static constexpr std::array<std::string_view, 7> shorts{"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
  for (int i = 0; i < 7; ++i)
    if (w == names[static_cast<std::size_t>(i)] || w == shorts[static_cast<std::size_t>(i)] ||
        (i == 1 && w == "tues") || (i == 3 && (w == "thur" || w == "thurs")))
      return i;
  return std::nullopt;
}

std::optional<unsigned> day_number(std::string_view w) {
  std::size_t i = 0;
  unsigned v = 0;
  while (i < w.size() && text::is_digit(w[i]) && i < 2)
    v = v * 10 + static_cast<unsigned>(w[i++] - '0');
  if (i == 0 || v < 1 || v > 31)
    return std::nullopt;
  auto rest = w.substr(i);
  if (!rest.empty() && rest != "st" && rest != "nd" && rest != "rd" && rest != "th")
    return std::nullopt;
  return v;
}

std::optional<int> small_number(std::string_view w) {
  static constexpr std::array<std::string_view, 13> words{"zero",  "one",   "two",  "three", "four",   "five",  "six",
                                                          "seven", "eight", "nine", "ten",   "eleven", "twelve"};
  for (int i = 0; i < 13; ++i)
    if (w == words[static_cast<std::size_t>(i)])
      return i;
  if (w == "a" || w == "an")
    return 1;
  if (!w.empty() && w.size() <= 3 && std::all_of(w.begin(), w.end(), [](char c) { return text::is_digit(c); }))
    return std::stoi(std::string(w));
  return std::nullopt;
}

std::int64_t month_day(int y, unsigned m, unsigned d) {
  return days_from_civil(y, m, std::min(d, days_in_month(y, m)));
}

/// A month-day in the sent year, or the next year if that is more than six months back.
std::int64_t nearest(std::int64_t sent, unsigned m, unsigned d) {
  auto y = civil_from_days(sent).y;
  auto day = month_day(y, m, d);
  if (day < sent - 183)
    day = month_day(y + 1, m, d);
  return day;
}

}  // namespace

std::string format_day(std::int64_t day) {
  auto c = civil_from_days(day);
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", c.y, c.m, c.d);
  return buf;
}

namespace {

/// One pass of find_dates over a text: each phrase form is a method that, at token `i`,
/// either adds its date and returns the token after the phrase, or returns 0 (no match).
class date_reader {
public:
  date_reader(std::string_view s, std::int64_t sent)
      : s_(s),
        lowered_(lower_ascii(s)),
        toks_(tokenize(lowered_)),
        sent_(sent),
        sent_c_(civil_from_days(sent)),
        sent_wd_(weekday(sent)),
        // "end of week": that week's Friday, or the next one when it is already past.
        end_of_week_(sent - sent_wd_ + 4 < sent ? sent - sent_wd_ + 11 : sent - sent_wd_ + 4) {}

  std::vector<date_match> read() {
    using form = std::size_t (date_reader::*)(std::size_t);
    static constexpr form forms[] = {&date_reader::iso,        &date_reader::end_of,      &date_reader::single_word,
                                     &date_reader::in_n_units, &date_reader::this_next,   &date_reader::weekday_name,
                                     &date_reader::quarter,    &date_reader::month_first, &date_reader::ordinal_day,
                                     &date_reader::day_first};
    std::size_t i = 0;
    while (i < toks_.size()) {
      std::size_t next = 0;
      for (auto f : forms)
        if ((next = (this->*f)(i)) != 0)
          break;
      i = next != 0 ? next : i + 1;
    }
    return std::move(out_);
  }

private:
  std::string_view tok(std::size_t i) const { return i < toks_.size() ? toks_[i].lower : std::string_view(); }
  static bool is_year(std::string_view w) { return w.size() == 4 && text::is_digit(w[0]) && text::is_digit(w[3]); }
  /// The token before i puts a day on what follows: "by", "before", "until", "till", "on", "due".
  bool after_cue(std::size_t i) const {
    static constexpr std::string_view cues[] = {"by", "before", "until", "till", "on", "due"};
    return i > 0 && std::find(std::begin(cues), std::end(cues), tok(i - 1)) != std::end(cues);
  }
  /// A day named at token i: a weekday (short or full), "today", "tomorrow" ("tmrw").
  bool names_a_day(std::size_t i) const {
    auto w = tok(i);
    return weekday_of(w).has_value() || w == "today" || w == "tomorrow" || w == "tmrw";
  }
  /// "EOD" or "close of business" at i..last with a day beside it ("EOD Friday", "fri eod", "COB
  /// tomorrow", "close of business on Monday") is a time of that day: the day is the date.
  bool time_of_a_named_day(std::size_t i, std::size_t last) const {
    auto after = tok(last + 1) == "on" ? last + 2 : last + 1;
    return names_a_day(after) || (i > 0 && names_a_day(i - 1));
  }
  bool capitalised(std::size_t i) const { return std::isupper(static_cast<unsigned char>(s_[toks_[i].begin])); }
  /// Adds the date of tokens first..last; returns the token after them.
  std::size_t add(std::size_t first, std::size_t last, std::string resolved, bool relative) {
    out_.push_back({toks_[first].begin, toks_[last].end, std::move(resolved), relative});
    return last + 1;
  }
  std::int64_t end_of_month() const { return month_day(sent_c_.y, sent_c_.m, 31); }

  /// ISO 2026-04-14 (three tokens joined by '-').
  std::size_t iso(std::size_t i) {
    auto w = tok(i);
    if (!(w.size() == 4 && text::is_digit(w[0]) && i + 2 < toks_.size() && toks_[i + 1].begin == toks_[i].end + 1 &&
          s_[toks_[i].end] == '-' && toks_[i + 2].begin == toks_[i + 1].end + 1 && s_[toks_[i + 1].end] == '-'))
      return 0;
    int y = std::stoi(std::string(w));
    auto m = small_number(tok(i + 1));
    auto d = day_number(tok(i + 2));
    if (m && *m >= 1 && *m <= 12 && d && y > 1900 && y < 2200)
      return add(i, i + 2, format_day(month_day(y, static_cast<unsigned>(*m), *d)), false);
    return 0;
  }

  /// "end of (the) day|week|month|<Month>"
  std::size_t end_of(std::size_t i) {
    if (tok(i) != "end" || tok(i + 1) != "of")
      return 0;
    std::size_t k = i + 2;
    if (tok(k) == "the")
      ++k;
    auto x = tok(k);
    if (x == "day")
      return add(i, k, format_day(sent_), true);
    if (x == "week")
      return add(i, k, format_day(end_of_week_), true);
    if (x == "month")
      return add(i, k, format_day(end_of_month()), true);
    if (auto m = month_of(x)) {
      auto c = civil_from_days(nearest(sent_, *m, 1));
      return add(i, k, format_day(month_day(c.y, c.m, 31)), false);
    }
    return 0;
  }

  /// "today", "EOD", "close of business", "EOW", "EOM", "tomorrow", "yesterday".
  std::size_t single_word(std::size_t i) {
    auto w = tok(i);
    if ((w == "eod" || w == "cob") && time_of_a_named_day(i, i))
      return i + 1;
    if (w == "eod" || w == "cob" || w == "today" || w == "tonight")
      return add(i, i, format_day(sent_), true);
    if (w == "close" && tok(i + 1) == "of" && tok(i + 2) == "business")
      return time_of_a_named_day(i, i + 2) ? i + 3 : add(i, i + 2, format_day(sent_), true);
    if (w == "eow")
      return add(i, i, format_day(end_of_week_), true);
    if (w == "eom")
      return add(i, i, format_day(end_of_month()), true);
    if (w == "tomorrow" || w == "tmrw")
      return add(i, i, format_day(sent_ + 1), true);
    if (w == "yesterday")
      return add(i, i, format_day(sent_ - 1), true);
    return 0;
  }

  /// "in two weeks", "in 3 days", "in a month", "within a couple of days".
  std::size_t in_n_units(std::size_t i) {
    if (tok(i) != "in" && tok(i) != "within")
      return 0;
    std::size_t k = i + 1;
    if (tok(k) == "a" && tok(k + 1) == "couple" && tok(k + 2) == "of")
      k += 2;  // "a couple of" = two
    auto n = tok(k) == "couple" ? std::optional<int>(2) : small_number(tok(k));
    auto unit = tok(k + 1);
    if (n && (unit == "day" || unit == "days" || unit == "week" || unit == "weeks"))
      return add(i, k + 1, format_day(sent_ + (unit[0] == 'd' ? *n : *n * 7)), true);
    if (n && (unit == "month" || unit == "months")) {
      int m0 = static_cast<int>(sent_c_.m) - 1 + *n;
      int y = sent_c_.y + m0 / 12;
      return add(i, k + 1, format_day(month_day(y, static_cast<unsigned>(m0 % 12 + 1), sent_c_.d)), true);
    }
    return 0;
  }

  /// "next week", "this week", "last week", "next month"
  std::size_t this_next(std::size_t i) {
    auto w = tok(i);
    if (!((w == "next" || w == "this" || w == "last") && (tok(i + 1) == "week" || tok(i + 1) == "month")))
      return 0;
    if (tok(i + 1) == "week") {
      std::int64_t monday = sent_ - sent_wd_ + (w == "next" ? 7 : w == "last" ? -7 : 0);
      return add(i, i + 1, period(monday, monday + 6), true);
    }
    int m0 = static_cast<int>(sent_c_.m) - 1 + (w == "next" ? 1 : w == "last" ? -1 : 0);
    int y = sent_c_.y + (m0 < 0 ? -1 : m0 / 12);
    unsigned m = static_cast<unsigned>((m0 % 12 + 12) % 12 + 1);
    return add(i, i + 1, period(month_day(y, m, 1), month_day(y, m, 31)), true);
  }

  /// "(next|this) Friday", "Friday"
  std::size_t weekday_name(std::size_t i) {
    std::size_t k = i;
    if (tok(i) == "next" || tok(i) == "this" || tok(i) == "coming")
      ++k;
    auto wd = weekday_of(tok(k));
    // A short weekday in lower case ("wed", "fri") only after a cue or beside EOD: "by fri 3pm".
    const bool short_ok = after_cue(k) || tok(k + 1) == "eod" || tok(k + 1) == "cob";
    if (!wd || !(k > i || tok(k).size() > 3 || capitalised(k) || short_ok))
      return 0;
    int delta = (*wd - sent_wd_ + 7) % 7;
    return add(i, k, format_day(sent_ + (delta == 0 ? 7 : delta)), true);
  }

  /// "Q3", "Q3 2026", "H2"
  std::size_t quarter(std::size_t i) {
    auto w = tok(i);
    if (!(w.size() == 2 && (w[0] == 'q' || w[0] == 'h') && w[1] >= '1' && w[1] <= (w[0] == 'q' ? '4' : '2')))
      return 0;
    unsigned n = static_cast<unsigned>(w[1] - '0');
    unsigned months = w[0] == 'q' ? 3 : 6;
    unsigned m1 = (n - 1) * months + 1, m2 = n * months;
    int y = sent_c_.y;
    std::size_t last = i;
    if (tok(i + 1).size() == 4 && text::is_digit(tok(i + 1)[0])) {
      y = std::stoi(std::string(tok(i + 1)));
      last = i + 1;
    } else if (month_day(y, m2, 31) < sent_) {
      ++y;
    }
    return add(i, last, period(month_day(y, m1, 1), month_day(y, m2, 31)), false);
  }

  /// "March 5", "Mar 5th", "March 5, 2026", "March" (a period). Month names count only
  /// capitalised ("march on", "may need" are not dates), or before a day in lower-case chat when
  /// a year follows or a cue goes before ("may 14 2026", "by aug 3").
  std::size_t month_first(std::size_t i) {
    auto w = tok(i);
    auto m = month_of(w);
    if (!m || !(capitalised(i) || (day_number(tok(i + 1)) && (is_year(tok(i + 2)) || after_cue(i)))))
      return 0;
    if (auto d = day_number(tok(i + 1))) {
      if (tok(i + 2).size() == 4 && text::is_digit(tok(i + 2)[0]))
        return add(i, i + 2, format_day(month_day(std::stoi(std::string(tok(i + 2))), *m, *d)), false);
      return add(i, i + 1, format_day(nearest(sent_, *m, *d)), false);
    }
    if (w == "may" && !(i > 0 && (tok(i - 1) == "in" || tok(i - 1) == "by" || tok(i - 1) == "until")))
      return 0;
    auto first = nearest(sent_, *m, 1);
    auto c = civil_from_days(first);
    if (month_day(c.y, c.m, 31) < sent_ - 183)
      first = month_day(c.y + 1, *m, 1);
    c = civil_from_days(first);
    return add(i, i, period(first, month_day(c.y, c.m, 31)), false);
  }

  /// "the 15th", "on the 3rd": the next such day of a month (this month's when it is still
  /// ahead or today). Only with its ordinal suffix: "the 15 units" is no date.
  std::size_t ordinal_day(std::size_t i) {
    auto w = tok(i);
    auto d = day_number(w);
    if (!(d && i > 0 && tok(i - 1) == "the" && w.size() > 2 && !text::is_digit(w.back()) && !month_of(tok(i + 1)) &&
          tok(i + 1) != "of"))
      return 0;
    int y = sent_c_.y;
    unsigned m = sent_c_.m;
    if (*d < sent_c_.d) {
      m = m == 12 ? 1 : m + 1;
      y += m == 1;
    }
    if (*d > days_in_month(y, m))
      return 0;
    return add(i, i, format_day(days_from_civil(y, m, *d)), true);
  }

  /// "5 March", "5th of March", "30 June 2027" (a year after the month is the date's); a
  /// lower-case month only with its year, after a cue or after an ordinal ("14 may 2026", "by 14
  /// may", "18th sept").
  std::size_t day_first(std::size_t i) {
    auto d = day_number(tok(i));
    if (!d)
      return 0;
    std::size_t k = i + 1;
    if (tok(k) == "of")
      ++k;
    auto m = month_of(tok(k));
    if (!m || k >= toks_.size() ||
        !(capitalised(k) || is_year(tok(k + 1)) || after_cue(i) || !text::is_digit(tok(i).back())))
      return 0;
    if (is_year(tok(k + 1)))
      return add(i, k + 1, format_day(month_day(std::stoi(std::string(tok(k + 1))), *m, *d)), false);
    return add(i, k, format_day(nearest(sent_, *m, *d)), false);
  }

  std::string_view s_;
  std::string lowered_;
  std::vector<token> toks_;  // views into lowered_
  std::int64_t sent_;
  civil sent_c_;
  int sent_wd_;
  std::int64_t end_of_week_;
  std::vector<date_match> out_;
};

}  // namespace

std::vector<date_match> find_dates(std::string_view s, std::int64_t sent) { return date_reader(s, sent).read(); }

}  // namespace engram::reading
