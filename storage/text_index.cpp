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

std::uint32_t text_index::org_index::intern(std::string_view id, std::uint32_t words, bool* added) {
  if (auto it = doc_of.find(id); it != doc_of.end()) {
    *added = false;
    return *it;
  }
  const auto n = static_cast<std::uint32_t>(length.size());
  ids.append(id);
  id_at.push_back(static_cast<std::uint32_t>(ids.size()));
  length.push_back(words);
  doc_of.insert(n);
  total_length += words;
  *added = true;
  return n;
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
  std::unique_lock lock(mutex_);
  auto& o = org_of(org);
  bool added = false;
  const auto n = o.intern(id, doc.length, &added);
  if (!added)
    return;
  for (const auto& [term, f] : doc.tf)
    o.terms[term].push_back({n, f});  // n is the highest doc number yet: lists stay sorted
}

void text_index::drop(const std::string& org) {
  std::unique_lock lock(mutex_);
  orgs_.erase(org);
}

void text_index::remove(const std::string& org, const std::string& id, const text_doc& doc) {
  std::unique_lock lock(mutex_);
  auto oi = orgs_.find(org);
  if (oi == orgs_.end())
    return;
  auto& o = *oi->second;
  auto di = o.doc_of.find(std::string_view(id));
  if (di == o.doc_of.end())
    return;
  const auto n = *di;
  for (const auto& [term, f] : doc.tf) {
    auto ti = o.terms.find(term);
    if (ti == o.terms.end())
      continue;
    auto& list = ti->second;
    auto at =
        std::lower_bound(list.begin(), list.end(), n, [](const posting& p, std::uint32_t d) { return p.doc < d; });
    if (at != list.end() && at->doc == n)
      list.erase(at);
    if (list.empty())
      o.terms.erase(ti);
  }
  o.doc_of.erase(di);  // the id's bytes stay in the arena: removals are rare
  o.total_length -= std::min<std::uint64_t>(o.total_length, o.length[n]);
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
  loading_list_->push_back({n, tf});
}

void text_index::seal() {
  for (auto& [_, o] : orgs_) {
    for (auto& [__, list] : o->terms) {
      std::sort(list.begin(), list.end(), [](const posting& a, const posting& b) { return a.doc < b.doc; });
      list.shrink_to_fit();
    }
    o->ids.shrink_to_fit();
    o->id_at.shrink_to_fit();
    o->length.shrink_to_fit();
  }
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

/// A query term during a search: its postings (ascending by doc) and its idf.
template <class Posting>
struct query_term {
  const std::string* term;
  const std::vector<Posting>* list;
  double idf;
};

/// The best `limit` documents by BM25, term at a time: every posting of `q` (in summing
/// order) added to its document's sum. A document's sum adds its terms in `q`'s order
/// whichever lists hold it, so equal inputs give equal bits. Measured against MaxScore
/// (document at a time, skipping what cannot reach the k-th score) on a 100k-entry store's
/// recall queries: the same results, 0.90 against 1.12 ms a search (docs/benchmarks.md).
/// With the best 70 asked for recall's fusion, the k-th score stays low and MaxScore visited
/// most postings anyway, one document at a time across the lists. A thread that searches
/// keeps 12 bytes a document of the largest organisation it searched.
template <class Org, class Posting>
std::vector<std::pair<double, std::uint32_t>> term_at_a_time(const Org& o, const std::vector<query_term<Posting>>& q,
                                                             double avgdl, std::size_t limit) {
  // One sum a document, kept by the thread between searches (zero: not reached yet; every
  // score is positive) and the documents reached, in order.
  thread_local std::vector<double> sum;
  thread_local std::vector<std::uint32_t> reached;
  if (sum.size() < o.length.size())
    sum.resize(o.length.size(), 0.0);
  reached.clear();
  // Reserved first, so that nothing below throws and leaves sums behind.
  reached.reserve(o.length.size());
  std::vector<std::pair<double, std::uint32_t>> held;  // the best, a heap with the worst on top
  held.reserve(std::min(limit, o.length.size()) + 1);
  term_weights weight(avgdl);
  for (const auto& t : q)
    for (const auto& p : *t.list) {
      double& s = sum[p.doc];
      if (s == 0.0)
        reached.push_back(p.doc);
      s += t.idf * weight(p.tf, o.length[p.doc]);
    }
  auto better = [&](const std::pair<double, std::uint32_t>& x, const std::pair<double, std::uint32_t>& y) {
    return x.first != y.first ? x.first > y.first : o.id(x.second) < o.id(y.second);
  };
  for (const auto doc : reached) {
    const std::pair<double, std::uint32_t> hit{sum[doc], doc};
    sum[doc] = 0.0;
    if (held.size() == limit) {
      if (!better(hit, held.front()))
        continue;
      std::pop_heap(held.begin(), held.end(), better);
      held.pop_back();
    }
    held.push_back(hit);
    std::push_heap(held.begin(), held.end(), better);
  }
  std::sort(held.begin(), held.end(), better);
  return held;
}

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
  std::vector<query_term<posting>> query;
  std::set<std::string_view> seen;
  for (const auto& term : terms) {
    if (term.empty() || !seen.insert(term).second)
      continue;
    auto ti = o.terms.find(term);
    if (ti == o.terms.end())
      continue;
    const double df = static_cast<double>(ti->second.size());
    const double idf = std::log(1.0 + (docs - df + 0.5) / (df + 0.5));
    query.push_back({&ti->first, &ti->second, idf});
  }
  // Summed rarest first (then by term): equal inputs give equal bits.
  std::sort(query.begin(), query.end(), [](const auto& x, const auto& y) {
    return x.list->size() != y.list->size() ? x.list->size() < y.list->size() : *x.term < *y.term;
  });
  const auto hits = term_at_a_time(o, query, avgdl, limit);
  std::vector<std::pair<std::string, double>> out;
  out.reserve(hits.size());
  for (const auto& [score, doc] : hits)
    out.emplace_back(std::string(o.id(doc)), score);
  return out;
}

