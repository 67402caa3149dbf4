// The only translation unit that includes hnswlib (its headers define non-inline symbols).

#include "storage/vector_index.hpp"
#include "storage/internal/snapshot_file.hpp"

#include <hnswlib/hnswlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <queue>
#include <stdexcept>
#include <system_error>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace engram::storage {

namespace {

constexpr std::size_t initial_capacity = 1024;
/// The seed of hnswlib's level generator (its default): an index and every index loaded from
/// its snapshots draw the same levels.
constexpr std::size_t level_seed = 100;

/// Asks the kernel for 2 MiB pages in the whole 2 MiB pieces of [at, at + bytes): a level-0
/// block of vectors and links is read at random by every search and insert, and in 4 KiB
/// pages a million vectors are 165k pages, far more than the TLB holds (and as many faults
/// when it is first written). A hint: where transparent huge pages are off it does nothing.
/// Only a block of 32 MiB or more (50k vectors): a smaller one may share its pages with the
/// allocator's other blocks, which would keep the hint after this block moved or went.
void advise_huge_pages(void* at, std::size_t bytes) {
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  if (bytes < (std::size_t{32} << 20))
    return;
  const auto begin = (reinterpret_cast<std::uintptr_t>(at) + huge - 1) & ~(huge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(at) + bytes) & ~(huge - 1);
  if (end > begin)
    (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

/// A file mapped read-only for as long as it is held (a snapshot is checked and parsed in
/// place: no copy of its bytes beside the index built from them).
class mapped_file {
public:
  static engram::result<mapped_file> open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return engram::fail("cannot open it");
    struct stat st {};
    mapped_file m;
    if (::fstat(fd, &st) == 0 && st.st_size > 0) {
      m.size_ = static_cast<std::size_t>(st.st_size);
      void* at = ::mmap(nullptr, m.size_, PROT_READ, MAP_PRIVATE, fd, 0);
      m.data_ = at == MAP_FAILED ? nullptr : static_cast<const char*>(at);
      if (m.data_)
        ::madvise(const_cast<char*>(m.data_), m.size_, MADV_SEQUENTIAL);
    }
    ::close(fd);
    if (!m.data_)
      return engram::fail("cannot read it");
    return m;
  }
  mapped_file(mapped_file&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(o.size_) {}
  mapped_file& operator=(mapped_file&&) = delete;
  ~mapped_file() {
    if (data_)
      ::munmap(const_cast<char*>(data_), size_);
  }
  [[nodiscard]] std::string_view bytes() const { return {data_, size_}; }

private:
  mapped_file() = default;
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

/// A cursor over a snapshot's bytes; throws std::runtime_error past their end.
struct byte_cursor {
  std::string_view bytes;
  std::size_t at = 0;

  template <class T>
  void take(T& v) {
    if (bytes.size() - at < sizeof v)
      throw std::runtime_error("truncated");
    std::memcpy(&v, bytes.data() + at, sizeof v);
    at += sizeof v;
  }
  const char* skip(std::size_t n) {
    if (bytes.size() - at < n)
      throw std::runtime_error("truncated");
    at += n;
    return bytes.data() + at - n;
  }
};

/// hnswlib 0.6.2's header into `h`, checked against what this build writes; the element
/// count (h.cur_element_count stays 0 until the link lists are held: hnswlib's destructor
/// walks that many, also after a throw from here).
std::size_t read_hnsw_header(hnswlib::HierarchicalNSW<float>& h, hnswlib::SpaceInterface<float>& space,
                             byte_cursor& in) {
  using hnswlib::labeltype;
  using hnswlib::linklistsizeint;
  using hnswlib::tableint;
  decltype(h.cur_element_count) n = 0;
  in.take(h.offsetLevel0_);
  in.take(h.max_elements_);
  in.take(n);
  in.take(h.size_data_per_element_);
  in.take(h.label_offset_);
  in.take(h.offsetData_);
  in.take(h.maxlevel_);
  in.take(h.enterpoint_node_);
  in.take(h.maxM_);
  in.take(h.maxM0_);
  in.take(h.M_);
  in.take(h.mult_);
  in.take(h.ef_construction_);
  h.data_size_ = space.get_data_size();
  h.fstdistfunc_ = space.get_dist_func();
  h.dist_func_param_ = space.get_dist_func_param();
  h.size_links_per_element_ = h.maxM_ * sizeof(tableint) + sizeof(linklistsizeint);
  h.size_links_level0_ = h.maxM0_ * sizeof(tableint) + sizeof(linklistsizeint);
  if (h.offsetLevel0_ != 0 || h.maxM_ == 0 || h.maxM_ > 10000 || h.maxM0_ > 20000 ||
      h.offsetData_ != h.size_links_level0_ || h.label_offset_ != h.offsetData_ + h.data_size_ ||
      h.size_data_per_element_ != h.label_offset_ + sizeof(labeltype) || n > h.max_elements_ ||
      (n > 0 && h.enterpoint_node_ >= n) || !(h.mult_ > 0))
    throw std::runtime_error("a header this build does not write (another space or hnswlib)");
  return n;
}

/// Reads what hnswlib 0.6.2's saveIndex wrote into `h` (constructed bare, its pointers null):
/// what its loadIndex sets, from bytes in memory. loadIndex's check of the layout asks the
/// file's position twice an element (two lseek calls each, and a refill of its buffer after
/// each skip): most of an open at a million vectors. Here the layout is checked in one pass
/// over memory before anything is allocated; throws std::runtime_error when it does not hold.
void read_hnsw(hnswlib::HierarchicalNSW<float>& h, hnswlib::SpaceInterface<float>& space, std::string_view bytes) {
  using hnswlib::tableint;
  byte_cursor in{bytes};
  const std::size_t n = read_hnsw_header(h, space, in);
  if ((bytes.size() - in.at) / h.size_data_per_element_ < n)
    throw std::runtime_error("truncated level 0");
  const char* level0 = in.skip(n * h.size_data_per_element_);
  const std::size_t lists_at = in.at;
  for (std::size_t i = 0; i < n; ++i) {
    unsigned int size;
    in.take(size);
    if (size % h.size_links_per_element_ != 0)
      throw std::runtime_error("a link list that does not hold together");
    in.skip(size);
  }
  if (in.at != bytes.size())
    throw std::runtime_error("bytes after the last link list");
  const std::size_t capacity = std::max<std::size_t>(h.max_elements_, 1);
  h.data_level0_memory_ = static_cast<char*>(std::malloc(capacity * h.size_data_per_element_));
  h.linkLists_ = static_cast<char**>(std::malloc(sizeof(void*) * capacity));
  if (!h.data_level0_memory_ || !h.linkLists_)
    throw std::bad_alloc();
  advise_huge_pages(h.data_level0_memory_, capacity * h.size_data_per_element_);
  std::memcpy(h.data_level0_memory_, level0, n * h.size_data_per_element_);
  std::vector<std::mutex>(h.max_elements_).swap(h.link_list_locks_);
  std::vector<std::mutex>(hnswlib::HierarchicalNSW<float>::max_update_element_locks).swap(h.link_list_update_locks_);
  h.visited_list_pool_ = new hnswlib::VisitedListPool(1, static_cast<int>(h.max_elements_));
  h.element_levels_ = std::vector<int>(h.max_elements_);
  h.cur_element_count = n;  // element_levels_ all 0: the destructor frees only lists held
  h.revSize_ = 1.0 / h.mult_;
  h.ef_ = 10;
  h.label_lookup_.reserve(n);
  in.at = lists_at;
  for (std::size_t i = 0; i < n; ++i) {
    h.label_lookup_[h.getExternalLabel(static_cast<tableint>(i))] = static_cast<tableint>(i);
    unsigned int size;
    in.take(size);
    h.linkLists_[i] = nullptr;
    if (size == 0)
      continue;
    h.linkLists_[i] = static_cast<char*>(std::malloc(size));
    if (!h.linkLists_[i])
      throw std::bad_alloc();
    std::memcpy(h.linkLists_[i], in.skip(size), size);
    h.element_levels_[i] = static_cast<int>(size / h.size_links_per_element_);
  }
  for (std::size_t i = 0; i < n; ++i)
    if (h.isMarkedDeleted(static_cast<tableint>(i)))
      h.num_deleted_ += 1;
  // The level generator is not in the file (and the bare constructor leaves it and the
  // update generator unseeded): seeded as the constructor seeds them, then one draw for every
  // node the saved index added (removed ones too), it is where the saved index's was, and a
  // node added now gets the level it would have got there.
  h.level_generator_.seed(level_seed);
  h.update_probability_generator_.seed(level_seed + 1);
  for (std::size_t i = 0; i < n; ++i)
    (void)h.getRandomLevel(h.mult_);
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
    hnsw =
        std::make_unique<hnswlib::HierarchicalNSW<float>>(&space, capacity, opts.m, opts.ef_construction, level_seed);
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
  if (h.cur_element_count == h.max_elements_) {
    h.resizeIndex(h.max_elements_ + std::max(initial_capacity, h.max_elements_ / 4));
    advise_huge_pages(h.data_level0_memory_, h.max_elements_ * h.size_data_per_element_);
  }
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

namespace {

/// hnswlib's searchKnn with the candidate list's size given (`ef`, at least k) instead of
/// read from the index: the same greedy descent through the upper levels, then the same
/// search of level 0. The index is only read, so searches with different lists may run
/// together.
std::priority_queue<std::pair<float, hnswlib::labeltype>> search_with_ef(const hnswlib::HierarchicalNSW<float>& h,
                                                                         const void* query, std::size_t k,
                                                                         std::size_t ef) {
  std::priority_queue<std::pair<float, hnswlib::labeltype>> result;
  if (h.cur_element_count == 0)
    return result;
  hnswlib::tableint at = h.enterpoint_node_;
  float at_distance = h.fstdistfunc_(query, h.getDataByInternalId(at), h.dist_func_param_);
  for (int level = h.maxlevel_; level > 0; --level)
    for (bool moved = true; moved;) {
      moved = false;
      auto* links = h.get_linklist(at, level);
      const auto* neighbours = reinterpret_cast<const hnswlib::tableint*>(links + 1);
      for (int i = 0; i < h.getListCount(links); ++i) {
        const float d = h.fstdistfunc_(query, h.getDataByInternalId(neighbours[i]), h.dist_func_param_);
        if (d < at_distance) {
          at_distance = d;
          at = neighbours[i];
          moved = true;
        }
      }
    }
  auto top = h.num_deleted_ ? h.searchBaseLayerST<true>(at, query, std::max(ef, k))
                            : h.searchBaseLayerST<false>(at, query, std::max(ef, k));
  while (top.size() > k)
    top.pop();
  for (; !top.empty(); top.pop())
    result.emplace(top.top().first, h.getExternalLabel(top.top().second));
  return result;
}

}  // namespace

std::vector<vector_hit> vector_index::search(const schemas::vector8& query, std::size_t k) const {
  return nearest(query, k, std::nullopt);
}

std::vector<vector_hit> vector_index::search(const schemas::vector8& query, std::size_t k, std::size_t ef) const {
  return nearest(query, k, ef);
}

std::vector<vector_hit> vector_index::nearest(const schemas::vector8& query, std::size_t k,
                                              std::optional<std::size_t> ef) const {
  std::vector<vector_hit> out;
  auto& h = *p_->hnsw;
  if (k == 0 || size() == 0 || query.q.size() != p_->dim)
    return out;
  // Searches only read the index, so readers may run together: without an ef of its own a
  // search is hnswlib's, with the index's ef (set once: constructor, set_ef, load); with one it
  // is search_with_ef. Either searches a list of max(ef, k).
  const auto packed = p_->space.pack(query);
  auto result = ef ? search_with_ef(h, packed.data(), k, *ef) : h.searchKnn(packed.data(), k);
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
  auto sum = storage::detail::sum_of_file(tmp, storage::detail::sum_kind::xxh3);
  if (!sum)
    return engram::fail("cannot read back vector index '" + tmp + "'");
  {
    // The sidecar: dimension, size, checksum and its kind ("xxh3"; a sidecar of three
    // numbers, the first format, is FNV-1a).
    std::ofstream side(path + ".sum.tmp", std::ios::trunc);
    side << p_->dim << ' ' << sum->size << ' ' << sum->hash << " xxh3\n";
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
  std::string kind_name;
  side >> kind_name;
  if (!kind_name.empty() && kind_name != "xxh3")
    return fail("checksum of unknown kind '" + kind_name + "'");
  const auto kind = kind_name.empty() ? storage::detail::sum_kind::fnv1a : storage::detail::sum_kind::xxh3;
  if (want_dim == 0)
    return fail("dimension 0 in its checksum file");
  if (dim == 0)
    dim = want_dim;
  if (want_dim != dim)
    return fail("dimension " + std::to_string(want_dim) + ", expected " + std::to_string(dim));
  auto file = mapped_file::open(path);
  if (!file)
    return fail(file.error());
  storage::detail::running_sum sum(kind);
  sum.add(file->bytes());
  if (sum.done().size != want_size || sum.done().hash != want_hash)
    return fail("checksum mismatch (truncated or changed)");
  auto p = std::make_unique<impl>(dim, opts);
  // hnswlib 0.6.2: the loading constructor leaves num_deleted_ uninitialised, and the bare
  // constructor initialises nothing. Zero what read_hnsw reads or counts before it sets it.
  p->hnsw = std::make_unique<hnswlib::HierarchicalNSW<float>>(&p->space);
  auto& h = *p->hnsw;
  h.num_deleted_ = 0;
  h.cur_element_count = 0;
  h.data_level0_memory_ = nullptr;
  h.linkLists_ = nullptr;
  h.visited_list_pool_ = nullptr;
  try {
    read_hnsw(h, p->space, file->bytes());
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  h.setEf(opts.ef_search);
  p->count_levels();
  return std::unique_ptr<vector_index>(new vector_index(std::move(p)));
}

}  // namespace engram::storage
