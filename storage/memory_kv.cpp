// The memory backend of the key-value store, for unit tests without RocksDB. Copy on write
// per column family: a write publishes new maps for the families it touches, so readers and
// iterators hold an immutable version and never wait.
#include "storage/internal/keys.hpp"
#include "storage/internal/kv.hpp"

#include <array>
#include <atomic>
#include <mutex>

namespace engram::storage::detail {

namespace {

using table = std::map<std::string, std::string, std::less<>>;
using tables = std::array<std::shared_ptr<const table>, cf_count>;

class memory_iterator final : public kv_iterator {
public:
  explicit memory_iterator(std::shared_ptr<const table> t) : t_(std::move(t)), it_(t_->end()) {}
  void seek(std::string_view target) override { it_ = t_->lower_bound(target); }
  void seek_to_first() override { it_ = t_->begin(); }
  void seek_for_prev(std::string_view target) override {
    it_ = t_->upper_bound(target);
    it_ = it_ == t_->begin() ? t_->end() : std::prev(it_);
  }
  bool valid() const override { return it_ != t_->end(); }
  void next() override { ++it_; }
  void prev() override { it_ = it_ == t_->begin() ? t_->end() : std::prev(it_); }
  std::string_view key() const override { return it_->first; }
  std::string_view value() const override { return it_->second; }
  errc status() const override { return errc::ok; }

private:
  std::shared_ptr<const table> t_;
  table::const_iterator it_;
};

class memory_snapshot final : public kv_snapshot {
public:
  explicit memory_snapshot(tables t) : t(std::move(t)) {}
  tables t;
};

class memory_kv final : public kv {
public:
  memory_kv() {
    for (auto& t : current_)
      t = std::make_shared<const table>();
    static std::atomic<unsigned> n{0};
    identity_ = "memory-" + std::to_string(++n);
  }

  errc compact(std::size_t, std::string_view, std::string_view, const std::atomic<bool>*) override { return errc::ok; }
  errc flush() override { return errc::ok; }

  result<std::string> get(std::size_t cf, std::string_view key) const override {
    auto t = version()[cf];
    auto it = t->find(key);
    if (it == t->end())
      return failure{errc::not_found};
    return it->second;
  }

  void multi_get(std::size_t cf, std::span<const std::string> keys,
                 std::vector<std::optional<std::string>>& values) const override {
    auto t = version()[cf];
    values.assign(keys.size(), std::nullopt);
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (auto it = t->find(keys[i]); it != t->end())
        values[i] = it->second;
  }

  std::unique_ptr<kv_iterator> iterate(std::size_t cf, const kv_snapshot* snap) const override {
    return std::make_unique<memory_iterator>(snap ? static_cast<const memory_snapshot*>(snap)->t[cf] : version()[cf]);
  }

  std::unique_ptr<kv_snapshot> snapshot() const override { return std::make_unique<memory_snapshot>(version()); }

  errc write(const kv_batch& batch) override {
    // One writer at a time: a batch builds on the version the one before it made.
    std::lock_guard writing(write_mutex_);
    tables next = version();
    std::array<std::shared_ptr<table>, cf_count> copies;
    for (const auto& op : batch.ops()) {
      if (!copies[op.cf])
        copies[op.cf] = std::make_shared<table>(*next[op.cf]);
      if (op.value)
        (*copies[op.cf])[op.key] = *op.value;
      else if (op.end)
        copies[op.cf]->erase(copies[op.cf]->lower_bound(op.key), copies[op.cf]->lower_bound(*op.end));
      else
        copies[op.cf]->erase(op.key);
    }
    for (std::size_t c = 0; c < cf_count; ++c)
      if (copies[c])
        next[c] = std::move(copies[c]);
    std::lock_guard lock(mutex_);
    current_ = std::move(next);
    return errc::ok;
  }

  std::string identity() const override { return identity_; }

  std::map<std::string, std::uint64_t> engine_stats() const override {
    return {{"memtable_bytes", 0}, {"pending_compaction_bytes", 0}, {"running_compactions", 0},
            {"live_sst_bytes", 0}, {"table_readers_bytes", 0},      {"block_cache_bytes", 0}};
  }

private:
  tables version() const {
    std::lock_guard lock(mutex_);
    return current_;
  }

  mutable std::mutex mutex_;
  std::mutex write_mutex_;
  tables current_;
  std::string identity_;
};

}  // namespace

std::unique_ptr<kv> make_memory_kv() { return std::make_unique<memory_kv>(); }

}  // namespace engram::storage::detail
