#pragma once
// A periodic actor: calls `work` at once, then `interval` after each call returned, as a
// message it schedules to itself (CAF's delayed_send): no thread sleeps between calls, and a
// stop is a message like any other. Spawn it detached when `work` blocks (a timers round
// waits for the store; a janitor sweep drops a partition; a broker check waits for Kafka):
// it then has its own thread. An exception out of `work` stops it with its reason: spawn it
// under a supervisor (supervisor.hpp).

#include "services/metrics.hpp"

#include <caf/fwd.hpp>

#include <chrono>
#include <functional>
#include <string>

namespace engram::actors {

/// `name` and `m` (may be null): each run is counted as one message of `name`.
caf::behavior periodic(caf::event_based_actor* self, std::string name, std::chrono::milliseconds interval,
                       std::function<void()> work, services::metrics* m);

}  // namespace engram::actors
