#include "knowledge/markers.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

namespace engram::knowledge {

std::string markers_of(std::string_view text) {
  // Relative times, weekdays and quantities change what is said; so does the preposition
  // before a number ("cut churn to 5%" is not "cut churn by 5%").
  static const std::set<std::string> standalone = {
      "this",   "next",     "last",   "previous", "coming", "current", "monday",   "tuesday",  "wednesday", "thursday",
      "friday", "saturday", "sunday", "some",     "none",   "every",   "increase", "decrease", "increased", "decreased",
      "more",   "less",     "fewer",  "above",    "below",  "before",  "after",    "until",    "since"};
  static const std::set<std::string> before_number = {"to", "by", "from", "of", "over", "under", "at", "than"};
  std::vector<std::string> words;
  std::string w;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ' ';
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '$' || c == '%' || c == '.' || c == ',' ||
        static_cast<unsigned char>(c) >= 0x80) {
      w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!w.empty()) {
      while (!w.empty() && (w.back() == '.' || w.back() == ','))
        w.pop_back();
      if (!w.empty())
        words.push_back(w);
      w.clear();
    }
  }
  // A number, an amount, or a date that starts with its month ("to March 5" is "to 5 March").
  static const std::set<std::string> months = {"january", "february", "march",     "april",   "may",      "june",
                                               "july",    "august",   "september", "october", "november", "december",
                                               "jan",     "feb",      "mar",       "apr",     "jun",      "jul",
                                               "aug",     "sep",      "sept",      "oct",     "nov",      "dec"};
  auto number_like = [&](const std::string& x) {
    return std::isdigit(static_cast<unsigned char>(x[0])) || x[0] == '$' || static_cast<unsigned char>(x[0]) >= 0x80 ||
           months.count(x);
  };
  std::vector<std::string> out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (standalone.count(words[i]))
      out.push_back(words[i]);
    else if (before_number.count(words[i]) && i + 1 < words.size() && number_like(words[i + 1]))
      out.push_back(words[i] + "#");
  }
  std::sort(out.begin(), out.end());
  std::string joined;
  for (const auto& x : out)
    joined += (joined.empty() ? "" : " ") + x;
  return joined;
}

std::uint64_t values_key(const schemas::entry& e) { return values_key(e.positive, e.title, e.sig); }

std::string values_key_hex(std::uint64_t key) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, key >>= 4)
    out[static_cast<std::size_t>(i)] = hex[key & 15];
  return out;
}

std::uint64_t values_key(bool positive, std::string_view title, const schemas::signature& sig) {
  // FNV-1a over each part with its length: the same on every machine and build.
  std::uint64_t h = 14695981039346656037ull;
  auto feed = [&](std::string_view s) {
    for (unsigned char c : std::to_string(s.size()) + ':')
      h = (h ^ c) * 1099511628211ull;
    for (unsigned char c : s)
      h = (h ^ c) * 1099511628211ull;
  };
  feed(positive ? "+" : "-");
  feed(markers_of(title));
  for (const auto* list : {&sig.numbers, &sig.dates, &sig.amounts}) {
    feed(std::to_string(list->size()));
    for (const auto& v : *list)
      feed(v);
  }
  return h;
}

}  // namespace engram::knowledge
