#pragma once
// Is a message organisational knowledge at all? Newsletters, list traffic, notifications and
// spam are not. classify_message reads the signals a message carries: its headers
// (List-Id, List-Unsubscribe, Precedence, Auto-Submitted, X-Spam-Flag, ... as `engramctl
// import` copies them into the event), its sender (noreply, newsletter, ...), unsubscribe
// footers, and for spam the density of links, capitals and sales phrases. A pure function of
// the message, so a replay reads the same. What is done with the verdict is config
// (extraction.bulk: skip | low_confidence | keep).

#include "schemas/inbound_message.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace engram::reading {

enum class message_class : std::uint8_t { person, bulk, spam };

[[nodiscard]] std::string_view to_string(message_class c);

struct message_verdict {
  message_class cls = message_class::person;
  /// The signals found ("header list-id", "sender noreply", "unsubscribe footer", "links 12
  /// per 100 words", ...), for logs and tests.
  std::vector<std::string> signals;
};

[[nodiscard]] message_verdict classify_message(const schemas::inbound_message& m);

/// What extraction does with bulk and spam messages (extraction.bulk).
enum class bulk_policy : std::uint8_t { skip, low_confidence, keep };

}  // namespace engram::reading
