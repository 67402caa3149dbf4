#pragma once
// The ordered key-value store under the graph store (internal to storage/): column families
// of byte-ordered keys, point reads, prefix scans, atomic batches, consistent snapshots.
// Two backends: RocksDB (rocks_kv.cpp, the only file that sees RocksDB) and memory
// (memory_kv.cpp, for unit tests of the knowledge rules without RocksDB). Reads are
// thread-safe; writes come from one thread (the store actor).

#include "storage/graph_store.hpp"

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace engram::storage::detail {

/// Writes applied together or not at all.
class kv_batch {
public:
  struct op {
    std::size_t cf;
    std::string key;
    /// nullopt: delete the key (every key from `key` up to `end`, excluded, when `end` is set).
    std::optional<std::string> value;
    std::optional<std::string> end = std::nullopt;
  };
  void put(std::size_t cf, std::string_view key, std::string_view value) {
    ops_.push_back({cf, std::string(key), std::string(value)});
  }
  void del(std::size_t cf, std::string_view key) { ops_.push_back({cf, std::string(key), std::nullopt}); }
  /// Deletes every key in [begin, end): one range tombstone, whatever the number of keys.
  void del_range(std::size_t cf, std::string_view begin, std::string_view end) {
    ops_.push_back({cf, std::string(begin), std::nullopt, std::string(end)});
  }
  void clear() { ops_.clear(); }
  [[nodiscard]] const std::vector<op>& ops() const { return ops_; }

private:
  std::vector<op> ops_;
};

/// A cursor over one column family in key order. key() and value() are valid until the
/// cursor moves.
class kv_iterator {
public:
  virtual ~kv_iterator() = default;
  virtual void seek(std::string_view target) = 0;
  virtual void seek_to_first() = 0;
  /// The last key at or before `target` (invalid when there is none).
  virtual void seek_for_prev(std::string_view target) = 0;
  [[nodiscard]] virtual bool valid() const = 0;
  virtual void next() = 0;
  virtual void prev() = 0;
  [[nodiscard]] virtual std::string_view key() const = 0;
  [[nodiscard]] virtual std::string_view value() const = 0;
  /// ok, or why the scan stopped early.
  [[nodiscard]] virtual errc status() const = 0;
};

/// A consistent view for reads that span several column families (the digest).
class kv_snapshot {
public:
  virtual ~kv_snapshot() = default;
};

class kv {
public:
  virtual ~kv() = default;
  /// The value of `key`, or not_found.
  [[nodiscard]] virtual result<std::string> get(std::size_t cf, std::string_view key) const = 0;
  /// Values of several keys (sorted) of one column family; nullopt where absent.
  virtual void multi_get(std::size_t cf, std::span<const std::string> keys,
                         std::vector<std::optional<std::string>>& values) const = 0;
  /// A cursor, over `snap` when given.
  [[nodiscard]] virtual std::unique_ptr<kv_iterator> iterate(std::size_t cf,
                                                             const kv_snapshot* snap = nullptr) const = 0;
  /// A cursor over the rows of one group of `cf` (keys.hpp: group_parts): valid only for
  /// keys starting with the group of the target of its first seek, which may skip the files
  /// holding none of them. Any other cursor where a backend has no such skip.
  [[nodiscard]] virtual std::unique_ptr<kv_iterator> iterate_group(std::size_t cf) const { return iterate(cf); }
  [[nodiscard]] virtual std::unique_ptr<kv_snapshot> snapshot() const = 0;
  /// Writes the batch atomically.
  [[nodiscard]] virtual errc write(const kv_batch& batch) = 0;
  /// The database's identity (stable for its life; a new store gets a new one).
  [[nodiscard]] virtual std::string identity() const = 0;
  /// Engine figures (graph_store::engine_stats); zeros where a backend has none.
  [[nodiscard]] virtual std::map<std::string, std::uint64_t> engine_stats() const = 0;
  /// graph_store::write_failure (nullopt where a backend cannot fail so).
  [[nodiscard]] virtual std::optional<std::string> write_failure() const { return std::nullopt; }
  /// graph_store::resume_writes (ok where a backend cannot fail so).
  [[nodiscard]] virtual errc resume_writes() { return errc::ok; }
  /// Rewrites the files holding keys in [begin, end) of `cf` (the memtable flushed first), so
  /// that deleted values leave the disk; a no-op where nothing is on disk. When `cancel`
  /// (may be null) turns true it stops early and answers busy, which is no store failure.
  [[nodiscard]] virtual errc compact(std::size_t cf, std::string_view begin, std::string_view end,
                                     const std::atomic<bool>* cancel) = 0;
  /// Writes every memtable to files, so that the write-ahead logs holding what was written
  /// before are no longer needed (and are deleted); a no-op where nothing is on disk.
  [[nodiscard]] virtual errc flush() = 0;
  /// graph_store::start_compactions, for a store opened with them paused (open_rocks_kv); ok
  /// where a backend has none.
  [[nodiscard]] virtual errc start_compactions() { return errc::ok; }
};

/// Opens (creating if needed) RocksDB at opts.path with every column family of keys.hpp. With
/// `compactions_paused` no automatic compaction starts before kv::start_compactions (memtables
/// are still flushed, and compact() still runs): what an open loads then has the cores, not the
/// compactions the writes before a crash left pending.
[[nodiscard]] engram::result<std::unique_ptr<kv>> open_rocks_kv(const open_options& opts,
                                                                bool compactions_paused = false);

/// An empty store in memory.
[[nodiscard]] std::unique_ptr<kv> make_memory_kv();

}  // namespace engram::storage::detail