void text_index::clear() {
  std::unique_lock lock(mutex_);
  orgs_.clear();
}

// Section layout: organisations (u64), each by name: name, total length, the id arena, id
// offsets, lengths, live doc numbers (ascending), terms (u64), each by term: the term and
// its postings (u64 count, then doc and tf as u32 pairs).
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
    std::vector<const std::pair<const std::string, std::vector<posting>>*> terms;
    terms.reserve(o.terms.size());
    for (const auto& t : o.terms)
      terms.push_back(&t);
    std::sort(terms.begin(), terms.end(), [](auto* a, auto* b) { return a->first < b->first; });
    out.u64(terms.size());
    for (const auto* t : terms) {
      out.bytes(t->first);
      out.u64(t->second.size());
      out.raw(t->second.data(), t->second.size() * sizeof(posting));
    }
  }
}

namespace {
/// Doc numbers below `docs`, strictly ascending.
bool ascending_below(const std::vector<std::uint32_t>& v, std::size_t docs) {
  return std::adjacent_find(v.begin(), v.end(), std::greater_equal<>()) == v.end() && (v.empty() || v.back() < docs);
}
}  // namespace

bool text_index::read(snapshot_in& in) {
  std::unique_lock lock(mutex_);
  orgs_.clear();
  const auto n = in.count(8);
  for (std::uint64_t i = 0; i < n && in.ok(); ++i) {
    auto o = std::make_unique<org_index>();
    const std::string name(in.bytes());
    o->total_length = in.u64();
    o->ids = std::string(in.bytes());
    o->id_at = in.u32s();
    o->length = in.u32s();
    const auto live = in.u32s();
    const auto docs = o->length.size();
    if (!in.ok() || o->id_at.size() != docs + 1 || o->id_at.front() != 0 || o->id_at.back() != o->ids.size() ||
        !std::is_sorted(o->id_at.begin(), o->id_at.end()) || !ascending_below(live, docs)) {
      in.fail();
      break;
    }
    o->doc_of.reserve(live.size());
    o->doc_of.insert(live.begin(), live.end());
    const auto terms = in.count(16);
    o->terms.reserve(terms);
    for (std::uint64_t t = 0; t < terms && in.ok(); ++t) {
      const std::string term(in.bytes());
      const auto postings = in.count(sizeof(posting));
      auto& list = o->terms[term];
      list.resize(postings);
      const auto bytes = in.bytes_of(postings * sizeof(posting));
      if (!in.ok())
        break;
      std::memcpy(list.data(), bytes.data(), bytes.size());
      for (std::size_t k = 0; k < list.size(); ++k)
        if (list[k].doc >= docs || (k > 0 && list[k].doc <= list[k - 1].doc))
          in.fail();
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
    n += o->ids.capacity() + o->id_at.capacity() * sizeof(std::uint32_t) + o->length.capacity() * sizeof(std::uint32_t);
    n += o->doc_of.size() * (node + sizeof(std::uint32_t)) + o->doc_of.bucket_count() * sizeof(void*);
    n += o->terms.bucket_count() * sizeof(void*);
    for (const auto& [term, list] : o->terms)
      n += node + sizeof(std::string) + (term.size() > 15 ? term.capacity() + 1 : 0) + sizeof(list) +
           list.capacity() * sizeof(posting);
  }
  return n;
}

std::size_t text_index::postings() const {
  std::shared_lock lock(mutex_);
  std::size_t n = 0;
  for (const auto& [_, o] : orgs_)
    for (const auto& [__, list] : o->terms)
      n += list.size();
  return n;
}

}  // namespace engram::storage::detail
