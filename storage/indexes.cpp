// Derived indexes kept in the same batch as the entries: BM25 terms and stored vectors.
#include "storage/internal/graph_store_impl.hpp"

namespace engram::storage::detail {

std::vector<std::pair<std::string, double>> kv_graph_store::search_text(const std::string& org,
                                                                        const std::vector<std::string>& terms,
                                                                        std::size_t limit) const {
  return text_.search(org, terms, limit);
}

errc kv_graph_store::load_postings(std::size_t family, text_index& into) {
  // Rows are org \0 term \0 id -> tf (u32) + the document's length (u32).
  auto it = kv_->iterate(family);
  for (it->seek_to_first(); it->valid(); it->next()) {
    const auto k = it->key();
    const auto a = k.find('\0'), b = a == std::string_view::npos ? a : k.find('\0', a + 1);
    const auto v = it->value();
    if (b == std::string_view::npos || v.size() < 8 || decode_u32(v.substr(0, 4)) == 0)
      return errc::corruption;  // a row is written for a term the document holds: a count of 0 is not one
    into.load(k.substr(0, a), k.substr(a + 1, b - a - 1), k.substr(b + 1), decode_u32(v.substr(0, 4)),
              decode_u32(v.substr(4, 4)));
  }
  into.seal();
  return it->status();
}

errc kv_graph_store::load_text_index() { return load_postings(cf_text, text_); }

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

errc kv_graph_store::scan_vectors(
    const std::string& org, std::uint64_t after,
    const std::function<bool(std::uint64_t, std::string_view, const schemas::vector8&)>& fn) const {
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

text_doc index_words(std::string_view words) {
  std::map<std::string, std::uint32_t> tf;
  text_doc d;
  for (auto w : schemas::split_words(words)) {
    ++tf.try_emplace(std::string(w.begin(), w.end())).first->second;
    ++d.length;
  }
  d.tf.assign(tf.begin(), tf.end());
  return d;
}

/// Indexes an entry's words for BM25: a row per distinct term (its count and the entry's
/// length); the in-memory postings follow once the batch is written. Document frequencies
/// and the organisation's totals are the postings' own (no counter rows to keep in step).
errc kv_graph_store::put_text(write_txn& tx, const std::string& org, const std::string& id, const std::string& words) {
  auto doc = index_words(words);
  if (doc.tf.empty())
    return errc::ok;
  for (const auto& [term, n] : doc.tf)
    tx.batch.put(cf_text, key(org, term, id), encode_u32(n) + encode_u32(doc.length));
  tx.text.push_back({true, org, id, std::move(doc)});
  return errc::ok;
}

}  // namespace engram::storage::detail
