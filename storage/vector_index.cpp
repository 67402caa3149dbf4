// The only translation unit that includes hnswlib (its headers define non-inline symbols).

#include "storage/vector_index.hpp"
#include "base/hash.hpp"

#include <hnswlib/hnswlib.h>

#include <algorithm>
#include <cstring>
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
  std::uint64_t h = fnv1a_seed, n = 0;
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    auto got = static_cast<std::size_t>(in.gcount());
    h = fnv1a(std::string_view(buf.data(), got), h);
    n += got;
  }
  *size = n;
  *hash = h;
  return true;
}

/// hnswlib's view of a quantised vector: [scale: 4 bytes][q: dim bytes], distance
/// 1 - schemas::similarity_of (the decisions' own formula, so the index and the decisions
/// agree to the bit).
class int8_space final : public hnswlib::SpaceInterface<float> {
public:
  explicit int8_space(std::size_t dim) : dim_(dim) {}
  std::size_t get_data_size() override { return sizeof(float) + dim_; }
  hnswlib::DISTFUNC<float> get_dist_func() override { return &distance; }
  void* get_dist_func_param() override { return &dim_; }

  static float distance(const void* a, const void* b, const void* param) {
    const auto dim = *static_cast<const std::size_t*>(param);
    float sa, sb;
    std::memcpy(&sa, a, sizeof sa);
    std::memcpy(&sb, b, sizeof sb);
    const auto* qa = static_cast<const std::int8_t*>(a) + sizeof(float);
    const auto* qb = static_cast<const std::int8_t*>(b) + sizeof(float);
    return 1.0f - schemas::similarity_of(schemas::dot_i8(qa, qb, dim), sa, sb);
  }

  /// The bytes hnswlib stores for `v`.
  std::vector<char> pack(const schemas::vector8& v) const {
    std::vector<char> out(sizeof(float) + dim_, 0);
    std::memcpy(out.data(), &v.scale, sizeof(float));
    std::memcpy(out.data() + sizeof(float), v.q.data(), std::min(dim_, v.q.size()));
    return out;
  }

private:
  std::size_t dim_;
};

}  // namespace

struct vector_index::impl {
  impl(std::size_t d, vector_index_options o) : dim(d), opts(o), space(d) {}

  std::size_t dim;
  vector_index_options opts;
  int8_space space;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> hnsw;
  /// Bytes of the upper levels' link lists of the first `counted` elements: kept as elements
  /// are added, so memory_bytes (each /metrics scrape) does not walk every element.
  std::size_t upper_bytes = 0, counted = 0;

  void count_levels() {
    for (; counted < hnsw->cur_element_count; ++counted)
      upper_bytes +=
          static_cast<std::size_t>(std::max(0, hnsw->element_levels_[counted])) * hnsw->size_links_per_element_;
  }

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

std::size_t vector_index::dim() const noexcept { return p_->dim; }

std::size_t vector_index::size() const noexcept { return p_->hnsw->cur_element_count - p_->hnsw->num_deleted_; }

void vector_index::add(std::uint64_t label, const schemas::vector8& v) {
  auto& h = *p_->hnsw;
  // A quarter more when full, not twice as much: the unused slots cost the index's bytes per
  // element (vector, links, lock) each, up to half the index when doubling. hnswlib's
  // resize reallocates the level-0 block; glibc moves a block that large by remapping pages.
  if (h.cur_element_count == h.max_elements_)
    h.resizeIndex(h.max_elements_ + std::max(initial_capacity, h.max_elements_ / 4));
  // hnswlib 0.6.2 updates an existing label in place (and un-deletes it).
  const auto packed = p_->space.pack(v);
  h.addPoint(packed.data(), static_cast<hnswlib::labeltype>(label));
  p_->count_levels();
}

void vector_index::remove(std::uint64_t label) {
  auto& h = *p_->hnsw;
  auto it = h.label_lookup_.find(static_cast<hnswlib::labeltype>(label));
  if (it == h.label_lookup_.end() || h.isMarkedDeleted(it->second))
    return;  // markDelete would throw
  h.markDelete(static_cast<hnswlib::labeltype>(label));
  // Its bytes go too (docs/forgetting.md): the node stays in the graph, marked, for the links
  // through it, and a snapshot keeps nothing of the vector. Similarity to it is now 0.
  std::memset(h.getDataByInternalId(it->second), 0, p_->space.get_data_size());
}

std::size_t vector_index::memory_bytes() const {
  const auto& h = *p_->hnsw;
  const auto upper = p_->upper_bytes;
  constexpr std::size_t map_node = sizeof(void*) + sizeof(hnswlib::labeltype) + sizeof(hnswlib::tableint) + 8;
  return h.max_elements_ * (h.size_data_per_element_ + sizeof(void*) + sizeof(int) + sizeof(std::mutex)) + upper +
         h.label_lookup_.size() * map_node + h.label_lookup_.bucket_count() * sizeof(void*) +
         h.link_list_update_locks_.size() * sizeof(std::mutex) + h.max_elements_ * sizeof(unsigned short);
}

void vector_index::set_ef(std::size_t ef) noexcept {
  p_->opts.ef_search = ef;
  p_->hnsw->setEf(ef);
}

std::vector<vector_hit> vector_index::search(const schemas::vector8& query, std::size_t k) const {
  std::vector<vector_hit> out;
  auto& h = *p_->hnsw;
  if (k == 0 || size() == 0 || query.q.size() != p_->dim)
    return out;
  // ef is set once (constructor, set_ef): searches only read the index, so readers may run
  // together. hnswlib searches with max(ef, k).
  const auto packed = p_->space.pack(query);
  auto result = h.searchKnn(packed.data(), k);
  out.reserve(result.size());
  while (!result.empty()) {
    // The similarity itself (1 - (1 - s) is not always s in float), from the stored bytes.
    const auto label = result.top().second;
    const char* stored = h.getDataByInternalId(h.label_lookup_.at(label));
    float scale;
    std::memcpy(&scale, stored, sizeof scale);
    const auto dot =
        schemas::dot_i8(query.q.data(), reinterpret_cast<const std::int8_t*>(stored) + sizeof(float), p_->dim);
    out.push_back({static_cast<std::uint64_t>(label), schemas::similarity_of(dot, query.scale, scale)});
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
  p->count_levels();
  return std::unique_ptr<vector_index>(new vector_index(std::move(p)));
}

}  // namespace engram::storage
