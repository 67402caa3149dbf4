#pragma once
// The save actor: every save and command an agent sends over MCP waits here, not on a thread.
// For each it registers with the apply notifier, appends the record to engram-log without
// waiting (the producer's one poll thread reports delivery) and schedules its timeout as a
// message to itself; whichever comes first answers it: the store applied it, engram-log
// refused it, or its wait ran out (told only once engram-log has said it took the record, so
// "not applied in time, it will be" is never said of a record the log refused). When the actor stops (engramd's stop, or a fault: its
// supervisor starts it again), each save still waiting is answered "not applied before its wait
// was cut short; it will be applied" (what reached engram-log is applied once, as any record).

#include "services/metrics.hpp"
#include "services/notifier.hpp"
#include "services/saves.hpp"
#include "base/result.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/fwd.hpp>
#include <caf/stateful_actor.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>

// Local-only messages: callbacks and shared state, never across a process.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(engram::services::pending_save)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(engram::services::applied_event)

namespace engram::actors {

/// What the save actor reaches out to.
struct save_links {
  services::apply_notifier* notifier = nullptr;
  /// Appends a record to engram-log without waiting: `done` is called once, from any thread,
  /// with nothing or why the log did not take it.
  std::function<void(const schemas::encoded_record& record, std::function<void(engram::result<void>)> done)> append;
  /// Told each message's time and the mailbox left (null: not counted).
  services::metrics* metrics = nullptr;
};

struct saves_state {
  static inline const char* name = "mcp-saves";
  save_links links;
  std::uint64_t next = 0;
  struct waiting_save {
    services::pending_save save;
    /// engram-log confirmed it.
    bool appended = false;
    /// Its wait ran out before engram-log said whether it took it: answered when it says.
    bool late = false;
  };
  /// Saves appended or being appended, not yet answered, by the actor's own number.
  std::map<std::uint64_t, waiting_save> waiting;
  ~saves_state();
};

/// Takes services::pending_save messages; answers `get_atom` with the number of saves waiting
/// and how many of them wait for a delivery report past their wait (two std::size_t).
caf::behavior saves(caf::stateful_actor<saves_state>* self, save_links links);

}  // namespace engram::actors
