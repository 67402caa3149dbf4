// libFuzzer: the date and amount readers (reading/dates.hpp, reading/amounts.hpp) over any text.
// The first two bytes pick the day the message was sent (days since 1970). What they find lies
// inside the text they read.
#include "reading/amounts.hpp"
#include "reading/dates.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2)
    return 0;
  const std::int64_t sent_day = 18000 + (data[0] << 8 | data[1]) % 12000;  // 2019 .. 2052
  const std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);
  for (const auto& d : engram::reading::find_dates(text, sent_day))
    if (d.begin > d.end || d.end > text.size() || d.resolved.size() < 10)
      std::abort();
  for (const auto& a : engram::reading::find_amounts(text))
    if (a.begin > a.end || a.end > text.size() || a.value.empty())
      std::abort();
  return 0;
}
