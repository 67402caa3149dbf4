#pragma once
// What a broker says of its topics: each partition's range of offsets (the oldest record it
// still keeps and the next offset), and whether engram-log's configuration keeps every
// record (the retention check engramd makes at start on a real broker).

#include "base/result.hpp"
#include "config/config.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace engram::ingest {

/// One partition's offsets: records [start, end) are on the broker.
struct partition_range {
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t start = 0;
  std::int64_t end = 0;
};

/// Every partition of `topics` (of every topic the broker has, when empty), by topic and
/// partition. An error names the topic or partition the broker did not answer for.
[[nodiscard]] engram::result<std::vector<partition_range>> partition_ranges(
    const std::string& brokers, const std::vector<std::string>& topics = {},
    std::chrono::milliseconds timeout = std::chrono::seconds(10));

/// A topic's configuration as the broker describes it: entry name -> value.
using topic_settings = std::map<std::string, std::string>;

struct retention_verdict {
  /// Why engramd must not start; empty: it may.
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
};

/// The retention decision. engram-log must keep every record: retention.ms and
/// retention.bytes -1 (unlimited) and cleanup.policy delete (compaction would drop records
/// that share a key: every record of an organisation does); an entry the broker did not
/// report counts as wrong. `inbound` (null: not described) keeping records for less than
/// `min_inbound_ms` (0: no minimum) is a warning: a stopped extract stage then loses mail.
[[nodiscard]] retention_verdict judge_retention(const std::string& log_topic, const topic_settings& log,
                                                const std::string& inbound_topic, const topic_settings* inbound,
                                                std::uint64_t min_inbound_ms);

/// The configuration of each of `topics` (AdminClient DescribeConfigs), with `rdkafka`
/// properties (kafka.rdkafka); a topic the broker cannot describe (not there yet) is left
/// out. An error when the broker cannot answer: unreachable, or a broker that cannot describe
/// configurations (librdkafka's mock cluster, the test broker: known by its cluster id).
[[nodiscard]] engram::result<std::map<std::string, topic_settings>> describe_topics(
    const std::string& brokers, const std::map<std::string, std::string>& rdkafka,
    const std::vector<std::string>& topics, std::chrono::milliseconds timeout = std::chrono::seconds(10));

/// On a real broker: engram-log must keep every record (judge_retention); an error refuses
/// the start, naming what is wrong. A broker that cannot describe configurations (the test
/// broker) or a topic not there yet is a warning in the log: nothing to check.
[[nodiscard]] engram::result<void> check_log_retention(const config::engram_config& cfg);

/// How create_topic made the topic.
enum class topic_created { existed, created, created_plain };

/// Makes `topic` exist: nothing when it is there; else CreateTopics with `partitions` and
/// `settings` (the broker's default replication). librdkafka's mock cluster (the test broker,
/// known by its cluster id) has no controller to create topics with settings: there the topic
/// is auto-created plain (created_plain). An error names the topic and the broker's reason.
[[nodiscard]] engram::result<topic_created> create_topic(const std::string& brokers,
                                                         const std::map<std::string, std::string>& rdkafka,
                                                         const std::string& topic, int partitions,
                                                         const topic_settings& settings,
                                                         std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace engram::ingest
