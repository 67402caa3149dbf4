#pragma once
// Times one message an actor handles into the metrics (services::metrics::count_actor_message):
// its busy time, and the messages left in its mailbox once it is done (read from the actor
// itself: only the actor may look at its own mailbox). A periodic actor's run counts as one.

#include "services/metrics.hpp"

#include <chrono>
#include <string>
#include <utility>

namespace engram::actors {

template <class Self>
class busy_clock {
public:
  /// Nothing is counted when `m` is null.
  busy_clock(services::metrics* m, const std::string& name, Self self)
      : m_(m), name_(name), self_(self), start_(std::chrono::steady_clock::now()) {}
  ~busy_clock() { stop(); }
  /// Counts now, and not again: before a reply that lets a waiter go on (and perhaps end
  /// the metrics' life).
  void stop() {
    if (m_)
      std::exchange(m_, nullptr)
          ->count_actor_message(name_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(),
                                self_->mailbox().size());
  }
  busy_clock(const busy_clock&) = delete;
  busy_clock& operator=(const busy_clock&) = delete;

private:
  services::metrics* m_;
  const std::string& name_;
  Self self_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace engram::actors
