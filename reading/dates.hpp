#pragma once
// Date expressions in text ("next Friday", "March 5", "by EOD", "in two weeks", "Q3"),
// resolved against the message's sentAt (UTC). Conventions are in docs/extraction.md.

#include "schemas/inbound_message.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace engram::reading {

struct date_match {
  std::size_t begin = 0;
  std::size_t end = 0;
  /// "YYYY-MM-DD", or a period "YYYY-MM-DD/YYYY-MM-DD".
  std::string resolved;
  /// True for expressions relative to sentAt (weekdays, tomorrow, in two weeks, ...).
  bool relative = false;
};

/// Finds date expressions in `s`. `sent_day` is sentAt as days since 1970-01-01 (UTC).
[[nodiscard]] std::vector<date_match> find_dates(std::string_view s, std::int64_t sent_day);

/// Days since 1970-01-01 of a civil date (from schemas), and back as "YYYY-MM-DD".
using schemas::days_from_civil;
[[nodiscard]] std::string format_day(std::int64_t day);

}  // namespace engram::reading
