// The RocksDB backend of the key-value store: the only file that sees RocksDB. Column
// families as keys.hpp lists them, bloom filters (most point lookups are for keys that do
// not exist yet: seen eventIds, new contacts), snapshots for consistent scans.
#include "base/sanitizers.hpp"
#include "storage/internal/keys.hpp"
#include "storage/internal/kv.hpp"

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <rocksdb/write_buffer_manager.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <mutex>
#include <optional>

#include <fcntl.h>
#include <unistd.h>

// Under AddressSanitizer (tools/dev.sh sanitize address), LeakSanitizer is told of the one
// store left open on purpose.
#ifdef ENGRAM_ASAN
#include <sanitizer/lsan_interface.h>
#endif

#include <cerrno>

namespace engram::storage::detail {

namespace {

#if defined(__clang__)
#define ENGRAM_KEEP_FRAME [[gnu::noinline, clang::disable_tail_calls]]
#else
#define ENGRAM_KEEP_FRAME [[gnu::noinline]]
#endif

/// DB::Write itself, in a frame of its own.
ENGRAM_KEEP_FRAME rocksdb::Status rocksdb_write_call(rocksdb::DB& db, const rocksdb::WriteOptions& o,
                                                     rocksdb::WriteBatch& wb) {
  return db.Write(o, &wb);
}

/// DB::Write, named in every stack that passes through it: with several store appliers,
/// RocksDB's group commit has one writer thread copy the others' batches, ordered by atomics
/// inside the uninstrumented library, which ThreadSanitizer does not see; the library's own
/// frames are lost from those stacks (it keeps no frame pointers), so its suppression names
/// this one (tools/sanitizers/tsan.supp).
ENGRAM_KEEP_FRAME rocksdb::Status rocksdb_group_write(rocksdb::DB& db, const rocksdb::WriteOptions& o,
                                                      rocksdb::WriteBatch& wb) {
  return rocksdb_write_call(db, o, wb);
}

errc to_errc(const rocksdb::Status& s) {
  if (s.ok())
    return errc::ok;
  if (s.IsNoSpace() || s.ToString().find("No space left on device") != std::string::npos)
    return errc::no_space;
  if (s.IsNotFound())
    return errc::not_found;
  if (s.IsCorruption())
    return errc::corruption;
  if (s.IsInvalidArgument() || s.IsNotSupported())
    return errc::invalid_argument;
  if (s.IsBusy() || s.IsTryAgain() || s.IsTimedOut())
    return errc::busy;
  return errc::io_error;
}

class rocks_iterator final : public kv_iterator {
public:
  explicit rocks_iterator(rocksdb::Iterator* it) : it_(it) {}
  void seek(std::string_view target) override { it_->Seek(rocksdb::Slice(target.data(), target.size())); }
  void seek_to_first() override { it_->SeekToFirst(); }
  void seek_for_prev(std::string_view target) override {
    it_->SeekForPrev(rocksdb::Slice(target.data(), target.size()));
  }
  bool valid() const override { return it_->Valid(); }
  void next() override { it_->Next(); }
  void prev() override { it_->Prev(); }
  std::string_view key() const override { return it_->key().ToStringView(); }
  std::string_view value() const override { return it_->value().ToStringView(); }
  errc status() const override { return to_errc(it_->status()); }

private:
  std::unique_ptr<rocksdb::Iterator> it_;
};

/// The group of a key of a family read by group (keys.hpp: group_parts): its first `parts`
/// parts with the '\0' that ends each. A key with fewer is outside the domain (no filter).
class group_prefix final : public rocksdb::SliceTransform {
public:
  explicit group_prefix(std::size_t parts) : parts_(parts), name_("engram.group." + std::to_string(parts)) {}
  const char* Name() const override { return name_.c_str(); }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override { return {key.data(), end_of(key)}; }
  bool InDomain(const rocksdb::Slice& key) const override { return end_of(key) != 0; }

private:
  std::size_t end_of(const rocksdb::Slice& key) const { return parts_length({key.data(), key.size()}, parts_); }
  std::size_t parts_;
  std::string name_;
};

class rocks_snapshot final : public kv_snapshot {
public:
  rocks_snapshot(rocksdb::DB* db) : db_(db), snap_(db->GetSnapshot()) {}
  ~rocks_snapshot() override { db_->ReleaseSnapshot(snap_); }
  [[nodiscard]] const rocksdb::Snapshot* get() const { return snap_; }

private:
  rocksdb::DB* db_;
  const rocksdb::Snapshot* snap_;
};

class rocks_kv final : public kv {
public:
  rocks_kv(std::unique_ptr<rocksdb::DB> db, std::vector<rocksdb::ColumnFamilyHandle*> cfs, bool sync, std::string path)
      : db_(std::move(db)), cfs_(std::move(cfs)), path_(std::move(path)) {
    write_opts_.sync = sync;
  }
  ~rocks_kv() override {
    if (write_failure()) {
      // Debian's RocksDB keeps its assertions, and closing after a write error can abort
      // (WritableFileWriter::AssertFalseAndGetStatusForPrevError). What was written is in the
      // write-ahead log already (each write reaches the OS): left as a kill -9 leaves it, the
      // store opens again and recovers it. The process is on its way out.
      auto* leaked = db_.release();
#ifdef ENGRAM_ASAN
      // Left open on purpose: not a leak to report (tools/dev.sh sanitize address).
      __lsan_ignore_object(leaked);
      for (auto* h : cfs_)
        __lsan_ignore_object(h);
#endif
      (void)leaked;
      return;
    }
    for (auto* h : cfs_)
      db_->DestroyColumnFamilyHandle(h);
    db_->Close();
  }

