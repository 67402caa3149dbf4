#pragma once
// BM25 postings in memory, one set per organisation: derived from the text column family
// (the truth, written in each entry's batch) when the store opens, then kept up to date by
// the writer after each batch it commits. A recall reads these instead of a RocksDB iterator
// per term: the terms' posting lists are plain arrays, walked a document at a time.
//
// Documents are numbered in two runs: the sorted run, numbered in the order of their ids
// (bytewise), and after it the documents added since, in the order added. The sorted run is
// cut into chunks of consecutive numbers with, for each term, the largest count and the
// shortest document it has in each chunk: a search scores the added documents, then walks
// the chunks in order of id and passes over every chunk that can hold no document better
// than the k-th found (ties rank by id, so a chunk whose best can only tie comes too late).
// The run is sorted again (every number remapped) when the index is loaded or read, and
// when the added documents pass a quarter of it.
//
// Documents of the sorted run that BM25 cannot tell apart (the same length and the same count
// of every term: templated mail, whose digits are not indexed) are echoes of the first of
// them by id: only that one keeps postings, and a search offers its echoes, in the order of
// their ids, at its score. Each such class is scored once; the results are the same to the bit.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace engram::storage::detail {

class snapshot_out;
class snapshot_in;

/// An entry's indexed words: (term, count) and the number of words.
struct text_doc {
  std::vector<std::pair<std::string, std::uint32_t>> tf;
  std::uint32_t length = 0;
};

class text_index {
public:
  /// How documents are numbered: chunks of 2^chunk_bits numbers; the sorted run is sorted
  /// again when the documents added after it pass max(a quarter of it, min_added).
  struct layout {
    unsigned chunk_bits = 8;
    std::uint32_t min_added = 16384;
  };
  text_index() = default;
  explicit text_index(layout l) : layout_(l) {}
  text_index(const text_index&) = delete;
  text_index& operator=(const text_index&) = delete;

