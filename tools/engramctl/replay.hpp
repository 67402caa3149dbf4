#pragma once
// engramctl replay: rebuilds the graph from engram-log into a new store, then prints its
// digest (--re-extract: every message read again with today's extractor and encoder).

#include <string>
#include <vector>

namespace engram::ctl {

struct replay_options {
  /// engramd's configuration (brokers, topics, ...) and overrides, as for engramd.
  std::string config_path = "config/engram.yaml";
  std::vector<std::string> overrides;
  /// The new store's directory (new or empty).
  std::string into;
  bool re_extract = false;
  bool accept_partial = false;
};

/// Rebuilds the graph from offset 0 of every engram-log partition into `into` (new or
/// empty) in a consumer group of its own, up to the high-water marks seen when its
/// partitions were assigned; writes to no topic; then prints, per partition, the offsets read
/// and the records by kind, and the new store's digest. A partition whose first records were
/// deleted from the broker fails the replay (exit 1, the partition and the count named)
/// unless `accept_partial`: then it rebuilds from what is left and says what is missing.
/// `re_extract`: what the records say was read is ignored and every message is read again
/// (rules or model upgrades): a new digest, by design.
/// Exit status: 0 (the digest on stdout, the report on stderr); 1 when the replay failed;
/// 2 for a configuration or usage problem.
int replay(const replay_options& o);

}  // namespace engram::ctl
