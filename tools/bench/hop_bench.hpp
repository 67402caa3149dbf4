#pragma once
// What a hop between two actors costs on this machine: the price of splitting a store
// applier into a chain of actors (dedup → contradiction → write), against the time a record
// spends in each step (bench_organisations prints those). Prints figures; asserts nothing.

#include <cstddef>

namespace engram::bench {

struct hop_figures {
  double direct_us = 0;   ///< median: a batch from a thread to a detached actor that completes it, and back
  double chained_us = 0;  ///< median: the same through one more detached actor first
  [[nodiscard]] double per_hop_us() const { return chained_us - direct_us; }
};

/// `n` one-record batches each way (event_batch, as the consumer sends them).
hop_figures bench_hops(std::size_t n);

}  // namespace engram::bench
