#pragma once
// One organisation's approximate nearest-neighbour index over quantised vectors
// (schemas/vector.hpp; hnswlib HNSW over an int8 inner-product space: 4 + dim bytes a
// vector, a quarter of float32, and distances that are exact integer sums). Derived state: the `vectors` column family is the truth, and the index
// can always be rebuilt from it (docs/architecture.md).
//
// hnswlib 0.6.2 defines non-inline functions in its headers, so it is included by
// vector_index.cpp alone; nothing else sees it.
//
// Determinism: hnswlib draws node levels from a generator with a fixed seed, so the same
// vectors added in the same order give the same graph. The engine adds vectors in the
// order their events are applied (the label is the organisation's vector sequence number),
// and rebuilds and snapshots keep that order; a load draws as many levels as the file holds
// nodes, so the nodes added after it get the levels they would have got without the
// restart: a restarted or replayed engine searches the same graph as the live one did.
// (A label added again updates its node and draws from hnswlib's second generator, which a
// load does not bring back: the engine's labels are new sequence numbers.)

#include "base/result.hpp"
#include "schemas/vector.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace engram::storage {

struct vector_hit {
  std::uint64_t label = 0;
  /// schemas::similarity with the query (its cosine).
  float similarity = 0;
};

struct vector_index_options {
  /// Links per node (hnswlib M).
  std::size_t m = 16;
  std::size_t ef_construction = 100;
  /// Candidate list size at query time (at least k).
  std::size_t ef_search = 128;
};

class vector_index {
public:
  vector_index(std::size_t dim, vector_index_options opts = {});
  ~vector_index();
  vector_index(const vector_index&) = delete;
  vector_index& operator=(const vector_index&) = delete;

  [[nodiscard]] std::size_t dim() const noexcept;
  /// Vectors searchable (added minus removed).
  [[nodiscard]] std::size_t size() const noexcept;

  /// Adds (or replaces) the vector of `label`. `v.size()` must equal dim().
  void add(std::uint64_t label, const schemas::vector8& v);
  /// Hides `label` from searches (hnswlib markDelete) and zeroes its stored vector, so no
  /// snapshot holds it; unknown labels are ignored.
  void remove(std::uint64_t label);
  /// Candidate list size of later searches (hnswlib ef; at least k is used). Not while
  /// other threads search.
  void set_ef(std::size_t ef) noexcept;
  /// Bytes the index holds: every slot of its capacity (vector, level-0 links, label, lock,
  /// level), the upper layers' links, the label map and hnswlib's fixed lock table.
  [[nodiscard]] std::size_t memory_bytes() const;
  /// Up to k nearest labels, most similar first (ties by label). Concurrent searches are
  /// safe; add and remove need the caller's exclusion.
  [[nodiscard]] std::vector<vector_hit> search(const schemas::vector8& query, std::size_t k) const;
  /// The same with a candidate list of `ef` (at least k) for this search alone, so searches
  /// with different lists may run together; the index's own (set_ef) is not changed. It finds
  /// what hnswlib's search finds in an index whose ef is `ef`.
  [[nodiscard]] std::vector<vector_hit> search(const schemas::vector8& query, std::size_t k, std::size_t ef) const;

  /// Writes the index to `path` (atomically: a temporary file, then rename).
  [[nodiscard]] engram::result<void> save(const std::string& path) const;
  /// Reads an index written by save(); an error when the file is missing, truncated or
  /// for another dimension (`dim` 0: the dimension it was written with).
  [[nodiscard]] static engram::result<std::unique_ptr<vector_index>> load(const std::string& path, std::size_t dim,
                                                                          vector_index_options opts);

private:
  struct impl;
  explicit vector_index(std::unique_ptr<impl> p);
  /// Both searches: hnswlib's with the index's ef when `ef` is empty, else search_with_ef.
  [[nodiscard]] std::vector<vector_hit> nearest(const schemas::vector8& query, std::size_t k,
                                                std::optional<std::size_t> ef) const;
  std::unique_ptr<impl> p_;
};

}  // namespace engram::storage
