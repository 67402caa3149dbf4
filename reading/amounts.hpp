#pragma once
// Money amounts in text: "$12,500", "12.5k USD", "€500", "EUR 48,000", "3 million euros".

#include <string>
#include <string_view>
#include <vector>

namespace engram::reading {

struct amount_match {
  std::size_t begin = 0;
  std::size_t end = 0;
  /// The number, without separators or exponent words: "12500", "4.5".
  std::string value;
  /// ISO 4217: "USD", "EUR", "GBP", ...
  std::string currency;
};

[[nodiscard]] std::vector<amount_match> find_amounts(std::string_view s);

}  // namespace engram::reading
