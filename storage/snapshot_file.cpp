#include "storage/internal/snapshot_file.hpp"

#include "base/hash.hpp"

#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <vector>
#include <unistd.h>

namespace engram::storage::detail {

namespace {
constexpr std::size_t buffer_bytes = 1 << 20;
}

running_sum::running_sum(sum_kind kind) : kind_(kind), fnv_(fnv1a_seed) {
  if (kind_ == sum_kind::xxh3) {
    xxh_ = XXH3_createState();
    if (xxh_ == nullptr)
      throw std::bad_alloc();
    XXH3_64bits_reset(xxh_);
  }
}

running_sum::~running_sum() { XXH3_freeState(xxh_); }

void running_sum::add(std::string_view bytes) {
  size_ += bytes.size();
  if (kind_ == sum_kind::xxh3)
    XXH3_64bits_update(xxh_, bytes.data(), bytes.size());
  else
    fnv_ = fnv1a(bytes, fnv_);
}

file_sum running_sum::done() const { return {size_, kind_ == sum_kind::xxh3 ? XXH3_64bits_digest(xxh_) : fnv_, kind_}; }

engram::result<file_sum> sum_of_file(const std::string& path, sum_kind kind) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f)
    return engram::fail("cannot read '" + path + "'");
  running_sum sum(kind);
  std::vector<char> buf(buffer_bytes);
  std::size_t got;
  while ((got = std::fread(buf.data(), 1, buf.size(), f.get())) > 0)
    sum.add(std::string_view(buf.data(), got));
  if (std::ferror(f.get()))
    return engram::fail("cannot read '" + path + "'");
  return sum.done();
}

snapshot_out::snapshot_out(std::string path) : path_(std::move(path)) {
  f_ = std::fopen((path_ + ".tmp").c_str(), "wb");
  failed_ = f_ == nullptr;
  buf_.reserve(buffer_bytes);
}

snapshot_out::~snapshot_out() {
  if (f_) {
    std::fclose(f_);
    std::error_code ec;
    std::filesystem::remove(path_ + ".tmp", ec);  // not installed: leave nothing half written
  }
}

void snapshot_out::raw(const void* p, std::size_t n) {
  const auto* c = static_cast<const char*>(p);
  while (n > 0) {
    const auto room = std::min(n, buffer_bytes - buf_.size());
    buf_.append(c, room);
    c += room;
    n -= room;
    if (buf_.size() == buffer_bytes)
      drain();
  }
}

void snapshot_out::drain() {
  sum_.add(buf_);
  if (!failed_ && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
    failed_ = true;
  buf_.clear();
}

engram::result<file_sum> snapshot_out::install() {
  drain();
  const auto tmp = path_ + ".tmp";
  if (failed_ || std::fflush(f_) != 0 || ::fsync(::fileno(f_)) != 0) {
    const std::string why = f_ ? std::strerror(errno) : "cannot create it";
    return engram::fail("cannot write '" + tmp + "': " + why);
  }
  std::fclose(f_);
  f_ = nullptr;
  std::error_code ec;
  std::filesystem::rename(tmp, path_, ec);
  if (ec)
    return engram::fail("cannot install '" + path_ + "': " + ec.message());
  return sum_.done();
}

engram::result<snapshot_in> snapshot_in::open(const std::string& path, const file_sum& want) {
  std::ifstream f(path, std::ios::binary);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!f || ec)
    return engram::fail("cannot read '" + path + "'");
  if (size != want.size)
    return engram::fail("'" + path + "' is not the file its mark names (its size differs)");
  snapshot_in in;
  in.data_.resize(size);
  if (!f.read(in.data_.data(), static_cast<std::streamsize>(size)))
    return engram::fail("cannot read '" + path + "'");
  running_sum sum(want.kind);
  sum.add(in.data_);
  if (sum.done().hash != want.hash)
    return engram::fail("'" + path + "' is not the file its mark names (its checksum differs)");
  return in;
}

bool snapshot_in::take(std::size_t n) {
  if (failed_ || data_.size() - at_ < n) {
    failed_ = true;
    return false;
  }
  at_ += n;
  return true;
}

std::string_view snapshot_in::bytes() { return bytes_of(u64()); }

std::string_view snapshot_in::bytes_of(std::size_t n) {
  if (!take(n))
    return {};
  return std::string_view(data_).substr(at_ - n, n);
}

std::vector<std::uint32_t> snapshot_in::u32s() {
  const auto n = count(sizeof(std::uint32_t));
  std::vector<std::uint32_t> v(n);
  if (n && take(n * sizeof(std::uint32_t)))
    std::memcpy(v.data(), data_.data() + at_ - n * sizeof(std::uint32_t), n * sizeof(std::uint32_t));
  return v;
}

std::uint64_t snapshot_in::count(std::size_t min_bytes_each) {
  const auto n = u64();
  if (failed_ || (min_bytes_each && n > (data_.size() - at_) / min_bytes_each)) {
    failed_ = true;
    return 0;
  }
  return n;
}

}  // namespace engram::storage::detail
