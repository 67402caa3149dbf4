#pragma once
// engram_bench soak (tools/dev.sh soak [MINUTES]): engramd as a child process under steady
// mail and several agents for a long while; every minute its resident memory, open files,
// engram-log lag and each tool's p50/p99 as the agents saw them; at the end, whether each
// stayed flat after the warm-up. A benchmark, not a test: it prints, it asserts nothing.

#include <cstddef>
#include <string>

namespace engram::bench {

struct soak_options {
  std::string model_path;
  double minutes = 30;
  /// Mail events a second, over 8 organisations (the test broker keeps ~5 MiB a partition:
  /// 30 minutes at 1/s fit).
  double mail_per_second = 1;
  /// Agents calling recall, save and the entity tools in turn, each in an organisation of its
  /// own, each `calls_per_second` (a save is 1 call in 4, an entity creation 1 in 8: 30
  /// minutes at 2/s keep an agent's engram-log partition under the test broker's limit).
  int agents = 3;
  double calls_per_second = 2;
  /// Minutes left out of the flatness verdicts (the store, index and caches filling).
  double warm_up_minutes = 5;
};

/// Runs the soak; 0, or 1 when engramd died under it.
int soak(const soak_options& o);

}  // namespace engram::bench
