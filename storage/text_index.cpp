#include "storage/internal/text_index.hpp"

#include "storage/internal/snapshot_file.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>

namespace engram::storage::detail {

std::size_t text_index::by_id::operator()(std::uint32_t doc) const { return std::hash<std::string_view>{}(o->id(doc)); }

bool text_index::by_id::operator()(std::string_view id, std::uint32_t doc) const { return o->id(doc) == id; }

namespace {
/// An id's first eight bytes, big-endian, zeros after a shorter id: two ids whose keys differ
/// compare bytewise as their keys do.
std::uint64_t key_of(std::string_view id) {
  std::uint64_t k = 0;
  std::memcpy(&k, id.data(), std::min<std::size_t>(id.size(), sizeof k));
  return __builtin_bswap64(k);
}
}  // namespace

bool text_index::org_index::id_below(std::uint32_t a, std::uint32_t b) const {
  if (id_key[a] != id_key[b])
    return id_key[a] < id_key[b];
  return id(a) < id(b);
}

std::uint32_t text_index::org_index::intern(std::string_view id, std::uint32_t words, bool* added) {
  if (auto it = doc_of.find(id); it != doc_of.end()) {
    *added = false;
    return *it;
  }
  const auto n = static_cast<std::uint32_t>(length.size());
  if (n > posting::max_doc)
    throw std::length_error("text index: an organisation indexes at most " + std::to_string(posting::max_doc) +
                            " documents");
  ids.append(id);
  id_at.push_back(static_cast<std::uint32_t>(ids.size()));
  id_key.push_back(key_of(id));
  length.push_back(words);
  doc_of.insert(n);
  total_length += words;
  *added = true;
  return n;
}

std::vector<text_index::chunk_bound> text_index::chunk_bounds(const term_list& t,
                                                              const std::vector<std::uint32_t>& length,
                                                              unsigned chunk_bits) {
  std::vector<chunk_bound> out;
  const auto& list = t.postings;
  for (std::size_t a = 0, e = 0; a < list.size(); a = e) {
    const std::uint32_t c = list[a].doc() >> chunk_bits;
    chunk_bound cb{c, 0, std::numeric_limits<std::uint32_t>::max(), 0, std::numeric_limits<std::uint32_t>::max()};
    for (e = a; e < list.size() && list[e].doc() >> chunk_bits == c; ++e) {
      const auto tf = t.tf(list[e]), dl = length[list[e].doc()];
      if (dl < cb.shortest || (dl == cb.shortest && tf > cb.tf_shortest)) {
        cb.shortest = dl;
        cb.tf_shortest = tf;
      }
      cb.max_tf = std::max(cb.max_tf, tf);
    }
    for (std::size_t i = a; i < e; ++i)  // the shortest of the counts above the shortest's
      if (const auto tf = t.tf(list[i]); tf > cb.tf_shortest)
        cb.shortest_above = std::min(cb.shortest_above, length[list[i].doc()]);
    out.push_back(cb);
  }
  out.shrink_to_fit();
  return out;
}

std::unique_ptr<text_index::org_index> text_index::org_index::sorted_copy(unsigned chunk_bits) const {
  std::vector<std::uint32_t> order(doc_of.begin(), doc_of.end());
  std::sort(order.begin(), order.end(), [this](std::uint32_t a, std::uint32_t b) { return id_below(a, b); });
  constexpr auto gone = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> number(length.size(), gone);  // doc -> the copy's
  auto out = std::make_unique<org_index>();
  out->ids.reserve(ids.size());
  out->id_at.reserve(order.size() + 1);
  out->id_key.reserve(order.size());
  out->length.reserve(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto d = order[i];
    number[d] = static_cast<std::uint32_t>(i);
    out->ids.append(id(d));
    out->id_at.push_back(static_cast<std::uint32_t>(out->ids.size()));
    out->id_key.push_back(id_key[d]);
    out->length.push_back(length[d]);
  }
  out->total_length = total_length;
  out->sorted = static_cast<std::uint32_t>(order.size());
  out->doc_of.reserve(order.size());
  for (std::uint32_t d = 0; d < out->sorted; ++d)
    out->doc_of.insert(d);
  out->terms.reserve(terms.size());
  const auto by_bits = [](const posting& a, const posting& b) { return a.bits < b.bits; };
  const bool chained = std::any_of(echo.begin(), echo.end(), [](std::uint32_t e) { return e != no_echo; });
  for (const auto& [term, t] : terms) {
    term_list copy;
    copy.postings.reserve(t.df);
    // Without chains this run's postings keep their order (their ids' order) and only the
    // ones added after it are sorted and merged in; echoes come in the order of their classes,
    // so a run with chains is sorted whole.
    std::size_t split = 0;
    const auto put = [&](std::uint32_t d, std::uint32_t tf) {
      const auto n = number[d];
      if (n == gone)
        return;
      split += d < sorted;
      const bool in_place = tf <= posting::counts_in_place;
      if (!in_place)
        copy.large[n] = tf;
      copy.postings.push_back(posting{n << posting::count_bits | (in_place ? tf : 0)});
    };
    for (const auto p : t.postings) {
      const auto d = p.doc(), tf = t.tf(p);
      if (d >= echo.size()) {
        put(d, tf);
        continue;
      }
      for (auto e = d; e != no_echo; e = echo[e])
        put(e, tf);
    }
    if (copy.postings.empty())  // only removed documents' (a snapshot's): no list
      continue;
    if (!chained) {
      const auto mid = copy.postings.begin() + static_cast<std::ptrdiff_t>(split);
      std::sort(mid, copy.postings.end(), by_bits);
      std::inplace_merge(copy.postings.begin(), mid, copy.postings.end(), by_bits);
    } else {
      std::sort(copy.postings.begin(), copy.postings.end(), by_bits);
    }
    out->terms.emplace(term, std::move(copy));
  }
  out->find_echoes();
  for (auto& [_, t] : out->terms) {
    for (const auto p : t.postings)
      t.bound(t.tf(p), out->length[p.doc()]);  // the term's bounds as tight as its postings now
    t.chunks = chunk_bounds(t, out->length, chunk_bits);
  }
  return out;
}

namespace {
/// splitmix64's finaliser: a well-mixed 64 bits of x.
std::uint64_t mixed(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

void text_index::org_index::find_echoes() {
  const std::uint32_t n = sorted;
  for (auto& [_, t] : terms)
    t.df = static_cast<std::uint32_t>(t.postings.size());
  echo.assign(n, no_echo);
  first.resize(n);
  gone.clear();
  live_from.clear();
  // A signature of each document (its length; the sum, in any order, of each term's and
  // count's mix) and its count of terms; classes by signature, `first` of each document the
  // first of its class.
  std::vector<std::uint64_t> sig(n);
  std::vector<std::uint32_t> count(n, 0);
  for (std::uint32_t d = 0; d < n; ++d)
    sig[d] = mixed(length[d]);
  for (const auto& [term, t] : terms) {
    const std::uint64_t h = std::hash<std::string>{}(term);
    for (const auto p : t.postings) {
      if (p.doc() >= n)
        break;
      sig[p.doc()] += mixed(h ^ mixed(t.tf(p)));
      ++count[p.doc()];
    }
  }
  {
    // Sorted by (signature, doc): each run of one signature begins with its first document.
    // One array, not a hash table's nodes: a load at 1M documents leaves no small blocks.
    std::vector<std::pair<std::uint64_t, std::uint32_t>> by_sig(n);
    for (std::uint32_t d = 0; d < n; ++d)
      by_sig[d] = {sig[d], d};
    std::sort(by_sig.begin(), by_sig.end());
    for (std::size_t i = 0; i < n; ++i)
      first[by_sig[i].second] =
          i > 0 && by_sig[i].first == by_sig[i - 1].first ? first[by_sig[i - 1].second] : by_sig[i].second;
  }
  // Compared, not only hashed: a document whose length, count of terms or any term's count
  // differs from its first's is its own.
  std::vector<char> differs(n, 0);
  for (std::uint32_t d = 0; d < n; ++d)
    differs[d] = first[d] != d && (length[d] != length[first[d]] || count[d] != count[first[d]]);
  std::vector<std::uint32_t> tf_of(n, 0);
  for (const auto& entry : terms) {
    const auto& t = entry.second;  // not a structured binding: clang 14's lambdas cannot capture one
    const auto in_run = [&t, n](std::size_t i) { return i < t.postings.size() && t.postings[i].doc() < n; };
    for (std::size_t i = 0; in_run(i); ++i)
      tf_of[t.postings[i].doc()] = t.tf(t.postings[i]);
    for (std::size_t i = 0; in_run(i); ++i) {
      const auto d = t.postings[i].doc();
      differs[d] |= first[d] != d && tf_of[first[d]] != t.tf(t.postings[i]);
    }
    for (std::size_t i = 0; in_run(i); ++i)
      tf_of[t.postings[i].doc()] = 0;
  }
  std::vector<std::uint32_t> tail(n);
  bool any = false;
  for (std::uint32_t d = 0; d < n; ++d) {
    if (differs[d] || first[d] == d) {
      first[d] = tail[d] = d;
      continue;
    }
    echo[tail[first[d]]] = d;
    tail[first[d]] = d;
    any = true;
  }
  if (!any)  // nothing repeats: every posting stays (the chains, all empty, say it was looked for)
    return;
  for (auto& entry : terms) {
    auto& t = entry.second;
    std::erase_if(t.postings, [&](const posting& p) {
      const auto d = p.doc();
      if (d >= n || first[d] == d)
        return false;
      t.large.erase(d);
      return true;
    });
    if (t.postings.size() < t.postings.capacity() / 2)
      t.postings.shrink_to_fit();
  }
}

bool text_index::org_index::remove_from_class(std::uint32_t n) {
  gone.insert(n);
  const auto f = first[n];
  auto from = live_from.find(f);
  const auto start = from == live_from.end() ? f : from->second;
  if (start != n)  // the class's first live document stays
    return start != no_echo;
  // The first live one goes: the next live after it (each removed one is passed once).
  auto next = echo[n];
  while (next != no_echo && gone.contains(next))
    next = echo[next];
  live_from[f] = next;
  return next != no_echo;
}

bool text_index::org_index::count_echoes() {
  for (auto& [_, t] : terms)
    t.df = static_cast<std::uint32_t>(t.postings.size());
  std::vector<std::uint32_t> more(echo.size(), 0);  // a class's first -> its live echoes
  std::vector<char> echoed(echo.size(), 0);
  for (std::uint32_t d = 0; d < echo.size(); ++d)
    if (echo[d] != no_echo)
      echoed[echo[d]] = 1;
  first.resize(echo.size());
  for (std::uint32_t d = 0; d < echo.size(); ++d) {
    if (echoed[d])
      continue;
    first[d] = d;
    for (auto e = echo[d]; e != no_echo; e = echo[e]) {
      if (length[e] != length[d])
        return false;
      first[e] = d;
      more[d] += gone.empty() || !gone.contains(e);
    }
  }
  for (auto& [_, t] : terms)
    for (const auto p : t.postings)
      if (p.doc() < more.size()) {
        if (echoed[p.doc()])
          return false;
        t.df += more[p.doc()];
      }
  return true;
}

void text_index::sort_run(std::unique_ptr<org_index>& o) const {
  // Built beside the index: searches go on meanwhile (writers wait on writing_), and only
  // the swap waits for them.
  auto sorted = o->sorted_copy(layout_.chunk_bits);
  std::unique_lock lock(mutex_);
  o.swap(sorted);
  lock.unlock();  // the old numbering freed outside the lock
}

text_index::org_index& text_index::org_of(std::string_view org) {
  auto it = orgs_.find(std::string(org));
  if (it == orgs_.end())
    it = orgs_.emplace(std::string(org), std::make_unique<org_index>()).first;
  return *it->second;
}

void text_index::add(const std::string& org, const std::string& id, const text_doc& doc) {
  if (doc.tf.empty())
    return;
  std::lock_guard writing(writing_);
  std::unique_lock lock(mutex_);
  auto& o = org_of(org);
  bool added = false;
  const auto n = o.intern(id, doc.length, &added);
  if (!added)
    return;
  for (const auto& [term, f] : doc.tf) {
    auto& t = o.terms[term];
    t.push_back(n, f, doc.length);  // n is the highest doc number yet: lists stay sorted
    ++t.df;
  }
  if (n + 1 - o.sorted <= std::max(o.sorted / 4, layout_.min_added))
    return;
  lock.unlock();
  sort_run(orgs_.find(org)->second);  // no other writer can change orgs_ meanwhile
}

void text_index::drop(const std::string& org) {
  std::lock_guard writing(writing_);
  std::unique_lock lock(mutex_);
  orgs_.erase(org);
}

void text_index::remove(const std::string& org, const std::string& id, const text_doc& doc) {
  std::lock_guard writing(writing_);
  std::unique_lock lock(mutex_);
  auto oi = orgs_.find(org);
  if (oi == orgs_.end())
    return;
  auto& o = *oi->second;
  auto di = o.doc_of.find(std::string_view(id));
  if (di == o.doc_of.end())
    return;
  // A class's postings are its first's: they go with its last live document.
  auto n = *di;
  bool kept = false;
  if (n < o.echo.size() && (o.first[n] != n || o.echo[n] != org_index::no_echo)) {
    kept = o.remove_from_class(n);
    n = o.first[n];
  }
  for (const auto& [term, f] : doc.tf) {
    auto ti = o.terms.find(term);
    if (ti == o.terms.end())
      continue;
    ti->second.df -= std::min<std::uint32_t>(ti->second.df, 1);
    auto& list = ti->second.postings;
    auto at =
        std::lower_bound(list.begin(), list.end(), n, [](const posting& p, std::uint32_t d) { return p.doc() < d; });
    if (!kept && at != list.end() && at->doc() == n) {
      list.erase(at);
      ti->second.large.erase(n);
    }
    if (list.empty())
      o.terms.erase(ti);  // the bounds of a list that stays are bounds still
  }
  o.total_length -= std::min<std::uint64_t>(o.total_length, o.length[*di]);
  o.doc_of.erase(di);  // the id's bytes stay in the arena: removals are rare
}

void text_index::load(std::string_view org, std::string_view term, std::string_view id, std::uint32_t tf,
                      std::uint32_t length) {
  // Rows come sorted by organisation, then term: the current list is cached.
  if (!loading_list_ || loading_org_name_ != org || loading_term_ != term) {
    loading_org_name_.assign(org);
    loading_term_.assign(term);
    loading_org_ = &org_of(org);
    loading_list_ = &loading_org_->terms[loading_term_];
  }
  bool added = false;
  const auto n = loading_org_->intern(id, length, &added);
  // Bounded by the length the document is scored at (its first row's), whatever this row says.
  loading_list_->push_back(n, tf, loading_org_->length[n]);
  ++loading_list_->df;
}

void text_index::seal() {
  std::lock_guard writing(writing_);
  for (auto& [_, o] : orgs_)
    sort_run(o);
  loading_org_ = nullptr;
  loading_list_ = nullptr;
  loading_org_name_ = std::string();
  loading_term_ = std::string();
}

namespace {

constexpr double k1 = 1.2, b = 0.75;

/// BM25's weight of a term in a document before its idf, f (k1 + 1) / (f + k1 (1 − b +
/// b × dl / avgdl)), for one search (one avgdl). The common small f and dl are computed once
/// a search and kept: two divisions a posting were a tenth of a search's time. Every weight
/// is the same expression, kept or not, so the bits do not depend on which.
class term_weights {
public:
  explicit term_weights(double avgdl) : avgdl_(avgdl) {}
  /// The weight of `f` in a document of `dl` words, as computed and not kept.
  [[nodiscard]] double bound(std::uint32_t f, std::uint32_t dl) const { return of(f, dl); }
  double operator()(std::uint32_t f, std::uint32_t dl) {
    if (f >= max_tf || dl >= max_length)
      return of(f, dl);
    double& w = kept_[f * max_length + dl];
    if (w == 0.0)  // never a weight: f ≥ 1
      w = of(f, dl);
    return w;
  }

private:
  static constexpr std::uint32_t max_tf = 8, max_length = 256;
  [[nodiscard]] double of(double f, double dl) const { return f * (k1 + 1) / (f + k1 * (1 - b + b * dl / avgdl_)); }
  double avgdl_;
  std::array<double, max_tf * max_length> kept_{};
};

/// A query term during a search: its postings (ascending by doc), its idf, and the most it
/// adds to any document's score (its idf × the weight of its largest count in its shortest
/// document: a weight grows with the count and falls with the length).
template <class List>
struct query_term {
  const std::string* term;
  const List* list;
  double idf;
  double bound;
};

/// A document is set aside only when its bound, widened by this factor, is below the score
/// it must reach: a sum added in another order than the bound's differs by a few ulps, and a
/// document that ties the k-th score may still enter by its id.
constexpr double slack = 1 + 1e-9;
/// The documents a search's seed of the k-th score is taken from, at most (or `limit`).
constexpr std::size_t seed_sample = 4096;
/// Documents shorter than this have their bound by length kept during a search.
constexpr std::size_t kept_lengths = 512;
/// A candidate looked up in a list (galloping) against a posting added: ~20 against ~4 ns.
constexpr std::size_t probe_cost = 6;
/// A sorted run of fewer chunks than this is searched as if it were not sorted.
constexpr std::uint32_t min_chunks = 4;

/// The first posting of `list` (ascending by doc) from `from` on whose doc is not below `doc`
/// (list.size() when none), found by galloping: steps doubling, then a binary search.
template <class Posting>
std::size_t gallop(const std::vector<Posting>& list, std::size_t from, std::uint64_t doc) {
  std::size_t step = 1;
  while (from + step < list.size() && list[from + step].doc() < doc) {
    from += step;
    step *= 2;
  }
  const auto hi = std::min(list.size(), from + step + 1);
  return static_cast<std::size_t>(std::partition_point(list.begin() + static_cast<std::ptrdiff_t>(std::min(from, hi)),
                                                       list.begin() + static_cast<std::ptrdiff_t>(hi),
                                                       [doc](const auto& p) { return p.doc() < doc; }) -
                                  list.begin());
}

/// A search's sums (one a document; zero: not reached yet, every score being positive) and
/// the documents it reached, in the order first reached; all zero and empty between searches.
struct search_scratch {
  std::vector<double> sum;
  std::vector<std::uint32_t> reached;
};

/// The search_scratch kept between searches, shared by every index and thread: a process
/// holds as many as searches ran at once, each 12 bytes a document of the largest
/// organisation it searched (8 for the sums, up to 4 for the documents reached). Kept by each
/// thread instead, they cost that on every thread that ever searched.
class scratch_pool {
public:
  std::unique_ptr<search_scratch> take() {
    std::lock_guard lock(mutex_);
    if (free_.empty())
      return std::make_unique<search_scratch>();
    auto s = std::move(free_.back());
    free_.pop_back();
    return s;
  }
  void give(std::unique_ptr<search_scratch> s) noexcept {
    std::lock_guard lock(mutex_);
    try {
      free_.push_back(std::move(s));
    } catch (const std::bad_alloc&) {  // freed instead of kept
    }
  }

private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<search_scratch>> free_;
};

/// The process's pool (never destroyed: a search may end after static destruction began).
scratch_pool& scratches() {
  static auto* pool = new scratch_pool;
  return *pool;
}

/// The best `limit` of the (score, doc) offered, a heap with the worst on top; ties by id.
template <class Org>
class top_k {
public:
  top_k(const Org& o, std::size_t limit, std::size_t offers) : o_(o), limit_(limit) {
    held_.reserve(std::min(limit, offers) + 1);
  }
  /// Whether it was taken (for now).
  bool offer(double score, std::uint32_t doc) {
    const std::pair<double, std::uint32_t> hit{score, doc};
    if (held_.size() == limit_) {
      if (!better(hit, held_.front()))
        return false;
      std::pop_heap(held_.begin(), held_.end(), by_better());
      held_.pop_back();
    }
    held_.push_back(hit);
    std::push_heap(held_.begin(), held_.end(), by_better());
    return true;
  }
  std::vector<std::pair<double, std::uint32_t>> sorted() {
    std::sort(held_.begin(), held_.end(), by_better());
    return std::move(held_);
  }
  [[nodiscard]] bool full() const { return held_.size() == limit_; }
  /// The worst held (when any): the first to go.
  [[nodiscard]] const std::pair<double, std::uint32_t>& worst() const { return held_.front(); }

private:
  [[nodiscard]] bool better(const std::pair<double, std::uint32_t>& x,
                            const std::pair<double, std::uint32_t>& y) const {
    return x.first != y.first ? x.first > y.first : o_.id_below(x.second, y.second);
  }
  [[nodiscard]] auto by_better() const {
    return [this](const auto& x, const auto& y) { return better(x, y); };
  }
  const Org& o_;
  std::size_t limit_;
  std::vector<std::pair<double, std::uint32_t>> held_;
};

/// The best `limit` documents by BM25, term at a time, rarest term first: each posting of a
/// term added to its document's sum, so a document's sum adds its terms in `q`'s order
/// whichever lists hold it, and equal inputs give equal bits. Before each term the search
/// asks whether the terms left can add less than a score the k-th best is known to reach
/// (seeded by finishing the best sums so far): then no document they alone reach can enter,
/// nor any whose sum they cannot lift to that score (bounded at the document's own length),
/// and the rest of the search looks up the few candidates left in the terms left
/// (galloping) instead of adding their postings.
/// The commonest terms, most of the postings (near-zero idf in the passages of dense mail),
/// are then never walked. The results are the exhaustive sums' (a test compares bits; on
/// the 1M-entry store's 1,400 searches, the same digest: docs/benchmarks.md). A search
/// borrows a search_scratch from the process's pool.
template <class Org, class List>
class bm25_search {
public:
  bm25_search(const Org& o, const std::vector<query_term<List>>& q, double avgdl, std::size_t limit)
      : o_(o),
        q_(q),
        limit_(limit),
        weight_(avgdl),
        left_(q.size() + 1, 0.0),
        postings_left_(q.size() + 1, 0),
        scratch_(scratches().take()),
        sum_(scratch_->sum),
        reached_(scratch_->reached) {
    for (std::size_t j = q.size(); j-- > 0;) {
      left_[j] = left_[j + 1] + q[j].bound;
      postings_left_[j] = postings_left_[j + 1] + q[j].list->postings.size();
    }
  }
  bm25_search(const bm25_search&) = delete;
  bm25_search& operator=(const bm25_search&) = delete;
  // The sums go back to zero however the search ends.
  ~bm25_search() {
    for (const auto doc : reached_)
      sum_[doc] = 0.0;
    reached_.clear();
    scratches().give(std::move(scratch_));
  }

  std::vector<std::pair<double, std::uint32_t>> run() {
    if (sum_.size() < o_.length.size())
      sum_.resize(o_.length.size(), 0.0);
    bool pruned = false;
    for (std::size_t j = 0; j < q_.size(); ++j) {
      pruned = pruned ? narrow(j) : j > 0 && prune(j);
      if (pruned)
        probe(q_[j]);
      else
        scan(q_[j]);
    }
    return pruned ? best(candidates_) : best_of_reached();
  }

  /// The same best, over an organisation whose sorted run (Org::sorted documents, numbered
  /// in the order of their ids) is cut in chunks of 2^chunk_bits: the documents added after
  /// the run first, every posting; then the run's chunks in order, each passed over when the
  /// most it can hold, the sum of each term's idf × the larger weight of its two points there
  /// (chunk_bound), is below the k-th score found, or equal to it once the k-th's id is below
  /// the chunk's first (a tie ranks by id). The bound adds, in the order a document's sum
  /// does, weights no lower than the document's (each posting's count and length are bounded
  /// by one of the two points), so no sum in the chunk exceeds it, to the bit.
  std::vector<std::pair<double, std::uint32_t>> run_chunked(unsigned chunk_bits, std::uint64_t* walked,
                                                            std::uint64_t* passed) {
    const std::uint32_t sorted = o_.sorted, docs = static_cast<std::uint32_t>(o_.length.size());
    if (sum_.size() < docs)
      sum_.resize(docs, 0.0);
    top_k top(o_, limit_, docs);
    std::vector<std::size_t> at(q_.size(), 0), chunk_at(q_.size(), 0);
    score_range(at, sorted, docs, top);
    std::fill(at.begin(), at.end(), 0);
    const std::uint32_t chunks =
        static_cast<std::uint32_t>((std::uint64_t{sorted} + (1u << chunk_bits) - 1) >> chunk_bits);
    for (std::uint32_t c = 0; c < chunks; ++c) {
      double most = 0;
      bool any = false;
      for (std::size_t j = 0; j < q_.size(); ++j) {
        const auto& bounds = q_[j].list->chunks;
        auto& k = chunk_at[j];
        while (k < bounds.size() && bounds[k].chunk < c)
          ++k;
        if (k < bounds.size() && bounds[k].chunk == c) {
          const auto& b = bounds[k];  // kept weights: the same bits as bound()
          const double w = weight_(b.tf_shortest, b.shortest);
          most += q_[j].idf * (b.max_tf > b.tf_shortest ? std::max(w, weight_(b.max_tf, b.shortest_above)) : w);
          any = true;
        }
      }
      const std::uint32_t first = c << chunk_bits;
      if (!any)
        continue;
      if (top.full() &&
          (most < top.worst().first || (most == top.worst().first && o_.id_below(top.worst().second, first)))) {
        ++*passed;
        continue;
      }
      ++*walked;
      score_range(at, first, std::min<std::uint64_t>(sorted, std::uint64_t{c + 1} << chunk_bits), top);
    }
    return top.sorted();
  }

private:
  /// Every posting of docs [lo, hi) summed (terms in order) and each sum offered to `top`;
  /// at[j]: where term j's list is walked from (galloped on to lo), then where it stopped.
  void score_range(std::vector<std::size_t>& at, std::uint64_t lo, std::uint64_t hi, top_k<Org>& top) {
    for (std::size_t j = 0; j < q_.size(); ++j) {
      const auto& list = q_[j].list->postings;
      std::size_t i = gallop(list, at[j], lo);
      for (; i < list.size() && list[i].doc() < hi; ++i) {
        const auto doc = list[i].doc();
        double& s = sum_[doc];
        if (s == 0.0)
          reached_.push_back(doc);
        s += add(q_[j], doc, q_[j].list->tf(list[i]));
      }
      at[j] = i;
    }
    for (const auto doc : reached_) {
      offer(top, sum_[doc], doc);
      sum_[doc] = 0.0;
    }
    reached_.clear();
  }
  /// `doc`'s sum offered for it and its echoes.
  void offer(top_k<Org>& top, double score, std::uint32_t doc) const {
    o_.offer_with_echoes(doc, [&](std::uint32_t d) { return top.offer(score, d); });
  }
  double add(const query_term<List>& t, std::uint32_t doc, std::uint32_t tf) {
    return t.idf * weight_(tf, o_.length[doc]);
  }
  void scan(const query_term<List>& t) {
    for (const auto p : t.list->postings) {
      const auto doc = p.doc();
      double& s = sum_[doc];
      if (s == 0.0)
        reached_.push_back(doc);
      s += add(t, doc, t.list->tf(p));
    }
  }
  /// The candidates (ascending) found in `t`'s postings, galloping from the last one found.
  void probe(const query_term<List>& t) {
    const auto& list = t.list->postings;
    std::size_t at = 0;
    for (const auto doc : candidates_) {
      at = gallop(list, at, doc);
      if (at == list.size())
        break;
      if (list[at].doc() == doc)
        sum_[doc] += add(t, doc, t.list->tf(list[at]));
    }
  }
  /// The most the terms from `j` on add to a document of `dl` words: each term's idf × the
  /// weight of its largest count at that length, or at its shortest document's when that is
  /// longer (a weight falls with the length: a long document is bounded far below left_[j]).
  /// Kept by length for the current `j`.
  double left_at(std::size_t j, std::uint32_t dl) {
    if (j != left_at_j_) {
      left_at_j_ = j;
      left_by_length_.assign(kept_lengths, -1.0);
    }
    const bool kept = dl < left_by_length_.size();
    if (kept && left_by_length_[dl] >= 0)
      return left_by_length_[dl];
    double b = 0;
    for (std::size_t k = q_.size(); k-- > j;)
      b += q_[k].idf * weight_.bound(q_[k].list->max_tf, std::max(dl, q_[k].list->min_length));
    if (kept)
      left_by_length_[dl] = b;
    return b;
  }
  /// The k-th best sum among `docs` (at least `limit_` of them): no final k-th score is lower.
  double kth(const std::uint32_t* docs, std::size_t n) const {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i)
      v[i] = sum_[docs[i]];
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(limit_ - 1), v.end(), std::greater<>());
    return v[limit_ - 1];
  }
  /// The `limit_` best sums among `docs` (at least that many; every so many of them when
  /// there are more than `seed_sample`), each finished with the terms
  /// from `j` on, as the search would finish it: the least of those scores. The final k-th
  /// score is no lower, and it is usually about it (the best so far hold the rarer terms).
  double seed(const std::uint32_t* docs, std::size_t n, std::size_t j) {
    const std::size_t stride = std::max<std::size_t>(1, n / std::max(seed_sample, limit_));
    std::vector<std::pair<double, std::uint32_t>> v;
    v.reserve(n / stride + 1);
    for (std::size_t i = 0; i < n; i += stride)
      v.emplace_back(sum_[docs[i]], docs[i]);
    const auto end = v.begin() + static_cast<std::ptrdiff_t>(limit_);
    std::nth_element(v.begin(), end - 1, v.end(), std::greater<>());
    double least = std::numeric_limits<double>::infinity();
    for (auto it = v.begin(); it != end; ++it) {
      double score = it->first;
      for (std::size_t k = j; k < q_.size(); ++k) {
        const auto& list = q_[k].list->postings;
        const auto at =
            std::partition_point(list.begin(), list.end(), [&](const auto& p) { return p.doc() < it->second; });
        if (at != list.end() && at->doc() == it->second)
          score += add(q_[k], it->second, q_[k].list->tf(*at));
      }
      least = std::min(least, score);
    }
    return least;
  }
  /// Before term `j`: whether the terms from `j` on can only lift the documents reached, and
  /// few enough of them that visiting them costs less than the postings; if so, they are the
  /// candidates. The score to reach is seeded from the documents of the rarest term (reached
  /// first), in fewer steps than from all.
  bool prune(std::size_t j) {
    const auto& docs = reached_;
    const std::size_t sample = std::min(docs.size(), std::max(limit_, q_[0].list->postings.size()));
    if (docs.size() < limit_ || postings_left_[j] < docs.size())
      return false;  // as cheap to add the postings left as to set documents aside
    floor_ = std::max(floor_, seed(docs.data(), sample, j));
    if (left_[j] * slack >= floor_)
      return false;  // a document no term so far holds could still enter
    // More candidates than the postings left would pay for (probe_cost), and adding those
    // postings is cheaper: the pass over the documents stops there.
    const std::size_t most = postings_left_[j] / (probe_cost * (q_.size() - j));
    auto passes = [&](std::uint32_t doc) { return (sum_[doc] + left_at(j, o_.length[doc])) * slack >= floor_; };
    // Judged first on every so many documents: most searches that cannot prune stop here.
    const std::size_t stride = std::max<std::size_t>(1, docs.size() / seed_sample);
    std::size_t passed = 0;
    for (std::size_t i = 0; i < docs.size(); i += stride)
      passed += passes(docs[i]);
    if (passed * stride > 2 * most)
      return false;
    candidates_.clear();
    for (const auto doc : docs) {
      if (!passes(doc))
        continue;
      if (candidates_.size() == most)
        return false;
      candidates_.push_back(doc);
    }
    std::sort(candidates_.begin(), candidates_.end());
    return true;
  }
  /// Before term `j`, once pruned: the candidates the terms left cannot lift far enough go.
  bool narrow(std::size_t j) {
    floor_ = std::max(floor_, kth(candidates_.data(), candidates_.size()));
    std::erase_if(candidates_,
                  [&](std::uint32_t doc) { return (sum_[doc] + left_at(j, o_.length[doc])) * slack < floor_; });
    return true;
  }
  /// The best `limit_` of `docs`' sums, best first (ties by id).
  std::vector<std::pair<double, std::uint32_t>> best(const std::vector<std::uint32_t>& docs) const {
    top_k top(o_, limit_, docs.size());
    for (const auto doc : docs)
      offer(top, sum_[doc], doc);
    return top.sorted();
  }
  /// best(reached_), each sum set back to zero on the way (one pass, not two).
  std::vector<std::pair<double, std::uint32_t>> best_of_reached() {
    top_k top(o_, limit_, reached_.size());
    for (const auto doc : reached_) {
      offer(top, sum_[doc], doc);
      sum_[doc] = 0.0;
    }
    reached_.clear();
    return top.sorted();
  }

  const Org& o_;
  const std::vector<query_term<List>>& q_;
  std::size_t limit_;
  term_weights weight_;
  std::vector<double> left_;                // j -> the most the terms from j on add
  std::vector<std::size_t> postings_left_;  // j -> the postings of the terms from j on
  std::unique_ptr<search_scratch> scratch_;
  std::vector<double>& sum_;               // scratch_'s
  std::vector<std::uint32_t>& reached_;    // scratch_'s
  std::vector<std::uint32_t> candidates_;  // once pruned: ascending
  double floor_ = 0;                       // no final k-th score is lower
  std::size_t left_at_j_ = std::numeric_limits<std::size_t>::max();
  std::vector<double> left_by_length_;  // dl -> left_at(left_at_j_, dl), or -1 when not yet
};

}  // namespace

std::vector<std::pair<std::string, double>> text_index::search(const std::string& org,
                                                               const std::vector<std::string>& terms,
                                                               std::size_t limit) const {
  std::shared_lock lock(mutex_);
  auto oi = orgs_.find(org);
  if (oi == orgs_.end() || oi->second->doc_of.empty() || limit == 0)
    return {};
  const auto& o = *oi->second;
  const double docs = static_cast<double>(o.doc_of.size()), avgdl = static_cast<double>(o.total_length) / docs;
  term_weights weight(avgdl);
  std::vector<query_term<term_list>> query;
  std::set<std::string_view> seen;
  for (const auto& term : terms) {
    if (term.empty() || !seen.insert(term).second)
      continue;
    auto ti = o.terms.find(term);
    if (ti == o.terms.end() || ti->second.df == 0)
      continue;
    const double df = ti->second.df;
    const double idf = std::log(1.0 + (docs - df + 0.5) / (df + 0.5));
    query.push_back({&ti->first, &ti->second, idf, idf * weight.bound(ti->second.max_tf, ti->second.min_length)});
  }
  // A word in more than half of the documents is the organisation's own stop word: its
  // Robertson-Sparck Jones weight, log((N - df + 0.5) / (df + 0.5)), is below zero, so its
  // presence says less about a document than its absence. It is searched only when every word
  // found is such a word; beside a rarer one it would only walk most of the postings.
  const auto common = [&o](const query_term<term_list>& t) { return 2 * std::size_t{t.list->df} > o.doc_of.size(); };
  if (!std::all_of(query.begin(), query.end(), common))
    std::erase_if(query, common);
  // Summed rarest first (then by term): equal inputs give equal bits.
  std::sort(query.begin(), query.end(), [](const auto& x, const auto& y) {
    const auto nx = x.list->df, ny = y.list->df;
    return nx != ny ? nx < ny : *x.term < *y.term;
  });
  bm25_search search(o, query, avgdl, limit);
  const bool chunked = (o.sorted >> layout_.chunk_bits) >= min_chunks;
  std::uint64_t walked = 0, passed = 0;
  const auto hits = chunked ? search.run_chunked(layout_.chunk_bits, &walked, &passed) : search.run();
  walked_.fetch_add(walked, std::memory_order_relaxed);
  passed_.fetch_add(passed, std::memory_order_relaxed);
  std::vector<std::pair<std::string, double>> out;
  out.reserve(hits.size());
  for (const auto& [score, doc] : hits)
    out.emplace_back(std::string(o.id(doc)), score);
  return out;
}

void text_index::clear() {
  std::lock_guard writing(writing_);
  std::unique_lock lock(mutex_);
  orgs_.clear();
}

// Section layout: organisations (u64), each by name: name, total length, the id arena, id
// offsets, lengths, live doc numbers (ascending), the echoes (doc -> the next of its class,
// 2^32 - 1 for none, over a prefix of the run), terms (u64), each by term: the term and its
// postings (u64 count, then doc and tf as u32 pairs; an echo's are its class's first's).
void text_index::write(snapshot_out& out) const {
  std::shared_lock lock(mutex_);
  std::vector<const std::pair<const std::string, std::unique_ptr<org_index>>*> orgs;
  for (const auto& o : orgs_)
    orgs.push_back(&o);
  std::sort(orgs.begin(), orgs.end(), [](auto* a, auto* b) { return a->first < b->first; });
  out.u64(orgs.size());
  for (const auto* entry : orgs) {
    const auto& o = *entry->second;
    out.bytes(entry->first);
    out.u64(o.total_length);
    out.bytes(o.ids);
    out.u32s(o.id_at);
    out.u32s(o.length);
    std::vector<std::uint32_t> live(o.doc_of.begin(), o.doc_of.end());
    std::sort(live.begin(), live.end());
    out.u32s(live);
    out.u32s(o.echo);
    std::vector<const std::pair<const std::string, term_list>*> terms;
    terms.reserve(o.terms.size());
    for (const auto& t : o.terms)
      terms.push_back(&t);
    std::sort(terms.begin(), terms.end(), [](auto* a, auto* b) { return a->first < b->first; });
    out.u64(terms.size());
    // As (doc, count) pairs of u32, whatever the layout in memory, a run at a time.
    std::vector<std::uint32_t> pairs;
    for (const auto* t : terms) {
      out.bytes(t->first);
      out.u64(t->second.postings.size());
      const auto& list = t->second.postings;
      for (std::size_t k = 0; k < list.size(); k += 4096) {
        pairs.clear();
        for (std::size_t e = std::min(list.size(), k + 4096), i = k; i < e; ++i) {
          pairs.push_back(list[i].doc());
          pairs.push_back(t->second.tf(list[i]));
        }
        out.raw(pairs.data(), pairs.size() * sizeof(std::uint32_t));
      }
    }
  }
}

namespace {
/// Doc numbers below `docs`, strictly ascending.
bool ascending_below(const std::vector<std::uint32_t>& v, std::size_t docs) {
  return std::adjacent_find(v.begin(), v.end(), std::greater_equal<>()) == v.end() && (v.empty() || v.back() < docs);
}
/// Echoes over at most `docs` documents: each the next of a class at a higher number, none
/// the next of two.
bool chains(const std::vector<std::uint32_t>& echo, std::size_t docs) {
  if (echo.size() > docs)
    return false;
  std::vector<char> taken(echo.size(), 0);
  for (std::size_t d = 0; d < echo.size(); ++d) {
    const auto e = echo[d];
    if (e == std::numeric_limits<std::uint32_t>::max())
      continue;
    if (e <= d || e >= echo.size() || taken[e])
      return false;
    taken[e] = 1;
  }
  return true;
}
}  // namespace

bool text_index::read(snapshot_in& in) {
  std::lock_guard writing(writing_);
  std::unique_lock lock(mutex_);
  orgs_.clear();
  read_sorted_again_ = false;
  const auto n = in.count(8);
  for (std::uint64_t i = 0; i < n && in.ok(); ++i) {
    auto o = std::make_unique<org_index>();
    const std::string name(in.bytes());
    o->total_length = in.u64();
    o->ids = std::string(in.bytes());
    o->id_at = in.u32s();
    o->length = in.u32s();
    const auto live = in.u32s();
    o->echo = in.u32s();
    const auto docs = o->length.size();
    if (!in.ok() || docs > std::size_t{posting::max_doc} + 1 || o->id_at.size() != docs + 1 || o->id_at.front() != 0 ||
        o->id_at.back() != o->ids.size() || !std::is_sorted(o->id_at.begin(), o->id_at.end()) ||
        !ascending_below(live, docs) || !chains(o->echo, docs)) {
      in.fail();
      break;
    }
    o->id_key.resize(docs);
    for (std::size_t d = 0; d < docs; ++d)
      o->id_key[d] = key_of(o->id(static_cast<std::uint32_t>(d)));
    o->doc_of.reserve(live.size());
    o->doc_of.insert(live.begin(), live.end());
    const auto terms = in.count(16);
    o->terms.reserve(terms);
    for (std::uint64_t i = 0; i < terms && in.ok(); ++i) {
      const std::string term(in.bytes());
      constexpr std::size_t pair_bytes = 2 * sizeof(std::uint32_t);
      const auto postings = in.count(pair_bytes);
      auto& t = o->terms[term];
      t.postings.reserve(postings);
      const auto bytes = in.bytes_of(postings * pair_bytes);
      if (!in.ok())
        break;
      for (std::size_t k = 0; k < postings; ++k) {
        std::uint32_t doc = 0, tf = 0;
        std::memcpy(&doc, bytes.data() + k * pair_bytes, sizeof doc);
        std::memcpy(&tf, bytes.data() + k * pair_bytes + sizeof doc, sizeof tf);
        if (doc >= docs || tf == 0 || (k > 0 && doc <= t.postings.back().doc())) {
          in.fail();
          break;
        }
        t.push_back(doc, tf, o->length[doc]);  // the bounds are derived, not written
      }
      t.df = static_cast<std::uint32_t>(t.postings.size());
    }
    if (in.ok()) {
      // A snapshot written after a sort holds the run in the order of its ids: read as it is
      // when every document is live and in that order, else numbered again (sorted_copy).
      o->sorted = docs > 0 ? 1 : 0;
      while (o->sorted < docs && o->id_below(o->sorted - 1, o->sorted))
        ++o->sorted;
      if (o->echo.size() > o->sorted) {  // echoes out of the run
        in.fail();
        break;
      }
      if (o->sorted == docs && live.size() == docs) {  // numbered as a sort numbers them
        if (o->echo.empty()) {
          o->find_echoes();
        } else if (!o->count_echoes()) {  // an echo with postings of its own, or another length
          in.fail();
          break;
        }
        for (auto& [_, t] : o->terms)
          t.chunks = chunk_bounds(t, o->length, layout_.chunk_bits);
      } else {
        read_sorted_again_ |= docs - o->sorted >= layout_.min_added;
        o = o->sorted_copy(layout_.chunk_bits);
      }
    }
    orgs_.emplace(name, std::move(o));
  }
  if (in.ok())
    return true;
  orgs_.clear();
  return false;
}

std::size_t text_index::memory_bytes() const {
  std::shared_lock lock(mutex_);
  constexpr std::size_t node = 2 * sizeof(void*);  // a hash node's link and cached hash
  std::size_t n = 0;
  for (const auto& [_, o] : orgs_) {
    n += o->ids.capacity() + o->id_at.capacity() * sizeof(std::uint32_t) +
         o->id_key.capacity() * sizeof(std::uint64_t) + o->length.capacity() * sizeof(std::uint32_t);
    n += o->doc_of.size() * (node + sizeof(std::uint32_t)) + o->doc_of.bucket_count() * sizeof(void*);
    n += o->terms.bucket_count() * sizeof(void*);
    n += (o->echo.capacity() + o->first.capacity()) * sizeof(std::uint32_t) +
         o->gone.size() * (node + sizeof(std::uint32_t)) + o->live_from.size() * (node + 2 * sizeof(std::uint32_t)) +
         o->live_from.bucket_count() * sizeof(void*) + o->gone.bucket_count() * sizeof(void*);
    for (const auto& [term, t] : o->terms)
      n += node + sizeof(std::string) + (term.size() > 15 ? term.capacity() + 1 : 0) + sizeof(t) +
           t.postings.capacity() * sizeof(posting) + t.chunks.capacity() * sizeof(chunk_bound) +
           t.large.size() * (node + 2 * sizeof(std::uint32_t)) + t.large.bucket_count() * sizeof(void*);
  }
  return n;
}

std::size_t text_index::postings() const {
  std::shared_lock lock(mutex_);
  std::size_t n = 0;
  for (const auto& [_, o] : orgs_)
    for (const auto& [__, t] : o->terms)
      n += t.postings.size();
  return n;
}

}  // namespace engram::storage::detail
