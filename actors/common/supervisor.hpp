#pragma once
// Keeps one actor running (docs/architecture.md, "Supervision"): spawns it, watches it, and
// when it stops unasked (an exception out of a handler: any reason but a shutdown) says which
// and why, and spawns it again. An actor that stops `limit` times within `window` cannot run:
// the supervisor gives up, says so, and leaves it stopped (the engine then stops, naming it).
// For actors whose state can be started over: what they hold is rebuilt from what the store
// and engram-log say (the timers), or is a set of waits each answered as the actor goes
// (mcp-saves). The store's appliers are not restarted (store_watch.hpp says why).

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/error.hpp>

#include <chrono>
#include <cstddef>
#include <exception>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace engram::actors {

struct supervision {
  /// Reported as, in the log and to `restarted` / `gave_up` ("mcp-saves", "timers").
  std::string name;
  /// Spawns the actor (called again for each restart, on the supervisor's thread).
  std::function<caf::actor()> spawn;
  /// Told each restart with why it stopped (metrics); may be empty.
  std::function<void(const std::string& name, const std::string& why)> restarted;
  /// Told once when the supervisor gives up: "<name> stopped N times within S s; last: <why>".
  std::function<void(const std::string& why)> gave_up;
  std::size_t limit = 5;
  std::chrono::seconds window{60};
};

/// An exception out of a handler as the reason its actor stops, its text kept (for the log):
/// `self->set_exception_handler([](caf::scheduled_actor*, std::exception_ptr& x) { return
/// exception_reason(x); })`.
[[nodiscard]] caf::error exception_reason(std::exception_ptr& x);
/// What the exception says ("an exception of unknown type" when it is no std::exception).
[[nodiscard]] std::string exception_text(std::exception_ptr& x);

class supervisor {
public:
  /// Spawns the actor and its watcher.
  supervisor(caf::actor_system& sys, supervision s);
  /// stop().
  ~supervisor();
  supervisor(const supervisor&) = delete;
  supervisor& operator=(const supervisor&) = delete;

  /// The running actor (a stopped one while the watcher restarts it, or after it gave up):
  /// messages sent to a stopped actor are dropped. Thread-safe.
  [[nodiscard]] caf::actor current() const;
  /// Stops the actor (a shutdown: never restarted) and waits until it and the watcher are gone.
  void stop();

  struct shared;

private:
  caf::actor_system& sys_;
  std::shared_ptr<shared> shared_;
  caf::actor watcher_;
};

}  // namespace engram::actors
