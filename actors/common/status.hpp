#pragma once
// What the engram-log consumer knows about its partitions, for /readyz, /v1/stats and
// /metrics. Thread-safe; written by the consumer thread, read by HTTP handlers.

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace engram::actors {

struct partition_status {
  /// Next offset to apply (everything before it is durable in the store).
  std::int64_t next_offset = 0;
  /// High-water mark last seen by the consumer.
  std::int64_t high_watermark = 0;
  /// High-water mark when the partition was first assigned: reaching it means caught up.
  /// -1 while unknown (the broker did not answer): then the partition is not caught up, and
  /// the first high-water mark the consumer learns becomes the target.
  std::int64_t catch_up_target = 0;
  /// The offset reading started at when the partition was assigned.
  std::int64_t assigned_at = 0;
  /// First and last offsets read off the log since assignment (-1: none yet).
  std::int64_t first_read = -1;
  std::int64_t last_read = -1;
  /// Records read since assignment, by kind ("extracted-message", ..., "undecodable").
  std::map<std::string, std::uint64_t> kinds;
  /// Reached its catch-up target.
  [[nodiscard]] bool caught_up() const { return catch_up_target >= 0 && next_offset >= catch_up_target; }
};

/// One assigned partition: where reading starts and the high-water mark at assignment
/// (-1: unknown).
struct assignment {
  std::int64_t start = 0;
  std::int64_t high_watermark = 0;
};

/// Where one engram-log partition stands for this process.
enum class partition_state {
  /// Not assigned to this process (another member owns it, or a rebalance is under way).
  not_owned,
  /// Assigned, still applying up to its catch-up target: its organisations are not answered.
  restoring,
  /// Assigned and caught up.
  ready,
};

class ingest_status {
public:
  /// `clustered` (store.cluster): every assignment takes a fresh catch-up target (a
  /// partition that comes back is restoring until it reaches the high-water mark of that
  /// moment) and ready() does not latch: readiness is per partition (state()).
  explicit ingest_status(bool clustered = false) : clustered_(clustered) {}
  void set_clustered(bool clustered) {
    std::lock_guard lock(mutex_);
    clustered_ = clustered;
  }
  /// Records a whole assignment at once (so ready() never sees part of it: a partition
  /// already caught up must not make the engine ready while the others are still being
  /// added). A partition's catch-up target is only taken the first time it is seen.
  void assigned(const std::map<std::int32_t, assignment>& partitions);
  void revoked_all();
  void applied(std::int32_t partition, std::int64_t next_offset);
  /// One record read at `offset` and handed to the store, of kind `kind`.
  void read(std::int32_t partition, std::int64_t offset, const std::string& kind);
  void watermark(std::int32_t partition, std::int64_t high_watermark);
  /// True once partitions were assigned and each reached its catch-up target; stays true.
  [[nodiscard]] bool ready();
  /// Why not ready, for /readyz.
  [[nodiscard]] std::string not_ready_reason();
  [[nodiscard]] std::map<std::int32_t, partition_status> partitions();
  /// Where `partition` stands, with its status when assigned.
  [[nodiscard]] std::pair<partition_state, partition_status> state(std::int32_t partition);
  /// True once the group gave this process an assignment (even an empty one).
  [[nodiscard]] bool joined();
  /// An assignment callback ran (with or without partitions).
  void joined_group();

private:
  std::mutex mutex_;
  std::map<std::int32_t, partition_status> partitions_;
  std::map<std::int32_t, std::int64_t> targets_;
  bool assigned_ = false;
  bool ready_ = false;
  bool joined_ = false;
  bool clustered_ = false;
};

/// Records deleted from a partition of a topic before this process read them: offsets
/// [from, to) are gone (the broker's retention or size limit removed them).
struct log_gap {
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t from = 0;
  std::int64_t to = 0;
  [[nodiscard]] std::int64_t lost() const { return to - from; }
  /// "engram-log partition 3: 463 records (offsets 0..462) were deleted before they were read".
  [[nodiscard]] std::string describe() const;
};

/// The gaps this process met: open ones (the partition is stopped at the gap: engramd is not
/// ready) and the ones accepted since start (ingest.accept_gaps, replay --accept-partial).
/// Thread-safe; written by the consumer threads, read by HTTP handlers and engramctl replay.
class gap_registry {
public:
  /// A partition stopped at a gap; replaces an earlier gap of the same partition.
  void found(const log_gap& g);
  /// The gap was accepted: the partition goes on after it.
  void accepted(const log_gap& g);
  /// Forgets the open gaps of `topic` (its partitions were revoked: their next owner decides).
  void forget(const std::string& topic);
  /// Gaps still open, by topic and partition.
  [[nodiscard]] std::vector<log_gap> open() const;
  /// Gaps accepted since start, in order.
  [[nodiscard]] std::vector<log_gap> accepted() const;

private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::int32_t>, log_gap> open_;
  std::vector<log_gap> accepted_;
};

}  // namespace engram::actors
