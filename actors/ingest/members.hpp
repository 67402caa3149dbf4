#pragma once
// Clustered store members (store.cluster, docs/scaling-out.md): which organisation lives on
// which engram-log partition, and the members topic (kafka.topics.members, "engram-members")
// on which each member publishes its HTTP address and the partitions it owns. librdkafka
// 2.0.2 offers no public way to put custom data in a group member's metadata, so the
// assignment the consumer group made is told here, keyed by member name (compacted: the last
// record of each member stays; a clean stop writes a tombstone).

#include "base/result.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram::ingest {

/// The engram-log partition an organisation's records land on: librdkafka's default
/// partitioner (consistent_random: CRC-32 of the key, modulo the count), the one every
/// Engram producer uses with key = organisation id.
[[nodiscard]] std::int32_t partition_of(std::string_view organization, std::int32_t partitions);

/// One member's record on the members topic.
struct member_record {
  std::string name;
  /// Where other members forward requests (store.advertised_url).
  std::string url;
  /// Increases with every record the member publishes.
  std::uint64_t seq = 0;
  /// engram-log partitions assigned to it, and those of them caught up.
  std::vector<std::int32_t> owned;
  std::vector<std::int32_t> ready;
  /// Per owned partition: the next offset applied and the catch-up target.
  std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>> progress;
  /// Partitions followed as a standby: the next offset applied and the high-water mark seen.
  std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>> standby;
  [[nodiscard]] std::string to_json() const;
  /// nullopt when `text` is not a member record.
  [[nodiscard]] static std::optional<member_record> parse(std::string_view text);
};

/// A member as this process last heard of it.
struct member_view {
  member_record record;
  /// How long ago its last record arrived here (this process's clock: no clock skew).
  std::chrono::milliseconds age{0};
  /// Heard from within three heartbeats.
  bool live = false;
};

class members_topic {
public:
  /// Creates the topic when missing (compacted; plain on the test broker), reads it whole,
  /// then publishes `self()` every `heartbeat` and whenever publish_now() is called, and
  /// follows the other members' records, on a thread of its own. An error names the topic.
  [[nodiscard]] static engram::result<std::unique_ptr<members_topic>> open(
      const std::string& brokers, const std::map<std::string, std::string>& rdkafka, const std::string& topic,
      std::chrono::milliseconds heartbeat, std::function<member_record()> self);
  ~members_topic();
  members_topic(const members_topic&) = delete;
  members_topic& operator=(const members_topic&) = delete;

  /// Publishes this member's record now, waiting for the broker's acknowledgement (the
  /// rebalance callback calls it, so others stop forwarding to a member that gave a partition up).
  void publish_now();
  /// Every member heard of, by name (this one included).
  [[nodiscard]] std::vector<member_view> members() const;
  /// The live member other than `self_name` that claims `partition` (the most recently heard
  /// claim when two do, as during a rebalance); nullopt when none.
  [[nodiscard]] std::optional<member_record> owner_of(std::int32_t partition, const std::string& self_name) const;
  /// Publishes a tombstone for this member and stops the thread.
  void stop();

private:
  members_topic() = default;
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace engram::ingest
