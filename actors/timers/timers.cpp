#include "actors/timers/timers.hpp"
#include "logging/log.hpp"

#include "actors/common/periodic.hpp"
#include "base/faults.hpp"

#include "knowledge/read_rules.hpp"
#include "schemas/knowledge_command.hpp"
#include "schemas/time.hpp"

#include <caf/behavior.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <ctime>

namespace engram::actors {

namespace {
spdlog::logger& logger() { return logging::get(logging::module::timers); }

using json = nlohmann::json;

std::string rfc3339(std::int64_t ms) { return schemas::format_rfc3339(ms); }

std::string reminder_id_of(const std::string& entry_id) { return "rem-" + entry_id; }

/// The reminder_sent command: `reminder` (of entry `entry`) is at `partition`/`offset` of
/// engram-reminders.
schemas::knowledge_command reminder_sent_command(const std::string& org, const std::string& entry,
                                                 const std::string& reminder, std::int32_t partition,
                                                 std::int64_t offset, std::int64_t issued_at_ms) {
  schemas::knowledge_command c;
  c.op = schemas::command_op::reminder_sent;
  c.event_id = "sent-" + reminder;  // one per reminder: recorded twice is applied once
  c.organization_id = org;
  c.issued_at_ms = issued_at_ms;
  c.issued_at = rfc3339(c.issued_at_ms);
  c.issued_by = "timers";
  c.id = entry;
  c.reminder_id = reminder;
  c.reminder_partition = partition;
  c.reminder_offset = offset;
  return c;
}

/// The round's `n`-th expire command for `org`, at `now`.
schemas::knowledge_command expire_command(const std::string& org, std::int64_t now, int n, const timers_options& opts) {
  schemas::knowledge_command c;
  c.op = schemas::command_op::expire;
  c.organization_id = org;
  c.issued_at_ms = now;
  c.issued_at = rfc3339(now);
  c.issued_by = "timers";
  c.event_id = "expire-" + std::to_string(now) + "-" + std::to_string(n);
  c.limit = opts.expiry_batch;
  c.ttl_ms = opts.branch_ttl_ms;
  return c;
}

/// The round's `n`-th retention forget for `org`: messages sent before `cutoff`.
schemas::knowledge_command retention_command(const std::string& org, std::int64_t now, std::int64_t cutoff, int n,
                                             const timers_options& opts) {
  schemas::knowledge_command c;
  c.op = schemas::command_op::forget;
  c.what = std::string(schemas::retention_kind);
  c.organization_id = org;
  c.issued_at_ms = now;
  c.issued_at = rfc3339(now);
  c.issued_by = "timers";
  c.event_id = "retain-" + std::to_string(now) + "-" + std::to_string(n);
  c.id = rfc3339(cutoff);
  c.limit = opts.expiry_batch;
  return c;
}

constexpr std::int64_t day_ms = 24ll * 3600 * 1000;

/// The reminder sent to engram-reminders for the action item `doc`.
json reminder_value(const storage::due_item& due, const knowledge::stored_entry& doc, const std::string& reminder,
                    std::int64_t reminder_lead_ms) {
  return json{{"reminderId", reminder},
              {"organizationId", due.organization_id},
              {"entryId", due.entry_id},
              {"title", doc.title},
              {"content", doc.content},
              {"dueAt", doc.due_at.empty() ? json(nullptr) : json(doc.due_at)},
              {"remindAt", rfc3339(due.due_ms - reminder_lead_ms)},
              {"contactIds", doc.contact_ids}};
}

}  // namespace

timers::timers(timers_options opts, std::shared_ptr<const storage::graph_store> store,
               std::shared_ptr<const services::clock> clk, services::apply_notifier* notifier, append_fn append,
               std::function<bool()> caught_up, std::unique_ptr<ingest::reminder_channel> reminders)
    : opts_(opts),
      store_(std::move(store)),
      clock_(std::move(clk)),
      notifier_(notifier),
      append_(std::move(append)),
      caught_up_(std::move(caught_up)),
      reminders_(std::move(reminders)) {}

timers::~timers() { stop(); }

namespace {
/// One round, said in the log.
void run_round(timers& t) {
  auto r = t.tick();
  if (!r.problem.empty())
    logger().warn("{}", r.problem);
  if (r.expire_commands || r.reminders || r.recovered || r.retention_commands)
    logger().info(
        "{} expire commands ({} entries removed, {} branch saves dropped), {} retention forgets ({} messages), "
        "{} reminders sent, {} recovered",
        r.expire_commands, r.removed, r.dropped_saves, r.retention_commands, r.retained_messages, r.reminders,
        r.recovered);
}
}  // namespace

caf::behavior timer_rounds(caf::event_based_actor* self, timers* t, services::metrics* m) {
  return periodic(
      self, "timers", t->interval(),
      [t] {
        if (!t->stopping())
          run_round(*t);
      },
      m);
}

engram::result<services::applied_event> timers::apply(const schemas::knowledge_command& c) {
  auto appended = append(c);
  if (!appended)
    return engram::fail(appended.error());
  return wait(c, std::move(*appended));
}

engram::result<std::future<services::applied_event>> timers::append(const schemas::knowledge_command& c) {
  auto applied = notifier_->expect(c.organization_id, c.event_id);
  if (auto appended = append_(schemas::encode(c)); !appended) {
    notifier_->forget(c.organization_id, c.event_id);
    return engram::fail(appended.error());
  }
  return applied;
}

engram::result<services::applied_event> timers::wait(const schemas::knowledge_command& c,
                                                     std::future<services::applied_event> applied) {
  if (applied.wait_for(opts_.apply_timeout) != std::future_status::ready) {
    notifier_->forget(c.organization_id, c.event_id);
    return engram::fail("command " + c.event_id + " not applied within " + std::to_string(opts_.apply_timeout.count()) +
                        " ms");
  }
  auto what = applied.get();
  if (what.error != storage::errc::ok)
    return engram::fail("the store failed to apply " + c.event_id);
  return what;
}

engram::result<std::size_t> timers::recover(const std::map<std::int32_t, std::int64_t>& marks) {
  auto found = reminders_->sent_since(marks);
  if (!found)
    return engram::fail("reminder recovery: " + found.error());
  std::size_t recorded = 0;
  for (const auto& s : *found) {
    auto j = json::parse(s.value, nullptr, false);
    // Any record on the topic is read defensively: one without a string entryId is not ours.
    if (!j.is_object() || !j.contains("entryId") || !j["entryId"].is_string() || s.reminder_id.empty())
      continue;
    const auto entry = j["entryId"].get<std::string>();
    if (opts_.owns) {
      // Clustered: the whole topic is read; only what this member acts for and has not
      // recorded yet (the entry says which reminder it got) is recorded.
      if (!opts_.owns(s.organization_id))
        continue;
      auto raw = store_->get_entry(s.organization_id, entry);
      knowledge::stored_entry doc;
      if (!raw || knowledge::decode(*raw, doc) || !doc.reminder_id.empty())
        continue;
    }
    auto done =
        apply(reminder_sent_command(s.organization_id, entry, s.reminder_id, s.partition, s.offset, clock_->now_ms()));
    if (!done)
      return engram::fail("reminder recovery: " + done.error());
    ++recorded;
  }
  if (recorded)
    logger().info("{} reminders found on engram-reminders and not recorded: recorded them", recorded);
  return recorded;
}

timers_round timers::tick() {
  auto r = round();
  if (opts_.counters && r.ran && r.problem.empty())
    opts_.counters->count_timer_round(r.removed, r.dropped_saves, r.reminders, r.recovered);
  return r;
}

timers_round timers::round() {
  std::lock_guard round(round_mutex_);
  timers_round r;
  if (!caught_up_())
    return r;  // acting on a store behind the log could repeat what the log already records
  r.ran = true;
  const auto now = clock_->now_ms();
  // Each step stops the round at its first problem (r.problem says which).
  (void)(recover_sent(r) && expire(r, now) && retain(r, now) && send_reminders(r, now));
  return r;
}

// (1) Sent before a crash, not recorded: record, never send again. Clustered, the marks (a
// maximum over every organisation of a reminders partition) say nothing of another member's
// organisations: the whole topic is read again whenever the ownership changes.
bool timers::recover_sent(timers_round& r) {
  if (reminders_ && opts_.ownership) {
    auto now_owned = opts_.ownership();
    if (now_owned != recovered_for_ || !recovered_) {
      auto found = recover({});
      if (!found) {
        r.problem = found.error();
        return false;
      }
      r.recovered += *found;
      recovered_for_ = std::move(now_owned);
      recovered_ = true;
    }
  } else if (reminders_ && !recovered_) {
    auto found = recover(store_->reminder_marks());
    if (!found) {
      r.problem = found.error();
      return false;
    }
    r.recovered += *found;
    recovered_ = true;
  }
  return true;
}

// (2) Expiry, in small commands: ingestion's records interleave with them.
bool timers::expire(timers_round& r, std::int64_t now) {
  for (const auto& org : store_->stats()) {
    if (opts_.owns && !opts_.owns(org.organization_id))
      continue;
    for (int n = 0; !halting_ && store_->has_expired(org.organization_id, now, opts_.branch_ttl_ms); ++n) {
      throw_if_fault_at("expire");  // the failure tests: a round that fails with work to do
      auto what = apply(expire_command(org.organization_id, now, n, opts_));
      if (!what) {
        r.problem = "expiry: " + what.error();
        return false;
      }
      ++r.expire_commands;
      const std::size_t removed = what->command ? what->command->removed.size() : 0;
      const std::size_t dropped = what->command ? what->command->dropped_saves : 0;
      r.removed += removed;
      r.dropped_saves += dropped;
      if (removed == 0 && dropped == 0)
        break;  // nothing more it can remove now
    }
  }
  return true;
}

// (3) Retention: the messages of each organisation with a policy, sent before the start of
// today (UTC) less its days, in small commands.
bool timers::retain(timers_round& r, std::int64_t now) {
  for (const auto& org : store_->stats()) {
    const auto& id = org.organization_id;
    if (opts_.owns && !opts_.owns(id))
      continue;
    const auto days = opts_.retention.days_for(id);
    if (days == 0)
      continue;
    const std::int64_t cutoff = (now / day_ms - static_cast<std::int64_t>(days)) * day_ms;
    if (auto done = retained_until_.find(id); done != retained_until_.end() && done->second == cutoff)
      continue;  // nothing was left before this cutoff
    for (int n = 0; !halting_; ++n) {
      if (!store_->has_retention_due(id, cutoff)) {
        retained_until_[id] = cutoff;
        break;
      }
      auto what = apply(retention_command(id, now, cutoff, n, opts_));
      if (!what) {
        r.problem = "retention: " + what.error();
        return false;
      }
      ++r.retention_commands;
      std::size_t messages = 0;
      if (what->command)
        if (auto it = what->command->forgotten.find("messages"); it != what->command->forgotten.end())
          messages = it->second;
      r.retained_messages += messages;
      if (messages == 0)
        break;  // nothing it could remove now
    }
  }
  return true;
}

// (4) Reminders due within the lead time.
bool timers::send_reminders(timers_round& r, std::int64_t now) {
  if (!reminders_)
    return true;
  for (const auto& due : store_->due_reminders(now + opts_.reminder_lead_ms, opts_.reminder_batch)) {
    if (halting_)
      break;
    auto raw = store_->get_entry(due.organization_id, due.entry_id);
    if (!raw)
      continue;
    knowledge::stored_entry doc;
    if (knowledge::decode(*raw, doc) || !knowledge::visible(doc, rfc3339(now)) || !doc.reminder_id.empty())
      continue;  // superseded, expired (the next sweep removes it), or reminded already
    const auto reminder = reminder_id_of(due.entry_id);
    json value = reminder_value(due, doc, reminder, opts_.reminder_lead_ms);
    const auto command_of = [&](const ingest::reminder_channel::position& at) {
      return reminder_sent_command(due.organization_id, due.entry_id, reminder, at.partition, at.offset,
                                   clock_->now_ms());
    };
    schemas::knowledge_command command;
    std::future<services::applied_event> applied;
    {
      // Clustered: owned from the check until the record is on the log (a revocation waits
      // for this; the next owner's catch-up then includes the record).
      std::shared_lock<std::shared_mutex> held;
      if (opts_.guard)
        held = std::shared_lock(*opts_.guard);
      if (opts_.owns && !opts_.owns(due.organization_id))
        continue;
      auto sent = reminders_->send(due.organization_id, reminder, value.dump());
      if (!sent) {
        r.problem = "reminder: " + sent.error();
        return false;
      }
      command = command_of(*sent);
      auto appended = append(command);
      if (!appended) {
        r.problem = "reminder sent but not yet recorded (recorded at the next start): " + appended.error();
        recovered_ = false;  // look for it on the topic next round
        return false;
      }
      applied = std::move(*appended);
    }
    if (auto recorded = wait(command, std::move(applied)); !recorded) {
      r.problem = "reminder sent but not yet recorded (recorded at the next start): " + recorded.error();
      recovered_ = false;  // look for it on the topic next round
      return false;
    }
    ++r.reminders;
  }
  return true;
}

}  // namespace engram::actors