  errc compact(std::size_t cf, std::string_view begin, std::string_view end, const std::atomic<bool>* cancel) override {
    rocksdb::CompactRangeOptions o;
    // Every level, the last too: a deleted value in a bottom file is gone only when rewritten.
    o.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
    // RocksDB only reads the flag.
    o.canceled = const_cast<std::atomic<bool>*>(cancel);
    const rocksdb::Slice b(begin.data(), begin.size()), e(end.data(), end.size());
    return guarded([&] {
      auto s = db_->CompactRange(o, cfs_[cf], &b, &e);
      // Cancelled ("manual compaction paused"): the files are as they were, all valid.
      return s.IsIncomplete() && cancel && cancel->load() ? rocksdb::Status::Busy("compaction cancelled") : s;
    });
  }

  errc flush() override {
    rocksdb::FlushOptions o;
    o.wait = true;
    return guarded([&] { return db_->Flush(o, cfs_); });
  }

  // Not guarded: a write failure recorded before (a full disk) must not keep compactions off
  // once writes resume.
  errc start_compactions() override { return to_errc(db_->EnableAutoCompaction(cfs_)); }

  result<std::string> get(std::size_t cf, std::string_view key) const override {
    std::string value;
    if (auto e = to_errc(db_->Get(rocksdb::ReadOptions(), cfs_[cf], rocksdb::Slice(key.data(), key.size()), &value));
        e != errc::ok)
      return failure{e};
    return value;
  }

  void multi_get(std::size_t cf, std::span<const std::string> keys,
                 std::vector<std::optional<std::string>>& values) const override {
    std::vector<rocksdb::Slice> slices(keys.begin(), keys.end());
    std::vector<rocksdb::PinnableSlice> found(keys.size());
    std::vector<rocksdb::Status> statuses(keys.size());
    db_->MultiGet(rocksdb::ReadOptions(), cfs_[cf], slices.size(), slices.data(), found.data(), statuses.data(),
                  /*sorted_input=*/true);
    values.assign(keys.size(), std::nullopt);
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (statuses[i].ok())
        values[i] = found[i].ToString();
  }

  std::unique_ptr<kv_iterator> iterate(std::size_t cf, const kv_snapshot* snap) const override {
    rocksdb::ReadOptions ro;
    ro.total_order_seek = true;  // a scan may cross groups: no group filter skips a table
    if (snap)
      ro.snapshot = static_cast<const rocks_snapshot*>(snap)->get();
    return std::make_unique<rocks_iterator>(db_->NewIterator(ro, cfs_[cf]));
  }

  std::unique_ptr<kv_iterator> iterate_group(std::size_t cf) const override {
    rocksdb::ReadOptions ro;
    ro.prefix_same_as_start = group_parts(cf) != 0;
    return std::make_unique<rocks_iterator>(db_->NewIterator(ro, cfs_[cf]));
  }

  std::unique_ptr<kv_snapshot> snapshot() const override { return std::make_unique<rocks_snapshot>(db_.get()); }

  errc write(const kv_batch& batch) override {
    rocksdb::WriteBatch wb;
    for (const auto& op : batch.ops()) {
      if (op.value)
        wb.Put(cfs_[op.cf], op.key, *op.value);
      else if (op.end)
        wb.DeleteRange(cfs_[op.cf], op.key, *op.end);
      else
        wb.Delete(cfs_[op.cf], op.key);
    }
    return guarded([&] { return rocksdb_group_write(*db_, write_opts_, wb); });
  }

  std::optional<std::string> write_failure() const override {
    std::lock_guard lock(failure_mutex_);
    if (!failure_)
      return std::nullopt;
    return failure_->second;
  }

