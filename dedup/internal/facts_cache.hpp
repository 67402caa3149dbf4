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
  explicit facts_cache(std::size_t capacity) : capacity_(capacity) {
    index_.reserve(capacity + 1);  // a fill holds one more before it evicts: never rehashed
  }

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
    bytes_ += held_bytes(order_.front());
    while (order_.size() > capacity_) {
      bytes_ -= held_bytes(order_.back());
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
        bytes_ -= held_bytes(e);
        index_.erase(e.first);
        return true;
      });
      return;
    }
    for (const auto& id : ids)
      if (auto it = index_.find(cache_key(org, id)); it != index_.end()) {
        bytes_ -= held_bytes(*it->second);
        order_.erase(it->second);
        index_.erase(it);
      }
  }

  [[nodiscard]] std::size_t size() const {
    std::lock_guard lock(mutex_);
    return order_.size();
  }
  /// Heap bytes of what is kept (each string's buffer beyond the inline ones, every node and
  /// array of the containers, the list's and the map's nodes; the allocator's own headers
  /// aside): what /metrics shows as engram_memory_bytes{part="dedup_facts"}.
  [[nodiscard]] std::size_t memory_bytes() const {
    std::lock_guard lock(mutex_);
    return bytes_ + index_.bucket_count() * sizeof(void*);
  }
  /// Finds answered here since the start.
  [[nodiscard]] std::uint64_t hits() const {
    std::lock_guard lock(mutex_);
    return hits_;
  }

private:
  using kept = std::pair<std::string, facts>;

  static std::size_t held_bytes(const kept& e) {
    constexpr std::size_t tree_node = 4 * sizeof(void*) + sizeof(std::string);  // a set's
    auto str = [](const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; };
    auto all = [&](const auto& strings, std::size_t node) {
      std::size_t n = 0;
      for (const auto& s : strings)
        n += node + str(s);
      return n;
    };
    const auto& f = e.second;
    std::size_t n = sizeof(kept) + 2 * sizeof(void*)           // the list's node
                    + sizeof(std::string) + 3 * sizeof(void*)  // the map's: its key, iterator, next
                    + 2 * str(e.first);
    n += str(f.id) + str(f.title) + str(f.subject) + str(f.slot) + str(f.markers) + str(f.author) + str(f.status);
    n += all(f.sig.numbers, 0) + all(f.sig.dates, 0) + all(f.sig.amounts, 0) + all(f.sig.entities, 0);
    n += (f.sig.numbers.capacity() + f.sig.dates.capacity() + f.sig.amounts.capacity() + f.sig.entities.capacity()) *
         sizeof(std::string);
    n += str(f.sig.words) + str(f.sig.key) + str(f.sense.tense);
    n += f.order.capacity() * sizeof(order_word);
    for (const auto& w : f.order)
      n += str(w.word);
    n += all(f.sense.modal, tree_node) + all(f.sense.standing, tree_node) + all(f.sense.owner, tree_node);
    return n;
  }

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
  std::size_t bytes_ = 0;
  std::list<kept> order_;  // most recently used first
  std::unordered_map<std::string, std::list<kept>::iterator> index_;
};

}  // namespace engram::dedup::detail
