// The only translation unit that includes hnswlib (its headers define non-inline symbols).

#include "storage/vector_index.hpp"

#include <hnswlib/hnswlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace engram::storage {

namespace {

constexpr std::size_t initial_capacity = 1024;

/// Size and FNV-1a of a file: what a snapshot's sidecar records, checked before hnswlib
/// reads the file (its loader trusts the bytes it is given).
bool fingerprint(const std::string& path, std::uint64_t* size, std::uint64_t* hash) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::uint64_t h = 1469598103934665603ull, n = 0;
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    auto got = static_cast<std::size_t>(in.gcount());
    for (std::size_t i = 0; i < got; ++i) {
      h ^= static_cast<unsigned char>(buf[i]);
      h *= 1099511628211ull;
    }
    n += got;
  }
  *size = n;
  *hash = h;
  return true;
}

}  // namespace

struct vector_index::impl {
  impl(std::size_t d, vector_index_options o) : dim(d), opts(o), space(d) {}

  std::size_t dim;
  vector_index_options opts;
  hnswlib::InnerProductSpace space;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> hnsw;

  void create(std::size_t capacity) {
    hnsw = std::make_unique<hnswlib::HierarchicalNSW<float>>(&space, capacity, opts.m, opts.ef_construction);
    hnsw->setEf(opts.ef_search);
  }
};

vector_index::vector_index(std::size_t dim, vector_index_options opts) : p_(std::make_unique<impl>(dim, opts)) {
  p_->create(initial_capacity);
}

vector_index::vector_index(std::unique_ptr<impl> p) : p_(std::move(p)) {}

vector_index::~vector_index() = default;

std::size_t vector_index::dim() const noexcept {
  return p_->dim;
}

std::size_t vector_index::size() const noexcept {
  return p_->hnsw->cur_element_count - p_->hnsw->num_deleted_;
}

void vector_index::add(std::uint64_t label, std::span<const float> v) {
  auto& h = *p_->hnsw;
  if (h.cur_element_count == h.max_elements_)
    h.resizeIndex(h.max_elements_ * 2);
  // hnswlib 0.6.2 updates an existing label in place (and un-deletes it).
  h.addPoint(v.data(), static_cast<hnswlib::labeltype>(label));
}

void vector_index::remove(std::uint64_t label) {
  auto& h = *p_->hnsw;
  auto it = h.label_lookup_.find(static_cast<hnswlib::labeltype>(label));
  if (it == h.label_lookup_.end() || h.isMarkedDeleted(it->second))
    return;  // markDelete would throw
  h.markDelete(static_cast<hnswlib::labeltype>(label));
}

void vector_index::set_ef(std::size_t ef) noexcept {
  p_->opts.ef_search = ef;
  p_->hnsw->setEf(ef);
}

std::vector<vector_hit> vector_index::search(std::span<const float> query, std::size_t k) const {
  std::vector<vector_hit> out;
  auto& h = *p_->hnsw;
  if (k == 0 || size() == 0)
    return out;
  // ef is set once (constructor, set_ef): searches only read the index, so readers may run
  // together. hnswlib searches with max(ef, k).
  auto result = h.searchKnn(query.data(), k);
  out.reserve(result.size());
  while (!result.empty()) {
    // hnswlib's inner-product distance is 1 - <a, b>.
    out.push_back({static_cast<std::uint64_t>(result.top().second), 1.0f - result.top().first});
    result.pop();
  }
  std::sort(out.begin(), out.end(), [](const vector_hit& a, const vector_hit& b) {
    return a.similarity != b.similarity ? a.similarity > b.similarity : a.label < b.label;
  });
  return out;
}

engram::result<void> vector_index::save(const std::string& path) const {
  const std::string tmp = path + ".tmp";
  try {
    p_->hnsw->saveIndex(tmp);
  } catch (const std::exception& e) {  // hnswlib reports I/O failures by throwing
    return engram::fail("cannot write vector index '" + tmp + "': " + e.what());
  }
  std::uint64_t size = 0, hash = 0;
  if (!fingerprint(tmp, &size, &hash))
    return engram::fail("cannot read back vector index '" + tmp + "'");
  {
    std::ofstream side(path + ".sum.tmp", std::ios::trunc);
    side << p_->dim << ' ' << size << ' ' << hash << '\n';
    if (!side.flush())
      return engram::fail("cannot write '" + path + ".sum.tmp'");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (!ec)
    std::filesystem::rename(path + ".sum.tmp", path + ".sum", ec);
  if (ec)
    return engram::fail("cannot install vector index '" + path + "': " + ec.message());
  return {};
}

engram::result<std::unique_ptr<vector_index>> vector_index::load(const std::string& path, std::size_t dim,
                                                                 vector_index_options opts) {
  auto fail = [&](const std::string& why) { return engram::fail("vector index '" + path + "': " + why); };
  std::ifstream side(path + ".sum");
  std::uint64_t want_dim = 0, want_size = 0, want_hash = 0;
  if (!(side >> want_dim >> want_size >> want_hash))
    return fail("no readable checksum file");
  if (want_dim != dim)
    return fail("dimension " + std::to_string(want_dim) + ", expected " + std::to_string(dim));
  std::uint64_t size = 0, hash = 0;
  if (!fingerprint(path, &size, &hash))
    return fail("cannot read");
  if (size != want_size || hash != want_hash)
    return fail("checksum mismatch (truncated or changed)");
  auto p = std::make_unique<impl>(dim, opts);
  // hnswlib 0.6.2: the loading constructor leaves num_deleted_ uninitialised, and the bare
  // constructor initialises nothing. Zero what loadIndex reads or counts before it sets it.
  p->hnsw = std::make_unique<hnswlib::HierarchicalNSW<float>>(&p->space);
  auto& h = *p->hnsw;
  h.num_deleted_ = 0;
  h.cur_element_count = 0;
  h.data_level0_memory_ = nullptr;
  h.linkLists_ = nullptr;
  h.visited_list_pool_ = nullptr;
  try {
    h.loadIndex(path, &p->space);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  h.setEf(opts.ef_search);
  return std::unique_ptr<vector_index>(new vector_index(std::move(p)));
}

float dot(std::span<const float> a, std::span<const float> b) noexcept {
  // Four independent sums in a fixed order: vectorisable, and the same result everywhere
  // the same binary runs.
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::size_t n = std::min(a.size(), b.size()), i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i)
    s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

}  // namespace engram::storage
