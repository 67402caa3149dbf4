#pragma once
// engramctl devbroker: a standalone Kafka mock cluster (librdkafka's), for tests and local
// runs, until SIGTERM or Ctrl-C.

#include <string>
#include <vector>

namespace engram::ctl {

struct devbroker_options {
  /// Partitions per topic.
  int partitions = 4;
  /// Where to write the bootstrap address (written whole, then renamed); empty: nowhere.
  std::string bootstrap_file;
  std::vector<std::string> topics{"inbound-messages", "engram-log", "engram-reminders", "engram-dlq", "engram-keys"};
};

/// Prints the bootstrap address on stdout, then serves until SIGTERM or SIGINT; SIGUSR1 takes
/// the brokers down (an outage), SIGUSR2 brings them back. Exit 0, or 1
/// when the broker cannot start or the bootstrap file cannot be written.
int devbroker(const devbroker_options& o);

}  // namespace engram::ctl
