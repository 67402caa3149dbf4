#pragma once
// A derived index's snapshot file: plain little-endian integers and length-prefixed byte
// strings, written through a buffer with a running checksum of every byte, installed
// atomically (a temporary file, fsync, rename); read back whole and parsed with bounds
// checks. What a file means (its sections) is its writer's; this is the byte layer only.

#include "base/result.hpp"

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct XXH3_state_s;  // xxhash.h's streaming state, known to snapshot_file.cpp alone

namespace engram::storage::detail {

static_assert(std::endian::native == std::endian::little, "snapshot files are written in the host's byte order");

/// The checksum of a snapshot file. Files are written with XXH3-64 (xxHash; tens of GB/s,
/// where FNV-1a's byte-at-a-time chain gave under 1 GB/s and was most of a checkpoint's and an
/// open's CPU at a million entries); FNV-1a, what the first files were marked with, is still
/// checked when a mark names it.
enum class sum_kind : std::uint8_t { fnv1a = 0, xxh3 = 1 };

/// Size and checksum of a file's bytes: what the meta row marking a snapshot current holds,
/// and a vector index's sidecar.
struct file_sum {
  std::uint64_t size = 0, hash = 0;
  sum_kind kind = sum_kind::xxh3;
  bool operator==(const file_sum&) const = default;
};

/// A checksum over bytes given in pieces.
class running_sum {
public:
  explicit running_sum(sum_kind kind = sum_kind::xxh3);
  ~running_sum();
  running_sum(const running_sum&) = delete;
  running_sum& operator=(const running_sum&) = delete;

  void add(std::string_view bytes);
  [[nodiscard]] file_sum done() const;

private:
  sum_kind kind_;
  std::uint64_t size_ = 0, fnv_;
  ::XXH3_state_s* xxh_ = nullptr;
};

/// The checksum of a file's bytes, read in pieces; an error when it cannot be read.
[[nodiscard]] engram::result<file_sum> sum_of_file(const std::string& path, sum_kind kind);

/// The encodings every writer shares, over the derived class's `raw(p, n)`.
template <class Out>
class encoder {
public:
  void u32(std::uint32_t v) { out().raw(&v, sizeof v); }
  void u64(std::uint64_t v) { out().raw(&v, sizeof v); }
  /// A length (u64), then the bytes.
  void bytes(std::string_view s) {
    u64(s.size());
    out().raw(s.data(), s.size());
  }
  /// A count (u64), then the values.
  void u32s(std::span<const std::uint32_t> v) {
    u64(v.size());
    out().raw(v.data(), v.size_bytes());
  }

private:
  Out& out() { return static_cast<Out&>(*this); }
};

/// The same encodings into a byte string held in memory (a row's value).
class bytes_out : public encoder<bytes_out> {
public:
  void raw(const void* p, std::size_t n) { s_.append(static_cast<const char*>(p), n); }
  [[nodiscard]] std::string take() { return std::move(s_); }

private:
  std::string s_;
};

class snapshot_out : public encoder<snapshot_out> {
public:
  /// Writes to `path` + ".tmp" until install().
  explicit snapshot_out(std::string path);
  ~snapshot_out();
  snapshot_out(const snapshot_out&) = delete;
  snapshot_out& operator=(const snapshot_out&) = delete;

  void raw(const void* p, std::size_t n);

  /// Flushes, syncs and renames the file into place; its size and checksum.
  [[nodiscard]] engram::result<file_sum> install();

private:
  void drain();
  std::string path_;
  std::FILE* f_ = nullptr;
  std::string buf_;
  running_sum sum_;
  bool failed_ = false;
};

class snapshot_in {
public:
  /// Reads `path` whole; an error when it is missing or its size and checksum are not `want`.
  [[nodiscard]] static engram::result<snapshot_in> open(const std::string& path, const file_sum& want);
  /// Reads `bytes` (a row's value written by bytes_out), with the same bounds checks.
  [[nodiscard]] static snapshot_in of(std::string bytes) {
    snapshot_in in;
    in.data_ = std::move(bytes);
    return in;
  }

  /// Each read sets the reader failed (and returns a zero value) once the bytes run out.
  std::uint32_t u32() { return fixed<std::uint32_t>(); }
  std::uint64_t u64() { return fixed<std::uint64_t>(); }
  std::string_view bytes();
  std::vector<std::uint32_t> u32s();
  /// The next `n` bytes as they are (no length before them).
  std::string_view bytes_of(std::size_t n);
  /// Marks the reader failed: what was read does not hold together.
  void fail() { failed_ = true; }
  /// A count read before a loop: failed (0) when fewer than `min_bytes_each` bytes each remain.
  std::uint64_t count(std::size_t min_bytes_each);
  [[nodiscard]] bool ok() const { return !failed_; }
  [[nodiscard]] bool at_end() const { return at_ == data_.size(); }

private:
  template <class T>
  T fixed() {
    T v{};
    if (!take(sizeof v))
      return v;
    std::memcpy(&v, data_.data() + at_ - sizeof v, sizeof v);
    return v;
  }
  bool take(std::size_t n);
  std::string data_;
  std::size_t at_ = 0;
  bool failed_ = false;
};

}  // namespace engram::storage::detail
