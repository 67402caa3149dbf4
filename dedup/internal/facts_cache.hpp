#pragma once
// The facts of stored entries dedup read lately. Internal to dedup/; a header so its unit
// test can reach it.
//
// A new statement's neighbours above the threshold are mostly entries read for the
// statements just before it (dense mail restates the same slots): in a 1M-entry replay four
// in five of the candidates' reads had read the same entry within the last 64k reads. Each
// read is a RocksDB point read, a decode and a parse of the title; a hit here is a copy.

#include "dedup/facts.hpp"

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>

namespace engram::dedup::detail {

/// Facts by (organisation, entry id), least recently used first out, at most `capacity`.
/// Exact as long as every batch the store writes is told to forget() (graph_store::
/// watch_entries): a fill presents the generation it saw before its read, and a fill whose
/// read may have overlapped a forget is dropped, so a value read before a write is never
/// kept after it. Safe from any thread.
class facts_cache {
public:
  explicit facts_cache(std::size_t capacity) : capacity_(capacity) {}

  /// The facts held for the entry and true; or false and the generation a fill must present.
  bool find(const std::string& org, const std::string& id, facts& out, std::uint64_t& generation) {
    std::lock_guard lock(mutex_);
    generation = generation_;
    auto it = index_.find(cache_key(org, id));
    if (it == index_.end())
      return false;
    order_.splice(order_.begin(), order_, it->second);
    out = it->second->second;
    ++hits_;
    return true;
  }

  /// Keeps what a read that missed found, unless a forget ran since its find.
  void fill(const std::string& org, const facts& f, std::uint64_t generation) {
    std::lock_guard lock(mutex_);
    if (generation != generation_ || capacity_ == 0)
      return;
    auto k = cache_key(org, f.id);
    if (index_.count(k))
      return;
    order_.emplace_front(std::move(k), f);
    index_.emplace(order_.front().first, order_.begin());
    while (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }

  /// Entries a batch wrote or deleted (`all`: every entry of the organisation).
  void forget(const std::string& org, std::span<const std::string> ids, bool all) {
    std::lock_guard lock(mutex_);
    ++generation_;
    if (all) {
      const auto prefix = cache_key(org, "");
      std::erase_if(order_, [&](const auto& e) {
        if (!e.first.starts_with(prefix))
          return false;
        index_.erase(e.first);
        return true;
      });
      return;
    }
    for (const auto& id : ids)
      if (auto it = index_.find(cache_key(org, id)); it != index_.end()) {
        order_.erase(it->second);
        index_.erase(it);
      }
  }

  [[nodiscard]] std::size_t size() const {
    std::lock_guard lock(mutex_);
    return order_.size();
  }
  /// Finds answered here since the start.
  [[nodiscard]] std::uint64_t hits() const {
    std::lock_guard lock(mutex_);
    return hits_;
  }

private:
  static std::string cache_key(const std::string& org, const std::string& id) {
    std::string k;
    k.reserve(org.size() + 1 + id.size());
    k.append(org).push_back('\0');  // an organisation id holds no NUL (schemas' validation)
    k.append(id);
    return k;
  }

  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::uint64_t generation_ = 0;
  std::uint64_t hits_ = 0;
  std::list<std::pair<std::string, facts>> order_;  // most recently used first
  std::unordered_map<std::string, std::list<std::pair<std::string, facts>>::iterator> index_;
};

}  // namespace engram::dedup::detail
