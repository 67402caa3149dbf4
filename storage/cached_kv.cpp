// A cache of one column family's point reads in front of a kv (internal/kv.hpp,
// cache_family). Every write passes through it, so what it holds is what the kv holds.

#include "storage/internal/kv.hpp"

#include <list>
#include <mutex>
#include <unordered_map>

namespace engram::storage::detail {
namespace {

/// Least recently read values of one family, up to a number of bytes. A read that missed
/// fills the cache only if no write of the family ran while it read (`generation`), so a value
/// read before a write can never be kept after it.
class value_cache {
public:
  explicit value_cache(std::size_t bytes) : capacity_(bytes) {}

  /// The cached value and true; or false and the generation a fill must present.
  bool find(std::string_view key, std::string& value, std::uint64_t& generation) {
    std::lock_guard lock(mutex_);
    generation = generation_;
    auto it = index_.find(key);
    if (it == index_.end())
      return false;
    order_.splice(order_.begin(), order_, it->second);
    value = it->second->second;
    return true;
  }

  void fill(std::string_view key, std::string_view value, std::uint64_t generation) {
    std::lock_guard lock(mutex_);
    if (generation == generation_)
      put_locked(key, value);
  }

  /// Before and after a write: a read overlapping it does not fill.
  void begin_write() {
    std::lock_guard lock(mutex_);
    ++generation_;
  }
  void written(const kv_batch& batch, std::size_t cf) {
    std::lock_guard lock(mutex_);
    ++generation_;
    for (const auto& op : batch.ops()) {
      if (op.cf != cf)
        continue;
      if (op.end) {  // a range: everything goes
        index_.clear();
        order_.clear();
        bytes_ = 0;
      } else if (op.value) {
        put_locked(op.key, *op.value);  // what was just written is read soonest
      } else {
        erase_locked(op.key);
      }
    }
  }

  [[nodiscard]] std::size_t bytes() const {
    std::lock_guard lock(mutex_);
    return bytes_;
  }

private:
  using entry = std::pair<std::string, std::string>;
  static constexpr std::size_t overhead = 96;  // list node, hash node, two string headers
  static std::size_t cost(std::string_view k, std::string_view v) { return k.size() + v.size() + overhead; }

  void erase_locked(std::string_view key) {
    auto it = index_.find(key);
    if (it == index_.end())
      return;
    bytes_ -= cost(it->second->first, it->second->second);
    order_.erase(it->second);
    index_.erase(it);
  }
  void put_locked(std::string_view key, std::string_view value) {
    if (cost(key, value) > capacity_ / 8)
      return;  // one large value would evict many small ones
    erase_locked(key);
    order_.emplace_front(std::string(key), std::string(value));
    index_.emplace(std::string_view(order_.front().first), order_.begin());
    bytes_ += cost(key, value);
    while (bytes_ > capacity_ && !order_.empty()) {
      const auto& last = order_.back();
      bytes_ -= cost(last.first, last.second);
      index_.erase(std::string_view(last.first));
      order_.pop_back();
    }
  }

  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::uint64_t generation_ = 0;
  std::size_t bytes_ = 0;
  std::list<entry> order_;  // most recently read first
  std::unordered_map<std::string_view, std::list<entry>::iterator> index_;  // views into order_
};

class cached_kv final : public kv {
public:
  cached_kv(std::unique_ptr<kv> inner, std::size_t cf, std::size_t bytes)
      : inner_(std::move(inner)), cf_(cf), cache_(bytes) {}

  result<std::string> get(std::size_t cf, std::string_view key) const override {
    if (cf != cf_)
      return inner_->get(cf, key);
    std::string value;
    std::uint64_t generation = 0;
    if (cache_.find(key, value, generation))
      return value;
    auto r = inner_->get(cf, key);
    if (r)
      cache_.fill(key, *r, generation);
    return r;
  }

  void multi_get(std::size_t cf, std::span<const std::string> keys,
                 std::vector<std::optional<std::string>>& values) const override {
    if (cf != cf_)
      return inner_->multi_get(cf, keys, values);
    values.assign(keys.size(), std::nullopt);
    std::vector<std::string> missed;  // still sorted: a subsequence of `keys`
    std::vector<std::size_t> at;
    std::uint64_t generation = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      std::string v;
      if (cache_.find(keys[i], v, generation)) {
        values[i] = std::move(v);
      } else {
        missed.push_back(keys[i]);
        at.push_back(i);
      }
    }
    if (missed.empty())
      return;
    std::vector<std::optional<std::string>> found;
    inner_->multi_get(cf, missed, found);
    for (std::size_t j = 0; j < found.size() && j < at.size(); ++j)
      if (found[j]) {
        cache_.fill(missed[j], *found[j], generation);
        values[at[j]] = std::move(found[j]);
      }
  }

  std::unique_ptr<kv_iterator> iterate(std::size_t cf, const kv_snapshot* snap) const override {
    return inner_->iterate(cf, snap);
  }
  std::unique_ptr<kv_iterator> iterate_within(std::size_t cf, std::string_view lower,
                                              std::string_view upper) const override {
    return inner_->iterate_within(cf, lower, upper);
  }
  std::unique_ptr<kv_snapshot> snapshot() const override { return inner_->snapshot(); }

  errc write(const kv_batch& batch) override {
    cache_.begin_write();
    const auto e = inner_->write(batch);
    if (e == errc::ok) {
      cache_.written(batch, cf_);
    } else {  // what reached the store is not known: nothing cached of the family stays
      kv_batch all;
      all.del_range(cf_, "", "");
      cache_.written(all, cf_);
    }
    return e;
  }

  std::string identity() const override { return inner_->identity(); }
  std::map<std::string, std::uint64_t> engine_stats() const override {
    auto s = inner_->engine_stats();
    s["entry_cache_bytes"] = cache_.bytes();
    return s;
  }
  std::optional<std::string> write_failure() const override { return inner_->write_failure(); }
  errc resume_writes() override { return inner_->resume_writes(); }
  errc compact(std::size_t cf, std::string_view begin, std::string_view end,
               const std::atomic<bool>* cancel) override {
    return inner_->compact(cf, begin, end, cancel);
  }
  errc flush() override { return inner_->flush(); }
  errc start_compactions() override { return inner_->start_compactions(); }

private:
  std::unique_ptr<kv> inner_;
  const std::size_t cf_;
  mutable value_cache cache_;
};

}  // namespace

std::unique_ptr<kv> cache_family(std::unique_ptr<kv> inner, std::size_t cf, std::size_t bytes) {
  if (bytes == 0)
    return inner;
  return std::make_unique<cached_kv>(std::move(inner), cf, bytes);
}

}  // namespace engram::storage::detail
