#pragma once
// Records deleted from the broker before Engram read them. A consumer that needs offset N of
// a partition whose oldest record is now M > N has lost N..M-1: the sequencer would forward
// less than was sent, the store would hold less than engram-log said. Neither jumps such a
// gap on its own: the partition stops there (engramd answers /readyz 503 naming it) until an
// operator accepts the loss (ingest.accept_gaps, engramctl replay --accept-partial); then the
// gap is recorded and reading goes on at M.

#include "actors/common/status.hpp"

#include <functional>

namespace engram::ingest {

struct gap_handling {
  /// Where open and accepted gaps are shown (/readyz, /v1/stats, /metrics, replay). Required.
  actors::gap_registry* registry = nullptr;
  /// True when the operator accepts losing `g`. Unset: never.
  std::function<bool(const actors::log_gap& g)> accept;
  /// Records an accepted gap durably (the store's record_gap); false keeps the partition
  /// stopped. Unset: nothing to record.
  std::function<bool(const actors::log_gap& g)> record;
};

/// Logs `g` as an error and decides it: true when accepted and recorded (read on at g.to),
/// false when the partition must stay stopped (the gap is open in the registry).
[[nodiscard]] bool settle_gap(const gap_handling& h, const actors::log_gap& g, const char* who);

}  // namespace engram::ingest
