#pragma once
// The kafka section of engram.yaml: the brokers, the consumer group, librdkafka's own
// properties and the topic names.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace engram::config {

/// Kafka topic names. Other programs depend on the defaults (docs/architecture.md).
struct topics_config {
  /// Upstream topic the bus writes messages to. Default: "inbound-messages".
  std::string inbound = "inbound-messages";
  /// Engram's log of record; the store is built from this topic alone. Default: "engram-log".
  std::string log = "engram-log";
  /// Action-item reminders (a later issue). Default: "engram-reminders".
  std::string reminders = "engram-reminders";
  /// Poison events, with the original bytes and a `reason` header. Default: "engram-dlq".
  std::string dead_letter = "engram-dlq";
  /// The data keys of sealed engram-log records (crypto-shredding, docs/forgetting.md): a
  /// compacted topic (cleanup.policy=compact). Default: "engram-keys".
  std::string keys = "engram-keys";
  /// Each clustered store member's address and partitions (store.cluster): a compacted
  /// topic keyed by member name. Default: "engram-members".
  std::string members = "engram-members";
};

struct kafka_config {
  /// Bootstrap servers, or "embedded" to start librdkafka's mock cluster inside engramd.
  /// Default: "embedded".
  std::string brokers = "embedded";
  /// Consumer group of the engram-log pipeline; the sequencer uses `<group_id>-sequencer`.
  /// Default: "engram".
  std::string group_id = "engram";
  /// librdkafka properties passed through unchanged to every client. Default: none.
  std::map<std::string, std::string> rdkafka;
  topics_config topics;
  /// On a real broker, engramd refuses to start unless the log topic keeps every record
  /// (retention.ms and retention.bytes -1, cleanup.policy delete), and warns when the inbound
  /// topic keeps records for less than this. 0: no warning. Default: 604,800,000 (7 days).
  std::uint64_t min_inbound_retention_ms = 604800000;
  /// engramd creates the key topic (topics.keys) when it is missing, compacted
  /// (ingest::key_topic_settings); false: a missing key topic is an error that names it (for
  /// brokers where topics are made by ops alone). Default: true.
  bool create_key_topic = true;
  /// True when `brokers` asks for the in-process mock cluster.
  [[nodiscard]] bool embedded() const { return brokers == "embedded"; }
};

/// The six topics have distinct names; or the problem.
[[nodiscard]] std::optional<std::string> validate(const topics_config& topics);
/// The topics, then a group id that is not empty; or the first problem.
[[nodiscard]] std::optional<std::string> validate(const kafka_config& kafka);

}  // namespace engram::config
