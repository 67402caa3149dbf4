#pragma once
// The timers (docs/architecture.md): expiry sweeps and action-item reminders. They change nothing
// themselves: each change is a record on engram-log (an expire command, a reminder_sent
// command) that the store applies like any other, so a replay repeats exactly what
// happened and sends nothing. They act only once the store has caught up with the log.
//
// A round: (1, once) reminders found on engram-reminders past the last recorded offset are
// recorded (sent before a crash, not yet recorded); (2) for each organisation with expired
// entries or abandoned branches, expire commands of at most `expiry_batch` entries, one at
// a time; (3) for each organisation with a retention (config retention) and messages sent
// before its cutoff (the start of today, UTC, less its days), retention forgets of at most
// `expiry_batch` messages, one at a time; (4) each action item due within `reminder_lead`
// whose reminder is not recorded: the reminder goes to engram-reminders, then its
// reminder_sent command to engram-log.

#include "services/clock.hpp"
#include "services/metrics.hpp"
#include "services/notifier.hpp"
#include "actors/ingest/reminders.hpp"
#include "schemas/log_record.hpp"
#include "base/result.hpp"
#include "config/knowledge.hpp"
#include "storage/graph_store.hpp"

#include <caf/fwd.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

namespace engram::actors {

struct timers_options {
  std::chrono::milliseconds interval{60000};
  std::uint32_t expiry_batch = 100;
  std::int64_t branch_ttl_ms = 24ll * 3600 * 1000;
  std::int64_t reminder_lead_ms = 24ll * 3600 * 1000;
  /// Most reminders one round sends.
  std::uint32_t reminder_batch = 1000;
  /// How long each organisation's messages are kept (none: for ever).
  config::retention_config retention;
  /// How long to wait for the store to apply a command before giving up for this round.
  std::chrono::milliseconds apply_timeout{10000};
  /// Where each round's actions are counted (engram_timer_actions_total); null: nowhere.
  services::metrics* counters = nullptr;
  /// store.cluster: whether this member acts for an organisation now (its partition owned
  /// and caught up here); null: every organisation (one store holds them all).
  std::function<bool(const std::string& organization)> owns;
  /// store.cluster: the partitions owned and caught up, as text; when it changes, reminders
  /// are recovered again, from the start of engram-reminders, for the organisations owned
  /// (a member that died may have sent one and not recorded it).
  std::function<std::string()> ownership;
  /// store.cluster: held shared from the check that an organisation is owned until its
  /// reminder is sent and its record appended (ingest::ownership_hooks::guard).
  std::shared_mutex* guard = nullptr;
};

struct timers_round {
  /// False when the store had not caught up with the log: the round did nothing.
  bool ran = false;
  std::size_t expire_commands = 0;
  std::size_t removed = 0;
  std::size_t dropped_saves = 0;
  std::size_t reminders = 0;
  std::size_t recovered = 0;
  /// Retention forgets appended, and the messages they forgot.
  std::size_t retention_commands = 0;
  std::size_t retained_messages = 0;
  /// Why the round stopped early ("" when it did all it had to).
  std::string problem;
};

class timers {
public:
  /// Appends one record to engram-log; an error when it was not acknowledged.
  using append_fn = std::function<engram::result<void>(const schemas::encoded_record&)>;

  timers(timers_options opts, std::shared_ptr<const storage::graph_store> store,
         std::shared_ptr<const services::clock> clk, services::apply_notifier* notifier, append_fn append,
         std::function<bool()> caught_up, std::unique_ptr<ingest::reminder_channel> reminders);
  ~timers();

  /// Ends the round in progress between two commands and runs no more (engramd's stop,
  /// before the timer actor is stopped).
  void stop() { halting_ = true; }
  [[nodiscard]] bool stopping() const { return halting_; }
  [[nodiscard]] std::chrono::milliseconds interval() const { return opts_.interval; }
  /// One round, now, on the caller's thread (the timer actor's; tests drive time with a
  /// manual clock).
  timers_round tick();

private:
  timers_round round();
  /// The steps of a round, in order; false when the round stops there (r.problem says why).
  bool recover_sent(timers_round& r);
  bool expire(timers_round& r, std::int64_t now);
  bool retain(timers_round& r, std::int64_t now);
  bool send_reminders(timers_round& r, std::int64_t now);
  /// Appends `c` to engram-log and waits until the store applied it: what the store said,
  /// or an error (not appended, not applied in time, or the store failed to apply it).
  [[nodiscard]] engram::result<services::applied_event> apply(const schemas::knowledge_command& c);
  /// apply() in two steps: append (a future of the store's answer), then wait for it.
  [[nodiscard]] engram::result<std::future<services::applied_event>> append(const schemas::knowledge_command& c);
  [[nodiscard]] engram::result<services::applied_event> wait(const schemas::knowledge_command& c,
                                                             std::future<services::applied_event> applied);
  /// Records the reminders found on engram-reminders (past `marks`) not recorded yet, of
  /// the organisations this process acts for; how many, or why it stopped.
  [[nodiscard]] engram::result<std::size_t> recover(const std::map<std::int32_t, std::int64_t>& marks);

  timers_options opts_;
  std::shared_ptr<const storage::graph_store> store_;
  std::shared_ptr<const services::clock> clock_;
  services::apply_notifier* notifier_;
  append_fn append_;
  std::function<bool()> caught_up_;
  std::unique_ptr<ingest::reminder_channel> reminders_;
  bool recovered_ = false;
  /// store.cluster: the ownership (opts.ownership) reminders were last recovered for.
  std::string recovered_for_;
  /// Organisation -> the last cutoff found with nothing left before it (no scan again today).
  std::map<std::string, std::int64_t> retained_until_;
  std::mutex round_mutex_;
  /// Set by stop(): a round in progress ends between two commands (what it sent and did not
  /// record is recovered at the next start), so a stop never waits for a whole round.
  std::atomic<bool> halting_{false};
};

/// The timer actor: a round of `t` now, then one each `t->interval()` after the last ended,
/// as a message it schedules to itself; no thread sleeps. Spawn it detached: a round waits
/// for the store to apply its commands. An exception out of a round stops it with its reason;
/// its supervisor starts it again, and the next round starts over from what the store and
/// engram-reminders say (a round changes nothing but through engram-log).
caf::behavior timer_rounds(caf::event_based_actor* self, timers* t, services::metrics* m);

}  // namespace engram::actors
