#pragma once
// Clustered store members (docs/scaling-out.md), measured from outside with real
// engramd processes on the test broker (12 partitions): the restore rate of a member that
// takes partitions over from scratch and of one that kept them; the time from a member's
// kill -9 to its organisations answering again, when the survivor kept the partitions and
// when it never held them; and what forwarding adds to a recall (p50, p99). Every member
// shares this machine's cores; per-member CPU seconds are printed. Figures only; nothing
// here asserts a speed.

#include <cstddef>
#include <string>

namespace engram::bench {

struct cluster_options {
  std::string model_path;
  /// Dense messages spread over `organizations` (the test broker keeps ~5 MiB a partition).
  std::size_t messages = 2400;
  std::size_t organizations = 24;
  /// Recalls through the owner and through another member.
  std::size_t queries = 300;
  /// kafka.rdkafka.session.timeout.ms of the members: how long a killed member goes unnoticed.
  std::size_t session_timeout_ms = 6000;
};

int cluster(const cluster_options& o);

}  // namespace engram::bench
