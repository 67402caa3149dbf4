#pragma once
// A record an agent sent (a save, a command), on its way to the store: the engine's save
// actor appends it to engram-log and answers it once the store has applied it; MCP builds
// the tool's reply from that answer. Shared by both without CAF.

#include "services/notifier.hpp"
#include "schemas/log_record.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace engram::services {

/// How a save (or any command an agent sends) ended.
struct save_outcome {
  enum class state {
    applied,              ///< the store applied it: `applied` says what it decided
    not_appended,         ///< engram-log did not take it: `error` says why (nothing was written)
    not_applied_in_time,  ///< on engram-log, not applied within its wait (it will be)
    stopped,              ///< on engram-log or on its way, and its waiter stopped first (engramd's stop, a restart)
  };
  state what = state::stopped;
  applied_event applied;
  std::string error;
};

/// A record an agent sent, on its way: appended to engram-log, answered once the store has
/// applied it (read your writes). Copies share one answer: the first answer() is the one
/// given, and a save whose last copy goes unanswered is answered `stopped` once its append
/// has begun (appending()), else `not_appended` (nothing was sent), so no save is ever left
/// without an answer, nor told it is on its way when it never left.
class pending_save {
public:
  pending_save(std::string organization_id, std::string event_id, schemas::encoded_record record,
               std::chrono::milliseconds wait, std::function<void(save_outcome)> done);
  [[nodiscard]] const std::string& organization_id() const;
  [[nodiscard]] const std::string& event_id() const;
  [[nodiscard]] const schemas::encoded_record& record() const;
  /// How long to wait for the store once appended.
  [[nodiscard]] std::chrono::milliseconds wait() const;
  /// Answers the save (once; later calls do nothing).
  void answer(save_outcome outcome) const;
  /// Its record is being sent to engram-log (called just before the append).
  void appending() const;

private:
  struct shared;
  std::shared_ptr<shared> shared_;
};

}  // namespace engram::services