  /// Adds an entry's postings (no-op when the entry is indexed already).
  void add(const std::string& org, const std::string& id, const text_doc& doc);
  /// Removes an entry's postings; `doc` is what add() was given. No-op when absent.
  void remove(const std::string& org, const std::string& id, const text_doc& doc);
  /// Forgets every document of an organisation.
  void drop(const std::string& org);
  /// Bulk load (at open): one posting (tf ≥ 1), in any order; call seal() after the last. A
  /// document's length is the one its first posting gave.
  void load(std::string_view org, std::string_view term, std::string_view id, std::uint32_t tf, std::uint32_t length);
  /// Sorts and trims what load() gathered.
  void seal();
  /// Writes every organisation's postings as they are (doc numbers, removed ids and all);
  /// read() numbers the live documents again in the order of their ids, and its index
  /// answers every search as this one does.
  void write(snapshot_out& out) const;
  /// Replaces what is held by what write() wrote. False, and nothing held, when the bytes
  /// are not such a section.
  [[nodiscard]] bool read(snapshot_in& in);
  /// Whether the last read() numbered an organisation of at least layout::min_added documents
  /// again, the run not being in the order of its ids (a snapshot written before documents
  /// were numbered so): one written now reads faster.
  [[nodiscard]] bool read_sorted_again() const { return read_sorted_again_; }
  /// Forgets every organisation.
  void clear();
  /// BM25 (k1 1.2, b 0.75) over the distinct terms, less those in more than half of the
  /// documents when a term in fewer is searched (the organisation's own stop words, whose
  /// Robertson-Sparck Jones weight is below zero): the best `limit` entry ids, highest
  /// score first, ties by id, as if every posting were scored (the commonest terms' postings,
  /// and the sorted run's chunks, are skipped where they cannot change the best). Terms are
  /// summed rarest first (then by term), so equal inputs give equal bits, however the
  /// documents are numbered.
  [[nodiscard]] std::vector<std::pair<std::string, double>> search(const std::string& org,
                                                                   const std::vector<std::string>& terms,
                                                                   std::size_t limit) const;
  /// The sorted runs' chunks searches walked and passed over, since the index was made.
  struct chunk_counts {
    std::uint64_t walked = 0, passed = 0;
  };
  [[nodiscard]] chunk_counts chunks_searched() const {
    return {walked_.load(std::memory_order_relaxed), passed_.load(std::memory_order_relaxed)};
  }
  /// Postings held, over all organisations (for the memory figures).
  [[nodiscard]] std::size_t postings() const;
  /// Bytes held: the postings lists (their capacity), the terms, the ids and per-document
  /// arrays, and the hash tables' nodes and buckets.
  [[nodiscard]] std::size_t memory_bytes() const;

private:
  /// A document's number and the term's count in it, in 32 bits (half the bytes of two
  /// numbers: the postings are most of the index): the number in the high 27 bits, the count
  /// in the low 5 when it is below 32, else 0 there and the count in its list's `large`.
  struct posting {
    static constexpr unsigned count_bits = 5;
    static constexpr std::uint32_t counts_in_place = (1u << count_bits) - 1;
    /// The highest document number a posting holds: an organisation indexes at most this
    /// many documents (134 million).
    static constexpr std::uint32_t max_doc = (1u << (32 - count_bits)) - 1;
    std::uint32_t bits;
    [[nodiscard]] std::uint32_t doc() const { return bits >> count_bits; }
    /// The count when it is in place, else 0.
    [[nodiscard]] std::uint32_t small_tf() const { return bits & counts_in_place; }
  };
  /// A term's most in one chunk of the sorted run: its shortest document there with the
  /// largest count a document of that length has, and its largest count with the shortest
  /// document of a larger count than that. A posting's weight is at most one of the two:
  /// a count no larger than the first's in a document no shorter, or a larger count, no
  /// larger than the most, in a document no shorter than the second's (when max_tf is
  /// tf_shortest, only the first). Templated mail has many documents with a count of 2 but
  /// few short ones: one bound of the largest count in the shortest document would be met by
  /// no document.
  struct chunk_bound {
    std::uint32_t chunk, tf_shortest, shortest, max_tf, shortest_above;
  };
  /// One term's postings, ascending by doc, with their largest count and shortest document:
  /// with the term's idf, the most the term adds to any score (a weight grows with the count
  /// and falls with the length). A removal leaves them as they were (bounds still) until the
  /// run is sorted again.
  struct term_list {
    std::vector<posting> postings;
    /// The chunks of the sorted run it has postings in, ascending; a removal leaves them.
    std::vector<chunk_bound> chunks;
    /// Counts over posting::counts_in_place, by document (rare: a word 32 times in one text).
    std::unordered_map<std::uint32_t, std::uint32_t> large;
    std::uint32_t max_tf = 0, min_length = std::numeric_limits<std::uint32_t>::max();
    /// The live documents that hold the term: its postings' and their echoes'.
    std::uint32_t df = 0;
    [[nodiscard]] std::uint32_t tf(posting p) const {
      const auto small = p.small_tf();
      return small != 0 ? small : large.at(p.doc());
    }
    void bound(std::uint32_t tf, std::uint32_t length) {
      max_tf = std::max(max_tf, tf);
      min_length = std::min(min_length, length);
    }
    /// Appends (doc, tf); tf ≥ 1.
    void push_back(std::uint32_t doc, std::uint32_t tf, std::uint32_t length) {
      const bool in_place = tf <= posting::counts_in_place;
      postings.push_back({doc << posting::count_bits | (in_place ? tf : 0)});
      if (!in_place)
        large[doc] = tf;
      bound(tf, length);
    }
  };
  struct org_index;
  /// Hashes and compares doc numbers by their ids' bytes, so the id set keeps no second
  /// copy of any id; a string_view looks a doc number up by id.
  struct by_id {
    using is_transparent = void;
    const org_index* o;
    std::size_t operator()(std::uint32_t doc) const;
    std::size_t operator()(std::string_view id) const { return std::hash<std::string_view>{}(id); }
    bool operator()(std::uint32_t a, std::uint32_t b) const { return a == b; }
    bool operator()(std::string_view id, std::uint32_t doc) const;
    bool operator()(std::uint32_t doc, std::string_view id) const { return (*this)(id, doc); }
  };
  struct org_index {
    org_index() : doc_of(0, by_id{this}, by_id{this}) {}
    org_index(const org_index&) = delete;
    org_index& operator=(const org_index&) = delete;
    [[nodiscard]] std::string_view id(std::uint32_t doc) const {
      return std::string_view(ids).substr(id_at[doc], id_at[doc + 1] - id_at[doc]);
    }
    /// Whether doc a's id is below doc b's, bytewise: their first eight bytes compared first.
    [[nodiscard]] bool id_below(std::uint32_t a, std::uint32_t b) const;
    std::uint32_t intern(std::string_view id, std::uint32_t length, bool* added);
    /// A copy with the live documents numbered in the order of their ids (the sorted run:
    /// all of them), every posting remapped, the terms' and the chunks' bounds made from the
    /// postings; removed documents' ids, and lists left empty, go.
    [[nodiscard]] std::unique_ptr<org_index> sorted_copy(unsigned chunk_bits) const;
    /// Over a sorted run of live documents with all their postings: chains each document
    /// equal to an earlier one to BM25 (length and every count, compared, not only hashed)
    /// behind the first of them, drops its postings and sets every term's df.
    void find_echoes();
    /// After a read of a sorted run with its echoes: `first`, and every term's df, echoes
    /// counted. False when an echo holds postings or differs from its first in length.
    [[nodiscard]] bool count_echoes();
    /// Offers `doc`'s score to `offer` for it and its live echoes, in the order of their ids,
    /// until one is not taken (the rest, of higher ids, would not be either).
    template <class Offer>
    void offer_with_echoes(std::uint32_t doc, Offer&& offer) const {
      if (doc >= echo.size() || echo[doc] == no_echo) {  // a posting of no class is live
        offer(doc);
        return;
      }
      auto d = doc;
      if (!gone.empty())
        if (auto moved = live_from.find(doc); moved != live_from.end())
          d = moved->second;
      for (; d != no_echo; d = echo[d])
        if ((gone.empty() || !gone.contains(d)) && !offer(d))
          return;
    }
    /// Removes doc `n` (of the grouped prefix) from its class; whether the class still has
    /// a live document (its postings, the first's, stay).
    bool remove_from_class(std::uint32_t n);
    static constexpr std::uint32_t no_echo = std::numeric_limits<std::uint32_t>::max();

