#pragma once
// How many rows the groups of the families read newest first (keys.hpp: group_parts) hold,
// for the groups read lately. A superseded entry's titles and by_slot rows are deleted, so a
// group restated a thousand times ("the renewal date of Acme") holds one row behind a thousand
// tombstones, which a read walked, newest first, to the group's end (RocksDB steps back over
// each, in the memtable by a search from the top). Knowing the count, a read stops at the
// group's last row. Exact, not a guess: a count is learnt from a read that reached its
// group's end and then moved by every row the writer puts or deletes in a batch it commits
// (a failed batch or a dropped organisation forgets counts); a group not held is read as
// before. Bounded: past `capacity` groups it starts again empty. Thread-safe; an
// organisation's groups are read (dedup, contradiction) and written by its applier alone, as
// its counters are, so no batch of theirs is written while a read learns a count.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace engram::storage::detail {

/// A row of a group put (+1) or deleted (-1) by a batch.
struct group_delta {
  std::size_t family;
  /// The group: the row's key up to its group_parts-th '\0', that one included.
  std::string group;
  int delta;
};

/// The group of a row key of `family` (keys.hpp: group_parts); empty when the key has fewer parts.
[[nodiscard]] std::string_view group_of(std::size_t family, std::string_view row_key);

class group_counts {
public:
  explicit group_counts(std::size_t capacity) : capacity_(capacity) {}

  /// The rows of `group` in `family`, when known.
  [[nodiscard]] std::optional<std::uint64_t> find(std::size_t family, std::string_view group) const;
  /// A read of `group` reached its end having seen `rows` rows.
  void remember(std::size_t family, std::string_view group, std::uint64_t rows);
  /// A batch holding these changes was written: the groups known move by them.
  void apply(const std::vector<group_delta>& deltas);
  /// Forgets every group of an organisation (the first part of every key).
  void drop_organization(std::string_view org);
  void clear();
  [[nodiscard]] std::size_t size() const;

private:
  static std::string name(std::size_t family, std::string_view group);
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::uint64_t> rows_;
};

}  // namespace engram::storage::detail
