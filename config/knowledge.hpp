#pragma once
// How stored knowledge ages and what runs on a clock: the decay, branches, reminders and
// timers sections of engram.yaml.

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace engram::config {

struct decay_config {
  /// Half-life in days per entry type (fact, decision, event, preference, goal,
  /// relationship, action_item); 0 = no decay. effectiveConfidence = confidence ×
  /// 0.5^(days since lastValidatedAt / half-life), evaluated at read time.
  std::array<double, 7> half_life_days{180, 730, 0, 90, 30, 120, 14};
  /// Below this effective confidence an entry leaves recall (it stays readable by id).
  double hide_below = 0.1;
};

struct branches_config {
  /// A branch without a save for this long is abandoned: its saves vanish.
  std::uint64_t ttl_ms = 24ull * 3600 * 1000;
};

struct reminders_config {
  /// How long before an action item's dueAt its reminder goes out.
  std::uint64_t lead_ms = 24ull * 3600 * 1000;
  /// Most reminders one timers round sends (the rest go in the next rounds). Default: 1000.
  std::uint32_t batch = 1000;
};

struct timers_config {
  /// How often the timers look for expired entries, abandoned branches and due reminders.
  std::uint64_t interval_ms = 60000;
  /// Most entries one expiry sweep removes (a small batch: ingestion never waits long).
  std::uint32_t expiry_batch = 100;
};

/// How long messages are kept (docs/forgetting.md#retention): the timers forget the text and
/// passages of messages sent longer ago; the entries read from them stay.
struct retention_config {
  /// Days, for every organisation without a policy of its own; 0: for ever. Default: 0.
  std::uint32_t messages_days = 0;
  /// Organisation id -> days (0: for ever), over messages_days.
  std::map<std::string, std::uint32_t> organizations;
  /// The days for `org`; 0: kept for ever.
  [[nodiscard]] std::uint32_t days_for(const std::string& org) const {
    auto it = organizations.find(org);
    return it == organizations.end() ? messages_days : it->second;
  }
};

}  // namespace engram::config
