#include "reading/amounts.hpp"

#include "reading/text.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <optional>

namespace engram::reading {
namespace {

struct number {
  std::size_t begin, end;
  double value;
};

/// Reads "12,500", "12.5", "1.2" at `i`.
std::optional<number> read_number(std::string_view s, std::size_t i) {
  if (i >= s.size() || !text::is_digit(s[i]))
    return std::nullopt;
  std::size_t b = i;
  std::string digits;
  while (i < s.size()) {
    if (text::is_digit(s[i])) {
      digits += s[i++];
    } else if (s[i] == ',' && i + 3 < s.size() && text::is_digit(s[i + 1]) && text::is_digit(s[i + 2]) &&
               text::is_digit(s[i + 3]) && (i + 4 >= s.size() || !text::is_digit(s[i + 4]))) {
      ++i;  // thousands separator
    } else if (s[i] == '.' && i + 1 < s.size() && text::is_digit(s[i + 1]) && digits.find('.') == std::string::npos) {
      digits += s[i++];
    } else {
      break;
    }
  }
  return number{b, i, std::strtod(digits.c_str(), nullptr)};
}

/// A multiplier right after a number ("k", " million", "M", "bn"): returns factor and end.
std::pair<double, std::size_t> read_multiplier(std::string_view s, std::size_t i) {
  std::size_t j = i;
  if (j < s.size() && s[j] == ' ')
    ++j;
  std::size_t k = j;
  while (k < s.size() && text::is_alpha(s[k]))
    ++k;
  auto w = lower_ascii(s.substr(j, k - j));
  bool attached = j == i;
  if (w == "k" || w == "thousand")
    return {1e3, k};
  if ((w == "m" && attached) || w == "mm" || w == "mn" || w == "million" || w == "mio")
    return {1e6, k};
  if (w == "bn" || w == "billion" || (w == "b" && attached))
    return {1e9, k};
  return {1, i};
}

std::optional<std::string> currency_word(std::string_view w) {
  auto l = lower_ascii(w);
  if (l == "usd" || l == "dollars" || l == "dollar" || l == "bucks")
    return "USD";
  if (l == "eur" || l == "euros" || l == "euro")
    return "EUR";
  if (l == "gbp" || l == "pounds" || l == "pound" || l == "quid")
    return "GBP";
  if (l == "chf" || l == "francs")
    return "CHF";
  if (l == "jpy" || l == "yen")
    return "JPY";
  if (l == "cad" || l == "aud" || l == "sek" || l == "nok" || l == "dkk" || l == "inr" || l == "cny" || l == "pln") {
    std::string code(w);
    for (auto& c : code)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return code;
  }
  return std::nullopt;
}

/// A currency symbol at `i`: returns ISO code and byte length.
std::optional<std::pair<std::string, std::size_t>> symbol_at(std::string_view s, std::size_t i) {
  if (s[i] == '$')
    return std::pair<std::string, std::size_t>{"USD", 1};
  if (s.substr(i, 3) == "\xE2\x82\xAC")
    return std::pair<std::string, std::size_t>{"EUR", 3};
  if (s.substr(i, 2) == "\xC2\xA3")
    return std::pair<std::string, std::size_t>{"GBP", 2};
  if (s.substr(i, 2) == "\xC2\xA5")
    return std::pair<std::string, std::size_t>{"JPY", 2};
  return std::nullopt;
}

std::string format_value(double v) {
  char buf[64];
  if (std::fabs(v - std::round(v)) < 1e-9)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string out = buf;
  if (out.find('.') != std::string::npos) {
    while (out.back() == '0')
      out.pop_back();
    if (out.back() == '.')
      out.pop_back();
  }
  return out;
}

}  // namespace

std::vector<amount_match> find_amounts(std::string_view s) {
  std::vector<amount_match> out;
  std::size_t i = 0;
  while (i < s.size()) {
    // Symbol first: "$12,500", "€ 500", "US$ 3", "$1.2M"
    if (auto sym = symbol_at(s, i)) {
      std::size_t b = i;
      if (b >= 2 && s.substr(b - 2, 2) == "US")
        b -= 2;
      std::size_t j = i + sym->second;
      if (j < s.size() && s[j] == ' ')
        ++j;
      if (auto n = read_number(s, j)) {
        auto [factor, end] = read_multiplier(s, n->end);
        out.push_back({b, end, format_value(n->value * factor), sym->first});
        i = end;
        continue;
      }
    }
    // Code or word first: "EUR 48,000", "USD 12.5k"
    if (text::is_alpha(s[i]) && (i == 0 || !text::is_alpha(s[i - 1]))) {
      std::size_t k = i;
      while (k < s.size() && text::is_alpha(s[k]))
        ++k;
      auto w = s.substr(i, k - i);
      if (w.size() == 3 && text::is_upper(w[0]) && text::is_upper(w[1]) && text::is_upper(w[2]) && k < s.size() &&
          s[k] == ' ') {
        if (auto cur = currency_word(w); cur && cur->size() == 3)
          if (auto n = read_number(s, k + 1)) {
            auto [factor, end] = read_multiplier(s, n->end);
            out.push_back({i, end, format_value(n->value * factor), *cur});
            i = end;
            continue;
          }
      }
      i = k;
      continue;
    }
    // Number first: "12.5k USD", "3 million euros", "500 EUR"
    if (text::is_digit(s[i]) && (i == 0 || !(text::is_digit(s[i - 1]) || s[i - 1] == '.' || s[i - 1] == ','))) {
      if (auto n = read_number(s, i)) {
        auto [factor, end] = read_multiplier(s, n->end);
        std::size_t j = end;
        if (j < s.size() && s[j] == ' ')
          ++j;
        std::size_t k = j;
        while (k < s.size() && text::is_alpha(s[k]))
          ++k;
        if (k > j)
          if (auto cur = currency_word(s.substr(j, k - j))) {
            out.push_back({i, k, format_value(n->value * factor), *cur});
            i = k;
            continue;
          }
        i = n->end;
        continue;
      }
    }
    ++i;
  }
  return out;
}

}  // namespace engram::reading
