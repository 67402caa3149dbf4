// Derived indexes kept in the same batch as the entries: BM25 terms and stored vectors.
#include "storage/internal/graph_store_impl.hpp"

namespace engram::storage::detail {

std::vector<std::pair<std::string, double>> kv_graph_store::search_text(const std::string& org,
                                                        const std::vector<std::string>& terms,
                                                        std::size_t limit) const {
  double docs = 0, total = 0;
  if (auto v = kv_->get(cf_meta, key("n", org, "text_docs")))
    docs = static_cast<double>(decode_u64(*v));
  if (auto v = kv_->get(cf_meta, key("n", org, "text_length")))
    total = static_cast<double>(decode_u64(*v));
  if (docs == 0 || limit == 0)
    return {};
  const double avgdl = total / docs, k1 = 1.2, b = 0.75;
  struct term_df {
    std::string term;
    double df, idf;
  };
  std::vector<term_df> query;
  std::set<std::string> seen;
  for (const auto& term : terms) {
    if (term.empty() || !seen.insert(term).second)
      continue;
    auto v = kv_->get(cf_meta, key("t", org, term));
    if (!v)
      continue;  // no entry has the term (or it cannot be read: the term does not rank)
    const double df = static_cast<double>(decode_u64(*v));
    query.push_back({term, df, std::log(1.0 + (docs - df + 0.5) / (df + 0.5))});
  }
  std::sort(query.begin(), query.end(),
            [](const auto& x, const auto& y) { return x.df != y.df ? x.df < y.df : x.term < y.term; });
  auto term_score = [&](const term_df& t, std::string_view posting) {
    const double f = decode_u32(posting.substr(0, 4)), dl = decode_u32(posting.substr(4, 4));
    return t.idf * f * (k1 + 1) / (f + k1 * (1 - b + b * dl / avgdl));
  };
  // Terms with short posting lists are read whole; the common ones (in more than
  // `full_scan_df` entries, so of low idf) only score the best candidates found by the
  // rarer terms, by point lookups (the MaxScore idea). An entry that matches the query
  // only by common terms is then not found, unless every term of the query is common:
  // the rarest is read whole then.
  constexpr double full_scan_df = 2000;
  std::unordered_map<std::string, double> scores;
  std::size_t scanned = 0;
  for (const auto& t : query) {
    if (t.df > full_scan_df && scanned > 0)
      break;
    ++scanned;
    const auto prefix = key(org, t.term, "");
    auto it = kv_->iterate(cf_text);
    for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next())
      scores[std::string(it->key().substr(prefix.size()))] += term_score(t, it->value());
  }
  std::vector<std::pair<std::string, double>> out(scores.begin(), scores.end());
  auto best_first = [](const auto& x, const auto& y) {
    return x.second != y.second ? x.second > y.second : x.first < y.first;
  };
  const std::size_t pool = std::max<std::size_t>(limit, 200);
  if (scanned < query.size()) {
    if (out.size() > pool) {
      std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(pool), out.end(), best_first);
      out.resize(pool);
    }
    std::sort(out.begin(), out.end());  // key order: MultiGet reads sorted keys fastest
    for (std::size_t i = scanned; i < query.size(); ++i) {
      std::vector<std::string> keys;
      keys.reserve(out.size());
      for (const auto& [id, score] : out)
        keys.push_back(key(org, query[i].term, id));
      std::vector<std::optional<std::string>> values;
      kv_->multi_get(cf_text, keys, values);
      for (std::size_t j = 0; j < out.size(); ++j)
        if (values[j])
          out[j].second += term_score(query[i], *values[j]);
    }
  }
  std::sort(out.begin(), out.end(), best_first);
  if (out.size() > limit)
    out.resize(limit);
  return out;
}

std::map<std::string, std::uint64_t> kv_graph_store::vector_sequences() const {
  std::map<std::string, std::uint64_t> out;
  std::string prefix("n\0", 2);
  auto it = kv_->iterate(cf_meta);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
    auto k = it->key().substr(prefix.size());
    auto sep = k.find('\0');
    if (sep != std::string_view::npos && k.substr(sep + 1) == "vectors")
      out[std::string(k.substr(0, sep))] = decode_u64(it->value());
  }
  return out;
}

errc kv_graph_store::scan_vectors(const std::string& org, std::uint64_t after,
                  const std::function<bool(std::uint64_t, std::string_view, const schemas::vector8&)>& fn)
    const {
  auto prefix = key(org, "q", "");
  auto it = kv_->iterate(cf_vectors);
  for (it->seek(prefix + encode_u64(after + 1)); it->valid() && it->key().starts_with(prefix); it->next()) {
    auto seq = decode_u64(it->key().substr(prefix.size()));
    auto value = it->value();
    auto sep = value.find('\0');
    auto v = sep == std::string_view::npos ? std::nullopt : schemas::from_bytes(value.substr(sep + 1));
    if (!v)
      return errc::corruption;
    if (!fn(seq, value.substr(0, sep), *v))
      break;
  }
  return it->status();
}

/// Indexes an entry's words for BM25: a row per distinct term, and the organisation's
/// document count and total length (meta counters text_docs, text_length).
errc kv_graph_store::put_text(write_txn& tx, const std::string& org, const std::string& id, const std::string& words) {
  std::map<std::string, std::uint32_t> tf;
  std::uint32_t length = 0;
  for (auto w : schemas::split_words(words)) {
    ++tf.try_emplace(std::string(w.begin(), w.end())).first->second;
    ++length;
  }
  if (tf.empty())
    return errc::ok;
  for (const auto& [term, n] : tf) {
    tx.batch.put(cf_text, key(org, term, id), encode_u32(n) + encode_u32(length));
    if (auto e = bump(tx, key("t", org, term), 1); e != errc::ok)  // the term's document frequency
      return e;
  }
  if (auto e = bump(tx, key("n", org, "text_docs"), 1); e != errc::ok)
    return e;
  return bump(tx, key("n", org, "text_length"), length);
}

}  // namespace engram::storage::detail
