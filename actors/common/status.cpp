#include "actors/common/status.hpp"

namespace engram::actors {

void ingest_status::assigned(const std::map<std::int32_t, assignment>& partitions) {
  std::lock_guard lock(mutex_);
  for (const auto& [partition, a] : partitions) {
    auto target = targets_.try_emplace(partition, a.high_watermark).first->second;
    partitions_[partition] = partition_status{a.start, a.high_watermark, target};
  }
  assigned_ = assigned_ || !partitions.empty();
}

void ingest_status::revoked_all() {
  std::lock_guard lock(mutex_);
  partitions_.clear();
}

void ingest_status::applied(std::int32_t partition, std::int64_t next_offset) {
  std::lock_guard lock(mutex_);
  auto& p = partitions_[partition];
  p.next_offset = next_offset;
  if (p.high_watermark < next_offset)
    p.high_watermark = next_offset;
}

void ingest_status::watermark(std::int32_t partition, std::int64_t high_watermark) {
  std::lock_guard lock(mutex_);
  if (auto it = partitions_.find(partition); it != partitions_.end() && high_watermark >= 0)
    it->second.high_watermark = high_watermark;
}

bool ingest_status::ready() {
  std::lock_guard lock(mutex_);
  if (ready_)
    return true;
  if (!assigned_ || partitions_.empty())
    return false;
  for (const auto& [_, p] : partitions_)
    if (p.next_offset < p.catch_up_target)
      return false;
  return ready_ = true;
}

std::string ingest_status::not_ready_reason() {
  std::lock_guard lock(mutex_);
  if (ready_)
    return {};
  if (!assigned_ || partitions_.empty())
    return "waiting for engram-log partitions to be assigned";
  for (const auto& [id, p] : partitions_)
    if (p.next_offset < p.catch_up_target)
      return "catching up: engram-log partition " + std::to_string(id) + " at " +
             std::to_string(p.next_offset) + " of " + std::to_string(p.catch_up_target);
  return {};
}

std::map<std::int32_t, partition_status> ingest_status::partitions() {
  std::lock_guard lock(mutex_);
  return partitions_;
}

}  // namespace engram::actors
