#pragma once
// What the engram-log consumer knows about its partitions, for /readyz, /v1/stats and
// /metrics. Thread-safe; written by the consumer thread, read by HTTP handlers.

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

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
};

/// One assigned partition: where reading starts and the high-water mark at assignment
/// (-1: unknown).
struct assignment {
  std::int64_t start = 0;
  std::int64_t high_watermark = 0;
};

class ingest_status {
public:
  /// Records a whole assignment at once (so ready() never sees part of it: a partition
  /// already caught up must not make the engine ready while the others are still being
  /// added). A partition's catch-up target is only taken the first time it is seen.
  void assigned(const std::map<std::int32_t, assignment>& partitions);
  void revoked_all();
  void applied(std::int32_t partition, std::int64_t next_offset);
  void watermark(std::int32_t partition, std::int64_t high_watermark);
  /// True once partitions were assigned and each reached its catch-up target; stays true.
  [[nodiscard]] bool ready();
  /// Why not ready, for /readyz.
  [[nodiscard]] std::string not_ready_reason();
  [[nodiscard]] std::map<std::int32_t, partition_status> partitions();

private:
  std::mutex mutex_;
  std::map<std::int32_t, partition_status> partitions_;
  std::map<std::int32_t, std::int64_t> targets_;
  bool assigned_ = false;
  bool ready_ = false;
};

}  // namespace engram::actors