  /// DB::Resume clears RocksDB's background error: it flushes the memtables, so the next
  /// writes go to a new write-ahead log (the one a failed write may have left a torn record
  /// in is no longer needed). Only a full disk is resumed.
  errc resume_writes() override {
    std::lock_guard lock(failure_mutex_);
    if (!failure_)
      return errc::ok;
    if (failure_->first != errc::no_space)
      return failure_->first;
    if (auto e = to_errc(db_->Resume()); e != errc::ok)
      return e;
    failure_.reset();
    return errc::ok;
  }

  std::string identity() const override {
    std::string id;
    if (!db_->GetDbIdentity(id).ok())
      return "unknown";
    id.erase(std::remove_if(id.begin(), id.end(), [](unsigned char c) { return std::isspace(c); }), id.end());
    return id;
  }

  std::map<std::string, std::uint64_t> engine_stats() const override {
    std::map<std::string, std::uint64_t> out;
    for (auto [name, property] : {std::pair{"memtable_bytes", "rocksdb.cur-size-all-mem-tables"},
                                  {"pending_compaction_bytes", "rocksdb.estimate-pending-compaction-bytes"},
                                  {"running_compactions", "rocksdb.num-running-compactions"},
                                  {"live_sst_bytes", "rocksdb.live-sst-files-size"},
                                  {"table_readers_bytes", "rocksdb.estimate-table-readers-mem"},
                                  {"block_cache_bytes", "rocksdb.block-cache-usage"}}) {
      std::uint64_t total = 0;
      if (std::string_view(name) == "running_compactions" ||
          std::string_view(name) == "block_cache_bytes") {  // DB-wide figures (one cache is shared)
        (void)db_->GetIntProperty(property, &total);
      } else {
        for (auto* h : cfs_) {
          std::uint64_t v = 0;
          if (db_->GetIntProperty(h, property, &v))
            total += v;
        }
      }
      out[name] = total;
    }
    return out;
  }

private:
  /// Runs `write` (a write, flush or compaction: returns RocksDB's status) unless one failed
  /// before: then it answers that failure's code, and nothing is written after it. A full
  /// disk, an I/O error or corruption is kept, with RocksDB's words (which name the OS reason
  /// and the file), as the store's write failure.
  template <class Write>
  errc guarded(Write&& write) {
    {
      std::lock_guard lock(failure_mutex_);
      if (failure_)
        return failure_->first;
    }
    const auto s = write();
    const auto e = to_errc(s);
    if (e == errc::no_space || e == errc::io_error || e == errc::corruption) {
      std::lock_guard lock(failure_mutex_);
      if (!failure_)
        failure_.emplace(e, std::string(e == errc::no_space ? "disk full: " : "the store failed: ") + "the store at " +
                                path_ + " cannot write (" + s.ToString() + ")");
    }
    return e;
  }

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> cfs_;
  rocksdb::WriteOptions write_opts_;
  std::string path_;
  mutable std::mutex failure_mutex_;
  std::optional<std::pair<errc, std::string>> failure_;
};

/// The column families read by key (kv::get, multi_get); the others are only scanned. Only
/// these get a bloom filter: a family read by key and missing here is slower, never wrong.
bool read_by_key(std::size_t family) {
  switch (family) {
    case cf_messages:
    case cf_entities:
    case cf_links:
    case cf_meta:
    case cf_entries:
    case cf_vectors:
    case cf_entity_edges:
    case cf_kg:
    case cf_passages: return true;
    default: return false;
  }
}

}  // namespace

engram::result<std::unique_ptr<kv>> open_rocks_kv(const open_options& opts, bool compactions_paused) {
  if (!opts.read_only) {
    std::error_code ec;
    std::filesystem::create_directories(opts.path, ec);  // RocksDB makes only the last level
    if (ec)
      return fail("cannot open store at '" + opts.path + "': " + ec.message());
    // A data directory it cannot write to (a read-only mount, another owner) is said plainly,
    // before RocksDB fails somewhere inside its own files.
    if (::access(opts.path.c_str(), W_OK) != 0) {
      const int err = errno;
      return fail("cannot open store at '" + opts.path + "': the data directory is not writable (" +
                  std::generic_category().message(err) + ")");
    }
  }
  rocksdb::DBOptions db_opts;
  db_opts.create_if_missing = !opts.read_only;
  db_opts.create_missing_column_families = !opts.read_only;
  // One memory budget (storage.memory_mb) for the whole store: the block cache, which also
  // holds every table's index and filter blocks, and is charged for the memtables of all
  // column families together (the write buffer manager flushes when they pass half of it).
  // Without it each of the 27 families could keep 2 x 64 MiB of memtables.
  const std::size_t budget = std::max<std::size_t>(opts.memory_mb, 8) << 20;
  auto cache = rocksdb::NewLRUCache(budget);
  db_opts.write_buffer_manager = std::make_shared<rocksdb::WriteBufferManager>(budget / 2, cache);
  // A family that rarely writes keeps the write-ahead log alive; past this it is flushed.
  db_opts.max_total_wal_size = std::max<std::uint64_t>(budget, 64u << 20);
  rocksdb::BlockBasedTableOptions table_opts;
  table_opts.block_cache = cache;
  table_opts.cache_index_and_filter_blocks = true;
  table_opts.pin_l0_filter_and_index_blocks_in_cache = true;
  table_opts.optimize_filters_for_memory = true;
  // Index and filters in partitions of 4 KiB behind a small pinned top level. A 64 MiB table's
  // whole index and filter are MBs: past ~110k entries at memory_mb 64 they no longer stayed in
  // the cache, and every point read fetched and decompressed a whole index again (the store
  // stage fell from ~30 s to ~160 s per 10k entries; 70 % of its time in snappy and memmove).
  table_opts.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
  table_opts.partition_filters = true;
  table_opts.metadata_block_size = 4096;
  table_opts.pin_top_level_index_and_filter = true;
  rocksdb::ColumnFamilyOptions scanned;  // read by iterators only: a whole-key bloom filter never helps
  scanned.disable_auto_compactions = compactions_paused;
  scanned.write_buffer_size = std::min<std::size_t>(budget / 8, 16u << 20);
  // Keys of most large families come in no order (entry ids, terms), so every flushed table
  // overlaps the whole first level, and a compaction of level 0 rewrites all of level 1. With
  // RocksDB's 256 MiB first level that rewrote each byte 20-30 times in a 1M-entry build
  // (half the process's CPU); a first level of 32 MiB in tables of 8 MiB, reached after eight
  // flushed tables rather than four, rewrites far less and leaves the core to the applier.
  scanned.level0_file_num_compaction_trigger = 8;
  scanned.max_bytes_for_level_base = 32u << 20;
  scanned.target_file_size_base = 8u << 20;
  scanned.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table_opts));
  rocksdb::ColumnFamilyOptions looked_up = scanned;  // read by key (mostly keys not there yet)
  table_opts.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  // A key's place in its data block found by a small hash table in the block (one-byte
  // buckets at 0.75 use: about 1.3 bytes a key), not by a binary search of the block's restart
  // points; seeks still search. Tables written before keep their binary search until compacted.
  table_opts.data_block_index_type = rocksdb::BlockBasedTableOptions::kDataBlockBinaryAndHash;
  looked_up.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table_opts));
  // The families read newest first by group (dedup's titles, contradiction's slots): one seek
  // a new entry each, mostly of a group no table holds; a bloom filter of the groups alone
  // lets that seek skip those tables (the whole keys are never looked up).
  auto grouped = [&](std::size_t parts) {
    rocksdb::ColumnFamilyOptions o = scanned;
    auto group_table = table_opts;
    group_table.whole_key_filtering = false;
    group_table.data_block_index_type = rocksdb::BlockBasedTableOptions::kDataBlockBinarySearch;  // seeks only
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(group_table));
    o.prefix_extractor = std::make_shared<group_prefix>(parts);
    return o;
  };
  std::vector<rocksdb::ColumnFamilyDescriptor> descs;
  for (std::size_t f = 0; f < cf_names.size(); ++f)
    descs.emplace_back(cf_names[f], group_parts(f) != 0 ? grouped(group_parts(f))
                                    : read_by_key(f)    ? looked_up
                                                        : scanned);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  auto st = opts.read_only ? rocksdb::DB::OpenForReadOnly(db_opts, opts.path, descs, &handles, &raw)
                           : rocksdb::DB::Open(db_opts, opts.path, descs, &handles, &raw);
  if (!st.ok())
    return fail("cannot open store at '" + opts.path + "': " + st.ToString());
  return std::make_unique<rocks_kv>(std::unique_ptr<rocksdb::DB>(raw), std::move(handles), opts.sync_writes, opts.path);
}

}  // namespace engram::storage::detail

namespace engram::storage {

// RocksDB locks LOCK with fcntl (a whole-file write lock), so F_GETLK names its holder; a lock
// this process holds is not reported (POSIX record locks are per process).
std::optional<long> held_by_another_process(const std::string& path) {
  const int fd = ::open((path + "/LOCK").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;  // no store there yet
  struct flock probe {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  const bool asked = ::fcntl(fd, F_GETLK, &probe) == 0;
  ::close(fd);
  if (!asked || probe.l_type == F_UNLCK)
    return std::nullopt;
  return static_cast<long>(probe.l_pid);
}

}  // namespace engram::storage