    std::string ids;                      // every id ever indexed, back to back
    std::vector<std::uint32_t> id_at{0};  // doc -> offset in ids (one more than docs)
    /// doc -> its id's first eight bytes as a big-endian number, zeros after a shorter id: ties
    /// at the k-th score are broken by id, and a tie group of dense mail is 200k documents.
    std::vector<std::uint64_t> id_key;
    std::vector<std::uint32_t> length;                       // doc -> words
    std::unordered_set<std::uint32_t, by_id, by_id> doc_of;  // live docs, found by id
    std::unordered_map<std::string, term_list> terms;
    std::uint64_t total_length = 0;
    /// Documents [0, sorted) are numbered in the order of their ids; the rest as added.
    std::uint32_t sorted = 0;
    /// doc -> the next document of its class, by id (no_echo: none), over a prefix of the
    /// sorted run (the run when it was last sorted); empty when the run was not grouped.
    std::vector<std::uint32_t> echo;
    /// doc -> the first of its class (the one holding the postings), over the same prefix.
    /// Every posting there is of a class with a live document: a search may count each as one.
    std::vector<std::uint32_t> first;
    /// Documents of those classes removed since (a class's postings go with its last live one).
    std::unordered_set<std::uint32_t> gone;
    /// A class's first, removed -> its first live document (no_echo: none): a search and a
    /// removal start there, not at the removed ones before it.
    std::unordered_map<std::uint32_t, std::uint32_t> live_from;
  };
  org_index& org_of(std::string_view org);
  /// The chunks' bounds of a list numbered in a sorted run (`length`: its documents').
  static std::vector<chunk_bound> chunk_bounds(const term_list& t, const std::vector<std::uint32_t>& length,
                                               unsigned chunk_bits);
  /// Replaces `o` (one of orgs_) by its sorted copy; the caller holds writing_, not mutex_.
  void sort_run(std::unique_ptr<org_index>& o) const;

  layout layout_;
  bool read_sorted_again_ = false;
  mutable std::atomic<std::uint64_t> walked_{0}, passed_{0};
  /// Held by whatever changes the index (taken before mutex_): a sort of a run reads an
  /// organisation's index without mutex_ while searches go on, and takes it to swap.
  std::mutex writing_;
  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<org_index>> orgs_;
  // load(): the list being filled (rows come term by term).
  org_index* loading_org_ = nullptr;
  term_list* loading_list_ = nullptr;
  std::string loading_org_name_, loading_term_;
};

}  // namespace engram::storage::detail
