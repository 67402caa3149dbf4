// The cache of one column family's point reads (storage/internal/kv.hpp, cache_family): it
// answers what the kv under it would after every kind of write, keeps to its bytes, and
// answers a value read before without reading the kv again.
#include "storage/internal/kv.hpp"

#include <gtest/gtest.h>

namespace {

using namespace engram::storage;
using namespace engram::storage::detail;

/// The memory kv, counting the point reads that reach it; its next write can be made to fail
/// (before anything is written).
class counting_kv final : public kv {
public:
  explicit counting_kv(std::unique_ptr<kv> inner) : inner_(std::move(inner)) {}
  mutable std::size_t reads = 0;
  bool fail_next_write = false;

  result<std::string> get(std::size_t cf, std::string_view key) const override {
    ++reads;
    return inner_->get(cf, key);
  }
  void multi_get(std::size_t cf, std::span<const std::string> keys,
                 std::vector<std::optional<std::string>>& values) const override {
    reads += keys.size();
    inner_->multi_get(cf, keys, values);
  }
  std::unique_ptr<kv_iterator> iterate(std::size_t cf, const kv_snapshot* snap) const override {
    return inner_->iterate(cf, snap);
  }
  std::unique_ptr<kv_snapshot> snapshot() const override { return inner_->snapshot(); }
  errc write(const kv_batch& batch) override {
    if (fail_next_write) {
      fail_next_write = false;
      return errc::io_error;
    }
    return inner_->write(batch);
  }
  std::string identity() const override { return inner_->identity(); }
  std::map<std::string, std::uint64_t> engine_stats() const override { return inner_->engine_stats(); }
  errc compact(std::size_t cf, std::string_view b, std::string_view e, const std::atomic<bool>* c) override {
    return inner_->compact(cf, b, e, c);
  }
  errc flush() override { return inner_->flush(); }

private:
  std::unique_ptr<kv> inner_;
};

constexpr std::size_t cached = 3, other = 4;

struct CachedKv : ::testing::Test {
  counting_kv* under = nullptr;
  std::unique_ptr<kv> store;

  void open(std::size_t bytes) {
    auto c = std::make_unique<counting_kv>(make_memory_kv());
    under = c.get();
    store = cache_family(std::move(c), cached, bytes);
  }
  void put(std::size_t cf, const std::string& k, const std::string& v) {
    kv_batch b;
    b.put(cf, k, v);
    ASSERT_EQ(store->write(b), errc::ok);
  }
  std::optional<std::string> get(std::size_t cf, const std::string& k) const {
    auto r = store->get(cf, k);
    if (!r) {
      EXPECT_EQ(r.error(), errc::not_found);
      return std::nullopt;
    }
    return *r;
  }
};

TEST_F(CachedKv, AValueReadOrWrittenIsAnsweredWithoutReadingTheKvAgain) {
  open(1 << 20);
  put(cached, "a", "1");
  EXPECT_EQ(get(cached, "a"), "1");  // written: cached
  EXPECT_EQ(under->reads, 0u);
  put(other, "b", "2");
  EXPECT_EQ(get(other, "b"), "2");  // another family passes through, every time
  EXPECT_EQ(get(other, "b"), "2");
  EXPECT_EQ(under->reads, 2u);
  EXPECT_EQ(get(cached, "missing"), std::nullopt);  // an absent key is not remembered
  EXPECT_EQ(get(cached, "missing"), std::nullopt);
  EXPECT_EQ(under->reads, 4u);
}

TEST_F(CachedKv, EveryKindOfWriteIsWhatTheNextReadAnswers) {
  open(1 << 20);
  put(cached, "a", "1");
  put(cached, "b", "1");
  put(cached, "c", "1");
  kv_batch b;
  b.put(cached, "a", "2");
  b.put(cached, "a", "3");  // the last write of a batch wins
  b.del(cached, "b");
  ASSERT_EQ(store->write(b), errc::ok);
  EXPECT_EQ(get(cached, "a"), "3");
  EXPECT_EQ(get(cached, "b"), std::nullopt);
  EXPECT_EQ(get(cached, "c"), "1");
  kv_batch range;
  range.del_range(cached, "a", "c");
  ASSERT_EQ(store->write(range), errc::ok);
  EXPECT_EQ(get(cached, "a"), std::nullopt);
  EXPECT_EQ(get(cached, "c"), "1");  // outside the range: read again from the kv
}

TEST_F(CachedKv, AFailedWriteLeavesNothingCachedThatTheKvDoesNotHold) {
  open(1 << 20);
  put(cached, "a", "1");
  under->fail_next_write = true;
  kv_batch b;
  b.put(cached, "a", "2");
  EXPECT_EQ(store->write(b), errc::io_error);
  const auto before = under->reads;
  EXPECT_EQ(get(cached, "a"), "1");
  EXPECT_EQ(under->reads, before + 1);  // read from the kv, not from what the cache held
}

TEST_F(CachedKv, MultiGetMixesCachedValuesWithTheKvsInTheKeysOrder) {
  open(1 << 20);
  kv_batch b;
  for (const char* k : {"a", "b", "c", "d"})
    b.put(cached, k, std::string("v") + k);
  ASSERT_EQ(store->write(b), errc::ok);
  (void)get(cached, "b");
  const std::vector<std::string> keys{"a", "b", "c", "x"};
  std::vector<std::optional<std::string>> values;
  store->multi_get(cached, keys, values);
  EXPECT_EQ(values, (std::vector<std::optional<std::string>>{"va", "vb", "vc", std::nullopt}));
}

TEST_F(CachedKv, KeepsToItsBytesLeastRecentlyReadOutFirst) {
  open(4096);
  const std::string value(100, 'x');
  for (int i = 0; i < 100; ++i)
    put(cached, "k" + std::to_string(i), value);
  EXPECT_LE(store->engine_stats().at("entry_cache_bytes"), 4096u);
  EXPECT_GT(store->engine_stats().at("entry_cache_bytes"), 2048u);
  const auto before = under->reads;
  EXPECT_EQ(get(cached, "k99"), value);  // the newest stays
  EXPECT_EQ(under->reads, before);
  EXPECT_EQ(get(cached, "k0"), value);  // the oldest was let go
  EXPECT_EQ(under->reads, before + 1);
  // One value above an eighth of the bytes is never cached: it would push out many.
  put(cached, "big", std::string(1000, 'y'));
  EXPECT_EQ(get(cached, "big"), std::string(1000, 'y'));
  EXPECT_EQ(under->reads, before + 2);
}

TEST_F(CachedKv, NoBytesIsTheKvItself) {
  auto inner = make_memory_kv();
  auto* raw = inner.get();
  EXPECT_EQ(cache_family(std::move(inner), cached, 0).get(), raw);
}

}  // namespace
