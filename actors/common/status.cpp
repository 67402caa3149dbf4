#include "actors/common/status.hpp"

#include <algorithm>

namespace engram::actors {

void ingest_status::assigned(const std::map<std::int32_t, assignment>& partitions) {
  std::lock_guard lock(mutex_);
  for (const auto& [partition, a] : partitions) {
    if (clustered_)
      targets_[partition] = a.high_watermark;
    auto target = targets_.try_emplace(partition, a.high_watermark).first->second;
    partition_status st;
    st.next_offset = a.start;
    st.high_watermark = a.high_watermark;
    st.catch_up_target = target;
    st.assigned_at = a.start;
    partitions_[partition] = std::move(st);
  }
  assigned_ = assigned_ || !partitions.empty();
}

void ingest_status::revoked_all() {
  std::lock_guard lock(mutex_);
  partitions_.clear();
}

void ingest_status::applied(std::int32_t partition, std::int64_t next_offset) {
  std::lock_guard lock(mutex_);
  // Only assigned partitions: a record of a revoked assignment must not add a partition
  // (with no target) that would let ready() pass between a revoke and the next assign.
  auto it = partitions_.find(partition);
  if (it == partitions_.end())
    return;
  auto& p = it->second;
  p.next_offset = next_offset;
  if (p.high_watermark < next_offset)
    p.high_watermark = next_offset;
}

void ingest_status::watermark(std::int32_t partition, std::int64_t high_watermark) {
  std::lock_guard lock(mutex_);
  auto it = partitions_.find(partition);
  if (it == partitions_.end() || high_watermark < 0)
    return;
  it->second.high_watermark = high_watermark;
  if (it->second.catch_up_target < 0)  // unknown at assignment: the first one learnt
    it->second.catch_up_target = targets_[partition] = high_watermark;
}

void ingest_status::read(std::int32_t partition, std::int64_t offset, const std::string& kind) {
  std::lock_guard lock(mutex_);
  auto it = partitions_.find(partition);
  if (it == partitions_.end())
    return;
  auto& p = it->second;
  if (p.first_read < 0)
    p.first_read = offset;
  p.last_read = std::max(p.last_read, offset);
  ++p.kinds[kind];
}

bool ingest_status::ready() {
  std::lock_guard lock(mutex_);
  if (ready_)
    return true;
  if (!assigned_ || partitions_.empty())
    return false;
  for (const auto& [_, p] : partitions_)
    if (!p.caught_up())
      return false;
  if (clustered_)
    return true;  // not latched: the next assignment may bring a partition to restore
  return ready_ = true;
}

std::pair<partition_state, partition_status> ingest_status::state(std::int32_t partition) {
  std::lock_guard lock(mutex_);
  auto it = partitions_.find(partition);
  if (it == partitions_.end())
    return {partition_state::not_owned, {}};
  const auto& p = it->second;
  return {p.caught_up() ? partition_state::ready : partition_state::restoring, p};
}

bool ingest_status::joined() {
  std::lock_guard lock(mutex_);
  return joined_;
}

void ingest_status::joined_group() {
  std::lock_guard lock(mutex_);
  joined_ = true;
}

std::string ingest_status::not_ready_reason() {
  std::lock_guard lock(mutex_);
  if (ready_)
    return {};
  if (!assigned_ || partitions_.empty())
    return "waiting for engram-log partitions to be assigned";
  for (const auto& [id, p] : partitions_)
    if (p.catch_up_target < 0)
      return "engram-log partition " + std::to_string(id) + ": high-water mark not known yet";
  for (const auto& [id, p] : partitions_)
    if (p.next_offset < p.catch_up_target)
      return "catching up: engram-log partition " + std::to_string(id) + " at " + std::to_string(p.next_offset) +
             " of " + std::to_string(p.catch_up_target);
  return {};
}

std::map<std::int32_t, partition_status> ingest_status::partitions() {
  std::lock_guard lock(mutex_);
  return partitions_;
}

std::string log_gap::describe() const {
  return topic + " partition " + std::to_string(partition) + ": " + std::to_string(lost()) + " record" +
         (lost() == 1 ? "" : "s") + " (offsets " + std::to_string(from) + ".." + std::to_string(to - 1) +
         ") were deleted before they were read";
}

void gap_registry::found(const log_gap& g) {
  std::lock_guard lock(mutex_);
  open_[{g.topic, g.partition}] = g;
}

void gap_registry::accepted(const log_gap& g) {
  std::lock_guard lock(mutex_);
  open_.erase({g.topic, g.partition});
  accepted_.push_back(g);
}

void gap_registry::forget(const std::string& topic) {
  std::lock_guard lock(mutex_);
  std::erase_if(open_, [&](const auto& kv) { return kv.first.first == topic; });
}

std::vector<log_gap> gap_registry::open() const {
  std::lock_guard lock(mutex_);
  std::vector<log_gap> out;
  for (const auto& [_, g] : open_)
    out.push_back(g);
  return out;
}

std::vector<log_gap> gap_registry::accepted() const {
  std::lock_guard lock(mutex_);
  return accepted_;
}

}  // namespace engram::actors
