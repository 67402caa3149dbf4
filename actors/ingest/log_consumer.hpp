#pragma once
// The engram-log consumer: the head of the pipeline. Reads engram-log in consumer group
// kafka.group_id, seeks each assigned partition to the offset stored in RocksDB (the
// store, not Kafka, holds the truth), decodes records and hands them in batches to the
// first stage. A bounded number of batches is in flight; on revocation it waits for them.

#include "services/metrics.hpp"
#include "actors/common/pipeline.hpp"
#include "actors/common/status.hpp"
#include "actors/ingest/gaps.hpp"
#include "actors/ingest/key_ring.hpp"
#include "config/config.hpp"
#include "reading/read.hpp"
#include "base/result.hpp"
#include "storage/graph_store.hpp"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <shared_mutex>
#include <string>
#include <thread>

namespace engram::ingest {

/// What a clustered store member (store.cluster) is told of its assignment, on the consumer
/// thread inside the rebalance callback.
struct ownership_hooks {
  /// After partitions were revoked (status already says so) and after new ones were
  /// assigned: publish the assignment (members topic).
  std::function<void()> changed;
  /// Before the stored offsets of newly assigned partitions are read: a standby following
  /// them stops and lets what it read reach the store (log_follower::release).
  std::function<void(const std::set<std::int32_t>&)> assigning;
  /// After partitions were revoked: they may be followed as a standby again.
  std::function<void(const std::set<std::int32_t>&)> revoked;
  /// Taken exclusively on revocation, after the status says the partitions are gone and
  /// before the group may give them to another member: whoever acts for an owned
  /// organisation outside the log (the timers sending a reminder and appending its record)
  /// holds it shared, so nothing is sent for a partition another member already owns.
  std::shared_mutex* guard = nullptr;
  /// Any engramd, not only a clustered one: once the store writes again after a full disk,
  /// before anything more is applied, what was built from the writes that failed is built
  /// again (dedup's indexes). An error keeps applying stopped until the next try.
  std::function<engram::result<void>()> writes_resumed;
};

class log_consumer {
public:
  /// Joins engram-log's consumer group and returns; begin() starts the consumer. The group's
  /// first join (seconds on a broker: its initial rebalance delay, ~3 s on the test broker)
  /// can so run while the store opens: nothing is assigned or fetched before begin(), as
  /// librdkafka hands an assignment over at the first poll. Stopped or destroyed without
  /// begin(), it leaves the group. An error when the consumer cannot be made.
  [[nodiscard]] static engram::result<std::unique_ptr<log_consumer>> subscribe(const config::engram_config& cfg,
                                                                               const std::string& brokers);
  /// Starts the consumer thread (once). `store` is read (stored offsets) from this thread and
  /// written only to record an accepted gap (while nothing of that partition is in flight).
  /// A partition whose next record was deleted from the broker stops there unless `gaps`
  /// accepts the loss (gaps.hpp); a new store needs every partition from offset 0. Records
  /// that carry no reading (format 1, saves without a vector) are read here with `reader`
  /// before they go to the store; `re_extract`: so are the messages that carry theirs (format
  /// 2; engramctl replay --re-extract). Sealed records are opened with `keys` (a record whose
  /// key was deleted is forgotten: applied as nothing).
  void begin(std::shared_ptr<storage::graph_store> store, actors::stage_actor head, services::metrics& metrics,
             actors::ingest_status& status, gap_handling gaps, reading::reader_context reader, bool re_extract = false,
             std::shared_ptr<key_ring> keys = nullptr, ownership_hooks hooks = {});
  ~log_consumer();
  /// Stops after the batches in flight are applied; leaves the consumer group.
  void stop();
  /// Set when the store failed to apply a batch: the consumer stopped, engramd must exit
  /// (nothing is lost: the stored offsets did not advance past the failure).
  [[nodiscard]] bool failed() const { return failed_; }

private:
  log_consumer() = default;
  void run();
  struct impl;
  std::unique_ptr<impl> impl_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  std::thread thread_;
};

/// A clustered member's warm standby (store.standby_replicas): follows engram-log partitions
/// another member owns into this member's store, from the offsets the store holds, outside
/// the consumer group. What it applies is not served (the partitions are not assigned here);
/// when the group assigns one of them here, the consumer resumes from where the standby
/// stood: a catch-up of what the standby had not read yet, not a restore.
class log_follower {
public:
  /// Starts the follower thread; `wanted` (called on it every 250 ms) says which partitions
  /// to follow. An error when the consumer cannot be made.
  [[nodiscard]] static engram::result<std::unique_ptr<log_follower>> start(
      const config::engram_config& cfg, const std::string& brokers, std::shared_ptr<storage::graph_store> store,
      actors::stage_actor head, reading::reader_context reader, std::shared_ptr<key_ring> keys,
      std::function<std::set<std::int32_t>()> wanted);
  ~log_follower();
  /// Stops following `partitions` (and never follows them until as many unblock() calls)
  /// and returns once nothing of them is on its way to the store. Any thread.
  void release(const std::set<std::int32_t>& partitions);
  /// `partitions` may be followed again.
  void unblock(const std::set<std::int32_t>& partitions);
  /// The partitions followed: the next offset applied, and the high-water mark last seen.
  [[nodiscard]] std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>> positions() const;
  /// Stops after the batches in flight are applied.
  void stop();

private:
  log_follower() = default;
  void run();
  struct impl;
  std::unique_ptr<impl> impl_;
  std::thread thread_;
};

}  // namespace engram::ingest
